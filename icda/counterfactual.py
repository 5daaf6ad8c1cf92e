"""Counterfactuals (paper eq. new_cdaproc: Y^c ← 1 − Y, X_1^c ← A | (1 − Y); section
"Implementation", Algorithm 1 D^a = D ∪ D^c; docs/algorithm.md, step 4).

1. :func:`build_plan`: from the chosen model's predictions on a split of N original documents,
   the kept originals and the rationale pools (an :class:`AugmentationPlan`). Prediction error
   e = |P(y=1) − y|; a document is correct when e <= 0.5. Per class the m correct documents with
   the lowest error are kept, m = min(⌊N/4⌋, correct in class 0, correct in class 1), so that
   originals plus counterfactuals (4m) never exceed N. The pool A_c holds the rationale
   positions of the ``pool_fraction`` most confident correct documents of class c: a share of
   the class's documents (``pool_base="class"``, the paper's 10 %) or of the m kept
   (``"kept"``, the authors' code).
2. :func:`draw_counterfactuals` / :func:`augmented_tensors`: one counterfactual per kept
   document as sentence ids (:class:`~icda.data.encoded.EncodedSplit`): its rationale slots get
   ids drawn from the opposite class's pool; training re-draws every epoch.
3. :func:`augmented_documents`: one draw as text a person can read and reuse: each kept
   original followed by its counterfactual, which records the source document, the swapped
   positions and where each inserted sentence came from.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from icda.data.document import Document
from icda.errors import IcdaError

if TYPE_CHECKING:  # torch only where tensors are drawn: the pools job does not import it
    import torch

    from icda.data.encoded import EncodedSplit
    from icda.records import Pools

log = logging.getLogger(__name__)


@dataclass
class AugmentationPlan:
    """What the counterfactuals of one split are drawn from (paper section "Implementation").

    kept: indices of the kept original documents (2m of them).
    positions: per kept document, its rationale positions (the slots to replace).
    pools: class → [(document index, position)] of the rationale pool A_c.
    """

    kept: list[int]
    positions: list[list[int]]
    pools: dict[int, list[tuple[int, int]]]

    def to_json(self) -> dict:
        return {
            "kept": self.kept,
            "positions": self.positions,
            "pools": {str(c): [list(r) for r in refs] for c, refs in self.pools.items()},
        }

    @classmethod
    def from_json(cls, obj: dict) -> "AugmentationPlan":
        return cls(
            kept=[int(i) for i in obj["kept"]],
            positions=[[int(p) for p in ps] for ps in obj["positions"]],
            pools={int(c): [(int(d), int(p)) for d, p in refs] for c, refs in obj["pools"].items()},
        )


@dataclass
class Counterfactuals:
    """Counterfactual documents: ids [M, N], labels [M], ``source`` [M] (index of the original
    document) and ``drawn`` (per row, the (document, position) pool references inserted)."""

    ids: torch.Tensor
    labels: torch.Tensor
    source: list[int]
    drawn: list[list[tuple[int, int]]]


def draw_counterfactuals(split: EncodedSplit, plan: AugmentationPlan, rng: np.random.Generator) -> Counterfactuals:
    """One counterfactual per kept document: its rationale slots get sentences drawn uniformly
    (with replacement) from the pool of the opposite class; its label is flipped (binary)."""
    ids = split.ids[plan.kept].clone()
    labels = 1 - split.labels[plan.kept]
    drawn = []
    for row, (doc, positions) in enumerate(zip(plan.kept, plan.positions)):
        pool = plan.pools[1 - int(split.labels[doc])]
        picks = [pool[int(i)] for i in rng.integers(len(pool), size=len(positions))]
        for pos, (src_doc, src_pos) in zip(positions, picks):
            ids[row, pos] = split.ids[src_doc, src_pos]
        drawn.append(picks)
    return Counterfactuals(ids, labels, list(plan.kept), drawn)


def augmented_tensors(split: EncodedSplit, plan: AugmentationPlan, rng: np.random.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Kept originals followed by freshly drawn counterfactuals: ids [2·|kept|, N], labels."""
    import torch

    cf = draw_counterfactuals(split, plan, rng)
    return torch.cat([split.ids[plan.kept], cf.ids]), torch.cat([split.labels[plan.kept], cf.labels])


def build_plan(
    labels: np.ndarray,
    prob_positive: np.ndarray,
    positions: list[list[int]],
    pool_fraction: float = 0.10,
    pool_base: str = "class",
) -> tuple[AugmentationPlan, dict]:
    """Kept originals and pools of one split.

    Args:
        labels: [N] gold classes (0/1).
        prob_positive: [N] the model's P(y=1).
        positions: per document, the model's rationale positions.

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
            "documents. Fix: check the chosen model's history (dev accuracy) and training settings"
        )
    kept = sorted(int(d) for c in (0, 1) for d in order_by_class[c][:m])
    pools, pool_docs = {}, {}
    for c in (0, 1):
        base = int((labels == c).sum()) if pool_base == "class" else m
        size = min(correct[c], max(1, math.ceil(pool_fraction * base)))
        docs = order_by_class[c][:size]
        pool_docs[c] = len(docs)
        pools[c] = [(int(d), int(p)) for d in docs for p in positions[d]]
    plan = AugmentationPlan(kept=kept, positions=[list(positions[d]) for d in kept], pools=pools)
    stats = {
        "n_documents": n,
        "m_per_class": m,
        "correct_per_class": {str(c): correct[c] for c in (0, 1)},
        "pool_documents_per_class": {str(c): pool_docs[c] for c in (0, 1)},
        "pool_fraction": pool_fraction,
        "pool_base": pool_base,
    }
    return plan, stats


def augmented_documents(docs: list[Document], plan: AugmentationPlan, seed: int, max_sentences: int) -> list[dict]:
    """One draw of the augmented split: kept originals, then one counterfactual each.

    Returns JSON-ready records: the :class:`Document` fields plus ``counterfactual`` (bool),
    ``source`` (original document id), ``swapped`` (replaced positions) and ``inserted_from``
    (per swapped position, ``[document id, position]`` of the pool sentence put there).
    """
    from icda.data.encoded import encode_split

    table: dict[str, int] = {}
    split = encode_split(docs, lambda s: table.setdefault(s, len(table)), max_sentences)
    cf = draw_counterfactuals(split, plan, np.random.default_rng(seed))
    records = []
    for idx in plan.kept:
        records.append(docs[idx].to_json() | {"counterfactual": False, "source": docs[idx].id,
                                              "swapped": [], "inserted_from": []})
    for row, (src, positions, picks) in enumerate(zip(cf.source, plan.positions, cf.drawn)):
        original = docs[src]
        sentences = list(original.sentences)
        for pos, (d, p) in zip(positions, picks):
            sentences[pos] = docs[d].sentences[p]
        records.append({
            "id": f"{original.id}-cf",
            "label": int(cf.labels[row]),
            "sentences": sentences,
            "counterfactual": True,
            "source": original.id,
            "swapped": list(positions),
            "inserted_from": [[docs[d].id, p] for d, p in picks],
        })
    return records


def make_pools(choice: str | Path, data_dir: str | Path, pool_fraction: float, pool_base: str) -> "Pools":
    """The pools step on files: :func:`build_plan` of the original train and dev splits (in
    ``data_dir``) from the predictions of the candidate a ``choice.json`` names.

    Raises:
        DataError: a file is missing or malformed (among others, a prediction whose document count
            differs from the prepared split's, or a position outside its document).
        IcdaError: a class has no correctly predicted document.
    """
    from icda.data.document import read_documents
    from icda.records import Choice, Pools, SplitPools

    chosen = Choice.read(choice)
    documents = {split: read_documents(Path(data_dir) / f"{split}.jsonl") for split in ("train", "dev")}
    predictions = chosen.predictions({split: [len(d.sentences) for d in docs] for split, docs in documents.items()})
    splits = {}
    for split, docs in documents.items():
        predicted = getattr(predictions, split)
        plan, stats = build_plan([d.label for d in docs], predicted.prob_positive, predicted.positions,
                                 pool_fraction, pool_base)
        splits[split] = SplitPools(stats=stats, plan=plan, pool_sentences={
            str(c): [docs[d].sentences[p] for d, p in refs] for c, refs in plan.pools.items()})
        log.info("%s: kept %d of %d, pool sizes %s", split, 2 * stats["m_per_class"], stats["n_documents"],
                 {c: len(r) for c, r in plan.pools.items()})
    return Pools(chosen=chosen.chosen.name, candidate_dir=chosen.chosen.candidate_dir, **splits)


def write_augmented(pools: str | Path, data_dir: str | Path, seed: int, max_sentences: int,
                    out_dir: str | Path) -> dict[str, int]:
    """The augment step on files: one draw of :func:`augmented_documents` per split, written to
    ``out_dir/train.jsonl`` (seed ``seed``) and ``out_dir/dev.jsonl`` (seed ``seed + 1``).

    Returns:
        {split: documents written}.

    Raises:
        DataError: a file is missing or malformed (among others, a plan built for another number of
            documents, or a position outside the first ``max_sentences`` sentences of its document).
    """
    from icda.data.document import read_documents
    from icda.io import write_jsonl
    from icda.records import Pools

    documents = {split: read_documents(Path(data_dir) / f"{split}.jsonl") for split in ("train", "dev")}
    record = Pools.read(pools, {split: [min(len(d.sentences), max_sentences) for d in docs]
                                for split, docs in documents.items()})
    written = {}
    for offset, (split, docs) in enumerate(documents.items()):
        plan = getattr(record, split).plan
        records = augmented_documents(docs, plan, seed + offset, max_sentences)
        write_jsonl(records, Path(out_dir) / f"{split}.jsonl")
        written[split] = len(records)
        log.info("%s: %d documents (%d originals + counterfactuals)", split, len(records), len(plan.kept))
    return written
