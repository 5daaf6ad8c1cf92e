"""Counterfactuals (paper eq. new_cdaproc: Y^c ← 1 − Y, X_1^c ← A | (1 − Y); section
"Implementation", Algorithm 1 D^a = D ∪ D^c; docs/algorithm.md, step 4), for C >= 2 classes
(the paper's generalisation to N classes: Y^c ← c ≠ Y, X_1^c ← A | c).

1. :func:`build_plan`: from the chosen model's predictions on a split of N original documents,
   the kept originals and the rationale pools (an :class:`AugmentationPlan`). Prediction error
   e = 1 − P(y) (binary: |P(y=1) − y|); a document is correct when e <= 0.5 (binary) or when
   its label is the most probable class (C > 2). Per class the m correct documents with the
   lowest error are kept, m = min(⌊N/(2C)⌋, correct in each class), so that originals plus
   counterfactuals (2Cm; binary 4m) never exceed N. The pool A_c holds the rationale positions
   of the ``pool_fraction`` most confident correct documents of class c: a share of the class's
   documents (``pool_base="class"``, the paper's 10 %) or of the m kept (``"kept"``, the
   authors' code).
2. :func:`draw_counterfactuals` / :func:`augmented_tensors`: one counterfactual per kept
   document as sentence ids (:class:`~icda.data.sentence_ids.SentenceIdSplit`): a document of class y
   takes a class c ≠ y (binary: 1 − y; C > 2: uniformly among the other classes, or among
   ``plan.targets[y]`` when set) and its rationale slots get ids drawn from the pool A_c;
   training re-draws every epoch.
3. :func:`augmented_documents`: one draw as text a person can read and reuse: each kept
   original followed by its counterfactual, which records the source document, the swapped
   positions and where each inserted sentence came from.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np

from icda.data.document import Document
from icda.errors import IcdaError
from icda.records import AugmentationPlan

if TYPE_CHECKING:  # torch only where tensors are drawn: the pools and augment jobs do not import it
    import torch

    from icda.data.sentence_ids import SentenceIdSplit


@dataclass
class Counterfactuals:
    """Counterfactual documents: ids [M, N], labels [M], ``source`` [M] (index of the original
    document) and ``drawn`` (per row, the (document, position) pool references inserted)."""

    ids: torch.Tensor
    labels: torch.Tensor
    source: list[int]
    drawn: list[list[tuple[int, int]]]


def draw_swaps(labels: Sequence[int], plan: AugmentationPlan, rng: np.random.Generator
               ) -> tuple[list[int], list[list[tuple[int, int]]]]:
    """The random part of one counterfactual per kept document (plan order): a document of class
    y takes a class c ≠ y (:meth:`AugmentationPlan.target_classes`; drawn uniformly with ``rng``
    when there is more than one, so that a binary plan draws nothing but the sentences), and each
    of its rationale slots a sentence drawn uniformly (with replacement) from the pool A_c.

    Args:
        labels: [D] gold classes of the split's documents.

    Returns:
        (new class c per kept document, per kept document the (document, position) pool references
        for its rationale positions, in order).
    """
    classes, drawn = [], []
    for doc, positions in zip(plan.kept, plan.positions):
        targets = plan.target_classes(int(labels[doc]))
        target = targets[0] if len(targets) == 1 else targets[int(rng.integers(len(targets)))]
        pool = plan.pools[target]
        drawn.append([pool[int(i)] for i in rng.integers(len(pool), size=len(positions))])
        classes.append(target)
    return classes, drawn


def draw_counterfactuals(split: SentenceIdSplit, plan: AugmentationPlan, rng: np.random.Generator) -> Counterfactuals:
    """One counterfactual per kept document (:func:`draw_swaps`) as sentence ids: the drawn pool
    sentences written into the document's rationale slots; its label becomes the drawn class."""
    import torch

    classes, drawn = draw_swaps(split.labels.tolist(), plan, rng)
    ids = split.ids[plan.kept].clone()
    for row, (positions, picks) in enumerate(zip(plan.positions, drawn)):
        for pos, (src_doc, src_pos) in zip(positions, picks):
            ids[row, pos] = split.ids[src_doc, src_pos]
    return Counterfactuals(ids, torch.tensor(classes, dtype=split.labels.dtype), list(plan.kept), drawn)


def augmented_tensors(split: SentenceIdSplit, plan: AugmentationPlan, rng: np.random.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Kept originals followed by freshly drawn counterfactuals: ids [2·|kept|, N], labels."""
    import torch

    cf = draw_counterfactuals(split, plan, rng)
    return torch.cat([split.ids[plan.kept], cf.ids]), torch.cat([split.labels[plan.kept], cf.labels])


class NoCounterfactual(IcdaError):
    """The chosen selector classifies no document of some class right (or a split is too small to
    keep one document a class), so no class has a pool to swap from: the loop cannot go on.

    Attributes:
        correct: {class: correctly predicted documents}; n: the split's documents.
    """

    def __init__(self, correct: dict[int, int], n: int):
        self.correct, self.n = correct, n
        wrong = [c for c, count in correct.items() if count == 0]
        what = (f"it gets every document of class {', '.join(map(str, wrong))} wrong" if wrong
                else f"{n} documents are too few to keep one of each of {len(correct)} classes")
        super().__init__(f"no counterfactual can be built: {what} (correct predictions per class "
                         f"{correct} of {n} documents)")


def build_plan(
    labels: np.ndarray,
    probabilities: np.ndarray,
    positions: list[list[int]],
    pool_fraction: float = 0.10,
    pool_base: str = "class",
    targets: dict[int, list[int]] | None = None,
    pool_min: int = 0,
    flips: Sequence[float] | None = None,
) -> tuple[AugmentationPlan, dict]:
    """Kept originals and pools of one split (module docstring, step 1).

    Args:
        labels: [N] gold classes 0 … C−1.
        probabilities: the model's P(y=1) [N] (two classes) or class probabilities [N, C].
        positions: per document, the model's rationale positions.
        targets: the plan's :attr:`AugmentationPlan.targets` (None: every other class).
        pool_min: a floor on a class's pool, in documents: at least min(``pool_min``, correct
            documents of the class) of them, the most confident first (0: the share alone).
        flips: [N] per document the share of its counterfactuals that flip
            (:func:`icda.label_flip.document_flips`; NaN: not judged), or None: the kept
            originals and the pools' documents are then taken first among the correct documents
            whose counterfactuals flip (>= 0.5), each group most confident first
            (``icda.pool_flip``).

    Returns:
        (plan, stats) where stats records N, m, correct counts and pool sizes.

    Raises:
        NoCounterfactual: a class has no correctly predicted document, so no counterfactual can
            be made (the workflow then ends the run at its last iteration that could:
            :func:`icda.model_selection.convergence`).
    """
    labels = np.asarray(labels)
    probabilities = np.asarray(probabilities, dtype=np.float64)
    if probabilities.ndim == 1:  # two classes: e = |P(y=1) − y| = 1 − P(y)
        classes = (0, 1)
        error = np.abs(probabilities - labels)
        right = error <= 0.5
    else:
        classes = tuple(range(probabilities.shape[1]))
        error = 1 - probabilities[np.arange(len(labels)), labels]
        right = probabilities.argmax(axis=1) == labels
    order_by_class, correct = {}, {}
    doubtful = np.zeros(len(labels)) if flips is None else ~(np.asarray(flips, dtype=np.float64) >= 0.5)
    for c in classes:
        docs = np.flatnonzero((labels == c) & right)
        order_by_class[c] = docs[np.lexsort((error[docs], doubtful[docs]))]
        correct[c] = len(docs)
    n = len(labels)
    m = min(n // (2 * len(classes)), *correct.values())
    if m == 0:
        raise NoCounterfactual(correct, n)
    kept = sorted(int(d) for c in classes for d in order_by_class[c][:m])
    pools, pool_docs = {}, {}
    for c in classes:
        base = int((labels == c).sum()) if pool_base == "class" else m
        size = min(correct[c], max(1, math.ceil(pool_fraction * base), pool_min))
        docs = order_by_class[c][:size]
        pool_docs[c] = len(docs)
        pools[c] = [(int(d), int(p)) for d in docs for p in positions[d]]
    plan = AugmentationPlan(kept=kept, positions=[list(positions[d]) for d in kept], pools=pools, targets=targets)
    stats = {
        "n_documents": n,
        "m_per_class": m,
        "correct_per_class": {str(c): correct[c] for c in classes},
        "pool_documents_per_class": {str(c): pool_docs[c] for c in classes},
        "pool_fraction": pool_fraction,
        "pool_base": pool_base,
    }
    return plan, stats


def augmented_documents(docs: list[Document], plan: AugmentationPlan, seed: int) -> list[dict]:
    """One draw of the augmented split: kept originals, then one counterfactual each, drawn as
    :func:`draw_counterfactuals` draws them (:func:`draw_swaps` with ``np.random.default_rng(seed)``),
    on the text: no sentence ids, so the augment step does not import torch.

    Returns JSON-ready records: the :class:`Document` fields plus ``counterfactual`` (bool),
    ``source`` (original document id), ``swapped`` (replaced positions) and ``inserted_from``
    (per swapped position, ``[document id, position]`` of the pool sentence put there).
    """
    classes, drawn = draw_swaps([d.label for d in docs], plan, np.random.default_rng(seed))
    records = []
    for idx in plan.kept:
        records.append(docs[idx].to_json() | {"counterfactual": False, "source": docs[idx].id,
                                              "swapped": [], "inserted_from": []})
    for src, positions, picks, label in zip(plan.kept, plan.positions, drawn, classes):
        original = docs[src]
        sentences = list(original.sentences)
        for pos, (d, p) in zip(positions, picks):
            sentences[pos] = docs[d].sentences[p]
        records.append({
            "id": f"{original.id}-cf",
            "label": label,
            "sentences": sentences,
            "counterfactual": True,
            "source": original.id,
            "swapped": list(positions),
            "inserted_from": [[docs[d].id, p] for d, p in picks],
        })
    return records
