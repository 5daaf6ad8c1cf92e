"""Kept originals and rationale pools for counterfactual generation (paper "Implementation",
"Settings"; docs/algorithm.md, step 4.2).

From the selected model's predictions on a split of N original documents: prediction error
e = |P(y=1) − y|; a document is correct when e <= 0.5. Per class the m correct documents with the
lowest error are kept, m = min(⌊N/4⌋, correct in class 0, correct in class 1), so that originals
plus counterfactuals (4m) never exceed N. The pool A_c holds the selected sentences of the
``pool_fraction`` most confident correct documents of class c: a share of the class's documents
(``pool_base="class"``, the paper's 10 %) or of the m kept (``"kept"``, the authors' code).
"""

from __future__ import annotations

import math

import numpy as np

from icda.errors import IcdaError
from icda.splits import AugmentationPlan


def build_plan(
    labels: np.ndarray,
    prob_positive: np.ndarray,
    selected: list[list[int]],
    pool_fraction: float = 0.10,
    pool_base: str = "class",
) -> tuple[AugmentationPlan, dict]:
    """Kept originals and pools of one split.

    Args:
        labels: [N] gold classes (0/1).
        prob_positive: [N] the model's P(y=1).
        selected: per document, its selected sentence positions.

    Returns:
        (plan, stats) where stats records N, m, correct counts and pool sizes.

    Raises:
        IcdaError: a class has no correctly predicted document, so no counterfactual can be made.
    """
    labels = np.asarray(labels)
    error = np.abs(np.asarray(prob_positive, dtype=np.float64) - labels)
    order_by_class, correct = {}, {}
    for c in (0, 1):
        docs = np.flatnonzero((labels == c) & (error <= 0.5))
        order_by_class[c] = docs[np.argsort(error[docs], kind="stable")]
        correct[c] = len(docs)
    n = len(labels)
    m = min(n // 4, correct[0], correct[1])
    if m == 0:
        raise IcdaError(
            f"no counterfactual can be built: correct predictions per class {correct} of {n} "
            "documents. Fix: check the selected model's history (dev accuracy) and training settings"
        )
    kept = sorted(int(d) for c in (0, 1) for d in order_by_class[c][:m])
    pools, pool_docs = {}, {}
    for c in (0, 1):
        base = int((labels == c).sum()) if pool_base == "class" else m
        size = min(correct[c], max(1, math.ceil(pool_fraction * base)))
        docs = order_by_class[c][:size]
        pool_docs[c] = len(docs)
        pools[c] = [(int(d), int(p)) for d in docs for p in selected[d]]
    plan = AugmentationPlan(kept=kept, positions=[list(selected[d]) for d in kept], pools=pools)
    stats = {
        "n_documents": n,
        "m_per_class": m,
        "correct_per_class": {str(c): correct[c] for c in (0, 1)},
        "pool_documents_per_class": {str(c): pool_docs[c] for c in (0, 1)},
        "pool_fraction": pool_fraction,
        "pool_base": pool_base,
    }
    return plan, stats
