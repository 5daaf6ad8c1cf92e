"""The counterfactually augmented dataset as text (paper Algorithm 1: D^a = D ∪ D^c).

Training draws counterfactuals as sentence-id tensors (:mod:`icda.splits`); this module turns
one draw into documents a person can read and reuse: each kept original followed by its
counterfactual, which records the source document, the swapped positions and where each
inserted sentence came from.
"""

from __future__ import annotations

import numpy as np

from icda.data.document import Document
from icda.splits import AugmentationPlan, draw_counterfactuals, encode_split


def augmented_documents(docs: list[Document], plan: AugmentationPlan, seed: int, max_sentences: int) -> list[dict]:
    """One draw of the augmented split: kept originals, then one counterfactual each.

    Returns JSON-ready records: the :class:`Document` fields plus ``counterfactual`` (bool),
    ``source`` (original document id), ``swapped`` (replaced positions) and ``inserted_from``
    (per swapped position, ``[document id, position]`` of the pool sentence put there).
    """
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
