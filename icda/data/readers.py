"""Readers for the ICDA data formats: each returns a list of :class:`~icda.data.document.Document`.

Formats (one document a line, UTF-8; see ``icda-data/README.md``):

* ICDA train/dev/test files: ``LABEL<TAB>sentence[SEP]sentence...``, LABEL 0 or 1 (or, for the
  beer data, a rating in [0, 1] that is binarised; paper appendix "Data Details").
* hotel test files (``*.test.sents``): ``IDX IDX ...<TAB>sentence[SEP]...``, the 0-based indices of
  the sentences holding a human-annotated word (duplicates occur); no class label.
* generic JSONL: ``{"label": 1, "sentences": [...]}`` or ``{"label": 1, "text": "..."}`` (the text
  is sentence-split with spaCy), with optional ``"rationale": [indices]`` and ``"id"``.
* ERASER (DeYoung et al. 2020; ``format: eraser``): the split's annotations JSONL (ERASER's
  ``train.jsonl``/``val.jsonl``/``test.jsonl``) with the documents beside it in ``docs/<docid>``
  (one sentence a line), as ``python -m icda export-eraser`` writes them
  (:func:`icda.data.eraser_files.read_eraser`).
* plain text (new documents for ``python -m icda predict``): one unlabelled document a line,
  sentence-split with spaCy.

Sentences are stripped of surrounding whitespace and empty sentences are dropped (the published
connect/restaurant files carry stray spaces around ``[SEP]``); annotated indices are re-numbered to
match. Lines may end in LF, CR LF or a lone CR (old Mac files: universal newlines, as Python reads
text). Blank lines (such as a trailing newline) are skipped. Everything else that is wrong stops
with a :class:`~icda.errors.DataError` naming the file, the line and the fix; among others a JSON
string with half a UTF-16 surrogate pair (``"\\ud83d"``: no character, and no UTF-8 file can hold
it), and a text longer than spaCy splits at once (1,000,000 characters, ``nlp.max_length``): a
clear error rather than a split of the text into pieces, since such a line is more often a file
without its line breaks than one document, and the selector reads only a document's first
``encoder.max_sentences`` sentences; give a document that long split already, as ``sentences``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Iterable, Iterator, Sequence

from icda.data.document import DOC_ID_RULE, Document, is_doc_id
from icda.data.cleaning import binarize_rating
from icda.errors import DataError

if TYPE_CHECKING:
    from icda.data.sentences import SentenceSplitter

log = logging.getLogger(__name__)

#: sentence separator of the ICDA text formats
SEP = "[SEP]"
#: the separator as files write it: ``[SEP]``, in any case (``[sep]`` in lower-cased corpora)
_SEP_ANY_CASE = re.compile(re.escape(SEP), re.IGNORECASE)
#: class labels of the binary datasets
BINARY_CLASSES = (0, 1)
#: the keys a generic JSONL record may have
JSONL_KEYS = ("id", "label", "rationale", "sentences", "text")

_ICDA_LINE = "write each document on one line as LABEL<TAB>sentence[SEP]sentence..."
_HOTEL_LINE = "write each document on one line as IDX IDX ...<TAB>sentence[SEP]sentence..."


def keyword_rationale(sentences: Sequence[str], keywords: Iterable[str]) -> frozenset[int]:
    """Ground-truth rationale by keywords (paper appendix "Data Details", connect/restaurant).

    A sentence is a ground-truth rationale sentence if its lower-cased text contains one of the
    keywords as a substring (so "food" also matches "seafood", as in the paper).

    Args:
        sentences: the document's sentences.
        keywords: the keywords; matched case-insensitively.

    Returns:
        The 0-based indices of the matching sentences (possibly empty).
    """
    keys = [k.lower() for k in keywords]
    return frozenset(i for i, s in enumerate(sentences) if any(k in s.lower() for k in keys))


def read_icda(
    path: str | Path,
    *,
    keywords: Sequence[str] | None = None,
    ratings: bool = False,
    id_prefix: str | None = None,
    classes: Sequence[int] = BINARY_CLASSES,
) -> list[Document]:
    """Read an ICDA ``LABEL<TAB>sentence[SEP]sentence...`` file.

    Args:
        path: the file.
        keywords: when given, each document's ``rationale`` is :func:`keyword_rationale` of its
            sentences (the connect/restaurant test sets); otherwise ``rationale`` is None.
        ratings: the label field is a rating in [0, 1] (beer), binarised by
            :func:`~icda.data.cleaning.binarize_rating`; documents rated strictly between the
            thresholds are dropped and their number is logged.
        id_prefix: documents get the id ``f"{id_prefix}-{line number}"``; default: the file name.
        classes: the allowed labels.

    Raises:
        DataError: the file is missing or not UTF-8; a line has no tab, a label that is not an
            integer (a number in [0, 1] with ``ratings``), a label outside ``classes``, or no
            non-empty sentence.
    """
    path = Path(path)
    prefix = path.name if id_prefix is None else id_prefix
    docs, between = [], 0
    for lineno, line in _lines(path):
        field, text = _split_tab(path, lineno, line, _ICDA_LINE)
        if ratings:
            rating = _parse_rating(path, lineno, field)
            label = binarize_rating(rating)
            if label is None:
                between += 1
                continue
        else:
            label = _parse_label(path, lineno, field, classes)
        sentences = _sentences(path, lineno, _SEP_ANY_CASE.split(text))
        rationale = None if keywords is None else keyword_rationale(sentences, keywords)
        docs.append(Document(f"{prefix}-{lineno}", label, sentences, rationale))
    if between:
        log.info("%s: dropped %d documents rated between the binarisation thresholds", path, between)
    return docs


def read_hotel_test(path: str | Path, *, id_prefix: str | None = None) -> list[Document]:
    """Read a hotel test file (``IDX IDX ...<TAB>sentence[SEP]...``; Bao et al. 2018 annotations).

    The indices are 0-based positions of the sentences that hold at least one human-annotated word
    (the paper's sentence-level ground truth); duplicates are merged. An empty index field means
    "annotated, no rationale sentence" (an empty ``rationale``). The files carry no class label:
    every document has ``label=None``.

    Args:
        path: the file.
        id_prefix: documents get the id ``f"{id_prefix}-{line number}"``; default: the file name.

    Raises:
        DataError: the file is missing or not UTF-8; a line has no tab, an index that is not a
            non-negative integer, an index past the last sentence or pointing at an empty
            sentence, or no non-empty sentence.
    """
    path = Path(path)
    prefix = path.name if id_prefix is None else id_prefix
    docs = []
    for lineno, line in _lines(path):
        field, text = _split_tab(path, lineno, line, _HOTEL_LINE)
        indices = []
        for token in field.split():
            if not (token.isascii() and token.isdigit()):  # "²" is a digit to isdigit, not to int
                raise DataError(
                    path, lineno, f"annotated sentence index {token!r} is not a non-negative integer",
                    _HOTEL_LINE,
                )
            if len(token) > 18:  # past any document's last sentence, and maybe past what int() reads
                raise DataError(path, lineno, f"annotated sentence index {token[:12]}… ({len(token):,} digits) is past "
                                "the last sentence", "use 0-based indices of the document's sentences")
            indices.append(int(token))
        sentences, rationale = _sentences_with_rationale(path, lineno, _SEP_ANY_CASE.split(text), indices)
        docs.append(Document(f"{prefix}-{lineno}", None, sentences, rationale))
    return docs


def read_jsonl(
    path: str | Path,
    *,
    splitter: "SentenceSplitter | None" = None,
    keywords: Sequence[str] | None = None,
    id_prefix: str | None = None,
    classes: Sequence[int] = BINARY_CLASSES,
    require_label: bool = True,
    stream: BinaryIO | None = None,
    known_keys_only: bool = False,
    file_name_ids: bool = False,
    names: Sequence[str] | None = None,
    kept: list[tuple[int, ...]] | None = None,
) -> list[Document]:
    """Read generic JSONL documents: one JSON object a line.

    Each object has ``"label"`` (an int in ``classes``, or with ``names`` also a class name,
    read as its index in ``names``; ``null`` allowed only when ``require_label`` is False) and either ``"sentences"`` (a list of strings) or ``"text"`` (a
    string, sentence-split with ``splitter``), and optionally ``"rationale"`` (0-based sentence
    indices) and ``"id"`` (default ``f"{id_prefix}-{line number}"``; ids must be unique).

    Ground truth: an explicit ``"rationale"`` wins; otherwise, when ``keywords`` is given, the
    rationale is :func:`keyword_rationale`; otherwise None.

    Args:
        path: the file.
        splitter: sentence splitter for ``"text"`` records; default: the rule-based spaCy
            sentencizer (:class:`~icda.data.sentences.SentenceSplitter`), built only if needed.
        keywords: keyword rule for the ground truth of records without ``"rationale"``.
        id_prefix: prefix of generated ids; default: the file name.
        classes: the allowed labels.
        require_label: reject records whose label is null or absent.
        stream: read this binary stream (e.g. standard input) instead of opening ``path``, which
            then only names it in messages and ids.
        known_keys_only: reject a record with a key outside :data:`JSONL_KEYS` (a typo such as
            ``"lable"`` would otherwise be ignored, and with it the label).
        file_name_ids: reject an ``"id"`` that is not a plain file name
            (:data:`~icda.data.document.DOC_ID`: ``python -m icda prepare`` asks it, as the ERASER
            export keeps each document in ``docs/<id>``).
        kept: a list that gets, per document read, the indices into its record's ``"sentences"``
            of the sentences kept (blank ones are dropped, so a document's sentence i is the
            record's ``kept[d][i]``; a ``"text"`` record's are its split sentences, 0..n-1).

    Raises:
        DataError: the file is missing or not UTF-8; a line is not a JSON object, has an unknown
            key (``known_keys_only``), an id that is not a file name (``file_name_ids``), has no or a
            bad label, neither or a malformed ``sentences``/``text``, a bad rationale index, a
            duplicate id or one that is neither a string nor an integer, or no non-empty sentence; a string holds half a surrogate pair
            (``"\\ud83d"``); a ``text`` is longer than spaCy splits (1,000,000 characters).
    """
    path = Path(path)
    prefix = path.name if id_prefix is None else id_prefix
    allowed = list(classes) + list(names or ())
    fix = ('write one JSON object a line: {"label": 0 or 1, "sentences": [...]} or '
           '{"label": ..., "text": "..."}, optionally "rationale": [indices] and "id"')
    records = []  # (lineno, obj)
    for lineno, line in _lines(path, stream):
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(path, lineno, f"not valid JSON ({exc.msg})", fix) from exc
        except ValueError:  # an integer beyond Python's 4,300 digits
            raise DataError(path, lineno, f"a number has more than {sys.get_int_max_str_digits():,} digits, "
                            "more than Python reads", f"write it with fewer digits: {fix}") from None
        if not isinstance(obj, dict):
            raise DataError(path, lineno, "not a JSON object", fix)
        half = _lone_surrogate(obj)
        if half is not None:
            raise DataError(path, lineno, f"a string holds the escape \\u{ord(half):04x}, half of a UTF-16 surrogate "
                            "pair without its other half: no character, and no UTF-8 file can hold it",
                            "write the character itself, or both halves of its pair (e.g. \\ud83d\\ude00), "
                            "or remove the escape")
        unknown = sorted(key for key in obj if key not in JSONL_KEYS)
        if known_keys_only and unknown:
            raise DataError(path, lineno, f"unknown key{'s' if len(unknown) > 1 else ''} "
                            f"{', '.join(map(repr, unknown))} (known keys: {', '.join(JSONL_KEYS)})",
                            f"rename or remove {'them' if len(unknown) > 1 else 'it'}: {fix}")
        records.append((lineno, obj))

    texts = [(lineno, obj["text"]) for lineno, obj in records if "sentences" not in obj and "text" in obj]
    split_texts: dict[int, list[str]] = {}
    if texts:
        for lineno, text in texts:
            if not isinstance(text, str):
                raise DataError(path, lineno, '"text" is not a string', fix)
        if splitter is None:
            from icda.data.sentences import SentenceSplitter

            splitter = SentenceSplitter()
        for lineno, text in texts:
            _check_length(path, lineno, text, splitter, 'split the document into several records, or give it '
                          'split already, as "sentences": [...] (not read by spaCy)')
        split_texts = dict(zip((n for n, _ in texts), splitter.split_many([t for _, t in texts])))

    docs, seen = [], {}
    for lineno, obj in records:
        label = obj.get("label")
        if names and isinstance(label, str) and label in names:
            label = list(names).index(label)
        if label is None:
            if require_label:
                raise DataError(path, lineno, 'no "label"', f"give every record a label in {allowed}")
        elif isinstance(label, str) and names:
            raise DataError(path, lineno, f"label {label!r} is not one of the class names {list(names)}",
                            f"use one of the class labels {allowed}, or correct the dataset's class_names")
        elif isinstance(label, bool) or not isinstance(label, int):
            raise DataError(path, lineno, f"label {label!r} is not an integer",
                            f"use one of the class labels {list(classes)}, or name the classes in the "
                            "dataset's class_names (datasets.<name>.class_names) to use names")
        elif label not in classes:
            raise DataError(path, lineno, f"label {label} is outside the classes {list(classes)}",
                            f"use one of the class labels {list(classes)}")
        if "sentences" in obj:
            raw = obj["sentences"]
            if not isinstance(raw, list) or not all(isinstance(s, str) for s in raw):
                raise DataError(path, lineno, '"sentences" is not a list of strings', fix)
        elif "text" in obj:
            raw = split_texts[lineno]
        else:
            raise DataError(path, lineno, 'neither "sentences" nor "text"', fix)
        given = obj.get("rationale")
        if given is not None:
            if not isinstance(given, list) or not all(
                isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in given
            ):
                raise DataError(path, lineno, '"rationale" is not a list of non-negative integers', fix)
            sentences, rationale = _sentences_with_rationale(path, lineno, raw, given)
        else:
            sentences = _sentences(path, lineno, raw)
            rationale = None if keywords is None else keyword_rationale(sentences, keywords)
        given_id = obj.get("id")
        if given_id is not None and (isinstance(given_id, bool) or not isinstance(given_id, (str, int))):
            raise DataError(path, lineno, f'"id" {json.dumps(given_id)[:60]} is not a string or an integer',
                            "give every document an id that is a string or an integer (or none, to number "
                            "them by line)")
        doc_id = str(given_id) if given_id is not None else f"{prefix}-{lineno}"
        if file_name_ids and not is_doc_id(doc_id):
            raise DataError(path, lineno, f"id {doc_id!r} is not a plain file name (the ERASER export writes "
                            "each document to docs/<id>)", f"give ids of {DOC_ID_RULE}, or none, to number "
                            "the documents by line")
        if doc_id in seen:
            raise DataError(path, lineno, f"id {doc_id!r} already used on line {seen[doc_id]}",
                            "give every document a unique id (or none, to number them by line)")
        seen[doc_id] = lineno
        docs.append(Document(doc_id, label, sentences, rationale))
        if kept is not None:
            kept.append(tuple(i for i, s in enumerate(raw) if s.strip()))
    return docs


def read_text_lines(
    path: str | Path, *, splitter: "SentenceSplitter | None" = None, id_prefix: str | None = None,
    stream: BinaryIO | None = None,
) -> list[Document]:
    """Read plain text, one unlabelled document a line, sentence-split with ``splitter``
    (default: the rule-based spaCy sentencizer, as for JSONL ``"text"`` records).

    Documents get the id ``f"{id_prefix}-{line number}"`` (default prefix: the file name) and
    ``label=None``; blank lines are skipped. ``stream``: a binary stream (e.g. standard input)
    read instead of opening ``path``, which then only names it in messages.

    Raises:
        DataError: the file is missing or not UTF-8, a line is longer than spaCy splits (1,000,000
            characters), or a line has no sentence after splitting.
    """
    path = Path(path)
    prefix = path.name if id_prefix is None else id_prefix
    lines = list(_lines(path, stream))
    if splitter is None and lines:
        from icda.data.sentences import SentenceSplitter

        splitter = SentenceSplitter()
    for lineno, line in lines:
        _check_length(path, lineno, line, splitter, "split the line into several documents, one a line, or give "
                      'the document as JSONL split already: {"sentences": [...]} (not read by spaCy)')
    split = splitter.split_many([line for _, line in lines]) if lines else []
    return [Document(f"{prefix}-{lineno}", None, _sentences(path, lineno, raw))
            for (lineno, _), raw in zip(lines, split)]


# --------------------------------------------------------------------------------------------
# helpers


def _lines(path: Path, stream: BinaryIO | None = None) -> Iterator[tuple[int, str]]:
    """Yield (line number from 1, line without its newline) for every non-blank line of
    ``path``, or of ``stream`` where one is given."""
    if stream is None and not path.is_file():
        raise DataError(path, None, "file not found",
                        "check the path, or fetch the data with `python -m icda download`")
    with contextlib.nullcontext(stream) if stream is not None else path.open("rb") as fh:
        # decoded line by line, so a decoding error has its line number
        for lineno, raw in enumerate(_universal_lines(fh), 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DataError(path, lineno, f"not UTF-8 text (byte {raw[exc.start]:#04x} at column "
                                f"{exc.start + 1}: {exc.reason})", "convert the file to UTF-8") from exc
            if lineno == 1:
                line = line.removeprefix("\ufeff")  # a byte-order mark (Windows editors), not text
            if line.strip():
                yield lineno, line


def _universal_lines(fh: BinaryIO) -> Iterator[bytes]:
    r"""The lines of a binary stream without their ends, as Python's universal newlines reads
    them: ``\n``, ``\r\n`` and a lone ``\r`` (old Mac files) each end a line."""
    for chunk in fh:  # a binary stream's lines end at \n only
        body = chunk[:-1] if chunk.endswith(b"\n") else chunk
        if body.endswith(b"\r"):
            body = body[:-1]
        yield from body.split(b"\r")


#: a code point of a UTF-16 surrogate (U+D800–U+DFFF): JSON's ``\u`` escapes can write one alone
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _lone_surrogate(value) -> str | None:
    """The first lone surrogate in the strings (keys included) of a JSON value, or None."""
    if isinstance(value, str):
        found = _SURROGATE.search(value)
        return found.group() if found else None
    if isinstance(value, dict):
        value = [item for pair in value.items() for item in pair]
    if isinstance(value, list):
        return next((half for half in map(_lone_surrogate, value) if half is not None), None)
    return None


def _check_length(path: Path, lineno: int, text: str, splitter: "SentenceSplitter", fix: str) -> None:
    """Refuse a text longer than spaCy splits at once (``nlp.max_length``, 1,000,000 characters):
    a document that long is a file without its line breaks more often than one document, and the
    selector sees only its first ``encoder.max_sentences`` sentences anyway."""
    if len(text) > splitter.max_length:
        raise DataError(path, lineno, f"the text has {len(text):,} characters, more than the "
                        f"{splitter.max_length:,} spaCy splits into sentences at once (nlp.max_length)", fix)


def _split_tab(path: Path, lineno: int, line: str, fix: str) -> tuple[str, str]:
    field, tab, text = line.partition("\t")
    if not tab:
        if line.lstrip().startswith("{"):
            fix = ("the line is a JSON object, but the file is read as tab-separated: train and dev share "
                   "the dataset's `format:` (left out: jsonl only when the train file is named *.jsonl), the "
                   "test file has `test_format:`. Give train and dev in one format and set `format: jsonl` "
                   "(or `test_format: jsonl`) for JSONL")
        raise DataError(path, lineno, "no tab between the first field and the sentences", fix)
    return field.strip(), text


def _parse_label(path: Path, lineno: int, field: str, classes: Sequence[int]) -> int:
    try:
        label = int(field)
    except ValueError:
        raise DataError(path, lineno, f"label {field!r} is not an integer",
                        f"start the line with one of the class labels {list(classes)} and a tab"
                        " (for ratings in [0, 1] set `ratings: true`)") from None
    if label not in classes:
        raise DataError(path, lineno, f"label {label} is outside the classes {list(classes)}",
                        f"use one of the class labels {list(classes)}")
    return label


def _parse_rating(path: Path, lineno: int, field: str) -> float:
    try:
        rating = float(field)
    except ValueError:
        rating = float("nan")
    if not 0.0 <= rating <= 1.0:
        raise DataError(path, lineno, f"rating {field!r} is not a number in [0, 1]",
                        "start the line with the rating scaled to [0, 1] and a tab")
    return rating


def _sentences(path: Path, lineno: int, raw: Sequence[str]) -> tuple[str, ...]:
    sentences, _ = _sentences_with_rationale(path, lineno, raw, None)
    return sentences


def _sentences_with_rationale(
    path: Path, lineno: int, raw: Sequence[str], indices: Sequence[int] | None
) -> tuple[tuple[str, ...], frozenset[int] | None]:
    """Strip sentences, drop empty ones and re-number ``indices`` (into ``raw``) to match."""
    stripped = [s.strip() for s in raw]
    new_index = {}
    for i, s in enumerate(stripped):
        if s:
            new_index[i] = len(new_index)
    if not new_index:
        raise DataError(path, lineno, "empty document (no non-empty sentence)",
                        "remove the line or give the document its sentences")
    sentences = tuple(s for s in stripped if s)
    if indices is None:
        return sentences, None
    rationale = set()
    for i in indices:
        if i >= len(raw):
            raise DataError(path, lineno,
                            f"rationale index {i} is past the last sentence (the document has "
                            f"{len(raw)} sentences, indexed from 0)",
                            "use 0-based indices of the document's sentences")
        if i not in new_index:
            raise DataError(path, lineno, f"rationale index {i} points at an empty sentence",
                            "use 0-based indices of non-empty sentences")
        rationale.add(new_index[i])
    return sentences, frozenset(rationale)
