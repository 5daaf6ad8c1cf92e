"""Training: determinism, the epoch −1 record, warm start, and MMI on synthetic data."""

import numpy as np
import pytest
import torch

from icda.data.synthetic import generate_synthetic
from icda.embed import embed_documents
from icda.encoder import EncoderSettings
from icda.metrics import rationale_metrics
from icda.model import CachedSentences, RationaleNetwork
from icda.settings import ModelSettings, TrainSettings
from icda.splits import encode_split
from icda.train import predict, train_model


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


def test_warm_start_without_useful_training_keeps_epoch_minus_one():
    vectors, ids, labels = _toy()
    model, first = _fit(0, vectors, ids, labels, epochs=6)
    # lr 0: training cannot change the model, so no epoch beats the initial evaluation
    result = train_model(model, lambda e: (ids, labels), ids[:40], labels[:40],
                         TrainSettings(lr=0.0, weight_decay=0.0, batch_size=16, max_epochs=2, patience=1), 0)
    assert result.best_epoch == -1
    assert len({e.dev_loss for e in result.epochs}) == 1


@pytest.mark.slow
def test_mmi_on_synthetic_without_spurious_signal_finds_the_rationale():
    """p(Y|X2) = 0.5: nothing competes with the target aspect, so MMI must find it."""
    splits = generate_synthetic(800, 200, 200, p_x1=0.9, p_x2=0.5, seed=3)
    enc = EncoderSettings(name="default", pooling="mean", max_tokens=24, max_sentences=12, batch_size=64)
    cache = embed_documents(splits["train"] + splits["dev"] + splits["test"], enc, progress=False)
    encode = {s: encode_split(d, cache.index.__getitem__, 12) for s, d in splits.items()}
    torch.manual_seed(42)
    model = RationaleNetwork(CachedSentences(cache.vectors), ModelSettings(d_model=64, dff=128), 12)
    train = encode["train"]
    result = train_model(model, lambda e: (train.ids, train.labels), encode["dev"].ids, encode["dev"].labels,
                         TrainSettings(lr=1e-3, batch_size=32, max_epochs=10, patience=3), 42)
    model.load_state_dict(result.state_dict)
    test = encode["test"]
    pred = predict(model, test.ids)
    metrics = rationale_metrics(pred.selected, [d.rationale for d in test.documents],
                                test.n_sentences.tolist(), test.labels.tolist(), pred.predicted.tolist())
    assert not result.degenerate
    assert metrics["precision"] >= 0.9, metrics


def test_finetune_mode_trains_the_token_encoder_end_to_end(tmp_path, tiny_encoder_settings):
    """The paper's setting: gradients reach the token encoder; the saved model reloads exactly."""
    from icda.data.document import write_documents
    from icda.settings import Settings
    from icda.workspace import open_workspace, save_model

    splits = generate_synthetic(40, 16, 16, seed=1)
    for name, docs in splits.items():
        write_documents(docs, tmp_path / f"{name}.jsonl")
    settings = Settings.from_dict({
        "encoder": tiny_encoder_settings.to_dict(),
        "model": {"d_model": 16, "layers": 1, "heads": 2, "dff": 32, "finetune": True},
        "train": {"lr": 1e-2, "batch_size": 8, "max_epochs": 1, "patience": 1},
        "device": "cpu",
    })
    ws = open_workspace(settings, tmp_path)
    model = ws.network(0)
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
