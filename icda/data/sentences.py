"""Sentence segmentation with spaCy (paper appendix "Data Details": "We use spacy to segment the
sentences for all datasets except the beer datasets")."""

from __future__ import annotations

from typing import Iterable

from icda.errors import ConfigError


class SentenceSplitter:
    """Split text into sentences with spaCy.

    Args:
        model: None (default) for spaCy's rule-based ``sentencizer`` on ``spacy.blank("en")``
            (no download needed); or the name of an installed spaCy pipeline (e.g.
            ``"en_core_web_sm"``), whose parser or senter sets the boundaries (a ``sentencizer``
            is added if the pipeline has neither).

    Raises:
        ConfigError: the named pipeline is not installed.
    """

    def __init__(self, model: str | None = None):
        import spacy

        self.model = model
        if model is None:
            nlp = spacy.blank("en")
        else:
            try:
                nlp = spacy.load(model, exclude=["ner", "lemmatizer", "textcat", "textcat_multilabel"])
            except OSError as exc:
                raise ConfigError(
                    f"spacy_model: the spaCy pipeline {model!r} is not installed ({exc}). "
                    f"Fix: run `python -m spacy download {model}`, or set spacy_model to null for "
                    "the rule-based sentencizer"
                ) from exc
        if not (nlp.has_pipe("parser") or nlp.has_pipe("senter") or nlp.has_pipe("sentencizer")):
            nlp.add_pipe("sentencizer")
        self.nlp = nlp

    @property
    def max_length(self) -> int:
        """The longest text, in characters, the pipeline splits (spaCy's ``nlp.max_length``,
        1,000,000 unless the pipeline sets another): a longer one raises spaCy's error E088, so
        the readers refuse it first, naming its file and line (:mod:`icda.data.readers`)."""
        return int(self.nlp.max_length)

    def split(self, text: str) -> list[str]:
        """The sentences of ``text``: stripped, empty ones dropped, in order."""
        return self._sentences(self.nlp(text))

    def split_many(self, texts: Iterable[str], batch_size: int = 256) -> list[list[str]]:
        """:meth:`split` for many texts, batched with ``nlp.pipe``; one list per text, in order."""
        return [self._sentences(doc) for doc in self.nlp.pipe(texts, batch_size=batch_size)]

    @staticmethod
    def _sentences(doc) -> list[str]:
        return [s.text.strip() for s in doc.sents if s.text.strip()]
