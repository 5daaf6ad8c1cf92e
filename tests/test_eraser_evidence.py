"""the ERASER evidence reader checks an evidence's token span, its sentence
indices and its text against each other (property tests over random documents and evidences).

Before: sentence indices that contradict the token span and text became ground truth unchecked;
an evidence with start_token == end_token was dropped as empty even with valid sentence indices
and text; start_token = end_token = 99999 with any text was accepted as empty."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import assume, given, strategies as st

from icda.data.eraser_files import check_evidence
from icda.errors import DataError

WORDS = st.sampled_from(["the", "food", "was", "cold", ".", "we", "left", "staff", "kind", "!"])
DOCS = st.lists(st.lists(WORDS, min_size=1, max_size=5), min_size=1, max_size=6)
WHERE = Path("test.jsonl")


def _offsets(doc):
    out, n = [], 0
    for sentence in doc:
        out.append(n)
        n += len(sentence)
    return out, n


def _touched(doc, start, end):
    offsets, _ = _offsets(doc)
    hit = [i for i, o in enumerate(offsets) if o < end and start < o + len(doc[i])]
    return hit[0], hit[-1] + 1


def _check(ev, doc):
    return check_evidence({"docid": "d", **ev}, doc, WHERE, 3, "a")


@st.composite
def token_evidence(draw):
    """A document and a non-empty token span with its own sentences and text."""
    doc = draw(DOCS)
    _, n = _offsets(doc)
    start = draw(st.integers(0, n - 1))
    end = draw(st.integers(start + 1, n))
    tokens = [t for s in doc for t in s]
    first, last = _touched(doc, start, end)
    return doc, {"start_token": start, "end_token": end, "start_sentence": first, "end_sentence": last,
                 "text": " ".join(tokens[start:end])}


@given(token_evidence())
def test_a_consistent_evidence_marks_the_sentences_its_tokens_touch(case):
    doc, ev = case
    assert _check(ev, doc) == (ev["start_sentence"], ev["end_sentence"])
    # ERASER's token-only evidences (sentence indices -1) mark the same sentences
    assert _check(ev | {"start_sentence": -1, "end_sentence": -1}, doc) == (ev["start_sentence"], ev["end_sentence"])


@given(token_evidence(), st.data())
def test_sentence_indices_that_contradict_the_token_span_are_refused(case, data):
    doc, ev = case
    first = data.draw(st.integers(0, len(doc) - 1))
    last = data.draw(st.integers(first + 1, len(doc)))
    assume((first, last) != (ev["start_sentence"], ev["end_sentence"]))
    with pytest.raises(DataError, match=r"test\.jsonl:3: .*annotation a: an evidence's sentences "
                                        rf"\[{first}, {last}\) contradict its tokens"):
        _check(ev | {"start_sentence": first, "end_sentence": last}, doc)


@given(DOCS, st.data())
def test_an_empty_token_span_with_sentence_indices_marks_those_sentences(doc, data):
    """start_token == end_token with valid sentence indices and their text: the sentences are
    its ground truth, not dropped; with a wrong text: refused."""
    _, n = _offsets(doc)
    first = data.draw(st.integers(0, len(doc) - 1))
    last = data.draw(st.integers(first + 1, len(doc)))
    at = data.draw(st.integers(0, n))
    text = " ".join(t for s in doc[first:last] for t in s)
    ev = {"start_token": at, "end_token": at, "start_sentence": first, "end_sentence": last, "text": text}
    assert _check(ev, doc) == (first, last)
    with pytest.raises(DataError, match="is not the text of its sentences"):
        _check(ev | {"text": text + " nonsense"}, doc)


@given(DOCS, st.integers(0, 200_000), st.text("abc ", max_size=8))
def test_an_empty_evidence_lies_in_its_document_and_has_no_text(doc, at, text):
    """Without sentence indices an empty span marks nothing: it must lie within the document
    (0 <= start_token <= its tokens) and its text, if any, be empty."""
    _, n = _offsets(doc)
    ev = {"start_token": at, "end_token": at, "start_sentence": -1, "end_sentence": -1, "text": text}
    if at > n:
        with pytest.raises(DataError, match=rf"empty evidence \(start_token = end_token = {at}\) lies outside"):
            _check(ev, doc)
    elif text.split():
        with pytest.raises(DataError, match="so it is not empty"):
            _check(ev, doc)
    else:
        assert _check(ev, doc) is None


def test_the_issue_cases():
    doc = [["the", "food", "was", "cold", "."], ["we", "left", "."], ["staff", "kind", "!"]]
    # sentence indices contradicting the token span and text
    with pytest.raises(DataError, match="contradict its tokens"):
        _check({"start_token": 5, "end_token": 8, "start_sentence": 0, "end_sentence": 1, "text": "we left ."}, doc)
    # an empty span with valid sentence indices and text: the document keeps its ground truth
    assert _check({"start_token": 5, "end_token": 5, "start_sentence": 1, "end_sentence": 2, "text": "we left ."},
                  doc) == (1, 2)
    # start_token = end_token = 99999 with a nonsense text
    with pytest.raises(DataError, match="lies outside document d"):
        _check({"start_token": 99999, "end_token": 99999, "start_sentence": -1, "end_sentence": -1,
                "text": "nonsense"}, doc)
