"""``python -m icda export-eraser``: the ERASER data directory of a prepared split and a
trained selector's predictions in ERASER's results format, read back as ERASER's utils.py reads
them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from icda.cli import main
from icda.data.document import Document, write_documents
from icda.eraser_metrics import AOPC_THRESHOLDS
from icda.errors import DataError
from icda.records import Predictions
from icda.steps.eraser import bin_size, export_data, score_eraser

POSITIVE = ["the food was delicious.", "the dish was amazing.", "the staff was friendly."]
NEGATIVE = ["the food was terrible.", "the dish was bland.", "the staff was rude."]
FILLER = ["we came for dinner.", "the table was by the door.", "parking was on the side.",
          "we had coffee after.", "the room was quiet.", "it was a long week."]


def _docs(prefix: str, n: int, offset: int = 0, rationale: bool = False) -> list[Document]:
    docs = []
    for i in range(n):
        j = i + offset
        label = i % 2
        sentences = [FILLER[(j + s) % len(FILLER)] for s in range(4)]
        sentences.insert(j % 5, (POSITIVE if label else NEGATIVE)[j % 3])
        docs.append(Document(f"{prefix}-{i}", label, tuple(sentences), frozenset({j % 5}) if rationale else None))
    return docs


#: test documents beside the annotated ones: one sentence only (its rationale removed leaves
#: nothing), and three the export leaves out
EXTRA = [Document("test-short", 1, ("the food was delicious.",), frozenset({0})),
         Document("test-none", 0, ("the food was terrible.", "we came for dinner."), None),
         Document("test-empty", 0, ("the food was terrible.", "we came for dinner."), frozenset()),
         Document("test-unlabelled", None, ("the food was terrible.", "we came for dinner."), frozenset({0}))]


@pytest.fixture(scope="module")
def trained(tmp_path_factory, tiny_encoder_settings):
    """A prepared toy dataset (test documents with ground truth) and one frozen-mode candidate."""
    from icda.settings import ModelSettings, Settings, TrainSettings
    from icda.steps.embed import embed_splits
    from icda.steps.train import train_candidates

    root = tmp_path_factory.mktemp("eraser")
    data = root / "data"
    write_documents(_docs("train", 40), data / "train.jsonl")
    write_documents(_docs("dev", 16, 1), data / "dev.jsonl")
    write_documents(_docs("test", 8, 2, rationale=True) + EXTRA, data / "test.jsonl")
    settings = Settings(encoder=tiny_encoder_settings, model=ModelSettings(d_model=16, heads=2, dff=32),
                        train=TrainSettings(lr=1e-2, batch_size=16, max_epochs=2, patience=2), device="cpu")
    (root / "settings.json").write_text(json.dumps(settings.to_dict()))
    embed_splits({s: data / f"{s}.jsonl" for s in ("train", "dev", "test")}, settings.encoder,
                 root / "embeddings.pt", progress=False)
    train_candidates(settings, data, root / "embeddings.pt", {"seed1": 1}, root / "candidates")
    return root


def result_line(annotation_id: str, docid: str, n_tokens: int = 2, n_sentences: int = 1, **change) -> dict:
    """A results line in ERASER's format for one document of ``n_tokens`` tokens and
    ``n_sentences`` sentences (its first token selected), every field present; ``change``
    replaces fields."""
    probs = {"0": 0.25, "1": 0.75}
    line = {"annotation_id": annotation_id,
            "rationales": [{"docid": docid, "hard_rationale_predictions": [{"start_token": 0, "end_token": 1}],
                            "soft_rationale_predictions": [0.5] * n_tokens,
                            "soft_sentence_predictions": [1.0 / n_sentences] * n_sentences}],
            "classification": "1", "classification_scores": probs,
            "comprehensiveness_classification_scores": probs, "sufficiency_classification_scores": probs,
            "thresholded_scores": [{"threshold": t, "comprehensiveness_classification_scores": probs,
                                    "sufficiency_classification_scores": probs} for t in AOPC_THRESHOLDS]}
    return line | change


def _eraser_documents(out: Path) -> dict[str, list[list[str]]]:
    """The docs/ folder as ERASER's utils.load_documents reads it."""
    return {p.name: [[t for t in line.strip().split(" ") if t] for line in p.read_text().splitlines() if line.strip()]
            for p in (out / "docs").iterdir()}


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_data_export_writes_documents_and_annotations(trained, tmp_path):
    out = export_data(trained / "data", tmp_path / "eraser")
    assert out.unannotated == ["test-none", "test-empty"] and out.unlabelled == ["test-unlabelled"]
    docs = _eraser_documents(tmp_path / "eraser")
    annotations = _rows(tmp_path / "eraser/test.jsonl")
    assert sorted(docs) == sorted(a["annotation_id"] for a in annotations) == sorted(d.id for d in out.documents)
    by_id = {d.id: d for d in out.documents}
    for ann in annotations:
        doc = by_id[ann["annotation_id"]]
        assert docs[doc.id] == [s.split() for s in doc.sentences]  # one line a sentence, whitespace tokens
        assert ann["classification"] == (None if doc.label is None else str(doc.label)) and ann["docids"] == [doc.id]
        flat = [t for s in docs[doc.id] for t in s]
        assert len(ann["evidences"]) == len(doc.rationale)
        for (ev,) in ann["evidences"]:  # one evidence per group, one group per ground-truth sentence
            i = ev["start_sentence"]
            assert ev["end_sentence"] == i + 1 and i in doc.rationale
            assert flat[ev["start_token"]: ev["end_token"]] == docs[doc.id][i] == ev["text"].split()
    # kept on request: the document annotated with no rationale sentence, without evidence
    out = export_data(trained / "data", tmp_path / "kept", keep_empty=True)
    assert out.unannotated == ["test-none"]
    assert {a["annotation_id"]: a["evidences"] for a in _rows(tmp_path / "kept/test.jsonl")}["test-empty"] == []


@pytest.mark.parametrize("doc, problem", [
    (Document("a/b", 0, ("the food was cold.", "we came."), frozenset({0})),
     "test.jsonl:1: document id 'a/b' cannot be an ERASER file name"),
    (Document("a", 0, ("the food was cold.", "we came."), frozenset({2})),
     "test.jsonl:1: ground-truth sentence 2 of document a is outside its 2 sentences"),
    (Document("a", 0, ("the food was cold.", "  "), frozenset({0})),
     "test.jsonl:1: sentence 1 of document a has no token"),
])
def test_bad_documents_are_named_by_file_and_line(tmp_path, doc, problem):
    write_documents([doc], tmp_path / "test.jsonl")
    with pytest.raises(DataError, match="Fix:") as err:
        export_data(tmp_path, tmp_path / "eraser")
    assert problem in str(err.value)


def test_bin_size_rounds_up_to_whole_sentences():
    # ranked sentences of 5, 3 and 2 tokens (L = 10)
    assert [bin_size([5, 3, 2], t) for t in (0.01, 0.5, 0.6, 0.8, 0.81, 1.0)] == [1, 1, 2, 2, 3, 3]
    assert bin_size([3] * 10, 0.1) == 1  # 0.1 · 30 is 3.0000000000000004 in floating point


def test_predictions_in_eraser_format(trained, tmp_path):
    """The known answers: the hard rationales are the positions training recorded on the test
    split, the class scores its probabilities; the scores beside them are ERASER's metrics."""
    import torch

    out_dir, candidate = tmp_path / "eraser", trained / "candidates/seed1"
    assert main(["export-eraser", "--data-dir", str(trained / "data"), "--out-dir", str(out_dir), "--model",
                 str(candidate), "--embeddings", str(trained / "embeddings.pt"), "--predictions",
                 str(tmp_path / "pred.jsonl"), "--scores", str(tmp_path / "scores.json"), "--device", "cpu"]) == 0
    rows = _rows(tmp_path / "pred.jsonl")
    docs = _eraser_documents(out_dir)
    recorded = Predictions.read(candidate / "predictions.json").test
    test_ids = [json.loads(line)["id"] for line in (trained / "data/test.jsonl").read_text().splitlines()]
    assert [r["annotation_id"] for r in rows] == [i for i in test_ids if i in docs]
    for row in rows:
        d = test_ids.index(row["annotation_id"])
        sentences = docs[row["annotation_id"]]
        starts = [sum(len(s) for s in sentences[:i]) for i in range(len(sentences) + 1)]
        (rat,) = row["rationales"]
        spans = [(h["start_token"], h["end_token"]) for h in rat["hard_rationale_predictions"]]
        assert spans == [(starts[i], starts[i + 1]) for i in recorded.positions[d]]
        assert row["classification_scores"]["1"] == pytest.approx(recorded.prob_positive[d], abs=1e-5)
        assert row["classification"] == str(int(recorded.prob_positive[d] > 0.5))
        assert sum(rat["soft_sentence_predictions"]) == pytest.approx(1.0)
        assert rat["soft_rationale_predictions"] == [s for s, sent in zip(rat["soft_sentence_predictions"], sentences)
                                                     for _ in sent]
        assert [b["threshold"] for b in row["thresholded_scores"]] == list(AOPC_THRESHOLDS)
        # k = 1: the top 1 % of tokens is the selected sentence, the same reduced documents
        first = row["thresholded_scores"][0]
        for key in ("comprehensiveness_classification_scores", "sufficiency_classification_scores"):
            assert first[key]["1"] == pytest.approx(row[key]["1"], abs=1e-6)
    # a one-sentence document without its rationale is empty: the classifier with nothing selected
    bias = torch.load(candidate / "model.pt", weights_only=True)["state_dict"]["classifier.1.bias"]
    short = next(r for r in rows if r["annotation_id"] == "test-short")
    assert short["comprehensiveness_classification_scores"]["1"] == pytest.approx(
        float(torch.softmax(bias.double(), 0)[1]))
    scores = json.loads((tmp_path / "scores.json").read_text())
    assert scores["left_out"] == {"unannotated": ["test-none", "test-empty"]}
    # test-unlabelled is exported and scored; the accuracy counts the others
    assert "test-unlabelled" in {r["annotation_id"] for r in rows}
    assert scores["classification_scores"]["gold_labels"] == len(rows) - 1
    # k sentences per document: the sentence-level micro precision is the paper's precision
    assert scores["sentence_prf"]["instance_micro"]["p"] == pytest.approx(scores["paper"]["precision"])
    assert scores["rationale_prf"]["instance_micro"]["p"] == pytest.approx(scores["paper"]["precision"])
    assert scores["classification_scores"]["accuracy"] == pytest.approx(scores["paper"]["accuracy"])
    # scored again from the files, as ERASER's metrics.py reads them: the same numbers
    again = score_eraser(out_dir, tmp_path / "pred.jsonl")
    assert json.dumps(again, sort_keys=True) == json.dumps(
        {k: v for k, v in scores.items() if k not in ("paper", "model", "split", "left_out")}, sort_keys=True)


def test_scores_record_what_they_are_of(trained, tmp_path):
    """With --dataset, --run and --iteration the scores name what they are of, as eval.json does
    (the tables read them); --score-only records them too; no --iteration is COMP."""
    from icda.records import EraserScores

    out_dir, pred, scores = tmp_path / "eraser", tmp_path / "pred.jsonl", tmp_path / "eraser_scores.json"
    assert main(["export-eraser", "--data-dir", str(trained / "data"), "--out-dir", str(out_dir), "--model",
                 str(trained / "candidates/seed1"), "--embeddings", str(trained / "embeddings.pt"), "--predictions",
                 str(pred), "--scores", str(scores), "--device", "cpu", "--dataset", "toy", "--run", "2",
                 "--iteration", "0"]) == 0
    record = EraserScores.read(scores)
    assert (record.dataset, record.run, record.iteration) == ("toy", 2, 0)
    assert list(json.loads(scores.read_text()))[:3] == ["dataset", "run", "iteration"]
    assert record.summary()["sentence_p"] == pytest.approx(record.paper["precision"])
    assert main(["export-eraser", "--score-only", "--out-dir", str(out_dir), "--predictions", str(pred),
                 "--scores", str(tmp_path / "again.json"), "--dataset", "toy", "--run", "2"]) == 0
    again = EraserScores.read(tmp_path / "again.json")
    assert (again.dataset, again.run, again.iteration) == ("toy", 2, None)
    assert again.summary() == record.summary()


def test_score_only_names_a_missing_document(trained, tmp_path, capsys):
    export_data(trained / "data", tmp_path / "eraser")
    pred = tmp_path / "pred.jsonl"
    pred.write_text(json.dumps(result_line("x", "nowhere")) + "\n")
    assert main(["export-eraser", "--score-only", "--out-dir", str(tmp_path / "eraser"), "--predictions",
                 str(pred)]) == 2
    err = capsys.readouterr().err
    assert f"{pred}:1: document nowhere: its document {tmp_path / 'eraser/docs/nowhere'} does not exist" in err
    assert "Fix:" in err


# --------------------------------------------------------------------------- import (format: eraser)


def test_export_then_read_gives_the_same_documents(tmp_path):
    """Round trip: what export-eraser writes, format: eraser reads back (three classes)."""
    from icda.data.dataset_spec import validate_spec
    from icda.data.eraser_files import read_eraser
    from icda.steps.prepare import read_splits

    docs = {split: [Document(f"{split}-{i}", i % 3, tuple(FILLER[(i + s) % 6] for s in range(5)),
                             frozenset({i % 5, (i + 2) % 5} if i % 4 else {i % 5}))
                    for i in range(9)] for split in ("train", "dev", "test")}
    for split, split_docs in docs.items():
        write_documents(split_docs, tmp_path / "prepared" / f"{split}.jsonl")
        export_data(tmp_path / "prepared", tmp_path / "eraser", split)
    assert sorted(p.name for p in (tmp_path / "eraser").glob("*.jsonl")) == ["test.jsonl", "train.jsonl", "val.jsonl"]
    assert read_eraser(tmp_path / "eraser/test.jsonl", classes=range(3)) == docs["test"]
    spec = validate_spec("mine", {"train": "train.jsonl", "dev": "val.jsonl", "test": "test.jsonl",
                                  "format": "eraser", "test_format": "eraser", "classes": 3})
    assert read_splits("mine", spec, tmp_path / "eraser") == docs


def _annotation(**change) -> dict:
    ann = {"annotation_id": "r1", "classification": "1", "query": "?", "evidences": [
        [{"docid": "r1", "text": "b", "start_token": 1, "end_token": 2, "start_sentence": 1, "end_sentence": 2}]]}
    return ann | change


@pytest.mark.parametrize("ann, problem", [
    (_annotation(annotation_id="r2", evidences=[[{"docid": "r9", "start_sentence": 0, "end_sentence": 1}]]),
     "annotation r2: its document"),
    (_annotation(), "annotation id 'r1' already used on line 1"),
    (_annotation(evidences=[[{"docid": "r1", "start_sentence": 1, "end_sentence": 3}]]),
     "annotation r1: evidence sentences [1, 3) lie outside document r1 (2 sentences"),
    (_annotation(evidences=[[{"docid": "r1", "text": "b"}]]),
     "annotation r1: an evidence has neither sentence nor token indices"),
    (_annotation(evidences=[[{"docid": "r1", "start_token": 1, "end_token": 3}]]),
     "annotation r1: evidence tokens [1, 3) lie outside document r1 (2 tokens"),
    (_annotation(classification="POS"), "annotation r1: classification 'POS' is not one of the classes ['0', '1']"),
    (_annotation(docids=["r1", "r2"]), "annotation r1 spans 2 documents"),
])
def test_bad_eraser_input_is_named_by_file_line_and_annotation(tmp_path, ann, problem):
    from icda.data.eraser_files import read_eraser

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs/r1").write_text("a\nb\n")
    (tmp_path / "test.jsonl").write_text(json.dumps(_annotation()) + "\n" + json.dumps(ann) + "\n")
    with pytest.raises(DataError, match="Fix:") as err:
        read_eraser(tmp_path / "test.jsonl")
    assert f"test.jsonl:2: {problem}" in str(err.value)


# --------------------------------------------------------------------------- export-eraser's files as outside input


def _exported(trained: Path, tmp_path: Path) -> tuple[Path, Path]:
    """An ERASER data directory of the toy test split and the candidate's predictions on it."""
    out_dir, pred = tmp_path / "eraser", tmp_path / "pred.jsonl"
    assert main(["export-eraser", "--data-dir", str(trained / "data"), "--out-dir", str(out_dir), "--model",
                 str(trained / "candidates/seed1"), "--embeddings", str(trained / "embeddings.pt"), "--predictions",
                 str(pred), "--device", "cpu"]) == 0
    return out_dir, pred


def test_score_only_refuses_a_docid_outside_docs(trained, tmp_path, capsys):
    """S1: a predictions line whose docid is ../../../../../etc/hostname is not read as a document."""
    out_dir, pred = _exported(trained, tmp_path)
    rows = _rows(pred)
    bad = "../../../../../etc/hostname"
    rows[0]["rationales"][0]["docid"] = bad
    pred.write_text("".join(json.dumps(r) + "\n" for r in rows))
    capsys.readouterr()
    assert main(["export-eraser", "--score-only", "--out-dir", str(out_dir), "--predictions", str(pred),
                 "--scores", str(tmp_path / "scores.json")]) == 2
    err = capsys.readouterr().err
    assert f"{pred}:1: annotation '{rows[0]['annotation_id']}': docid {bad!r} is not a file name in" in err
    assert "Fix: give documents ids of letters" in err and "Traceback" not in err
    assert not (tmp_path / "scores.json").exists()


@pytest.mark.parametrize("case", ["out_dir_is_data_dir", "predictions_into_model", "scores_are_predictions",
                                  "scores_are_annotations"])
def test_export_eraser_refuses_an_output_that_is_one_of_its_inputs(trained, tmp_path, capsys, case):
    """export-eraser (like predict, one shared guard) writes nothing over what it reads."""
    import shutil

    data = Path(shutil.copytree(trained / "data", tmp_path / "data"))
    model = Path(shutil.copytree(trained / "candidates/seed1", tmp_path / "model"))
    out_dir, pred = _exported(trained, tmp_path)
    watched = [data / "test.jsonl", model / "model.pt", model / "model.json", pred, out_dir / "test.jsonl"]
    before = {p: p.read_bytes() for p in watched}
    common = ["--embeddings", str(trained / "embeddings.pt"), "--device", "cpu"]
    argv, option, clash = {
        "out_dir_is_data_dir": (["--data-dir", str(data), "--out-dir", str(data)], "--out-dir",
                                f"is the input --data-dir {data}"),
        "predictions_into_model": (["--data-dir", str(data), "--out-dir", str(tmp_path / "e2"), "--model", str(model),
                                    "--predictions", str(model / "model.pt"), "--scores", str(model / "model.json"),
                                    *common], "--predictions", f"lies inside the input folder --model {model}"),
        "scores_are_predictions": (["--score-only", "--out-dir", str(out_dir), "--predictions", str(pred), "--scores",
                                    str(pred)], "--scores", f"is the input --predictions {pred}"),
        "scores_are_annotations": (["--score-only", "--out-dir", str(out_dir), "--predictions", str(pred), "--scores",
                                    str(out_dir / "test.jsonl")], "--scores",
                                   f"is the input the ERASER annotations {out_dir / 'test.jsonl'}"),
    }[case]
    capsys.readouterr()
    assert main(["export-eraser", *argv]) == 2
    err = capsys.readouterr().err
    assert option in err and clash in err and "Fix: " in err and "Traceback" not in err and err.count("\n") == 1
    assert {p: p.read_bytes() for p in watched} == before


def test_score_only_refuses_spans_outside_the_document_and_repeated_ids(trained, tmp_path, capsys):
    """A negative start_token, a span past the document's end and an annotation scored twice are
    errors naming the line, not numbers."""
    out_dir, pred = _exported(trained, tmp_path)
    rows = _rows(pred)
    n_tokens = sum(len(s) for s in _eraser_documents(out_dir)[rows[0]["annotation_id"]])
    for change, problem in [
        ({"start_token": -1, "end_token": 1}, "hard rationale span [-1, 1) is not inside document"),
        ({"start_token": 0, "end_token": n_tokens + 1}, f"hard rationale span [0, {n_tokens + 1}) is not inside"),
        ("repeat", "already has a results line (line 1): it would count twice"),
    ]:
        lines = [json.loads(json.dumps(r)) for r in rows]
        if change == "repeat":
            lines.insert(1, lines[0])
            where = f"{pred}:2:"
        else:
            lines[0]["rationales"][0]["hard_rationale_predictions"] = [change]
            where = f"{pred}:1:"
        pred.write_text("".join(json.dumps(r) + "\n" for r in lines))
        capsys.readouterr()
        assert main(["export-eraser", "--score-only", "--out-dir", str(out_dir), "--predictions", str(pred)]) == 2
        err = capsys.readouterr().err
        assert where in err and problem in err and "Fix:" in err, err


@pytest.mark.parametrize("change, problem", [
    ({"rationales": 5}, "rationales is 5, not a list of objects"),
    ({"classification_scores": "x"}, 'classification_scores is "x", not an object of class probabilities'),
    ({"classification": 1}, "classification is 1, not a string"),
    ({"thresholded_scores": [{"threshold": "0.5"}]}, "thresholded_scores is"),
])
def test_score_only_lines_of_the_wrong_type_are_one_error_line(trained, tmp_path, capsys, change, problem):
    out_dir, pred = _exported(trained, tmp_path)
    rows = _rows(pred)
    rows[1] |= change
    pred.write_text("".join(json.dumps(r) + "\n" for r in rows))
    capsys.readouterr()
    assert main(["export-eraser", "--score-only", "--out-dir", str(out_dir), "--predictions", str(pred)]) == 2
    err = capsys.readouterr().err
    assert f"{pred}:2: annotation '{rows[1]['annotation_id']}': {problem}" in err and "Traceback" not in err


def test_score_only_fix_names_the_real_problem_not_the_aopc_thresholds(trained, tmp_path, capsys):
    """Only missing AOPC bins are told to export again with the thresholds; a soft score list of the
    wrong length is told what it should hold."""
    out_dir, pred = _exported(trained, tmp_path)
    rows = _rows(pred)
    rows[0]["rationales"][0]["soft_rationale_predictions"].append(0.5)
    pred.write_text("".join(json.dumps(r) + "\n" for r in rows))
    capsys.readouterr()
    assert main(["export-eraser", "--score-only", "--out-dir", str(out_dir), "--predictions", str(pred)]) == 2
    err = capsys.readouterr().err
    assert f"{pred}:1:" in err and "soft_rationale_predictions holds" in err and "Fix: give one score per token" in err
    assert "AOPC" not in err
    assert main(["export-eraser", "--score-only", "--out-dir", str(out_dir), "--predictions", str(_exported(
        trained, tmp_path / "again")[1]), "--aopc-thresholds", "0.3"]) == 2
    err = capsys.readouterr().err
    assert ":1: annotation" in err and "not [0.3]" in err and "--aopc-thresholds" in err


def test_export_of_a_test_split_without_labels_scores_every_metric_but_accuracy(trained, tmp_path, capsys):
    """A hotel-format test split (ground truth, no class label): every document is exported
    (classification null) and scored; only the accuracy, which needs gold labels, is None."""
    import shutil

    data = Path(shutil.copytree(trained / "data", tmp_path / "data"))
    docs = [json.loads(line) for line in (data / "test.jsonl").read_text().splitlines()]
    write_documents([Document(d["id"], None, tuple(d["sentences"]), frozenset(d["rationale"]))
                     for d in docs if d.get("rationale")], data / "test.jsonl")
    out_dir, scores = tmp_path / "eraser", tmp_path / "scores.json"
    assert main(["export-eraser", "--data-dir", str(data), "--out-dir", str(out_dir), "--model",
                 str(trained / "candidates/seed1"), "--embeddings", str(trained / "embeddings.pt"), "--predictions",
                 str(tmp_path / "pred.jsonl"), "--scores", str(scores), "--device", "cpu"]) == 0
    assert "without a gold label: classification accuracy n/a (no gold labels)" in capsys.readouterr().err
    annotations = _rows(out_dir / "test.jsonl")
    assert len(annotations) == len(_rows(tmp_path / "pred.jsonl")) == 10
    assert {a["classification"] for a in annotations} == {None}
    got = json.loads(scores.read_text())
    assert got["classification_scores"]["accuracy"] is None and got["classification_scores"]["gold_labels"] == 0
    assert got["paper"]["accuracy"] is None and got["paper"]["n_docs"] == 10
    for key in ("comprehensiveness", "sufficiency", "comprehensiveness_aopc", "sufficiency_aopc"):
        assert isinstance(got["classification_scores"][key], float)
    assert 0 <= got["sentence_prf"]["instance_micro"]["p"] <= 1
    assert got["sentence_prf"]["instance_micro"]["p"] == pytest.approx(got["paper"]["precision"])
    # and scored again from the files
    again = score_eraser(out_dir, tmp_path / "pred.jsonl")
    assert again["classification_scores"] == got["classification_scores"]


def test_score_only_refuses_overlapping_hard_spans(trained, tmp_path, capsys):
    """overlapping predicted spans counted their shared tokens twice (IOU F1
    1.006, exit 0; with --scores a traceback): refused in one line naming the line and spans."""
    out_dir, pred = _exported(trained, tmp_path)
    rows = _rows(pred)
    rows[0]["rationales"][0]["hard_rationale_predictions"] = [{"start_token": 0, "end_token": 3},
                                                              {"start_token": 1, "end_token": 4}]
    pred.write_text("".join(json.dumps(r) + "\n" for r in rows))
    for extra in ([], ["--scores", str(tmp_path / "scores.json")]):
        capsys.readouterr()
        assert main(["export-eraser", "--score-only", "--out-dir", str(out_dir), "--predictions", str(pred),
                     *extra]) == 2
        err = capsys.readouterr().err
        assert f"{pred}:1:" in err and "hard rationale spans [0, 3) and [1, 4)" in err and "overlap" in err
        assert err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "scores.json").exists()
