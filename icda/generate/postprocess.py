"""From raw LLM responses to train/dev/test documents (the ``prepare`` step of a ``source: llm``
dataset; paper appendix "Generating the Connectivity/Restaurant Dataset").

Per response: everything up to and including the preamble ("My review:", case-insensitive) is
stripped; the rest is split into sentences with spaCy (each line separately: a line break ends a
sentence); a sentence is dropped when it contains one of the ``filters`` strings (restaurant:
"review", "give it a", "out of") or shares ``leakage_ngram`` consecutive words with the prompt.
The documents are then deduplicated, those with fewer than ``min_sentences`` sentences dropped,
the classes balanced, and test and dev carved out (stratified, seeded); the test split gets the
keyword ground truth.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from icda.data.document import Document
from icda.data.cleaning import clean, split_dev
from icda.data.readers import keyword_rationale
from icda.generate.records import Response, read_responses
from icda.data.llm_spec import LlmSpec

_WORD = re.compile(r"[a-z0-9']+")


def strip_preamble(text: str, preamble: str | None) -> tuple[str, bool]:
    """``text`` after the first occurrence of ``preamble`` (case-insensitive), and whether it was
    found; the whole text when it is not."""
    if preamble:
        at = text.lower().find(preamble.lower())
        if at >= 0:
            return text[at + len(preamble):], True
    return text, False


def ngrams(text: str, n: int) -> set[tuple[str, ...]]:
    """The lower-cased word ``n``-grams of ``text`` (punctuation ignored)."""
    words = _WORD.findall(text.lower())
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


class SentenceFilter:
    """Why a sentence is dropped: ``"filter"`` (contains a filter string), ``"leakage"`` (shares
    ``leakage_ngram`` consecutive words with its prompt) or None (kept)."""

    def __init__(self, llm: LlmSpec):
        self.filters = [f.lower() for f in llm.filters]
        self.n = llm.leakage_ngram
        self._prompt_ngrams: dict[str, set[tuple[str, ...]]] = {}
        self.llm = llm

    def __call__(self, sentence: str, value: str) -> str | None:
        low = sentence.lower()
        if any(f in low for f in self.filters):
            return "filter"
        if self.n:
            if value not in self._prompt_ngrams:
                self._prompt_ngrams[value] = ngrams(self.llm.render(value), self.n)
            if ngrams(sentence, self.n) & self._prompt_ngrams[value]:
                return "leakage"
        return None


def responses_to_documents(responses: list[Response], llm: LlmSpec, splitter) -> tuple[list[Document], dict]:
    """One document per response (module docstring: preamble, sentences, filters), in order.

    Args:
        splitter: a :class:`~icda.data.sentences.SentenceSplitter`.

    Returns:
        ``(documents, counts)``; counts: responses (in all and per label), responses without
        the preamble, sentences found, sentences dropped by the filter strings and as prompt leakage.
    """
    keep = SentenceFilter(llm)
    labels = Counter(str(r.label) for r in responses)
    counts = {"responses": len(responses), "responses_per_label": dict(sorted(labels.items())),
              "without_preamble": 0, "sentences": 0, "dropped_filter": 0, "dropped_leakage": 0}
    bodies, lines_of = [], []
    for response in responses:
        body, found = strip_preamble(response.text or "", llm.preamble)
        counts["without_preamble"] += not found
        lines = [line.strip() for line in body.splitlines() if line.strip()]
        lines_of.append(len(lines))
        bodies.extend(lines)
    split_lines = iter(splitter.split_many(bodies))
    docs = []
    for i, (response, n_lines) in enumerate(zip(responses, lines_of)):
        sentences = []
        for _ in range(n_lines):
            for sentence in next(split_lines):
                sentence = " ".join(sentence.split())
                counts["sentences"] += 1
                reason = keep(sentence, response.value)
                if reason:
                    counts[f"dropped_{reason}"] += 1
                else:
                    sentences.append(sentence)
        docs.append(Document(f"llm-{i}", response.label, tuple(sentences)))
    return docs, counts


def llm_splits(spec: dict, llm: LlmSpec, path: str | Path) -> tuple[dict[str, list[Document]], dict]:
    """Train/dev/test documents of a validated ``source: llm`` spec from its responses file.

    Returns:
        ``(splits, report)``: the splits are prepared (deduplicated, short documents dropped,
        balanced when ``balance``); the report has the counts of
        :func:`responses_to_documents` and the documents dropped at each step.

    Raises:
        DataError: the responses file is missing or malformed.
    """
    from icda.data.sentences import SentenceSplitter

    responses = read_responses(path)
    docs, report = responses_to_documents(responses, llm, SentenceSplitter(spec["spacy_model"]))
    kept, steps = clean(docs, spec["min_sentences"], spec["balance"], spec["seed"])
    report.update(steps)
    report["documents"] = len(kept)
    rest, test = split_dev(kept, llm.test, spec["seed"])
    train, dev = split_dev(rest, llm.dev / (1 - llm.test), spec["seed"] + 1)
    keywords = spec["keywords"]
    splits = {}
    for split, part in (("train", train), ("dev", dev), ("test", test)):
        splits[split] = [
            Document(f"{split}-{i}", doc.label, doc.sentences,
                     keyword_rationale(doc.sentences, keywords) if keywords else None)
            for i, doc in enumerate(part)]
    return splits, report
