"""The augment step, ``python -m icda augment``: an iteration's pools.json and the prepared train
and dev splits in; the augmented train.jsonl and dev.jsonl out, each kept original followed by its
counterfactual (:func:`icda.counterfactual.augmented_documents`).
"""

from __future__ import annotations

import logging
from pathlib import Path

from icda.counterfactual import augmented_documents
from icda.data.document import read_documents
from icda.io import write_jsonl
from icda.records import Pools

log = logging.getLogger(__name__)


def write_augmented(pools: str | Path, data_dir: str | Path, seed: int, max_sentences: int,
                    out_dir: str | Path) -> dict[str, int]:
    """The augment step on files: one draw of :func:`~icda.counterfactual.augmented_documents` per split, written to
    ``out_dir/train.jsonl`` (seed ``seed``) and ``out_dir/dev.jsonl`` (seed ``seed + 1``).

    Returns:
        {split: documents written}.

    Raises:
        DataError: a file is missing or malformed (among others, a plan built for another number of
            documents, or a position outside the first ``max_sentences`` sentences of its document).
    """
    documents = {split: read_documents(Path(data_dir) / f"{split}.jsonl") for split in ("train", "dev")}
    record = Pools.read(pools, {split: [min(len(d.sentences), max_sentences) for d in docs]
                                for split, docs in documents.items()})
    written = {}
    for offset, (split, docs) in enumerate(documents.items()):
        plan = getattr(record, split).plan
        records = augmented_documents(docs, plan, seed + offset)
        write_jsonl(records, Path(out_dir) / f"{split}.jsonl")
        written[split] = len(records)
        log.info("%s: %d documents (%d originals + counterfactuals)", split, len(records), len(plan.kept))
    return written
