"""The ERASER import (``format``/``test_format: eraser``) and the document ids ``prepare`` takes:
a docid is a plain file name inside docs/, documents split at line ends as ERASER's
reader splits them, evidences checked against what they point at, one clear error line for
annotations of the wrong type, and the documents among prepare's tracked inputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from icda.errors import ConfigError, DataError

TRAIN = [("0", "the food was bad."), ("1", "the food was good.")] * 3


def _dataset(root: Path, annotations: list, docs: dict[str, bytes | str]) -> tuple[dict, Path]:
    """A dataset whose train/dev are ICDA files and whose test split is ERASER's (``root/eraser``);
    returns its spec (validated) and the data folder."""
    from icda.data.dataset_spec import validate_spec

    (root / "eraser/docs").mkdir(parents=True, exist_ok=True)
    for name in ("train.txt", "dev.txt"):
        (root / name).write_text("".join(f"{label}\t{text}[SEP]we came.\n" for label, text in TRAIN))
    (root / "eraser/test.jsonl").write_text("".join((a if isinstance(a, str) else json.dumps(a)) + "\n"
                                                    for a in annotations))
    for docid, text in docs.items():
        path = root / "eraser/docs" / docid
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
    spec = validate_spec("mine", {"train": "train.txt", "dev": "dev.txt", "test": "eraser/test.jsonl",
                                  "test_format": "eraser"})
    return spec, root


def _read_test(root: Path, annotations: list, docs: dict[str, bytes | str]):
    from icda.steps.prepare import read_splits

    spec, data = _dataset(root, annotations, docs)
    return read_splits("mine", spec, data)["test"]


def _ann(ann_id: str = "r1", docid: str = "r1", start: int = 1, text: str | None = "b", **change) -> dict:
    ev = {"docid": docid, "start_token": start, "end_token": start + 1, "start_sentence": start,
          "end_sentence": start + 1}
    if text is not None:
        ev["text"] = text
    return {"annotation_id": ann_id, "classification": "1", "query": "?", "evidences": [[ev]]} | change


@pytest.mark.parametrize("where", ["docids", "evidence"])
@pytest.mark.parametrize("docid", ["/etc/hostname", "../../../../outside.txt"])
def test_eraser_import_refuses_a_docid_outside_docs(tmp_path, docid, where):
    """S1: an annotation naming /etc/hostname or ../../../../outside.txt is not read as a document."""
    root = tmp_path / "a/b/c/d"
    (tmp_path / "a/b/outside.txt").parent.mkdir(parents=True)
    (tmp_path / "a/b/outside.txt").write_text("a secret\nanother\n")  # docs/../../../../outside.txt
    ann = (_ann(docids=[docid], evidences=[]) if where == "docids"
           else _ann(docid=docid, start=0, text=None) | {"docids": None})
    with pytest.raises(DataError) as err:
        _read_test(root, [ann], {"r1": "a\nb\n"})
    assert f"eraser/test.jsonl:1: annotation r1: docid {docid!r} is not a file name in" in str(err.value)
    assert "Fix: give documents ids of letters" in str(err.value)


def test_eraser_import_refuses_a_document_linked_from_outside_docs(tmp_path):
    (tmp_path / "outside.txt").write_text("a\nb\n")
    root = tmp_path / "data"
    (root / "eraser/docs").mkdir(parents=True)
    (root / "eraser/docs/r1").symlink_to(tmp_path / "outside.txt")
    with pytest.raises(DataError, match=r"test.jsonl:1: annotation r1: document .*docs/r1 leads outside"):
        _read_test(root, [_ann()], {})


def test_eraser_import_splits_documents_on_line_ends_only(tmp_path):
    """ERASER's load_documents reads a document as text: \\n, \\r\\n and \\r end a line;
    U+2028, U+2029, \\x0b, \\x0c, \\x1c-\\x1e and \\x85 (which str.splitlines also breaks on) do not."""
    text = "a\u2028b c\x0bd\r\nsecond\x85one \x1cx\rthird\u2029z\n\nfourth\x0c\x1d\x1e\n"
    (doc,) = _read_test(tmp_path, [_ann(start=3, text="fourth\x0c\x1d\x1e") | {"evidences": [[{
        "docid": "r1", "text": "second\x85one \x1cx", "start_token": 2, "end_token": 4, "start_sentence": 1,
        "end_sentence": 2}]]}], {"r1": text})
    assert doc.sentences == ("a\u2028b c\x0bd", "second\x85one \x1cx", "third\u2029z", "fourth\x0c\x1d\x1e".strip())
    assert doc.rationale == frozenset({1})


@pytest.mark.parametrize("ann, problem", [
    (_ann(text="a"), "annotation r1: an evidence's text 'a' is not the text of its tokens [1, 2) of document r1 ('b')"),
    (_ann() | {"evidences": [[{"docid": "r1", "text": "a b", "start_sentence": 0, "end_sentence": 1}]]},
     "annotation r1: an evidence's text 'a b' is not the text of its sentences [0, 1) of document r1 ('a')"),
])
def test_eraser_import_checks_each_evidence_text_against_what_it_points_at(tmp_path, ann, problem):
    with pytest.raises(DataError) as err:
        _read_test(tmp_path, [ann], {"r1": "a\nb\n"})
    assert f"test.jsonl:1: {problem}" in str(err.value) and "Fix:" in str(err.value)


@pytest.mark.parametrize("ann, problem", [
    (_ann(evidences=5), "annotation r1: evidences is 5, not a list of evidence groups"),
    (_ann(evidences=[5]), "annotation r1: evidences is [5], not a list of evidence groups"),
    (_ann(evidences=[[5]]), "annotation r1: an evidence is not an object with a docid"),
    (_ann(docids=5), "annotation r1: docids is 5, not a list of document ids"),
    (_ann(docids=[["r1"]]), "annotation r1: docids is [[\"r1\"]], not a list of document ids"),
    (_ann(annotation_id=5), "annotation_id 5 cannot be a document id"),
    (_ann(classification=1), "annotation r1: classification 1 is not one of the classes ['0', '1']"),
    (_ann() | {"evidences": [[{"docid": "r1", "start_sentence": 0.5, "end_sentence": 1}]]},
     "annotation r1: an evidence's start_sentence/end_sentence 0.5, 1 are not integers"),
    ("[" * 100000, "not valid JSON (nested too deep)"),
    ('{"annotation_id": ' + "9" * 5000 + "}", "a number has more than 4,300 digits, more than Python reads"),
])
def test_eraser_annotations_of_the_wrong_type_are_one_error_line(tmp_path, ann, problem):
    with pytest.raises(DataError) as err:
        _read_test(tmp_path, [ann], {"r1": "a\nb\n"})
    assert f"test.jsonl:1: {problem}" in str(err.value) and "Fix:" in str(err.value)


def test_eraser_document_that_is_not_utf8_is_one_error_line(tmp_path):
    with pytest.raises(DataError) as err:
        _read_test(tmp_path, [_ann()], {"r1": b"a\n\xff\xfeb\n"})
    assert ("test.jsonl:1: annotation r1: its document" in str(err.value)
            and "docs/r1 is not UTF-8 text (byte 0xff on its line 2" in str(err.value)
            and "Fix: convert" in str(err.value))


def test_eraser_test_split_may_have_no_labels(tmp_path):
    """As the export writes a test set without gold labels (hotel): classification null."""
    (doc,) = _read_test(tmp_path, [_ann(classification=None)], {"r1": "a\nb\n"})
    assert doc.label is None and doc.rationale == frozenset({1})


@pytest.mark.parametrize("bad_id", ["review 1", "café-2", "a/b", "<x>", "..", ".hidden", "a" * 201])
def test_prepare_refuses_document_ids_that_are_not_file_names(tmp_path, bad_id):
    """Ids with a space, non-ASCII letters, / or < passed prepare and training, then failed every
    ERASER rule: prepare refuses them, naming file, line, id and the pattern."""
    from icda.data.dataset_spec import validate_spec
    from icda.steps.prepare import read_splits

    for name in ("train.txt", "dev.txt"):
        (tmp_path / name).write_text("".join(f"{label}\t{text}[SEP]we came.\n" for label, text in TRAIN))
    (tmp_path / "test.jsonl").write_text(json.dumps({"id": "ok-1", "sentences": ["a."], "rationale": [0]}) + "\n"
                                         + json.dumps({"id": bad_id, "sentences": ["b."], "rationale": [0]}) + "\n")
    spec = validate_spec("mine", {"train": "train.txt", "dev": "dev.txt", "test": "test.jsonl"})
    with pytest.raises(DataError) as err:
        read_splits("mine", spec, tmp_path)
    assert f"test.jsonl:2: id {bad_id!r} is not a plain file name" in str(err.value)
    assert "[A-Za-z0-9][A-Za-z0-9._-]{0,199}" in str(err.value)
    with pytest.raises(DataError) as err:  # the same in ERASER's format (the annotation id)
        _read_test(tmp_path / "e", [_ann(ann_id=bad_id, docids=["r1"])], {"r1": "a\nb\n"})
    assert f"test.jsonl:1: annotation_id {bad_id!r} cannot be a document id" in str(err.value)


def test_eraser_documents_are_prepare_inputs(tmp_path):
    """Editing docs/<docid> reruns prepare: the documents are among the rule's inputs and checksums."""
    from icda.workflow_config.dataset_inputs import data_checksums, data_files

    spec, data = _dataset(tmp_path, [_ann()], {"r1": "a\nb\n", "r2": "c\n"})
    config = {"data_dir": str(data), "datasets": {"mine": {"train": "train.txt", "dev": "dev.txt",
                                                           "test": "eraser/test.jsonl", "test_format": "eraser"}}}
    assert data_files(config, "mine") == [str(data / "train.txt"), str(data / "dev.txt"),
                                          str(data / "eraser/test.jsonl"), str(data / "eraser/docs/r1"),
                                          str(data / "eraser/docs/r2")]
    before = data_checksums(config, "mine")
    (data / "eraser/docs/r1").write_text("a\nB\n")
    after = data_checksums(config, "mine")
    assert [p for p in before if before[p] != after[p]] == [f"{data / 'eraser/docs'}/"]


def test_the_documents_checksum_stays_one_entry_however_many_documents(tmp_path):
    """Snakemake's rerun reason prints the checksums param's old and new value whole: the docs/
    folder is one digest, so the param stays short with 2,000 documents, and every change to the
    folder (a document's text, a renamed or an added document) still changes it."""
    from icda.workflow_config.dataset_inputs import data_checksums

    spec, data = _dataset(tmp_path, [_ann()], {f"r{i}": f"s{i}\n" for i in range(2000)})
    config = {"data_dir": str(data), "datasets": {"mine": {"train": "train.txt", "dev": "dev.txt",
                                                           "test": "eraser/test.jsonl", "test_format": "eraser"}}}
    first = data_checksums(config, "mine")
    assert len(first) == 4 and len(str(first)) < 1000
    docs = data / "eraser/docs"
    seen = [first]
    for change in (lambda: (docs / "r7").write_text("s7 changed\n"),
                   lambda: (docs / "r7").rename(docs / "r7b"),
                   lambda: (docs / "r2000").write_text("s2000\n")):
        change()
        seen.append(data_checksums(config, "mine"))
    assert len({s[f"{docs}/"] for s in seen}) == 4
    assert all(s[str(data / "train.txt")] == first[str(data / "train.txt")] for s in seen)


# --------------------------------------------------------------------------- ERASER as distributed (class names, token-only evidence)


def _distributed(root: Path) -> dict:
    """An ERASER dataset written the way ERASER distributes movies: class names NEG/POS, test
    evidences with token offsets only (sentence indices −1), one empty evidence span."""
    from icda.data.dataset_spec import validate_spec

    (root / "docs").mkdir(parents=True)
    docs = {"a1": "the plot was dull .\nthe acting was bad .\nwe left early .\n",
            "a2": "the plot was fun .\nthe acting was great .\nwe stayed .\n"}
    for docid, text in docs.items():
        (root / "docs" / docid).write_text(text)

    def ann(docid, label, evidences):
        return {"annotation_id": docid, "classification": label, "query": "What is the sentiment?",
                "docids": None, "evidences": [[e] for e in evidences], "query_type": None}

    def tokens(docid, start, end, text):
        return {"docid": docid, "text": text, "start_token": start, "end_token": end,
                "start_sentence": -1, "end_sentence": -1}

    train = [ann("a1", "NEG", [{"docid": "a1", "text": "the acting was bad .", "start_token": 5, "end_token": 10,
                               "start_sentence": 1, "end_sentence": 2}]),
             ann("a2", "POS", [{"docid": "a2", "text": "the acting was great .", "start_token": 5,
                               "end_token": 10, "start_sentence": 1, "end_sentence": 2}])]
    test = [ann("a1", "NEG", [tokens("a1", 3, 8, "dull . the acting was"), tokens("a1", 4, 4, "")]),
            ann("a2", "POS", [tokens("a2", 10, 12, "we stayed")])]
    for split, lines in (("train", train), ("val", train), ("test", test)):
        (root / f"{split}.jsonl").write_text("".join(json.dumps(a) + "\n" for a in lines))
    return validate_spec("movies", {"train": "train.jsonl", "dev": "val.jsonl", "test": "test.jsonl",
                                    "format": "eraser", "test_format": "eraser", "min_sentences": 1})


def test_eraser_class_names_map_to_sorted_indices_and_token_evidence_to_sentences(tmp_path):
    """NEG/POS are read as 0/1 (sorted) and recorded; a token-only evidence marks every sentence
    it touches (tokens 3–7 span sentences 0 and 1); the empty span is skipped and counted."""
    from icda.steps.prepare import read_splits

    spec, notes = _distributed(tmp_path), {}
    splits = read_splits("movies", spec, tmp_path, notes)
    assert notes == {"class_names": ["NEG", "POS"], "empty_evidences": 1}
    assert [(d.id, d.label, sorted(d.rationale)) for d in splits["test"]] == [("a1", 0, [0, 1]), ("a2", 1, [2])]
    assert [d.label for d in splits["train"]] == [0, 1]


def test_eraser_class_names_given_fix_another_order_and_refuse_unknown_names(tmp_path):
    from icda.data.dataset_spec import validate_spec
    from icda.steps.prepare import read_splits

    spec = _distributed(tmp_path)
    flipped = validate_spec("movies", {k: spec[k] for k in ("train", "dev", "test", "format", "test_format")}
                            | {"min_sentences": 1, "class_names": ["POS", "NEG"]})
    assert [d.label for d in read_splits("movies", flipped, tmp_path)["test"]] == [1, 0]
    wrong = flipped | {"class_names": ["POS", "NEUTRAL"]}
    with pytest.raises(DataError, match=r"train.jsonl:1: classification 'NEG' is not one of the class names"):
        read_splits("movies", wrong, tmp_path)
    with pytest.raises(ConfigError, match=r"datasets.movies.class_names: \['POS', 'POS'\] is not a list of 2 distinct"):
        validate_spec("movies", {"train": "t", "test": "t", "class_names": ["POS", "POS"]})


def test_eraser_evidence_text_is_checked_against_its_token_offsets(tmp_path):
    from icda.steps.prepare import read_splits

    spec = _distributed(tmp_path)
    lines = (tmp_path / "test.jsonl").read_text().splitlines()
    bad = json.loads(lines[1])
    bad["evidences"][0][0]["text"] = "we left"
    (tmp_path / "test.jsonl").write_text(lines[0] + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(DataError, match=r"test.jsonl:2: annotation a2: an evidence's text 'we left' is not the "
                                        r"text of its tokens \[10, 12\)"):
        read_splits("movies", spec, tmp_path)


@given(lengths=st.lists(st.integers(1, 6), min_size=1, max_size=8), data=st.data())
def test_a_token_span_marks_exactly_the_sentences_it_touches(lengths, data):
    """Property (ERASER's token-only evidence): for any document and any non-empty
    token span inside it, the sentences returned are the ones holding at least one of its tokens."""
    from icda.data.eraser_files import _token_sentences

    doc = [[f"t{s}_{i}" for i in range(n)] for s, n in enumerate(lengths)]
    total = sum(lengths)
    start = data.draw(st.integers(0, total - 1))
    end = data.draw(st.integers(start + 1, total))
    owner = [s for s, n in enumerate(lengths) for _ in range(n)]
    first, last = _token_sentences(doc, (start, end))
    assert list(range(first, last)) == sorted(set(owner[start:end]))


def test_a_docs_entry_that_is_a_folder_is_named_as_such(tmp_path):
    """docs/<docid> that is a folder was reported as missing."""
    (tmp_path / "eraser/docs/r1").mkdir(parents=True)
    with pytest.raises(DataError, match=r"its document .*docs/r1 is a folder, not a file"):
        _read_test(tmp_path, [_ann()], {})


def test_a_class_only_test_names_is_pointed_at(tmp_path):
    """a class present only in test was not named (the error pointed at
    another class's line)."""
    from icda.data.eraser_files import class_names

    for split, labels in (("train", ["NEG", "POS"]), ("test", ["NEG", "NEU", "POS"])):
        (tmp_path / f"{split}.jsonl").write_text("".join(json.dumps({"classification": c}) + "\n" for c in labels))
    with pytest.raises(DataError, match=r"test\.jsonl:2: the ERASER files name 3 classes \['NEG', 'NEU', 'POS'\], "
                                        r"but the dataset has 2; 'NEU' appears only in .*test\.jsonl"):
        class_names([tmp_path / "train.jsonl", tmp_path / "test.jsonl"], 2)


class _Payload:
    """A Python object a model file should never hold."""


def test_a_model_file_with_python_objects_is_refused_without_torchs_advice(tmp_path):
    """the weights-only refusal quoted torch's advice to load with
    weights_only=False (which would run the file's code)."""
    import torch

    from icda.embed import EmbeddingCache
    from icda.loading import read_saved_model

    for path in (tmp_path / "model.pt", tmp_path / "embeddings.pt"):
        torch.save({"state_dict": {}, "payload": _Payload(), "format": 1}, path)
    with pytest.raises(DataError) as err:
        read_saved_model(tmp_path / "model.pt")
    assert "which icda never unpickles" in str(err.value) and "weights_only" not in str(err.value)
    with pytest.raises(DataError) as err:
        EmbeddingCache.load(tmp_path / "embeddings.pt")
    assert "which icda never unpickles" in str(err.value) and "weights_only" not in str(err.value)
