"""Cleaning train/dev documents (paper appendix "Data Details"): deduplicate, drop short
documents, balance the classes, binarise ratings, carve out a dev split, keep fewer training
documents.

"We modify all training and dev datasets by deduplifying, filtering all samples with less than
five sentences, and balancing the classes"; beer ratings are binarised (>= 0.6 positive, <= 0.4
negative). Every function returns a new list (inputs are never modified), keeps the documents'
original order, and logs what it dropped. Random choices use ``numpy.random.default_rng(seed)``:
the same input and seed give the same output.
"""

from __future__ import annotations

import logging
import math
from collections import Counter, defaultdict
from typing import Sequence

import numpy as np

from icda.data.document import Document

log = logging.getLogger(__name__)

#: rating thresholds of the beer data (paper appendix "Data Details")
POSITIVE_RATING = 0.6
NEGATIVE_RATING = 0.4


def binarize_rating(
    rating: float, positive: float = POSITIVE_RATING, negative: float = NEGATIVE_RATING
) -> int | None:
    """Binary label of a rating in [0, 1]: 1 if ``rating >= positive``, 0 if ``rating <= negative``,
    None (drop the document) in between."""
    if rating >= positive:
        return 1
    if rating <= negative:
        return 0
    return None


def deduplicate(docs: Sequence[Document]) -> list[Document]:
    """Drop documents with the same label and the same sentences as an earlier one (keep the first).
    The same sentences with another label are kept (``prepare`` counts and warns about them:
    :func:`icda.steps.prepare.count_contradictory`)."""
    seen: set[tuple[int | None, tuple[str, ...]]] = set()
    out = []
    for doc in docs:
        key = (doc.label, doc.sentences)
        if key not in seen:
            seen.add(key)
            out.append(doc)
    if len(out) < len(docs):
        log.info("deduplicate: dropped %d of %d documents", len(docs) - len(out), len(docs))
    return out


def drop_short(docs: Sequence[Document], min_sentences: int = 5) -> list[Document]:
    """Drop documents with fewer than ``min_sentences`` sentences (paper: 5); a warning names the
    setting when none is left."""
    out = [doc for doc in docs if len(doc.sentences) >= min_sentences]
    if docs and not out:
        log.warning("drop_short: all %d documents have fewer than %d sentences (the longest has %d), "
                    "so none is left. Fix: set the dataset's min_sentences (datasets.<name>.min_sentences) "
                    "to at most %d, keeping it above model.k", len(docs), min_sentences,
                    max(len(doc.sentences) for doc in docs), max(len(doc.sentences) for doc in docs))
    elif len(out) < len(docs):
        log.info("drop_short: dropped %d of %d documents with fewer than %d sentences",
                 len(docs) - len(out), len(docs), min_sentences)
    return out


def _indices_by_label(docs: Sequence[Document]) -> dict[int | None, list[int]]:
    """{label: the positions of its documents in ``docs``}, labels in ascending order, None last."""
    by_class: dict[int | None, list[int]] = defaultdict(list)
    for i, doc in enumerate(docs):
        by_class[doc.label].append(i)
    return {c: by_class[c] for c in sorted(by_class, key=lambda c: (c is None, c))}


def balance_classes(docs: Sequence[Document], seed: int) -> list[Document]:
    """Downsample every class to the size of the smallest class present.

    The kept documents of each larger class are a uniform random subset (seeded); the output keeps
    the input order. With a single class present nothing is dropped (a warning is logged).

    Raises:
        ValueError: a document has no label.
    """
    if any(doc.label is None for doc in docs):
        raise ValueError("balance_classes needs labelled documents (found label None)")
    by_class = _indices_by_label(docs)
    if not by_class:
        log.warning("balance_classes: no document left to balance (earlier steps dropped them all)")
        return []
    if len(by_class) < 2:
        log.warning("balance_classes: only one class (label %s) present in %d documents; nothing to balance",
                    next(iter(by_class)), len(docs))
        return list(docs)
    size = min(len(idx) for idx in by_class.values())
    rng = np.random.default_rng(seed)
    keep: set[int] = set()
    for idx in by_class.values():
        keep.update(idx if len(idx) == size else rng.choice(idx, size=size, replace=False).tolist())
    out = [doc for i, doc in enumerate(docs) if i in keep]
    if len(out) < len(docs):
        counts = Counter(doc.label for doc in docs)
        log.info("balance_classes: dropped %d of %d documents (class sizes %s -> %d each)",
                 len(docs) - len(out), len(docs), dict(sorted(counts.items())), size)
    return out


def clean(docs: Sequence[Document], min_sentences: int, balance: bool, seed: int) -> tuple[list[Document], dict[str, int]]:
    """The paper's preparation of a train/dev split: :func:`deduplicate`, :func:`drop_short`, and
    :func:`balance_classes` when ``balance``. Returns the kept documents and, per step
    (``duplicates``, ``short``, ``balance``), how many it dropped."""
    steps: dict[str, int] = {}
    kept = deduplicate(docs)
    steps["duplicates"] = len(docs) - len(kept)
    before, kept = kept, drop_short(kept, min_sentences)
    steps["short"] = len(before) - len(kept)
    if balance:
        before, kept = kept, balance_classes(kept, seed)
        steps["balance"] = len(before) - len(kept)
    return kept, steps


def split_dev(docs: Sequence[Document], fraction: float, seed: int) -> tuple[list[Document], list[Document]]:
    """Carve a dev split out of ``docs``, stratified by label.

    From each class (label None counts as a class) ``round(fraction * n_class)`` documents go to
    dev, at least 1 when the class has 2 or more documents and at most ``n_class - 1``; the choice
    is seeded. Both outputs keep the input order.

    Returns:
        ``(train, dev)``.

    Raises:
        ValueError: ``fraction`` is not in (0, 1).
    """
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"dev fraction must be in (0, 1), got {fraction}")
    rng = np.random.default_rng(seed)
    dev_idx: set[int] = set()
    for idx in _indices_by_label(docs).values():
        n_dev = min(max(round(fraction * len(idx)), 1), len(idx) - 1) if len(idx) >= 2 else 0
        dev_idx.update(rng.choice(idx, size=n_dev, replace=False).tolist())
    train = [doc for i, doc in enumerate(docs) if i not in dev_idx]
    dev = [doc for i, doc in enumerate(docs) if i in dev_idx]
    log.info("split_dev: %d documents -> %d train, %d dev (fraction %.3g, stratified by label)",
             len(docs), len(train), len(dev), fraction)
    return train, dev


def subsample(docs: Sequence[Document], n: int, seed: int) -> list[Document]:
    """Keep ``n`` of ``docs``, stratified by label (the ``train_documents`` of a dataset spec).

    Class c keeps its share ``n · n_c / N``, rounded down, and the documents left over go to the
    classes with the largest remainders (ties to the lower label; label None counts as a class,
    last); the choice within a class is seeded. The output keeps the input order.

    Raises:
        ValueError: ``n`` is not in [1, len(docs)].
    """
    if not 1 <= n <= len(docs):
        raise ValueError(f"cannot keep {n} of {len(docs)} documents (need 1 <= n <= {len(docs)})")
    by_class = _indices_by_label(docs)
    labels = list(by_class)
    quota = {c: n * len(by_class[c]) / len(docs) for c in labels}
    counts = {c: math.floor(quota[c]) for c in labels}
    for c in sorted(labels, key=lambda c: counts[c] - quota[c])[: n - sum(counts.values())]:  # stable: ties by label
        counts[c] += 1
    rng = np.random.default_rng(seed)
    keep: set[int] = set()
    for c in labels:
        keep.update(rng.choice(by_class[c], size=counts[c], replace=False).tolist())
    log.info("subsample: kept %d of %d documents (stratified by label)", n, len(docs))
    return [doc for i, doc in enumerate(docs) if i in keep]
