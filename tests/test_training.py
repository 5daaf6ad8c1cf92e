"""Training: determinism, the epoch −1 record, warm start, and MMI on synthetic data."""

import json
import re

import numpy as np
import pytest
import torch

from icda.data.synthetic import generate_synthetic
from icda.embed import embed_documents
from icda.errors import DataError
from icda.encoder import EncoderSettings
from icda.metrics import rationale_metrics
from icda.model import CachedSentences, RationaleNetwork
from icda.records import PAD
from icda.settings import ModelSettings, TrainSettings
from icda.data.sentence_ids import to_sentence_ids
from icda.train import EarlyStopping, EpochRecord, predict, rationale_loss, train_model


def _toy(seed=0, n=120):
    """Documents of 6 random sentence ids; the label is written in one slot's vector sign."""
    rng = np.random.default_rng(seed)
    vectors = torch.tensor(rng.normal(size=(400, 8)), dtype=torch.float32)
    ids = torch.tensor(rng.integers(0, 400, size=(n, 6)))
    labels = (vectors[ids[:, 0], 0] > 0).long()
    return vectors, ids, labels


def _fit(seed, vectors, ids, labels, epochs=3):
    torch.manual_seed(seed)
    settings = ModelSettings(d_model=16, layers=1, heads=2, dff=32)
    model = RationaleNetwork(CachedSentences(vectors), settings, max_sentences=8)
    result = train_model(model, lambda e: (ids, labels), ids[:40], labels[:40],
                         TrainSettings(lr=1e-2, batch_size=16, max_epochs=epochs, patience=5), seed)
    model.load_state_dict(result.state_dict)
    return model, result


def test_same_seed_gives_identical_weights_and_predictions():
    vectors, ids, labels = _toy()
    m1, r1 = _fit(7, vectors, ids, labels)
    m2, r2 = _fit(7, vectors, ids, labels)
    for (k, a), (_, b) in zip(m1.state_dict().items(), m2.state_dict().items()):
        assert torch.equal(a, b), k
    assert torch.equal(predict(m1, ids).logits, predict(m2, ids).logits)
    assert [e.dev_loss for e in r1.epochs] == [e.dev_loss for e in r2.epochs]
    m3, _ = _fit(8, vectors, ids, labels)
    assert not torch.equal(m1.scorer.weight, m3.scorer.weight)


def test_history_starts_with_the_initial_evaluation_and_keeps_the_best_epoch():
    vectors, ids, labels = _toy()
    _, result = _fit(0, vectors, ids, labels, epochs=4)
    assert [e.epoch for e in result.epochs][:2] == [-1, 0]
    assert result.epochs[0].train_loss is None
    clean = [e for e in result.epochs if not e.degenerate]
    best = min(clean or result.epochs, key=lambda e: e.dev_loss)  # all degenerate: lowest overall
    assert (result.best_epoch, result.dev_loss) == (best.epoch, best.dev_loss)
    assert result.degenerate == (not clean)


def _record(epoch, dev_loss, degenerate=False):
    return EpochRecord(epoch, None, dev_loss, 0.5, None, degenerate, 0.0, 0.0, 0.0)


@pytest.mark.parametrize("patience, kept, stopped_after", [(1, 1, 2), (2, 1, 3), (3, 7, 7)])
def test_early_stopping_keeps_the_lowest_dev_loss_and_stops_after_patience_epochs_without_it(
        patience, kept, stopped_after):
    # epoch 2 has the lowest loss but is degenerate; epoch 4 beats epoch 1 after two worse epochs
    losses = {-1: 0.70, 0: 0.60, 1: 0.50, 2: 0.10, 3: 0.55, 4: 0.40, 5: 0.45, 6: 0.46, 7: 0.30}
    stopping = EarlyStopping(patience)
    for epoch, loss in losses.items():
        stopping.observe(_record(epoch, loss, degenerate=epoch == 2))
        if stopping.stop:
            break
    assert (stopping.kept.epoch, epoch) == (kept, stopped_after)


def test_early_stopping_falls_back_to_the_lowest_degenerate_epoch_and_skips_epoch_minus_one_if_told():
    stopping = EarlyStopping(5, keep_initial=False)
    verdicts = [stopping.observe(_record(e, loss, degenerate=True)) for e, loss in ((-1, 0.1), (0, 0.6), (1, 0.4))]
    assert verdicts == [None, "fallback", "fallback"]
    assert (stopping.best, stopping.kept.epoch, stopping.stop) == (None, 1, False)
    assert stopping.observe(_record(2, 0.9)) == "best"  # the first clean epoch wins whatever its loss
    assert stopping.kept.epoch == 2


def test_warm_start_without_useful_training_keeps_epoch_minus_one():
    vectors, ids, labels = _toy()
    model, first = _fit(0, vectors, ids, labels, epochs=6)
    # lr 0: training cannot change the model, so no epoch beats the initial evaluation
    result = train_model(model, lambda e: (ids, labels), ids[:40], labels[:40],
                         TrainSettings(lr=0.0, weight_decay=0.0, batch_size=16, max_epochs=2, patience=1), 0)
    assert result.best_epoch == -1
    assert len({e.dev_loss for e in result.epochs}) == 1


def _mmi_on_synthetic(splits, model_settings=None):
    """Train MMI on synthetic splits (cached all-MiniLM-L6-v2 vectors); test predictions."""
    enc = EncoderSettings(name="default", pooling="mean", max_tokens=24, max_sentences=16, batch_size=64)
    cache = embed_documents(splits["train"] + splits["dev"] + splits["test"], enc, progress=False)
    encode = {s: to_sentence_ids(d, cache.index.__getitem__, 16) for s, d in splits.items()}
    torch.manual_seed(42)
    model = RationaleNetwork(CachedSentences(cache.vectors), model_settings or ModelSettings(d_model=64, dff=128), 16)
    train = encode["train"]
    result = train_model(model, lambda e: (train.ids, train.labels), encode["dev"].ids, encode["dev"].labels,
                         TrainSettings(lr=1e-3, batch_size=32, max_epochs=10, patience=3), 42)
    model.load_state_dict(result.state_dict)
    test = encode["test"]
    pred = predict(model, test.ids)
    metrics = rationale_metrics(pred.positions, [d.rationale for d in test.documents],
                                test.n_sentences.tolist(), test.labels.tolist(), pred.predicted.tolist())
    return result, metrics, pred, test


@pytest.mark.slow
def test_mmi_on_synthetic_without_spurious_signal_finds_the_rationale():
    """p(Y|X2) = 0.5: nothing competes with the target aspect, so MMI must find it."""
    result, metrics, _, _ = _mmi_on_synthetic(generate_synthetic(800, 200, 200, p_x1=0.9, p_x2=0.5, seed=3))
    assert not result.degenerate
    assert metrics["precision"] >= 0.9, metrics


@pytest.mark.slow
def test_mmi_falls_for_the_verdict_shortcut_exactly_when_it_is_the_most_informative_sentence():
    """MMI selects the most informative sentence: the closing verdict when p_verdict > p_x1, the
    target aspect when p_verdict < p_x1 (the binary theory's rationale scheme)."""
    from icda.data.synthetic import VERDICTS

    verdicts = {s for bank in VERDICTS.values() for s in bank}
    shares = {}
    for p_verdict, p_x1 in ((0.99, 0.8), (0.7, 0.97)):
        splits = generate_synthetic(800, 200, 200, p_x1=p_x1, p_x2=0.5, verdict="end", p_verdict=p_verdict, seed=3)
        _, metrics, pred, test = _mmi_on_synthetic(splits)
        at_verdict = sum(d.sentences[sel[0]] in verdicts for sel, d in zip(pred.positions, test.documents))
        shares[p_verdict] = (at_verdict / len(test), metrics["precision"])
    assert shares[0.99][0] >= 0.7 and shares[0.99][1] <= 0.3, shares
    assert shares[0.7][0] <= 0.1 and shares[0.7][1] >= 0.85, shares


@pytest.mark.parametrize("selector_input, layers", [("sentence", 1), ("centred", 2)])
def test_finetune_mode_trains_the_token_encoder_end_to_end(tmp_path, tiny_encoder_settings, selector_input, layers):
    """The paper's setting: gradients reach the token encoder; the saved model reloads exactly.
    The frozen mode's read-out options (the document-centred selector input, several layers)
    work the same way on the fine-tuned vectors."""
    from icda.data.document import write_documents
    from icda.settings import Settings
    from icda.loading import open_workspace, save_model

    splits = generate_synthetic(40, 16, 16, seed=1)
    for name, docs in splits.items():
        write_documents(docs, tmp_path / f"{name}.jsonl")
    settings = Settings.from_dict({
        "encoder": tiny_encoder_settings.to_dict() | {"layers": layers},
        "model": {"d_model": 16, "layers": 1, "heads": 2, "dff": 32, "finetune": True,
                  "selector_input": selector_input},
        "train": {"lr": 1e-2, "encoder_lr": 1e-2, "batch_size": 8, "max_epochs": 1, "patience": 1},
        "device": "cpu",
    })
    ws = open_workspace(settings, tmp_path)
    model = ws.network(0)
    assert model.sentences.hidden_size == 32 * layers and (model.centred is not None) == (selector_input == "centred")
    before = {k: v.clone() for k, v in model.sentences.encoder.state_dict().items()}
    train, dev = ws.split("train"), ws.split("dev")
    result = train_model(model, lambda e: (train.ids, train.labels), dev.ids, dev.labels, settings.train, 0)
    assert [e.epoch for e in result.epochs] == [-1, 0]
    after = model.sentences.encoder.state_dict()
    assert any(not torch.equal(before[k], after[k]) for k in before)
    model.load_state_dict(result.state_dict)
    expected = predict(model, dev.ids).logits
    save_model(model, tmp_path / "model.pt", result.state_dict)
    # loading resets the (shared) encoder to its pretrained weights first: equal logits show
    # that the fine-tuned encoder weights travel in model.pt
    reloaded = ws.load_model(tmp_path / "model.pt")
    assert torch.equal(predict(reloaded, dev.ids).logits, expected)


def test_shuffle_sentences_permutes_real_sentences_and_keeps_padding_last():
    from icda.train import shuffle_sentences

    ids = torch.tensor([[5, 6, 7, 8, PAD, PAD], [1, 2, 3, 4, 9, 10], [11, PAD, PAD, PAD, PAD, PAD]])
    gen = torch.Generator().manual_seed(0)
    seen = set()
    for _ in range(20):
        out = shuffle_sentences(ids, gen)
        for row, new in zip(ids, out):
            assert sorted(new.tolist()) == sorted(row.tolist())
            n = int((row >= 0).sum())
            assert (new[n:] == PAD).all() and (new[:n] >= 0).all()
        seen.add(tuple(out[0, :4].tolist()))
    assert len(seen) > 5  # the order really changes


def test_drop_sentences_keeps_an_ordered_nonempty_subset_at_the_front():
    from icda.train import drop_sentences

    ids = torch.tensor([[5, 6, 7, 8, PAD, PAD], [1, 2, 3, 4, 9, 10], [11, PAD, PAD, PAD, PAD, PAD]])
    gen = torch.Generator().manual_seed(0)
    kept = []
    for _ in range(200):
        out = drop_sentences(ids, 0.5, gen)
        for row, new in zip(ids.tolist(), out.tolist()):
            real = [i for i in new if i != PAD]
            assert real and new[:len(real)] == real  # at least one sentence, all at the front
            assert real == [i for i in row if i in real]  # a subsequence: the order is kept
        kept.append(sum(i != PAD for i in out[1].tolist()))
    assert kept.count(6) < 20 and 2.5 < sum(kept) / len(kept) < 3.5  # about half of 6 dropped
    assert drop_sentences(ids[2:], 0.9, gen).tolist() == ids[2:].tolist()  # a lone sentence stays
    assert torch.equal(drop_sentences(ids, 0.0, gen), ids)


def test_trimming_empty_columns_does_not_change_predictions():
    from icda.train import trim

    vectors, ids, labels = _toy()
    model, _ = _fit(0, vectors, ids, labels)
    padded = torch.cat([ids, torch.full((len(ids), 4), PAD)], dim=1)
    assert trim(padded).shape == ids.shape
    assert predict(model, padded).positions == predict(model, ids).positions
    assert torch.allclose(predict(model, padded).logits, predict(model, ids).logits, atol=1e-5)


def test_sentence_dropout_outside_0_1_is_rejected_with_the_key_named():
    from icda.errors import ConfigError
    from icda.settings import Settings

    assert Settings.from_dict({"encoder": {}, "train": {"sentence_dropout": 0.5}}).train.sentence_dropout == 0.5
    for bad in (1.0, -0.1):
        with pytest.raises(ConfigError, match=r"settings\.train\.sentence_dropout must lie in \[0, 1\)"):
            Settings.from_dict({"encoder": {}, "train": {"sentence_dropout": bad}})


def test_sentence_loss_adds_the_classifier_on_every_real_sentence_alone():
    """Known answer: the loss is MMI's cross-entropy plus λ times the mean cross-entropy of the
    classifier on each real sentence (empty slots never counted), labelled with its document's
    class; λ = 0 is exactly MMI's loss."""
    vectors, _, _ = _toy()
    torch.manual_seed(0)
    model = RationaleNetwork(CachedSentences(vectors), ModelSettings(d_model=16, layers=1, heads=2, dff=32,
                                                                     dropout=0.0), max_sentences=8).eval()
    ids, labels = torch.tensor([[3, 7, 9, PAD], [11, 12, 13, 14]]), torch.tensor([1, 0])
    mmi = torch.nn.functional.cross_entropy(model(ids).logits, labels)
    assert torch.equal(rationale_loss(model, ids, labels)[0], mmi)
    each = model.classifier(model.adapter(vectors[torch.tensor([3, 7, 9, 11, 12, 13, 14])]))
    alone = torch.nn.functional.cross_entropy(each, torch.tensor([1, 1, 1, 0, 0, 0, 0]))
    assert torch.allclose(rationale_loss(model, ids, labels, 0.5)[0], mmi + 0.5 * alone)


def test_only_the_sentence_loss_lets_an_unselected_sentence_teach_the_classifier():
    """The interlocking the option exists for: without it, the classifier's gradient is the same
    whatever an unselected sentence says (it only ever learns the sentences already chosen);
    with it, an unselected sentence changes what the classifier learns."""
    vectors, _, _ = _toy()
    torch.manual_seed(0)
    model = RationaleNetwork(CachedSentences(vectors), ModelSettings(d_model=16, layers=0, heads=2, dff=32,
                                                                     dropout=0.0), max_sentences=8).eval()
    labels = torch.tensor([1])

    def classifier_gradient(ids, weight):
        model.zero_grad()
        rationale_loss(model, ids, labels, weight)[0].backward()
        return model.classifier[-1].weight.grad.clone()

    a = torch.tensor([[5, 6, 8]])
    chosen = int(model(a).rationale_mask[0].argmax())
    b = a.clone()
    b[0, (chosen + 1) % 3] = 30  # another sentence in an unselected slot (layers 0: no context)
    assert int(model(b).rationale_mask[0].argmax()) == chosen
    assert torch.equal(classifier_gradient(a, 0.0), classifier_gradient(b, 0.0))
    assert not torch.allclose(classifier_gradient(a, 1.0), classifier_gradient(b, 1.0))


def test_sentence_loss_below_zero_is_rejected_with_the_key_named():
    from icda.errors import ConfigError
    from icda.settings import Settings

    with pytest.raises(ConfigError, match=r"settings\.train\.sentence_loss must be >= 0"):
        Settings.from_dict({"encoder": {}, "train": {"sentence_loss": -0.1}})


def test_evaluating_predictions_json_equals_evaluating_the_model(tmp_path, tiny_encoder_settings):
    """The sweep's dev evaluation reads the predictions.json that training wrote instead of
    loading model.pt: both give the same record, on dev and on test, also where documents are cut
    to max_sentences; a predictions.json without test predictions (written before training
    recorded them) is refused for test with the fix."""
    import dataclasses

    from icda.steps.evaluate import evaluate_model, evaluate_predictions
    from icda.steps.train import train_candidate
    from icda.data.document import write_documents
    from icda.errors import ConfigError
    from icda.settings import Settings

    splits = generate_synthetic(40, 24, 8, seed=2, min_sentences=4, max_sentences=9)
    for name, docs in splits.items():
        write_documents(docs, tmp_path / f"{name}.jsonl")
    assert max(len(d.sentences) for d in splits["dev"]) > 6
    settings = Settings.from_dict({
        "encoder": dataclasses.replace(tiny_encoder_settings, max_sentences=6).to_dict(),
        "model": {"d_model": 16, "layers": 1, "heads": 2, "dff": 32, "finetune": True},
        "train": {"lr": 1e-2, "encoder_lr": 1e-2, "batch_size": 8, "max_epochs": 1, "patience": 1},
        "device": "cpu",
    })
    out = tmp_path / "seed0"
    train_candidate(settings, tmp_path, None, 0, out)
    labels = {"point": "p", "dataset": "synthetic", "seed": 0}
    from_model = evaluate_model(settings, tmp_path, None, model=out / "model.pt", split="dev", labels=labels)
    from_file = evaluate_predictions(settings, tmp_path, out / "predictions.json", "dev", labels)
    assert from_file.to_json() == from_model.to_json()
    on_test = evaluate_model(settings, tmp_path, None, model=out / "model.pt", split="test", labels=labels)
    assert evaluate_predictions(settings, tmp_path, out / "predictions.json", "test", labels).to_json() == on_test.to_json()
    old = json.loads((out / "predictions.json").read_text())
    del old["test"]
    (out / "predictions.json").write_text(json.dumps(old))
    with pytest.raises(ConfigError, match="holds no predictions on test .* evaluate its model.pt"):
        evaluate_predictions(settings, tmp_path, out / "predictions.json", "test", labels)


@pytest.mark.slow  # trains every candidate twice, in one process and as separate jobs (about 8 s)
def test_an_iterations_candidates_trained_in_one_process_equal_separate_jobs(tmp_path, tiny_encoder_settings):
    """``train --candidates`` trains an iteration's candidates (or a run's COMP grid) one after
    another in one process (the dataset is loaded once); each candidate's files hold exactly the
    numbers of its own ``train --seed`` job, the warm start's and each COMP λ's too (here in finetune mode, where the candidates share
    the token encoder module, which each one resets to its pretrained weights)."""
    import dataclasses
    import json

    from icda.steps.train import train_candidate, train_candidates
    from icda.data.document import write_documents
    from icda.settings import Settings

    splits = generate_synthetic(40, 24, 8, seed=3, min_sentences=4, max_sentences=8)
    for name, docs in splits.items():
        write_documents(docs, tmp_path / f"{name}.jsonl")
    settings = Settings.from_dict({
        "encoder": dataclasses.replace(tiny_encoder_settings, max_sentences=8).to_dict(),
        "model": {"d_model": 16, "layers": 1, "heads": 2, "dff": 32, "finetune": True, "dropout": 0.1},
        "train": {"lr": 1e-2, "encoder_lr": 1e-2, "batch_size": 8, "max_epochs": 2, "patience": 2,
                  "sentence_dropout": 0.5, "shuffle_sentences": True},
        "device": "cpu",
    })
    init = tmp_path / "init"
    train_candidate(settings, tmp_path, None, 7, init)
    seeds = {"seed1": 1, "seed2": 2, "warm": 1}
    train_candidates(settings, tmp_path, None, seeds, tmp_path / "together", warm="warm", init=init / "model.pt")
    for name, seed in seeds.items():
        alone = tmp_path / "alone" / name
        train_candidate(settings, tmp_path, None, seed, alone, init=init / "model.pt" if name == "warm" else None)
        together = tmp_path / "together" / name
        assert (together / "predictions.json").read_text() == (alone / "predictions.json").read_text(), name
        strip = lambda h: {k: v for k, v in h.items() if k not in ("epochs", "seconds_per_epoch", "cpu_seconds")}
        h1, h2 = (json.loads((d / "history.json").read_text()) for d in (together, alone))
        assert strip(h1) == strip(h2) and [e["dev_loss"] for e in h1["epochs"]] == [e["dev_loss"] for e in h2["epochs"]]
    assert json.loads((tmp_path / "together/warm/history.json").read_text())["init"] == str(init / "model.pt")
    with pytest.raises(ValueError, match="needs init"):
        train_candidates(settings, tmp_path, None, seeds, tmp_path / "x", warm="warm")
    # a run's COMP grid: each candidate's own λ, the same numbers as its own `train --objective comp` job
    grid = {"lambda0.5_seed1": (0.5, 1), "lambda1.0_seed1": (1.0, 1)}
    train_candidates(settings, tmp_path, None, {n: s for n, (_, s) in grid.items()}, tmp_path / "comp",
                     comp_lambdas={n: lam for n, (lam, _) in grid.items()})
    for name, (lam, seed) in grid.items():
        alone = tmp_path / "comp_alone" / name
        train_candidate(settings, tmp_path, None, seed, alone, objective="comp", comp_lambda=lam)
        together = tmp_path / "comp" / name
        assert (together / "predictions.json").read_text() == (alone / "predictions.json").read_text(), name
        h1, h2 = (json.loads((d / "history.json").read_text()) for d in (together, alone))
        assert strip(h1) == strip(h2) and (h1["objective"], h1["comp_lambda"]) == ("comp", lam)
    with pytest.raises(ValueError, match="comp_lambdas names"):
        train_candidates(settings, tmp_path, None, {"a": 1, "b": 2}, tmp_path / "y", comp_lambdas={"a": 0.5})


@pytest.mark.parametrize("args, message", [
    (["--candidates", "a=1", "b=2", "--objective", "comp", "--comp-lambda", "0.5"], "1 value.s. for 2 candidates"),
    (["--candidates", "a=1", "--comp-lambda", "0.5"], "--objective comp and one λ per candidate"),
    (["--seed", "1", "--comp-lambda", "0.5", "1.0"], "2 values for one model"),
])
def test_train_refuses_comp_lambdas_that_do_not_match_its_candidates(tmp_path, capsys, args, message):
    from icda.cli import main

    assert main(["train", "--settings", str(tmp_path / "settings.json"), "--data-dir", str(tmp_path / "data"),
                 "--out-dir", str(tmp_path / "out"), *args]) == 2  # (an --out-dir inside --data-dir: the guard's)
    assert re.search(message, capsys.readouterr().err)


def test_an_interrupted_multi_candidate_job_leaves_no_output_folder(tmp_path, monkeypatch):
    """The candidates of an iteration are trained into <out>.partial and renamed to <out> only
    when every one is written: a job killed after its first candidate leaves no <out> that a
    rerun would take for finished."""
    import icda.steps.train as steps_train

    calls = []

    def fake_train(ws, settings, seed, out_dir, init, data, load_cpu):
        if calls:
            raise KeyboardInterrupt  # killed while training the second candidate
        calls.append(seed)
        out_dir.mkdir(parents=True)
        (out_dir / "history.json").write_text("{}")

    monkeypatch.setattr(steps_train, "_load", lambda *a, **kw: (None, None, 0.0))
    monkeypatch.setattr(steps_train, "_train", fake_train)
    out = tmp_path / "iter1" / "candidates"
    with pytest.raises(KeyboardInterrupt):
        steps_train.train_candidates(None, tmp_path, None, {"seed42": 42, "seed43": 43}, out)
    assert not out.exists() and (tmp_path / "iter1" / "candidates.partial" / "seed42" / "history.json").exists()

    calls.clear()
    monkeypatch.setattr(steps_train, "_train", lambda ws, s, seed, out_dir, *a: (out_dir.mkdir(parents=True), seed)[1])
    assert steps_train.train_candidates(None, tmp_path, None, {"seed42": 42, "seed43": 43}, out) == [42, 43]
    assert sorted(p.name for p in out.iterdir()) == ["seed42", "seed43"]
    assert not (tmp_path / "iter1" / "candidates.partial").exists()


# ------------------------------------------------------------------ model.k against the data


def test_k_against_the_shortest_prepared_document_names_the_file_and_line(tmp_path):
    from icda.data.document import Document, write_documents
    from icda.settings import Settings
    from icda.loading import open_workspace

    docs = [Document(f"d{i}", i % 2, tuple(f"s{i}.{j}" for j in range(5))) for i in range(6)]
    short = Document("short", 1, ("only.", "three.", "here."))
    for split in ("train", "dev", "test"):
        write_documents(docs + [short] if split == "dev" else docs, tmp_path / f"{split}.jsonl")
    settings = Settings.from_dict({"encoder": {"max_sentences": 12}, "model": {"k": 3}})
    with pytest.raises(DataError, match="document short shows the model 3 sentences, not more than model.k = 3") as err:
        open_workspace(settings, tmp_path, None)
    assert (err.value.path, err.value.line) == (str(tmp_path / "dev.jsonl"), 7)
    assert err.value.fix == ("set the dataset's min_sentences (datasets.<name>.min_sentences): 4 (or more; prepare "
                             "then drops documents of fewer sentences), or set model.k to 2 or less (a changed "
                             "min_sentences takes effect when prepare reruns)")
