"""Property-based tests (Hypothesis) of ERASER's readers: the annotations JSONL with its
``docs/`` files (``test_format: eraser``, :func:`icda.data.eraser_files.read_eraser`), a document
file alone (:func:`icda.data.eraser_files.read_document`) and ``export-eraser --score-only``'s
predictions (:func:`icda.steps.eraser.score_eraser`), fed arbitrary text, control characters, lone
surrogates, invalid UTF-8, odd numbers (NaN, ±inf, huge, negative), odd types and docids that
point outside ``docs/``.

The property: either the input is read as documented, or a DataError names the file and the line
— never another exception, and no file outside the data folder is opened, none is written.
Examples per test: the Hypothesis profile of tests/conftest.py (``HYPOTHESIS_PROFILE``).
"""

from __future__ import annotations

import builtins
import contextlib
import io
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Iterator
from unittest import mock

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, strategies as st  # noqa: E402

from icda.data.document import is_doc_id  # noqa: E402
from icda.data.eraser_files import read_document, read_eraser  # noqa: E402
from icda.eraser_metrics import AOPC_THRESHOLDS  # noqa: E402
from icda.errors import DataError  # noqa: E402
from icda.steps.eraser import score_eraser  # noqa: E402

import sklearn.metrics  # noqa: E402,F401  -- imported here, not inside the tests' file watch

# --------------------------------------------------------------------------- strategies

#: any code point, surrogates included (as file bytes they are invalid UTF-8)
ANY_CHAR = st.characters(exclude_categories=())
#: line ends, the other breaks str.splitlines() knows, control characters, JSON's own characters
SPECIAL = st.sampled_from(["\n", "\r", "\r\n", " ", "  ", "\t", "\x00", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85",
                           "\u2028", "\u2029", "\ufeff", "\ud800", "\udfff", "😀", "{", "[", '"', "\\", "a", "b"])
TEXT = st.lists(st.one_of(st.text(ANY_CHAR, max_size=5), SPECIAL), max_size=8).map("".join)
NUMBERS = st.one_of(st.integers(-3, 6), st.integers(), st.floats(),
                    st.sampled_from([math.nan, math.inf, -math.inf, 10**100, -1, 0.5, 1.0, True]))
#: docids: mostly the documents' own, some pointing outside docs/ or not file names at all
DOCIDS = st.one_of(st.sampled_from(["d1", "d2", "d3", "../outside.txt", "../../outside.txt", "/etc/hostname", "docs",
                                    ".", "..", "", "d1/", "link", "d 1", "café", "<x>"]), TEXT)
SCALARS = st.one_of(st.none(), st.booleans(), NUMBERS, TEXT, DOCIDS)
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
                      max_leaves=6)
#: a document file's bytes: text (line ends and breaks among it), sometimes invalid UTF-8
DOC_BYTES = st.one_of(
    st.lists(st.one_of(TEXT, st.sampled_from(["the food was good .", "we came back", "it rained"])), max_size=6)
    .map(lambda parts: "\n".join(parts).encode("utf-8", "surrogatepass")),
    st.binary(max_size=40),
)


def _evidence(docid, start, end, text):
    return {"docid": docid, "text": text, "start_token": start, "end_token": end, "start_sentence": start,
            "end_sentence": end}


EVIDENCE = st.one_of(
    st.builds(_evidence, DOCIDS, st.one_of(st.integers(-1, 4), NUMBERS), st.one_of(st.integers(0, 5), NUMBERS),
              st.one_of(st.sampled_from(["the", "we", "a"]), TEXT, VALUES)),
    st.fixed_dictionaries({"docid": DOCIDS, "start_sentence": st.integers(-1, 4), "end_sentence": st.integers(0, 5)}),
    VALUES,
)
ANNOTATION = st.fixed_dictionaries(
    {"annotation_id": st.one_of(DOCIDS, VALUES)},
    optional={"classification": st.one_of(st.sampled_from(["0", "1", "2", None]), VALUES),
              "evidences": st.one_of(st.lists(st.lists(EVIDENCE, max_size=2), max_size=2), VALUES),
              "docids": st.one_of(st.lists(DOCIDS, max_size=2), st.none(), VALUES),
              "query": TEXT})
JSON_LINE = st.one_of(
    st.builds(lambda obj, ascii: json.dumps(obj, ensure_ascii=ascii), ANNOTATION, st.booleans()),
    st.builds(json.dumps, VALUES),
    TEXT,
    st.sampled_from(["[" * 50000, '{"annotation_id": ' + "9" * 5000 + "}", "NaN", "-Infinity", "1e999"]),
)


# --------------------------------------------------------------------------- helpers



@contextlib.contextmanager
def only_inside(data: Path, *files: Path) -> Iterator[list[str]]:
    """Record every file opened while the block runs; fail on one opened for writing, on one in
    the temporary folder around ``data`` (links resolved) other than ``files`` and those in
    ``data/docs``, on one under /etc, and on any file created or changed there."""
    tmp, docs = os.path.realpath(data.parent), os.path.realpath(data / "docs")
    allowed = {os.path.realpath(f) for f in files}
    before = {p: p.stat().st_mtime_ns for p in Path(tmp).rglob("*") if p.is_file()}
    opened: list[str] = []
    real_open = io.open

    def inside(path: str, folder: str) -> bool:
        return os.path.commonpath([folder, path]) == folder

    def recording_open(file, mode="r", *args, **kwargs):
        if isinstance(file, (str, bytes, os.PathLike)):
            path = os.path.realpath(os.fsdecode(file))
            opened.append(path)
            assert not inside(path, "/etc"), f"opened {path}"
            assert not inside(path, tmp) or path in allowed or inside(path, docs), f"opened {path}, outside docs/"
            assert not any(c in mode for c in "wax+"), f"opened {path} for writing ({mode})"
        return real_open(file, mode, *args, **kwargs)

    with mock.patch.object(io, "open", recording_open), mock.patch.object(builtins, "open", recording_open):
        yield opened
    after = {p: p.stat().st_mtime_ns for p in Path(tmp).rglob("*") if p.is_file()}
    assert after == before, "a file was written"


def make_folder(tmp: Path, docs: dict[str, bytes]) -> Path:
    """``tmp/data/`` with ``docs/`` (and a secret beside it, and a link out of it)."""
    (tmp / "outside.txt").write_text("a secret\n")
    data = tmp / "data"
    (data / "docs").mkdir(parents=True)
    (data / "outside.txt").write_text("another secret\n")
    for docid, content in docs.items():
        (data / "docs" / docid).write_bytes(content)
    (data / "docs/link").symlink_to(tmp / "outside.txt")
    return data


def check_error(err: DataError, *paths: Path) -> None:
    """A DataError names one of ``paths`` and, where the problem is on one line, the line; it says the fix."""
    assert err.path in {str(p) for p in paths} and err.problem and err.fix, err
    assert err.line is None or err.line >= 1
    assert str(err).startswith(err.path) and "Fix: " in str(err)
    str(err).encode("utf-8", "backslashreplace")  # printable


# --------------------------------------------------------------------------- the properties


@given(content=DOC_BYTES)
def test_eraser_document_files_are_read_as_eraser_reads_them_or_named(content):
    with tempfile.TemporaryDirectory() as tmp:
        data = make_folder(Path(tmp), {"d1": content})
        where = data / "test.jsonl"
        try:
            with only_inside(data):
                doc = read_document(data / "docs/d1", where, 1, "annotation d1")
        except DataError as err:
            check_error(err, where)
            with pytest.raises(UnicodeDecodeError):
                content.decode("utf-8")
        else:
            text = content.decode("utf-8").removeprefix("\ufeff")
            lines = [line.strip() for line in io.StringIO(text, newline=None)]  # ERASER: universal newlines
            assert doc == [[t for t in line.split(" ") if t] for line in lines if line]
            assert all(t and " " not in t and "\n" not in t and "\r" not in t for s in doc for t in s)


@given(lines=st.lists(JSON_LINE, max_size=4), docs=st.dictionaries(st.sampled_from(["d1", "d2", "d3"]), DOC_BYTES,
                                                                   max_size=3),
       require_label=st.booleans())
def test_eraser_annotations_are_read_or_named_by_file_and_line(lines, docs, require_label):
    with tempfile.TemporaryDirectory() as tmp:
        data = make_folder(Path(tmp), docs)
        path = data / "test.jsonl"
        path.write_bytes("".join(line + "\n" for line in lines).encode("utf-8", "surrogatepass"))
        try:
            with only_inside(data, path):
                read = read_eraser(path, classes=range(3), require_label=require_label)
        except DataError as err:
            check_error(err, path)
        else:
            assert len({doc.id for doc in read}) == len(read)
            for doc in read:
                assert is_doc_id(doc.id) and doc.sentences and all(s == s.strip() and s for s in doc.sentences)
                assert "secret" not in " ".join(doc.sentences)  # nothing read from outside docs/
                assert doc.label in (range(3) if require_label else (None, 0, 1, 2))
                assert all(0 <= i < len(doc.sentences) for i in doc.rationale)


def _results(docid: str, n_tokens: int, n_sentences: int) -> dict:
    probs = {"0": 0.25, "1": 0.75}
    return {"annotation_id": docid,
            "rationales": [{"docid": docid, "hard_rationale_predictions": [{"start_token": 0, "end_token": 1}],
                            "soft_rationale_predictions": [0.5] * n_tokens,
                            "soft_sentence_predictions": [0.5] * n_sentences}],
            "classification": "1", "classification_scores": probs,
            "comprehensiveness_classification_scores": probs, "sufficiency_classification_scores": probs,
            "thresholded_scores": [{"threshold": t, "comprehensiveness_classification_scores": probs,
                                    "sufficiency_classification_scores": probs} for t in AOPC_THRESHOLDS]}


#: a change to one field of a results line (a key path and a value), or to its rationale
CHANGE = st.tuples(st.sampled_from([("annotation_id",), ("rationales",), ("classification",),
                                    ("classification_scores",), ("classification_scores", "1"),
                                    ("comprehensiveness_classification_scores",), ("sufficiency_classification_scores",),
                                    ("thresholded_scores",), ("thresholded_scores", 0, "threshold"),
                                    ("thresholded_scores", 1, "sufficiency_classification_scores", "1"),
                                    ("rationales", 0, "docid"), ("rationales", 0, "hard_rationale_predictions"),
                                    ("rationales", 0, "hard_rationale_predictions", 0, "start_token"),
                                    ("rationales", 0, "hard_rationale_predictions", 0, "end_token"),
                                    ("rationales", 0, "soft_rationale_predictions"),
                                    ("rationales", 0, "soft_rationale_predictions", 0),
                                    ("rationales", 0, "soft_sentence_predictions")]),
                   st.one_of(VALUES, DOCIDS, NUMBERS))


def _set(obj, path, value):
    for key in path[:-1]:
        obj = obj[key]
    obj[path[-1]] = value


@given(changes=st.lists(st.tuples(st.integers(0, 2), CHANGE), max_size=3), extra=st.lists(JSON_LINE, max_size=2),
       repeat=st.booleans())
def test_score_only_predictions_are_scored_or_named_by_file_and_line(changes, extra, repeat):
    with tempfile.TemporaryDirectory() as tmp:
        docs = {"d1": b"the food was good .\nwe came back\n", "d2": b"it rained\n", "d3": b"a b c\nd\n"}
        data = make_folder(Path(tmp), docs)
        annotations = [{"annotation_id": d, "classification": "1", "query": "?", "docids": [d], "evidences": [[{
            "docid": d, "text": text.split(b"\n")[0].decode(), "start_token": 0,
            "end_token": len(text.split(b"\n")[0].split()), "start_sentence": 0, "end_sentence": 1}]]}
            for d, text in docs.items()]
        (data / "test.jsonl").write_text("".join(json.dumps(a) + "\n" for a in annotations))
        lines = [_results(d, len(text.split()), text.count(b"\n")) for d, text in docs.items()]
        for i, (path, value) in changes:
            with contextlib.suppress(KeyError, IndexError, TypeError):  # a path a previous change removed
                _set(lines[i], path, value)
        text = [json.dumps(line) for line in lines] + ([json.dumps(lines[0])] if repeat else []) + extra
        pred = data / "pred.jsonl"
        pred.write_bytes("".join(line + "\n" for line in text).encode("utf-8", "surrogatepass"))
        try:
            with only_inside(data, pred, data / "test.jsonl"):
                scores = score_eraser(data, pred)
        except DataError as err:
            check_error(err, pred, data / "test.jsonl")
        else:
            assert not repeat and not extra or all(not line.strip() for line in extra)
            for key in ("sentence_prf", "token_prf"):
                assert all(0 <= v <= 1 for v in scores[key]["instance_micro"].values())
            assert all(-1 <= scores["classification_scores"][k] <= 1 for k in ("comprehensiveness", "sufficiency"))
