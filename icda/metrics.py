"""Rationale precision and friends (paper "Experiments": precision against human rationales)."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from icda.degeneration import position_bins


def rationale_metrics(
    positions: Sequence[Sequence[int]],
    rationale: Sequence[frozenset[int] | None],
    n_sentences: Sequence[int],
    labels: Sequence[int | None] | None = None,
    predictions: Sequence[int] | None = None,
    n_classes: int = 2,
) -> dict:
    """Rationale precision, recall, F1, accuracy and the rationale-position histogram.

    Args:
        positions: per document, the sentence indices the model picked as its rationale.
        rationale: per document, the ground-truth rationale indices (None: not annotated;
            such documents are left out of precision/recall).
        n_sentences: per document, the number of sentences the model saw.
        labels, predictions: gold (None where unknown) and predicted classes, for accuracy.
        n_classes: the number C of classes (gold labels 0 … C−1).

    Returns:
        dict with ``precision`` (share of selected sentences that are ground truth: with k = 1,
        the paper's share of documents whose selected sentence is a rationale sentence),
        ``alpha`` (1 − precision, the rationale error), ``recall`` (share of ground-truth
        sentences selected), ``f1``, ``accuracy`` (None without labels), ``n_docs``,
        ``n_annotated``, ``position_histogram`` (10 bins of index / sentence count) and
        ``precision_by_class`` ({"0": precision, …, "C−1": precision} over the annotated documents
        of each gold class; None without labels, a class's value None where it has no annotated
        document). A selector whose choice depends on the label (e.g. the target aspect's
        sentence in negative documents, a spurious one in positive documents) shows as one high and
        one low value behind a middling ``precision``; the binary theory assumes the same α for
        both classes.
    """
    hits = n_selected = n_truth = n_annotated = 0
    per_class = {c: [0, 0] for c in range(n_classes)}  # gold class -> [hits, selected]
    for i, (sel, truth) in enumerate(zip(positions, rationale)):
        if truth is None:
            continue
        n_annotated += 1
        doc_hits, doc_selected = len(set(sel) & truth), len(set(sel))
        hits += doc_hits
        n_selected += doc_selected
        n_truth += len(truth)
        if labels is not None and labels[i] in per_class:
            per_class[labels[i]][0] += doc_hits
            per_class[labels[i]][1] += doc_selected
    precision = hits / n_selected if n_selected else None
    recall = hits / n_truth if n_truth else None
    f1 = (
        2 * precision * recall / (precision + recall)
        if precision is not None and recall is not None and precision + recall > 0 else None
    )
    accuracy = None
    if labels is not None and predictions is not None:
        pairs = [(y, p) for y, p in zip(labels, predictions) if y is not None]
        accuracy = sum(y == p for y, p in pairs) / len(pairs) if pairs else None
    by_class = None if labels is None else {str(c): h / n if n else None for c, (h, n) in per_class.items()}
    flat = [(p, n) for sel, n in zip(positions, n_sentences) for p in sel]
    hist = position_bins(np.array([p for p, _ in flat]), np.array([n for _, n in flat]))
    return {
        "precision": precision,
        "alpha": None if precision is None else 1.0 - precision,
        "recall": recall,
        "f1": f1,
        "accuracy": accuracy,
        "n_docs": len(positions),
        "n_annotated": n_annotated,
        "position_histogram": hist.tolist(),
        "precision_by_class": by_class,
    }
