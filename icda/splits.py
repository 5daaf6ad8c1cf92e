"""Documents as sentence-id matrices, and counterfactuals drawn from rationale pools.

Every sentence of a dataset has an integer id (its row in the embedding cache in frozen mode,
its index in the sentence table in finetune mode). A split becomes a [D, N] id matrix, so a
counterfactual (paper eq. new_cdaproc: Y^c ← 1 − Y, X_1^c ← A | (1 − Y)) is a copy of a row with
the selected slots overwritten by sentence ids drawn from the opposite class's pool: no text is
re-encoded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import torch

from icda.data.document import Document
from icda.errors import DataError
from icda.model import PAD


@dataclass
class EncodedSplit:
    """A split as tensors: ids [D, N] (``PAD`` in empty slots), labels [D] (−1 = unknown),
    n_sentences [D]; ``documents`` are the source documents, in the same order."""

    ids: torch.Tensor
    labels: torch.Tensor
    n_sentences: torch.Tensor
    documents: list[Document]

    def __len__(self) -> int:
        return len(self.documents)


def encode_split(
    docs: Sequence[Document], sentence_id: Callable[[str], int], max_sentences: int, where: str = "split"
) -> EncodedSplit:
    """Map each document's first ``max_sentences`` sentences to ids.

    Raises:
        DataError: a document has no sentence, or a sentence is unknown to ``sentence_id``.
    """
    n = min(max_sentences, max((len(d.sentences) for d in docs), default=1))
    ids = torch.full((len(docs), n), PAD, dtype=torch.long)
    for row, doc in enumerate(docs):
        if not doc.sentences:
            raise DataError(where, row + 1, f"document {doc.id} has no sentence", "re-run prepare")
        for col, sentence in enumerate(doc.sentences[:n]):
            ids[row, col] = sentence_id(sentence)
    labels = torch.tensor([-1 if d.label is None else d.label for d in docs], dtype=torch.long)
    n_sent = (ids >= 0).sum(dim=1)
    return EncodedSplit(ids, labels, n_sent, list(docs))


@dataclass
class AugmentationPlan:
    """What the counterfactuals of one split are drawn from (paper section "Implementation").

    kept: indices of the kept original documents (2m of them).
    positions: per kept document, its selected sentence positions (the slots to replace).
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
    """One counterfactual per kept document: its selected slots get sentences drawn uniformly
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
    cf = draw_counterfactuals(split, plan, rng)
    return torch.cat([split.ids[plan.kept], cf.ids]), torch.cat([split.labels[plan.kept], cf.labels])
