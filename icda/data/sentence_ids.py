"""Documents as sentence-id matrices (:class:`SentenceIdSplit`).

Every sentence of a dataset has an integer id (its row in the embedding cache in frozen mode,
its index in the sentence table in finetune mode). A split becomes a [D, N] id matrix, so a
counterfactual (:mod:`icda.counterfactual`) is a copy of a row with some ids overwritten: no text
is re-encoded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import torch

from icda.data.document import Document
from icda.errors import DataError
from icda.records import PAD


@dataclass
class SentenceIdSplit:
    """A split as tensors: ids [D, N] (``PAD`` in empty slots), labels [D] (−1 = unknown),
    n_sentences [D]; ``documents`` are the source documents, in the same order."""

    ids: torch.Tensor
    labels: torch.Tensor
    n_sentences: torch.Tensor
    documents: list[Document]

    def __len__(self) -> int:
        return len(self.documents)


def to_sentence_ids(
    docs: Sequence[Document], sentence_id: Callable[[str], int], max_sentences: int, where: str = "split"
) -> SentenceIdSplit:
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
    return SentenceIdSplit(ids, labels, n_sent, list(docs))
