"""``python -m icda predict`` and the export of the final selector."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from icda.cli import main
from icda.data.document import Document, write_documents
from icda.errors import DataError
from icda.layout import MODEL_CARD_FILE, MODEL_FILE
from icda.records import ModelCard, Predictions

POSITIVE = ["the food was delicious.", "the dish was amazing.", "the staff was friendly."]
NEGATIVE = ["the food was terrible.", "the dish was bland.", "the staff was rude."]
FILLER = ["we came for dinner.", "the table was by the door.", "parking was on the side.",
          "we had coffee after.", "the room was quiet.", "it was a long week."]


def _docs(prefix: str, n: int, offset: int = 0) -> list[Document]:
    docs = []
    for i in range(n):
        j = i + offset
        label = i % 2
        cue = (POSITIVE if label else NEGATIVE)[j % 3]
        sentences = [FILLER[(j + s) % len(FILLER)] for s in range(4)]
        sentences.insert(j % 5, cue)
        docs.append(Document(f"{prefix}-{i}", label, tuple(sentences)))
    return docs


@pytest.fixture(scope="module")
def trained(tmp_path_factory, tiny_encoder_settings):
    """A prepared toy dataset and two frozen-mode candidates trained on it (tiny BERT vectors)."""
    from icda.steps.train import train_candidates
    from icda.steps.embed import embed_splits
    from icda.settings import ModelSettings, Settings, TrainSettings

    root = tmp_path_factory.mktemp("predict")
    data = root / "data"
    for split, n, offset in (("train", 40, 0), ("dev", 16, 1), ("test", 10, 2)):
        write_documents(_docs(split, n, offset), data / f"{split}.jsonl")
    settings = Settings(encoder=tiny_encoder_settings, model=ModelSettings(d_model=16, heads=2, dff=32),
                        train=TrainSettings(lr=1e-2, batch_size=16, max_epochs=4, patience=2), device="cpu")
    (root / "settings.json").write_text(json.dumps(settings.to_dict()))
    embed_splits({s: data / f"{s}.jsonl" for s in ("train", "dev", "test")}, settings.encoder,
                 root / "embeddings.pt", progress=False)
    train_candidates(settings, data, root / "embeddings.pt", {"seed1": 1, "seed2": 2}, root / "candidates")
    return root


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_predict_reproduces_the_models_own_test_predictions(trained, tmp_path, capsys):
    """The known answer: on the test documents, predict gives the class probabilities and the
    rationale positions that training recorded in predictions.json (same model, same encoder)."""
    candidate = trained / "candidates/seed1"
    assert ModelCard.read(candidate / MODEL_CARD_FILE).settings["encoder"]["max_tokens"] == 16
    test = (trained / "data/test.jsonl").read_text().splitlines()
    new = tmp_path / "new.jsonl"  # the prepared records: id, label, sentences
    new.write_text("\n".join(test) + "\n")
    assert main(["predict", "--model", str(candidate), "--input", str(new), "--out", str(tmp_path / "out.jsonl")]) == 0
    rows = _rows(tmp_path / "out.jsonl")
    recorded = Predictions.read(candidate / "predictions.json").test
    docs = [json.loads(line) for line in test]
    assert [r["id"] for r in rows] == [d["id"] for d in docs]
    assert [r["positions"] for r in rows] == recorded.positions
    assert [r["probabilities"][1] for r in rows] == pytest.approx(recorded.prob_positive, abs=1e-4)
    for row, doc in zip(rows, docs):
        assert sum(row["probabilities"]) == pytest.approx(1.0, abs=1e-5)
        assert row["label"] == int(row["probabilities"][1] > 0.5)
        assert row["rationale"] == [doc["sentences"][i] for i in row["positions"]]
        assert row["given_label"] == doc["label"]

    # the same documents as plain text, one a line, split with spaCy: the same answers
    text = tmp_path / "new.txt"
    text.write_text("\n".join(" ".join(d["sentences"]) for d in docs) + "\n")
    assert main(["predict", "--model", str(candidate), "--input", str(text)]) == 0
    from_text = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["id"] for r in from_text] == [f"new.txt-{i}" for i in range(1, len(docs) + 1)]
    assert [(r["positions"], r["rationale"]) for r in from_text] == [(r["positions"], r["rationale"]) for r in rows]
    assert "given_label" not in from_text[0]


@pytest.mark.parametrize("content, problem", [
    ('{"sentences": ["the food was delicious.", "we came."]}\n{"text": "   "}\n', "new.jsonl:2: empty document"),
    ('{"label": 2, "sentences": ["the food was delicious."]}\n', "new.jsonl:1: label 2 is outside the classes [0, 1]"),
    ('{"sentences": []}\n', "new.jsonl:1: empty document"),
])
def test_bad_documents_are_named_by_file_and_line(trained, tmp_path, content, problem, capsys):
    new = tmp_path / "new.jsonl"
    new.write_text(content)
    assert main(["predict", "--model", str(trained / "candidates/seed1"), "--input", str(new)]) == 2
    err = capsys.readouterr().err
    assert problem in err and "Fix:" in err


def test_model_folder_without_its_settings_or_with_other_ones(trained, tmp_path):
    from icda.steps.predict import predict_file

    folder = tmp_path / "model"
    folder.mkdir()
    new = tmp_path / "new.jsonl"
    new.write_text(json.dumps({"sentences": ["the food was bland.", "we came for dinner."]}) + "\n")
    with pytest.raises(DataError, match="no model.pt") as err:
        predict_file(folder, new)
    assert str(folder) in str(err.value)
    shutil.copyfile(trained / "candidates/seed1" / MODEL_FILE, folder / MODEL_FILE)
    with pytest.raises(DataError) as err:
        predict_file(folder, new)
    assert str(err.value).startswith(f"{folder}: no model.json") and "--settings" in str(err.value)
    assert "results/<dataset>/icda_model" in str(err.value)
    # the settings given by hand stand in for model.json
    by_hand = predict_file(folder, new, settings_path=trained / "settings.json")
    reference = predict_file(trained / "candidates/seed1", new)
    assert by_hand[0].to_json() == reference[0].to_json()

    card = json.loads((trained / "candidates/seed1" / MODEL_CARD_FILE).read_text())
    (folder / MODEL_CARD_FILE).write_text(json.dumps(card))
    other = json.loads((trained / "settings.json").read_text())
    other["encoder"]["max_tokens"] = 12
    (tmp_path / "other.json").write_text(json.dumps(other))
    with pytest.raises(DataError, match="trained with encoder settings") as err:
        predict_file(folder, new, settings_path=tmp_path / "other.json")
    assert str(err.value).startswith(str(folder / MODEL_CARD_FILE))

    card["encoder_fingerprint"] = "0" * 64  # the encoder's files changed since training
    (folder / MODEL_CARD_FILE).write_text(json.dumps(card))
    with pytest.raises(DataError, match="differs from the one the model was trained with") as err:
        predict_file(folder, new)
    assert str(err.value).startswith(str(folder / MODEL_CARD_FILE))


def test_finalize_exports_the_selector_of_the_run_it_keeps(trained, tmp_path):
    """The exported icda_model is the chosen candidate of the run whose augmented set finalize
    keeps (the lower original dev loss), and predicts as that candidate does."""
    from icda.steps.predict import predict_file
    from icda.steps.finalize import original_dev_loss
    from icda.steps.select import select_iteration

    dev_labels = [json.loads(line)["label"] for line in (trained / "data/dev.jsonl").read_text().splitlines()]
    choices, augmented = [], []
    for run, name in ((1, "seed1"), (2, "seed2")):
        choice = select_iteration(0, [trained / "candidates" / name], trained / "data")
        choice.write(tmp_path / f"choice{run}.json")
        choices.append(tmp_path / f"choice{run}.json")
        augmented.append(tmp_path / f"aug{run}.jsonl")
        augmented[-1].write_text(f"run {run}\n")
        assert choice.chosen.candidate_dir == str(trained / "candidates" / name)
    losses = [original_dev_loss(select_iteration(0, [trained / "candidates" / n], trained / "data"), dev_labels)
              for n in ("seed1", "seed2")]
    kept = min(range(2), key=losses.__getitem__)
    out = tmp_path / "icda_model"
    assert main(["finalize", "--augmented", *map(str, augmented), "--choices", *map(str, choices),
                 "--data-dir", str(trained / "data"), "--out", str(tmp_path / "icda_dataset.jsonl"),
                 "--model-out", str(out), "--settings", str(trained / "settings.json")]) == 0
    source = trained / "candidates" / ("seed1", "seed2")[kept]
    assert (tmp_path / "icda_dataset.jsonl").read_text() == f"run {kept + 1}\n"
    assert (out / MODEL_FILE).read_bytes() == (source / MODEL_FILE).read_bytes()
    card = ModelCard.read(out / MODEL_CARD_FILE)
    assert card.source == str(source) and card.settings == ModelCard.read(source / MODEL_CARD_FILE).settings
    new = tmp_path / "new.txt"
    new.write_text("the food was delicious. we came for dinner. the room was quiet.\n")
    exported, original = predict_file(out, new), predict_file(source, new)
    assert [p.to_json() for p in exported] == [p.to_json() for p in original]
    assert exported[0].rationale == [["the food was delicious.", "we came for dinner.",
                                      "the room was quiet."][exported[0].positions[0]]]


def test_finalize_exports_an_ensemble_that_predict_reads_as_the_evaluated_selector(trained, tmp_path):
    """With ``icda.final_selector: ensemble`` the choice names its members; finalize exports them
    as one model file, and predict gives on the test documents the rationales and class
    probabilities that evaluate recorded for the choice (departure 28)."""
    import dataclasses

    from icda.loading import load_settings
    from icda.steps.evaluate import evaluate_model
    from icda.steps.select import select_iteration

    members = [str(trained / "candidates" / name) for name in ("seed1", "seed2")]
    choice = select_iteration(0, members, trained / "data")
    choice = dataclasses.replace(choice, iteration=1, ensemble=[members])
    choice.write(tmp_path / "choice.json")
    (tmp_path / "aug.jsonl").write_text("run 1\n")
    out = tmp_path / "icda_model"
    assert main(["finalize", "--augmented", str(tmp_path / "aug.jsonl"), "--choices", str(tmp_path / "choice.json"),
                 "--data-dir", str(trained / "data"), "--out", str(tmp_path / "icda_dataset.jsonl"),
                 "--model-out", str(out), "--settings", str(trained / "settings.json")]) == 0
    evaluated = evaluate_model(load_settings(trained / "settings.json"), trained / "data", trained / "embeddings.pt",
                               choice=tmp_path / "choice.json")
    alone = [Predictions.read(Path(m) / "predictions.json").test.positions for m in members]
    test = trained / "data/test.jsonl"
    assert main(["predict", "--model", str(out), "--input", str(test), "--out", str(tmp_path / "out.jsonl")]) == 0
    rows = _rows(tmp_path / "out.jsonl")
    assert [r["positions"] for r in rows] == evaluated.documents["positions"]
    assert [r["label"] for r in rows] == evaluated.documents["predicted"]
    assert alone[0] != alone[1]  # the members disagree somewhere: the ensemble is not one of them alone
    assert ModelCard.read(out / MODEL_CARD_FILE).source == str(choice.candidate_path)


def test_finetune_mode_predicts_with_the_fine_tuned_encoder(tmp_path, tiny_encoder_settings):
    """Finetune mode: the encoder weights come from model.pt, so predict reproduces the test
    predictions training recorded."""
    from icda.steps.train import train_candidate
    from icda.steps.predict import predict_file
    from icda.settings import Settings

    for split, n, offset in (("train", 24, 0), ("dev", 8, 1), ("test", 6, 2)):
        write_documents(_docs(split, n, offset), tmp_path / f"{split}.jsonl")
    settings = Settings.from_dict({
        "encoder": tiny_encoder_settings.to_dict(),
        "model": {"d_model": 16, "layers": 1, "heads": 2, "dff": 32, "finetune": True},
        "train": {"lr": 1e-2, "encoder_lr": 1e-2, "batch_size": 8, "max_epochs": 2, "patience": 2},
        "device": "cpu",
    })
    train_candidate(settings, tmp_path, None, 3, tmp_path / "cand")
    rows = predict_file(tmp_path / "cand", tmp_path / "test.jsonl")
    recorded = Predictions.read(tmp_path / "cand/predictions.json").test
    assert [r.positions for r in rows] == recorded.positions
    assert [r.probabilities[1] for r in rows] == pytest.approx(recorded.prob_positive, abs=1e-5)

    # an ensemble of two fine-tuned candidates: each member keeps its own fine-tuned encoder
    import torch

    from icda.data.document import read_split
    from icda.loading import finetune_workspace, save_ensemble
    from icda.model import SelectorEnsemble

    train_candidate(settings, tmp_path, None, 4, tmp_path / "cand4")
    ws = finetune_workspace(settings, tmp_path, {"test": read_split(tmp_path, "test")}, "cpu")
    paths = [tmp_path / "cand/model.pt", tmp_path / "cand4/model.pt"]
    ensemble = ws.load_models(paths)
    encoders = [m.sentences.encoder.state_dict() for m in ensemble.members]
    assert any(not torch.equal(encoders[0][k], encoders[1][k]) for k in encoders[0])
    for member, path in zip(ensemble.members, paths):
        alone = ws.load_model(path)
        assert all(torch.equal(v, alone.state_dict()[k]) for k, v in member.state_dict().items())
    save_ensemble(paths, tmp_path / "ensemble.pt", settings.encoder)
    loaded = ws.load_model(tmp_path / "ensemble.pt")
    assert isinstance(loaded, SelectorEnsemble)
    ids = ws.split("test").ids
    with torch.no_grad():
        assert torch.equal(loaded.eval()(ids).rationale_mask, ensemble.eval()(ids).rationale_mask)


# ----------------------------------------------------------------------------- where predictions go


def _one_document(path: Path) -> Path:
    path.write_text(json.dumps({"sentences": ["the food was bland.", "we came for dinner."]}) + "\n")
    return path


def _model_copy(trained: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(trained / "candidates/seed1", tmp_path / "model"))


@pytest.mark.parametrize("spelling", ["same", "dotted", "symlink"])
def test_output_that_is_the_input_file_is_refused_and_the_input_kept(trained, tmp_path, capsys, spelling):
    new = _one_document(tmp_path / "new.jsonl")
    before = new.read_text()
    out = {"same": new, "dotted": tmp_path / "sub" / ".." / "new.jsonl", "symlink": tmp_path / "link.jsonl"}[spelling]
    if spelling == "dotted":
        (tmp_path / "sub").mkdir()
    if spelling == "symlink":
        out.symlink_to(new)
    assert main(["predict", "--model", str(trained / "candidates/seed1"), "--input", str(new),
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"--out {out}" in err and f"is the input --input {new}" in err and "Fix: give --out a path outside" in err
    assert new.read_text() == before


@pytest.mark.parametrize("name", [MODEL_FILE, MODEL_CARD_FILE, "predictions.jsonl"])
def test_output_inside_the_model_folder_is_refused_and_the_model_kept(trained, tmp_path, capsys, name):
    model = _model_copy(trained, tmp_path)
    before = {p.name: p.read_bytes() for p in model.iterdir()}
    new = _one_document(tmp_path / "new.jsonl")
    assert main(["predict", "--model", str(model), "--input", str(new), "--out", str(model / name)]) == 2
    err = capsys.readouterr().err
    assert f"--out {model / name}" in err and f"lies inside the input folder --model {model}" in err
    assert "Fix: give --out a path outside every input" in err
    assert {p.name: p.read_bytes() for p in model.iterdir()} == before


def test_output_that_is_a_folder_is_refused_in_words(trained, tmp_path, capsys):
    new = _one_document(tmp_path / "new.jsonl")
    (tmp_path / "outdir").mkdir()
    assert main(["predict", "--model", str(trained / "candidates/seed1"), "--input", str(new),
                 "--out", str(tmp_path / "outdir")]) == 2
    err = capsys.readouterr().err
    assert f"--out {tmp_path / 'outdir'}: is a folder" in err and "Fix:" in err and "Traceback" not in err


def test_output_through_a_symlink_replaces_its_target_and_keeps_the_link(trained, tmp_path):
    new = _one_document(tmp_path / "new.jsonl")
    (tmp_path / "kept").mkdir()
    target = tmp_path / "kept" / "predictions.jsonl"
    target.write_text("old predictions\n")
    link = tmp_path / "latest.jsonl"
    link.symlink_to(target)
    assert main(["predict", "--model", str(trained / "candidates/seed1"), "--input", str(new), "--out", str(link)]) == 0
    assert link.is_symlink() and link.resolve() == target
    assert [row["id"] for row in _rows(target)] == ["new.jsonl-1"]
    assert sorted(p.name for p in (tmp_path / "kept").iterdir()) == ["predictions.jsonl"]  # no temp file left


def test_output_to_a_fifo_is_written_through_it(trained, tmp_path):
    import os
    import stat
    import threading

    new = _one_document(tmp_path / "new.jsonl")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()), daemon=True)
    reader.start()
    assert main(["predict", "--model", str(trained / "candidates/seed1"), "--input", str(new), "--out", str(fifo)]) == 0
    reader.join(timeout=30)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)  # still the pipe, not a regular file in its place
    assert [json.loads(line)["id"] for line in received[0].splitlines()] == ["new.jsonl-1"]


def test_output_to_dev_stdout_goes_to_standard_output(trained, tmp_path, capsys):
    import os

    new = _one_document(tmp_path / "new.jsonl")
    was_link = os.path.islink("/dev/stdout")
    assert main(["predict", "--model", str(trained / "candidates/seed1"), "--input", str(new), "--out", "/dev/stdout"]) == 0
    assert [json.loads(line)["id"] for line in capsys.readouterr().out.splitlines()] == ["new.jsonl-1"]
    assert os.path.islink("/dev/stdout") == was_link


def test_dash_reads_documents_from_stdin_and_writes_predictions_to_stdout(trained, tmp_path, monkeypatch, capsys):
    import io
    import sys

    line = json.dumps({"id": "piped", "sentences": ["the food was bland.", "we came for dinner."]}) + "\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(line.encode())))
    assert main(["predict", "--model", str(trained / "candidates/seed1"), "--input", "-", "--format", "jsonl",
                 "--out", "-"]) == 0
    rows = [json.loads(row) for row in capsys.readouterr().out.splitlines()]
    reference = _one_document(tmp_path / "new.jsonl")
    assert main(["predict", "--model", str(trained / "candidates/seed1"), "--input", str(reference)]) == 0
    expected = json.loads(capsys.readouterr().out.splitlines()[0])
    assert [row["id"] for row in rows] == ["piped"]
    assert {k: v for k, v in rows[0].items() if k != "id"} == {k: v for k, v in expected.items() if k != "id"}

    text = "the food was bland. we came for dinner.\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    assert main(["predict", "--model", str(trained / "candidates/seed1"), "--input", "-", "--format", "text"]) == 0
    assert json.loads(capsys.readouterr().out)["id"] == "stdin-1"


def test_documents_from_stdin_need_their_format(trained, capsys):
    assert main(["predict", "--model", str(trained / "candidates/seed1"), "--input", "-"]) == 2
    err = capsys.readouterr().err
    assert "--input -" in err and "Fix: give --format jsonl or --format text" in err


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("kind", ["missing", "folder"])
def test_input_that_is_not_a_file_is_named_with_the_fix(trained, tmp_path, capsys, kind):
    new = tmp_path / "new.jsonl"
    if kind == "folder":
        new.mkdir()
    assert main(["predict", "--model", str(trained / "candidates/seed1"), "--input", str(new)]) == 2
    err = capsys.readouterr().err
    problem = "file not found" if kind == "missing" else "is a folder, not a file"
    assert f"{new}: {problem}. Fix: check the --input path" in err
    assert "download" not in err and "Traceback" not in err


def test_unknown_jsonl_keys_are_refused_with_the_line_and_the_known_keys(trained, tmp_path, capsys):
    new = tmp_path / "new.jsonl"
    new.write_text(json.dumps({"sentences": ["the food was bland.", "we came."]}) + "\n"
                   + json.dumps({"lable": 1, "sentences": ["the food was bland.", "we came."]}) + "\n")
    assert main(["predict", "--model", str(trained / "candidates/seed1"), "--input", str(new)]) == 2
    err = capsys.readouterr().err
    assert f"{new}:2: unknown key 'lable' (known keys: id, label, rationale, sentences, text)" in err
    assert "Fix:" in err


# ----------------------------------------------------------------------------- the card against the weights


def _edit_card(folder: Path, **changes) -> None:
    """Set ``section.key`` values (``encoder__pooling="cls"``) in folder/model.json."""
    card = json.loads((folder / MODEL_CARD_FILE).read_text())
    for name, value in changes.items():
        section, key = name.split("__")
        card["settings"][section][key] = value
    (folder / MODEL_CARD_FILE).write_text(json.dumps(card))


def _strip_settings_record(path: Path) -> None:
    """Make model.pt look saved before the settings fingerprint: weights and model settings only."""
    import torch

    saved = torch.load(path, map_location="cpu", weights_only=True)
    torch.save({"state_dict": saved["state_dict"], "model": saved["model"]}, path)


def test_saved_model_records_the_fingerprint_of_its_prediction_settings(trained):
    import hashlib

    import torch

    saved = torch.load(trained / "candidates/seed1" / MODEL_FILE, map_location="cpu", weights_only=True)
    card = ModelCard.read(trained / "candidates/seed1" / MODEL_CARD_FILE)
    assert saved["encoder"] == {key: card.settings["encoder"][key] for key in ("pooling", "max_tokens", "max_sentences", "layers")}
    assert saved["model"] == card.settings["model"]
    canonical = json.dumps({"encoder": saved["encoder"], "model": saved["model"]}, sort_keys=True,
                           separators=(",", ":"), ensure_ascii=False)
    assert saved["settings_fingerprint"] == hashlib.sha256(canonical.encode()).hexdigest()


@pytest.mark.parametrize("weights_format", ["current", "before the settings fingerprint"])
def test_weights_of_another_model_than_the_card_describes_are_refused_naming_the_key(
        trained, tmp_path, weights_format):
    """model.json of a k = 1 model beside the model.pt of a k = 2 model: refused, not two positions."""
    from icda.settings import Settings
    from icda.steps.predict import predict_file
    from icda.steps.train import train_candidates

    values = json.loads((trained / "settings.json").read_text())
    values["model"]["k"] = 2
    train_candidates(Settings.from_dict(values), trained / "data", trained / "embeddings.pt", {"k2": 1}, tmp_path)
    folder = _model_copy(trained, tmp_path)
    shutil.copyfile(tmp_path / "k2" / MODEL_FILE, folder / MODEL_FILE)
    if weights_format != "current":
        _strip_settings_record(folder / MODEL_FILE)
    new = _one_document(tmp_path / "new.jsonl")
    with pytest.raises(DataError) as err:
        predict_file(folder, new)
    message = str(err.value)
    assert message.startswith(f"{folder / MODEL_CARD_FILE}: ") and "model.k = 1 here, 2 in model.pt" in message
    assert "re-export" in err.value.fix and "same model folder" in err.value.fix


def test_model_card_edited_after_training_is_refused_naming_the_keys(trained, tmp_path, capsys):
    folder = _model_copy(trained, tmp_path)
    new = _one_document(tmp_path / "new.jsonl")
    _edit_card(folder, encoder__pooling="cls", encoder__max_tokens=4)
    assert main(["predict", "--model", str(folder), "--input", str(new)]) == 2
    err = capsys.readouterr().err
    assert f"{folder / MODEL_CARD_FILE}: " in err
    assert "encoder.pooling = 'cls' here, 'mean' in model.pt" in err and "encoder.max_tokens = 4 here, 16 in model.pt" in err
    assert "Fix: re-export the model" in err


def test_model_card_may_name_a_moved_encoder_or_another_batch_size(trained, tmp_path, tiny_bert_dir):
    """The encoder's name and batch size do not shape a prediction: the encoder's files are
    checked by their own fingerprint, so a moved encoder may be named anew."""
    from icda.steps.predict import predict_file

    folder = _model_copy(trained, tmp_path)
    new = _one_document(tmp_path / "new.jsonl")
    reference = predict_file(folder, new)
    moved = shutil.copytree(tiny_bert_dir, tmp_path / "moved-encoder")
    _edit_card(folder, encoder__name=str(moved), encoder__batch_size=2)
    assert [p.to_json() for p in predict_file(folder, new)] == [p.to_json() for p in reference]


def test_model_saved_before_the_settings_fingerprint_predicts_with_a_warning_and_export_records_it(
        trained, tmp_path, caplog):
    import torch

    from icda.steps.predict import export_model, predict_file
    from icda.steps.select import select_iteration

    folder = _model_copy(trained, tmp_path)
    _strip_settings_record(folder / MODEL_FILE)
    new = _one_document(tmp_path / "new.jsonl")
    reference = predict_file(trained / "candidates/seed1", new)
    with caplog.at_level("WARNING"):
        old = predict_file(folder, new)
    assert [p.to_json() for p in old] == [p.to_json() for p in reference]
    assert "records no settings fingerprint" in caplog.text and "re-export" in caplog.text

    select_iteration(0, [folder], trained / "data").write(tmp_path / "choice.json")
    export_model(tmp_path / "choice.json", trained / "settings.json", tmp_path / "icda_model")
    saved = torch.load(tmp_path / "icda_model" / MODEL_FILE, map_location="cpu", weights_only=True)
    original = torch.load(trained / "candidates/seed1" / MODEL_FILE, map_location="cpu", weights_only=True)
    assert saved["settings_fingerprint"] == original["settings_fingerprint"]
    caplog.clear()
    with caplog.at_level("WARNING"):
        exported = predict_file(tmp_path / "icda_model", new)
    assert [p.to_json() for p in exported] == [p.to_json() for p in reference] and "fingerprint" not in caplog.text
    _edit_card(tmp_path / "icda_model", encoder__pooling="cls")
    with pytest.raises(DataError, match="encoder.pooling = 'cls' here, 'mean' in model.pt"):
        predict_file(tmp_path / "icda_model", new)


def test_class_names_reach_the_model_card_and_predict_prints_them(trained, tmp_path, capsys):
    """The prepared data's class names (stats.json) are recorded in the exported model.json, and
    predict prints the predicted class by name with its index, the probabilities in label order,
    and a JSONL input's label given by name; without names the labels stay indices."""
    import shutil

    data = tmp_path / "data"
    shutil.copytree(trained / "data", data)
    (data / "stats.json").write_text(json.dumps({"dataset": "toy", "class_names": ["neg", "pos"]}))
    choice = tmp_path / "choice.json"
    from icda.steps.select import select_iteration

    select_iteration(0, [trained / "candidates/seed1"], data).write(choice)
    aug = tmp_path / "aug.jsonl"
    aug.write_text("x\n")
    out = tmp_path / "icda_model"
    assert main(["finalize", "--augmented", str(aug), "--choices", str(choice), "--data-dir", str(data),
                 "--out", str(tmp_path / "icda_dataset.jsonl"), "--model-out", str(out),
                 "--settings", str(trained / "settings.json")]) == 0
    assert ModelCard.read(out / MODEL_CARD_FILE).class_names == ["neg", "pos"]
    capsys.readouterr()
    new = tmp_path / "new.jsonl"
    new.write_text('{"label": "pos", "sentences": ["the food was delicious.", "we came for dinner."]}\n'
                   '{"label": 0, "sentences": ["the food was awful.", "the room was quiet."]}\n')
    assert main(["predict", "--model", str(out), "--input", str(new)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    for row in rows:
        assert row["label"] == ["neg", "pos"][row["label_index"]]
        assert row["label_index"] == max(range(2), key=row["probabilities"].__getitem__)
    assert [row["given_label"] for row in rows] == ["pos", "neg"]
    # the candidate folder records no names: indices, as before
    assert main(["predict", "--model", str(trained / "candidates/seed1"), "--input", str(new)]) == 2
    assert "label 'pos' is not an integer" in capsys.readouterr().err
    new.write_text('{"label": 1, "sentences": ["the food was delicious.", "we came for dinner."]}\n')
    assert main(["predict", "--model", str(trained / "candidates/seed1"), "--input", str(new)]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["label"] == row["label_index"] in (0, 1) and row["given_label"] == 1
    # a card whose names do not fit the model's classes is refused
    card = json.loads((out / MODEL_CARD_FILE).read_text())
    (out / MODEL_CARD_FILE).write_text(json.dumps(card | {"class_names": ["a", "b", "c"]}))
    assert main(["predict", "--model", str(out), "--input", str(new)]) == 2
    assert "class_names" in capsys.readouterr().err


def test_positions_count_the_inputs_blank_sentences(trained, tmp_path, capsys):
    """blank entries of "sentences" are dropped before the model sees the
    document, but the positions index the record's own list: with a blank before every sentence,
    each position p of the plain record comes back as 2p + 1, and its rationale is the same."""
    docs = [json.loads(line) for line in (trained / "data/test.jsonl").read_text().splitlines()]
    plain, blanks = tmp_path / "plain.jsonl", tmp_path / "blanks.jsonl"
    plain.write_text("".join(json.dumps({"id": d["id"], "sentences": d["sentences"]}) + "\n" for d in docs))
    blanks.write_text("".join(json.dumps({"id": d["id"], "sentences": [x for s in d["sentences"] for x in ("", s)]})
                              + "\n" for d in docs))
    for path in (plain, blanks):
        assert main(["predict", "--model", str(trained / "candidates/seed1"), "--input", str(path),
                     "--out", str(path.with_suffix(".out"))]) == 0
    before, after = _rows(plain.with_suffix(".out")), _rows(blanks.with_suffix(".out"))
    assert [[2 * p + 1 for p in r["positions"]] for r in before] == [r["positions"] for r in after]
    assert [r["rationale"] for r in before] == [r["rationale"] for r in after]
    for row, doc in zip(after, docs):
        padded = [x for s in doc["sentences"] for x in ("", s)]
        assert row["rationale"] == [padded[i] for i in row["positions"]]


def test_an_id_that_is_not_a_string_or_integer_is_refused(tmp_path):
    """a JSONL "id": {"a": 1} became the Python repr "{'a': 1}"."""
    from icda.errors import DataError
    from icda.steps.predict import read_new_documents

    path = tmp_path / "new.jsonl"
    path.write_text(json.dumps({"id": {"a": 1}, "sentences": ["the food was cold."]}) + "\n")
    with pytest.raises(DataError, match=r'new\.jsonl:1: "id" \{"a": 1\} is not a string or an integer'):
        read_new_documents(path, 2)


def test_out_spelled_as_a_folder_an_empty_input_and_a_full_device(trained, tmp_path, capsys):
    """--out newdir/ (a missing folder) wrote a file named newdir; an empty
    input exited 0 without a word; --out /dev/full failed naming no path."""
    import errno
    import os

    from icda.io import open_output

    new = _one_document(tmp_path / "new.jsonl")
    assert main(["predict", "--model", str(trained / "candidates/seed1"), "--input", str(new),
                 "--out", str(tmp_path / "newdir") + "/"]) == 2
    err = capsys.readouterr().err
    assert f"--out {tmp_path / 'newdir'}: ends in /, so it names a folder, not a file" in err
    assert not (tmp_path / "newdir").exists()
    (tmp_path / "empty.jsonl").write_text("\n  \n")
    assert main(["predict", "--model", str(trained / "candidates/seed1"), "--input", str(tmp_path / "empty.jsonl"),
                 "--out", str(tmp_path / "out.jsonl")]) == 2
    assert f"{tmp_path / 'empty.jsonl'}: holds no document" in capsys.readouterr().err
    assert not (tmp_path / "out.jsonl").exists()
    if os.path.exists("/dev/full"):
        with pytest.raises(OSError) as exc:
            with open_output("/dev/full") as fh:
                fh.write("x\n")
        assert exc.value.errno == errno.ENOSPC and exc.value.filename == "/dev/full"
