"""The rationale probe: how well a selector's rationales alone predict the label, a
ground-truth-free signal of rationale quality (departure 29, docs/departures.md).

A rationale that explains the label predicts it better than a spurious sentence that only
correlates with it (the paper's premise, section "Helpful Counterfactual Generation Errors":
p(Y1|X1) > p(Y1|X2)). The probe reads nothing but each document's rationale: a logistic
regression (scikit-learn, L2, C = 1) is fitted on the frozen vectors of the training documents'
rationales against their labels and scored on the dev documents' rationales. It reads labels,
never rationale annotations, so it works where the dev split has no ground truth.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np


def rationale_vectors(table: np.ndarray, ids: Sequence[Sequence[int]], positions: Sequence[Sequence[int]]) -> np.ndarray:
    """Each document's rationale as one vector: the mean of its selected sentences' vectors.

    Args:
        table: float [U, H], one row per sentence id (the frozen sentence vectors).
        ids: per document, its sentences' ids (rows of ``table``), in document order.
        positions: per document, the selected sentence indices (0-based, at least one).

    Returns:
        float32 [D, H].

    Raises:
        ValueError: the two lengths differ, a document has no selected sentence, or an index is
            outside its document.
    """
    if len(ids) != len(positions):
        raise ValueError(f"{len(ids)} documents but {len(positions)} position lists")
    rows = []
    for d, (sentence_ids, selected) in enumerate(zip(ids, positions)):
        if not selected or min(selected) < 0 or max(selected) >= len(sentence_ids):
            raise ValueError(f"document {d}: positions {list(selected)} do not select from its "
                             f"{len(sentence_ids)} sentences")
        rows.append(np.asarray(table[[sentence_ids[p] for p in selected]], dtype=np.float32).mean(axis=0))
    return np.stack(rows)


def probe_accuracy(train_x: np.ndarray, train_y: Sequence[int], dev_x: np.ndarray, dev_y: Sequence[int]) -> float:
    """Dev accuracy (fraction) of a logistic regression fitted on ``train_x`` [N, H] → ``train_y``
    [N] and applied to ``dev_x`` [M, H] → ``dev_y`` [M] (labels 0 … C−1; multinomial for C > 2).

    Raises:
        ValueError: the training labels hold one class only, or the shapes disagree.
    """
    from sklearn.linear_model import LogisticRegression

    train_y, dev_y = np.asarray(train_y), np.asarray(dev_y)
    if len(np.unique(train_y)) < 2:
        raise ValueError("the rationale probe needs training documents of at least two classes")
    if train_x.shape[0] != len(train_y) or dev_x.shape[0] != len(dev_y) or train_x.shape[1] != dev_x.shape[1]:
        raise ValueError(f"shapes disagree: train {train_x.shape} / {len(train_y)} labels, "
                         f"dev {dev_x.shape} / {len(dev_y)} labels")
    probe = LogisticRegression(C=1.0, max_iter=2000).fit(train_x, train_y)
    return float((probe.predict(dev_x) == dev_y).mean())
