"""Baselines that read against chance: the test precision of selectors that learn nothing.

The result tables show them beside COMP, MMI, CDA and ICDA (rows ``Random`` and ``Keyword``):

- **Random**: per document, k sentences (``model.k`` of the dataset's settings) drawn uniformly
  without replacement among the sentences the model sees (the first ``encoder.max_sentences``;
  all of them where there are fewer than k). With one ground-truth sentence among n seen, a
  document's expected precision is 1/n.
- **Keyword** (only for a dataset with ``keywords:`` in its spec): per document, the first
  sentence, in document order among those the model sees, that contains one of the keywords
  (case-insensitive, as a substring: the matching of :func:`icda.data.readers.keyword_rationale`),
  then the next such sentences up to k; the rest of the k, and all k in a document without a
  keyword sentence, drawn at random among its other seen sentences. Where the keywords are the
  dataset's ground-truth rule (restaurant, connectivity), this row reads the answer: it is the
  ceiling of a selector, not a competitor.

Precision is ``eval.json``'s (:func:`icda.metrics.rationale_metrics`: the ground-truth sentences
among the selected ones, pooled over the annotated documents). Each baseline is drawn
:data:`DRAWS` times, seeded (:data:`SEED`; the random and the keyword baseline draw from their
own streams), and the tables show the mean ± sample sd over the draws.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Sequence

import numpy as np

from icda.data.dataset_spec_files import load_spec_file
from icda.data.document import Document, read_documents
from icda.data.readers import keyword_rationale
from icda.metrics import rationale_metrics
from icda.records import Baselines
from icda.settings import Settings

log = logging.getLogger(__name__)

#: draws of each baseline (``python -m icda report baselines --draws``)
DRAWS = 100
#: the seed of the draws (``--seed``); the random baseline draws from ``[SEED, 0]``, the
#: keyword baseline from ``[SEED, 1]`` (:func:`numpy.random.default_rng`)
SEED = 0


def random_positions(n_seen: Sequence[int], k: int, rng: np.random.Generator,
                     first: Sequence[Sequence[int]] | None = None) -> list[list[int]]:
    """Per document, ``first[d]`` (default: none) and then random other sentences among its
    ``n_seen[d]``, up to ``min(k, n_seen[d])`` positions (sorted)."""
    out = []
    for d, n in enumerate(n_seen):
        taken = list(first[d][:k]) if first is not None else []
        rest = [i for i in range(n) if i not in taken]
        need = min(k, n) - len(taken)
        if need > 0:
            taken += [rest[i] for i in rng.choice(len(rest), size=need, replace=False)]
        out.append(sorted(int(i) for i in taken))
    return out


def keyword_sentences(docs: Sequence[Document], n_seen: Sequence[int], keywords: Sequence[str]) -> list[list[int]]:
    """Per document, the positions among its seen sentences that contain a keyword, in order."""
    return [sorted(keyword_rationale(doc.sentences[:n], keywords)) for doc, n in zip(docs, n_seen)]


def baseline_precisions(docs: Sequence[Document], k: int, max_sentences: int, keywords: Sequence[str] | None = None,
                        draws: int = DRAWS, seed: int = SEED) -> tuple[list[float | None], list[float | None] | None]:
    """The test precision of each draw of the random and (with ``keywords``) the keyword
    baseline (module docstring).

    Returns:
        (random: [draws] precisions, keyword: [draws] precisions or None without keywords); a
        precision is None where no annotated document has a sentence to select.
    """
    n_seen = [min(len(doc.sentences), max_sentences) for doc in docs]
    truth = [doc.rationale for doc in docs]

    def precision(positions: list[list[int]]) -> float | None:
        return rationale_metrics(positions, truth, n_seen)["precision"]

    rng = np.random.default_rng([seed, 0])
    random = [precision(random_positions(n_seen, k, rng)) for _ in range(draws)]
    if keywords is None:
        return random, None
    first = keyword_sentences(docs, n_seen, keywords)
    rng = np.random.default_rng([seed, 1])
    keyword = [precision(random_positions(n_seen, k, rng, first)) for _ in range(draws)]
    return random, keyword


def dataset_baselines(test: str | Path, settings: str | Path, spec: str | Path, draws: int = DRAWS,
                      seed: int = SEED) -> Baselines:
    """The baselines of one dataset from its prepared test split, its ``settings.json`` (``model.k``,
    ``encoder.max_sentences``) and its spec (``dataset.json``: name and ``keywords``).

    Raises:
        DataError: the test split is missing or malformed.
        ConfigError: the settings or the spec are missing or malformed.
    """
    name, spec_values, _ = load_spec_file(spec)
    config = Settings.load(settings)
    keywords = spec_values.get("keywords")
    docs = read_documents(test)
    random, keyword = baseline_precisions(docs, config.model.k, config.encoder.max_sentences, keywords, draws, seed)
    return Baselines(dataset=name, k=config.model.k, draws=draws, seed=seed, n_docs=len(docs), random=random,
                     keyword=keyword, keywords=None if keywords is None else list(keywords))


def write_baselines(test: str | Path, settings: str | Path, spec: str | Path, out: str | Path,
                    draws: int = DRAWS, seed: int = SEED) -> Baselines:
    """:func:`dataset_baselines`, written to ``out`` (``results/<dataset>/baselines.json``)."""
    baselines = dataset_baselines(test, settings, spec, draws, seed)
    baselines.write(out)
    log.info("%s: random precision %s, keyword %s -> %s", baselines.dataset,
             _mean(baselines.random), _mean(baselines.keyword), out)
    return baselines


def _mean(values: list[float | None] | None) -> str:
    kept = [v for v in values or [] if v is not None]
    return f"{np.mean(kept):.3f}" if kept else "–"
