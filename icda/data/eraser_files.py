"""ERASER's files read as ERASER reads them (DeYoung et al. 2020; github.com/jayded/eraserbenchmark,
``rationale_benchmark/utils.py``: ``annotations_from_jsonl``, ``load_documents``), checked line by
line: an ERASER data directory holds ``<split>.jsonl`` (one annotation a line) and ``docs/<docid>``
(one document a file).

- :func:`read_document` reads ``docs/<docid>``: lines end at ``\\n``, ``\\r\\n`` or ``\\r`` (ERASER
  opens the file as text, Python's universal newlines; U+2028, ``\\x0b``, ``\\x85`` and the other
  breaks of :meth:`str.splitlines` are not line ends), each line is stripped, blank lines are
  dropped, tokens are the line's pieces between single spaces (empty ones dropped).
- A ``docid`` must be a plain file name (:data:`icda.data.document.DOC_ID`) whose resolved path
  stays inside ``docs/`` (no ``/etc/hostname``, no ``../``, no link out of it).
- :func:`read_eraser` turns a split into :class:`~icda.data.document.Document` records
  (``test_format: eraser``); :func:`check_annotations` and :func:`check_results` check the
  annotations and a predictions JSONL that ``python -m icda export-eraser --score-only`` scores.

Everything wrong is a :class:`~icda.errors.DataError` naming the file, the line and the fix.
"""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path
from typing import Any, Mapping, Sequence

from icda.data.document import DOC_ID_RULE, Document, is_doc_id
from icda.data.readers import BINARY_CLASSES, _lines
from icda.errors import DataError

#: the fix of a malformed annotation
ANNOTATION_FIX = ('write one ERASER annotation a line: {"annotation_id": ..., "classification": "0", "evidences": '
                  '[[{"docid": ..., "text": ..., "start_sentence": i, "end_sentence": i + 1, ...}]]} '
                  '(python -m icda export-eraser writes them)')
#: the fix of a malformed predictions line
RESULTS_FIX = ("write the predictions again with `python -m icda export-eraser --model/--choice ... "
               "--predictions FILE` (ERASER's results format), for this data directory")


def _int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _json_problem(exc: Exception) -> str:
    """What is wrong with a line :func:`json.loads` refused (``exc``)."""
    if isinstance(exc, json.JSONDecodeError):
        return f"not valid JSON ({exc.msg})"
    if isinstance(exc, RecursionError):
        return "not valid JSON (nested too deep)"
    return f"a number has more than {sys.get_int_max_str_digits():,} digits, more than Python reads"


def check_docid(docid: Any, docs_dir: Path, where: Path, line: int | None, what: str) -> Path:
    """The path of document ``docid`` in ``docs_dir``: ``docid`` must be a plain file name
    (:data:`~icda.data.document.DOC_ID`) and the path, links resolved, must stay inside
    ``docs_dir``, which itself, links resolved, must stay inside its parent (the data folder).

    Raises:
        DataError: naming ``where``, ``line``, ``what`` (e.g. ``annotation r1``) and the docid.
    """
    if not is_doc_id(docid):
        raise DataError(where, line, f"{what}: docid {docid!r} is not a file name in {docs_dir}",
                        f"give documents ids of {DOC_ID_RULE}, as docs/<docid> holds them")
    path = docs_dir / docid
    root, folder = os.path.realpath(docs_dir), os.path.realpath(docs_dir.parent)
    if os.path.commonpath([folder, root]) != folder:
        raise DataError(where, line, f"{what}: the folder {docs_dir} leads outside {docs_dir.parent} (a link)",
                        f"put the documents' folder itself in {docs_dir.parent}")
    if os.path.commonpath([root, os.path.realpath(path)]) != root:
        raise DataError(where, line, f"{what}: document {path} leads outside {docs_dir} (a link)",
                        f"put the document's file itself in {docs_dir}")
    return path


def read_document(path: Path, where: Path, line: int | None, what: str) -> list[list[str]]:
    """The sentences of an ERASER document file (``path``, checked by :func:`check_docid`), each
    a list of tokens, as ERASER's ``load_documents`` reads them (module docstring).

    Raises:
        DataError (naming ``where``, ``line``, ``what`` and the document): the file is missing,
            unreadable or not UTF-8.
    """
    if path.is_dir():
        raise DataError(where, line, f"{what}: its document {path} is a folder, not a file",
                        f"put the document's sentences, one a line, in the file {path} (ERASER's docs/ holds one "
                        "file per document)")
    if not path.is_file():
        raise DataError(where, line, f"{what}: its document {path} does not exist",
                        f"put the document's sentences, one a line, in {path} (ERASER's docs/ folder beside "
                        "the annotations file)")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DataError(where, line, f"{what}: its document {path} cannot be read ({exc.strerror})",
                        "make the file readable") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        at = data.count(b"\n", 0, exc.start) + 1
        raise DataError(where, line, f"{what}: its document {path} is not UTF-8 text (byte "
                        f"{data[exc.start]:#04x} on its line {at}: {exc.reason})",
                        f"convert {path} to UTF-8") from None
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    lines = [raw.strip() for raw in text.split("\n")]
    return [[t for t in raw.split(" ") if t] for raw in lines if raw]


def _evidences(obj: dict, path: Path, line: int, ann: str) -> list[dict]:
    groups = obj.get("evidences")
    if groups is None:
        return []
    if not isinstance(groups, list) or not all(isinstance(g, list) for g in groups):
        raise DataError(path, line, f"annotation {ann}: evidences is {json.dumps(groups)[:60]}, not a list of "
                        "evidence groups (lists of evidence objects)", ANNOTATION_FIX)
    evidences = [ev for group in groups for ev in group]
    for ev in evidences:
        if not isinstance(ev, dict) or not isinstance(ev.get("docid"), str):
            raise DataError(path, line, f"annotation {ann}: an evidence is not an object with a docid (a string)",
                            ANNOTATION_FIX)
    return evidences


def _span(ev: dict, unit: str, length: int, path: Path, line: int, ann: str, required: bool) -> tuple[int, int] | None:
    """An evidence's ``[start_<unit>, end_<unit>)``, checked against ``length`` units; None when
    absent (ERASER's -1) and not ``required``."""
    start, end = ev.get(f"start_{unit}", -1), ev.get(f"end_{unit}", -1)
    if not (_int(start) and _int(end)):
        raise DataError(path, line, f"annotation {ann}: an evidence's start_{unit}/end_{unit} "
                        f"{json.dumps(start)}, {json.dumps(end)} are not integers",
                        f"give start_{unit} and end_{unit} as integers (0-based, end exclusive)")
    if start == -1 and end == -1 and not required:
        return None
    if start < 0:
        raise DataError(path, line, f"annotation {ann}: an evidence has no {unit} indices "
                        f"(start_{unit} {start}, end_{unit} {end})",
                        f"give every evidence start_{unit} and end_{unit} (0-based, end exclusive)")
    if not start < end <= length:
        raise DataError(path, line, f"annotation {ann}: evidence {unit}s [{start}, {end}) lie outside "
                        f"document {ev['docid']} ({length} {unit}s)",
                        f"fix the evidence's start_{unit}/end_{unit} (0-based, end exclusive), or the document file")
    return start, end


def _check_agree(doc, sentences: tuple[int, int], tokens: tuple[int, int], path, line: int, ann: str, docid: str,
                 fix: str) -> None:
    """Raise the DataError of an evidence whose sentence span [start, end) is not the span of the
    sentences its token span [start, end) touches."""
    touched = _token_sentences(doc, tokens)
    if touched != sentences:
        raise DataError(path, line, f"annotation {ann}: an evidence's sentences [{sentences[0]}, {sentences[1]}) "
                        f"contradict its tokens [{tokens[0]}, {tokens[1]}), which lie in sentences "
                        f"[{touched[0]}, {touched[1]}) of document {docid}", fix)


def _token_sentences(doc: Sequence[Sequence[str]], span: tuple[int, int]) -> tuple[int, int]:
    """The sentences ``[first, last + 1)`` that the document-wide token span ``[start, end)``
    touches (ERASER's movies test split gives token offsets only, sentence indices −1)."""
    first = last = None
    offset = 0
    for i, sentence in enumerate(doc):
        if offset < span[1] and span[0] < offset + len(sentence):
            first = i if first is None else first
            last = i
        offset += len(sentence)
    return first, last + 1


def check_evidence(ev: dict, doc: Sequence[Sequence[str]], path: Path, line: int, ann: str) -> tuple[int, int] | None:
    """Check one evidence of annotation ``ann`` against its document ``doc`` (sentences of
    tokens): its sentence range and token range lie inside it (at least one of them given;
    ERASER writes −1 for an absent one), the two agree where both are given (the token range
    touches exactly the sentences ``[start_sentence, end_sentence)``), and its ``text`` (when
    given) is the text of the tokens it points at (of its token range, else of its sentences),
    compared token by token. Returns ``(start_sentence, end_sentence)``: the evidence's own, or
    the sentences its token range touches (as ERASER's scoring maps tokens to sentences).

    An empty token range (``start_token == end_token``, as ERASER's own files hold a few) with
    sentence indices marks those sentences (its text is checked against them); without them it
    marks nothing and None is returned, provided it lies within the document (``0 <= start_token
    <= its tokens``) and its text, if any, is empty.

    Raises:
        DataError: naming the file, line and annotation.
    """
    tokens = [t for sentence in doc for t in sentence]
    start, end = ev.get("start_token", -1), ev.get("end_token", -1)
    empty = _int(start) and _int(end) and start == end and start >= 0
    sentences = _span(ev, "sentence", len(doc), path, line, ann, required=False)
    if empty:
        if start > len(tokens):
            raise DataError(path, line, f"annotation {ann}: an empty evidence (start_token = end_token = {start}) lies "
                            f"outside document {ev['docid']} ({len(tokens)} tokens)",
                            "fix the evidence's start_token/end_token (0-based, end exclusive), or remove it")
        if sentences is None:
            text = ev.get("text", "")
            if not isinstance(text, str) or text.split():
                raise DataError(path, line, f"annotation {ann}: an empty evidence (start_token = end_token = {start}) "
                                f"has the text {json.dumps(text)[:60]}, so it is not empty",
                                "give the evidence the token range of its text (end exclusive), or its "
                                "start_sentence/end_sentence")
            return None
        token_span = None
    else:
        token_span = _span(ev, "token", len(tokens), path, line, ann, required=False)
    if sentences is None:
        if token_span is None:
            raise DataError(path, line, f"annotation {ann}: an evidence has neither sentence nor token indices",
                            "give every evidence start_sentence/end_sentence or start_token/end_token "
                            "(0-based, end exclusive)")
        sentences = _token_sentences(doc, token_span)
    elif token_span is not None:
        _check_agree(doc, sentences, token_span, path, line, ann, ev["docid"],
                     "fix the evidence's start_sentence/end_sentence or start_token/end_token (0-based, end "
                     "exclusive), or the document file")
    if "text" in ev:
        text = ev["text"]
        if not isinstance(text, str):
            raise DataError(path, line, f"annotation {ann}: an evidence's text is {json.dumps(text)[:40]}, not a "
                            "string", "give the evidence's text as the tokens it points at, joined by spaces")
        pointed = (tokens[slice(*token_span)] if token_span is not None
                   else [t for sentence in doc[slice(*sentences)] for t in sentence])
        if text.split() != " ".join(pointed).split():
            where = (f"tokens [{token_span[0]}, {token_span[1]})" if token_span is not None
                     else f"sentences [{sentences[0]}, {sentences[1]})")
            raise DataError(path, line, f"annotation {ann}: an evidence's text {text[:60]!r} is not the text of "
                            f"its {where} of document {ev['docid']} ({' '.join(pointed)[:60]!r})",
                            "fix the evidence's text or its indices, or the document file")
    return sentences


def class_names(paths: Sequence[str | Path], classes: int, given: Sequence[str] | None = None) -> list[str] | None:
    """The class names of ERASER split files, in the order that maps them to label indices: None
    when every ``classification`` is already an index (``"0"`` … ``"C−1"``, as the export writes
    them); else ``given`` (``datasets.<name>.class_names``), or the names found, sorted (ERASER's
    movies: ``["NEG", "POS"]`` → 0, 1). Lines that are not JSON objects are skipped here
    (:func:`read_eraser` reports them).

    Raises:
        DataError: a name is not among ``given``, or the sorted names are not ``classes`` many.
    """
    found: dict[str, tuple[Path, int]] = {}
    per_file: dict[str, list[tuple[Path, int]]] = {}
    for path in paths:
        for lineno, line in _lines(Path(path)):
            try:
                label = json.loads(line).get("classification")
            except (ValueError, RecursionError, AttributeError):
                continue
            if isinstance(label, str):
                found.setdefault(label, (Path(path), lineno))
                per_file.setdefault(label, []).append((Path(path), lineno))
    if given is not None:
        for label, (path, lineno) in found.items():
            if label not in given:
                raise DataError(path, lineno, f"classification {label!r} is not one of the class names {list(given)}",
                                "add it to datasets.<name>.class_names, or fix the annotation")
        return list(given)
    if all(label in {str(c) for c in range(classes)} for label in found):
        return None
    names = sorted(found)
    if len(names) != classes:
        # a class that only some of the files name (e.g. only test): the one to point at
        files = {label: {p for p, _ in per_file[label]} for label in names}
        partial = [label for label in names if len(files[label]) < len({Path(p) for p in paths})]
        label = partial[0] if partial else names[-1]
        path, lineno = found[label]
        only = f"; {label!r} appears only in {', '.join(sorted(str(p) for p in files[label]))}" if partial else ""
        raise DataError(path, lineno, f"the ERASER files name {len(names)} classes {names[:10]}, but the dataset "
                        f"has {classes}{only}", f"set datasets.<name>.classes to {len(names)}, or list the names in "
                        "datasets.<name>.class_names, or fix the annotation")
    return names


def read_eraser(path: str | Path, *, classes: Sequence[int] = BINARY_CLASSES,
                require_label: bool = True, names: Sequence[str] | None = None,
                counts: dict[str, int] | None = None) -> list[Document]:
    """Read an ERASER split: one annotation a line, its document in ``docs/<docid>`` beside the
    file (:func:`read_document`).

    Per annotation: the document id is the annotation's single document (``docids``, else its
    evidences' ``docid``, else its ``annotation_id``), a plain file name inside ``docs/``; the
    label is ``classification``, a class index written as a string (``"0"`` … ``"C−1"``, as the
    export writes it) or, with ``names`` (:func:`class_names`), a class name mapped to its index
    in ``names``, or null where ``require_label`` is False (a test split without labels);
    the sentences are the document's non-blank lines (stripped, as ERASER reads them); the ground
    truth is the union of the evidences' sentence ranges ``[start_sentence, end_sentence)`` (an
    annotation without evidence: annotated, no rationale sentence), each evidence's ``text``
    checked against what it points at (:func:`check_evidence`). The document's id is the
    ``annotation_id`` (:data:`~icda.data.document.DOC_ID`). Empty evidences (``start_token ==
    end_token``) are skipped and counted in ``counts["empty_evidences"]`` (when given).

    Raises:
        DataError (naming the file, the line, the annotation id and the fix): a line is not a
            JSON object with ``annotation_id``, ``classification`` and ``evidences`` of ERASER's
            types; an id is not a plain file name; an annotation spans several documents (e-SNLI,
            CoS-E: not supported); its document file is missing, outside ``docs/``, not UTF-8 or
            empty; an evidence names another document, has no sentence indices, lies outside its
            document or its text is not what it points at; the label is not one of ``classes``; an
            annotation id repeats.
    """
    path = Path(path)
    docs_dir = path.parent / "docs"
    docs, seen = [], {}
    for lineno, line in _lines(path):
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise DataError(path, lineno, _json_problem(exc), ANNOTATION_FIX) from None
        if not isinstance(obj, dict) or not {"annotation_id", "classification", "evidences"} <= obj.keys():
            raise DataError(path, lineno, "not an ERASER annotation (keys annotation_id, classification, "
                            "evidences)", ANNOTATION_FIX)
        ann = obj["annotation_id"]
        if not is_doc_id(ann):
            raise DataError(path, lineno, f"annotation_id {ann!r} cannot be a document id",
                            f"give annotations ids of {DOC_ID_RULE}")
        evidences = _evidences(obj, path, lineno, ann)
        named = obj.get("docids")
        if named is not None and not (isinstance(named, list) and all(isinstance(d, str) for d in named)):
            raise DataError(path, lineno, f"annotation {ann}: docids is {json.dumps(named)[:60]}, not a list of "
                            "document ids",
                            'give docids as a list of one document id, e.g. "docids": ["' + ann + '"]')
        docids = list(dict.fromkeys(named or [ev["docid"] for ev in evidences])) or [ann]
        if len(docids) != 1:
            raise DataError(path, lineno, f"annotation {ann} spans {len(docids)} documents {docids[:3]!r}",
                            "give each annotation one document: multi-document ERASER tasks (e-SNLI, CoS-E) "
                            "are not supported")
        docid = docids[0]
        doc_path = check_docid(docid, docs_dir, path, lineno, f"annotation {ann}")
        for ev in evidences:
            if ev["docid"] != docid:
                check_docid(ev["docid"], docs_dir, path, lineno, f"annotation {ann}")
                raise DataError(path, lineno, f"annotation {ann}: an evidence names document {ev['docid']}, "
                                f"not {docid}", "give every evidence the annotation's document")
        doc = read_document(doc_path, path, lineno, f"annotation {ann}")
        if not doc:
            raise DataError(path, lineno, f"annotation {ann}: its document {doc_path} is empty",
                            "give the document its sentences, one a line, or remove the annotation")
        label = obj["classification"]
        allowed = list(names) if names is not None else [str(c) for c in classes]
        if label is None and not require_label:
            value = None
        elif isinstance(label, str) and label in allowed:
            value = allowed.index(label) if names is not None else int(label)
        else:
            raise DataError(path, lineno, f"annotation {ann}: classification {label!r} is not one of the classes "
                            f"{allowed}", "fix the annotation, or set datasets.<name>.classes to the number of "
                            "classes (class names are read in sorted order; datasets.<name>.class_names fixes "
                            "another)")
        rationale: set[int] = set()
        for ev in evidences:
            sentences = check_evidence(ev, doc, path, lineno, ann)
            if sentences is None:
                if counts is not None:
                    counts["empty_evidences"] = counts.get("empty_evidences", 0) + 1
                continue
            rationale.update(range(*sentences))
        if ann in seen:
            raise DataError(path, lineno, f"annotation id {ann!r} already used on line {seen[ann]}",
                            "give every annotation a unique annotation_id")
        seen[ann] = lineno
        docs.append(Document(ann, value, tuple(" ".join(sentence) for sentence in doc), frozenset(rationale)))
    return docs


# --------------------------------------------------------------------------- score-only inputs


def read_json_lines(path: str | Path, fix: str) -> list[tuple[int, Any]]:
    """(line number, JSON value) of every non-blank line of a JSONL file (read as
    :func:`icda.data.readers.read_jsonl` reads lines: UTF-8, LF, CR LF or CR).

    Raises:
        DataError: the file is missing, not UTF-8, or a line is not JSON (naming the line; ``fix``).
    """
    path = Path(path)
    out = []
    for lineno, line in _lines(path):
        try:
            out.append((lineno, json.loads(line)))
        except (ValueError, RecursionError) as exc:
            raise DataError(path, lineno, _json_problem(exc), fix) from None
    return out


def check_annotations(lines: Sequence[tuple[int, Any]], path: Path, docs_dir: Path) -> dict[str, int]:
    """Check the shape of ERASER annotations read from ``path`` (:func:`read_json_lines`) before
    they are scored: each a JSON object with a string ``annotation_id`` (unique), a string or
    null ``classification`` and ``evidences``, groups of evidence objects, each with a ``docid``
    inside ``docs_dir`` (:func:`check_docid`) and integer ``start_token``/``end_token`` and
    ``start_sentence``/``end_sentence``. Returns {docid: the first line naming it}.

    Raises:
        DataError: naming the file, the line and the annotation.
    """
    docids: dict[str, int] = {}
    seen: dict[str, int] = {}
    for line, a in lines:
        if not isinstance(a, dict) or not isinstance(a.get("annotation_id"), str) or "evidences" not in a:
            raise DataError(path, line, "not an ERASER annotation (an object with a string annotation_id, a "
                            "classification and evidences)", ANNOTATION_FIX)
        ann = a["annotation_id"]
        if ann in seen:
            raise DataError(path, line, f"annotation id {ann!r} already used on line {seen[ann]}",
                            "give every annotation a unique annotation_id")
        seen[ann] = line
        if a.get("classification") is not None and not isinstance(a["classification"], str):
            raise DataError(path, line, f"annotation {ann!r}: classification {json.dumps(a['classification'])[:40]} "
                            "is not a string or null", ANNOTATION_FIX)
        for ev in _evidences(a, path, line, repr(ann)):
            check_docid(ev["docid"], docs_dir, path, line, f"annotation {ann!r}")
            docids.setdefault(ev["docid"], line)
    return docids


def check_annotation_spans(lines: Sequence[tuple[int, Any]], path: Path,
                           documents: Mapping[str, Sequence[Sequence[str]]]) -> None:
    """Check every evidence of the annotations (:func:`check_annotations`) against its document:
    0 <= start_token < end_token <= its tokens, and start_sentence < end_sentence within its
    sentences (or both -1: no sentence indices), the sentences its tokens touch.

    Raises:
        DataError: naming the file, the line and the annotation.
    """
    for line, a in lines:
        ann = repr(a["annotation_id"])
        for ev in _evidences(a, path, line, ann):
            doc = documents[ev["docid"]]
            tokens = _span(ev, "token", sum(len(s) for s in doc), path, line, ann, required=True)
            sentences = _span(ev, "sentence", len(doc), path, line, ann, required=False)
            if sentences is not None:
                _check_agree(doc, sentences, tokens, path, line, ann, ev["docid"],
                             "fix the evidence's start_sentence/end_sentence or start_token/end_token, or "
                             "export the data directory again")


def _scores(obj: Any, field: str, kls: Any, path: Path, line: int, ann: str) -> None:
    value = obj.get(field) if isinstance(obj, dict) else None
    if not (isinstance(value, dict) and value and all(_number(v) and 0 <= v <= 1 for v in value.values())):
        raise DataError(path, line, f"annotation {ann}: {field} is {json.dumps(value)[:60]}, not an object of class "
                        "probabilities (numbers in [0, 1])", RESULTS_FIX)
    if kls not in value:
        raise DataError(path, line, f"annotation {ann}: {field} has no probability of the predicted class "
                        f"{json.dumps(kls)[:40]}", RESULTS_FIX)


def check_results(lines: Sequence[tuple[int, Any]], path: Path, docs_dir: Path) -> dict[str, int]:
    """Check the shape of a predictions JSONL in ERASER's results format (read from ``path`` by
    :func:`read_json_lines`; the fields :func:`icda.eraser_metrics.score_results` reads): each a
    JSON object with a unique string ``annotation_id``; ``rationales``, a list of objects with a
    ``docid`` inside ``docs_dir`` (:func:`check_docid`), ``hard_rationale_predictions`` (a list
    of objects with integer ``start_token``/``end_token``), ``soft_rationale_predictions`` and
    ``soft_sentence_predictions`` (lists of finite numbers); a string ``classification``;
    ``classification_scores``, ``comprehensiveness_classification_scores`` and
    ``sufficiency_classification_scores`` (class → probability in [0, 1], the predicted class
    among them); ``thresholded_scores`` (a list of objects with a number ``threshold`` and the
    two reduced scores). Returns {docid: the first line naming it}.

    Raises:
        DataError: naming the file, the line and the annotation.
    """
    docids: dict[str, int] = {}
    seen: dict[str, int] = {}
    for line, r in lines:
        if not isinstance(r, dict) or not isinstance(r.get("annotation_id"), str):
            raise DataError(path, line, "not an ERASER results line (an object with a string annotation_id)",
                            RESULTS_FIX)
        ann = repr(r["annotation_id"])
        if r["annotation_id"] in seen:
            raise DataError(path, line, f"annotation {ann} already has a results line (line "
                            f"{seen[r['annotation_id']]}): it would count twice",
                            "give each annotation one results line")
        seen[r["annotation_id"]] = line
        rationales = r.get("rationales")
        if not isinstance(rationales, list) or not all(isinstance(x, dict) for x in rationales):
            raise DataError(path, line, f"annotation {ann}: rationales is {json.dumps(rationales)[:60]}, not a list "
                            "of objects", RESULTS_FIX)
        for rat in rationales:
            check_docid(rat.get("docid"), docs_dir, path, line, f"annotation {ann}")
            docids.setdefault(rat["docid"], line)
            hard = rat.get("hard_rationale_predictions", [])
            if not isinstance(hard, list) or not all(isinstance(h, dict) and _int(h.get("start_token"))
                                                     and _int(h.get("end_token")) for h in hard):
                raise DataError(path, line, f"annotation {ann}: hard_rationale_predictions is "
                                f"{json.dumps(hard)[:60]}, not a list of {{start_token, end_token}} integer spans",
                                RESULTS_FIX)
            for field in ("soft_rationale_predictions", "soft_sentence_predictions"):
                soft = rat.get(field)
                if not isinstance(soft, list) or not all(_number(x) for x in soft):
                    raise DataError(path, line, f"annotation {ann}: {field} is {json.dumps(soft)[:60]}, not a list "
                                    "of finite numbers", RESULTS_FIX)
        kls = r.get("classification")
        if not isinstance(kls, str):
            raise DataError(path, line, f"annotation {ann}: classification is {json.dumps(kls)[:40]}, not a string "
                            "(the predicted class)", RESULTS_FIX)
        for field in ("classification_scores", "comprehensiveness_classification_scores",
                      "sufficiency_classification_scores"):
            _scores(r, field, kls, path, line, ann)
        bins = r.get("thresholded_scores")
        if not isinstance(bins, list) or not all(isinstance(b, dict) and _number(b.get("threshold")) for b in bins):
            raise DataError(path, line, f"annotation {ann}: thresholded_scores is {json.dumps(bins)[:60]}, not a list "
                            "of objects with a number threshold", RESULTS_FIX)
        for b in bins:
            for field in ("comprehensiveness_classification_scores", "sufficiency_classification_scores"):
                _scores(b, field, kls, path, line, ann)
    return docids


def check_result_spans(lines: Sequence[tuple[int, Any]], path: Path,
                       documents: Mapping[str, Sequence[Sequence[str]]]) -> None:
    """Check every results line (:func:`check_results`) against its documents: each hard span
    0 <= start_token < end_token <= the document's tokens, no two of a document overlapping (a
    token counted twice would give IOU and token scores above 1); one soft score per token and
    per sentence.

    Raises:
        DataError: naming the file, the line and the annotation.
    """
    for line, r in lines:
        ann = repr(r["annotation_id"])
        for rat in r["rationales"]:
            doc = documents[rat["docid"]]
            n_tokens = sum(len(s) for s in doc)
            for h in rat.get("hard_rationale_predictions", []):
                if not 0 <= h["start_token"] < h["end_token"] <= n_tokens:
                    raise DataError(path, line, f"annotation {ann}: hard rationale span [{h['start_token']}, "
                                    f"{h['end_token']}) is not inside document {rat['docid']} ({n_tokens} tokens)",
                                    "give spans with 0 <= start_token < end_token <= the document's tokens")
            spans = sorted((h["start_token"], h["end_token"]) for h in rat.get("hard_rationale_predictions", []))
            for (a0, a1), (b0, b1) in zip(spans, spans[1:]):
                if b0 < a1:
                    raise DataError(path, line, f"annotation {ann}: hard rationale spans [{a0}, {a1}) and [{b0}, "
                                    f"{b1}) of document {rat['docid']} overlap (their shared tokens would count "
                                    "twice)", "give disjoint spans: merge overlapping ones into one")
            for field, n, unit in (("soft_rationale_predictions", n_tokens, "tokens"),
                                   ("soft_sentence_predictions", len(doc), "sentences")):
                if len(rat[field]) != n:
                    raise DataError(path, line, f"annotation {ann}: {field} holds {len(rat[field])} scores, but "
                                    f"document {rat['docid']} has {n} {unit}", "give one score per " + unit[:-1])
