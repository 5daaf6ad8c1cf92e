"""The select step, ``python -m icda select``: an iteration's candidate folders (history.json,
predictions.json), the prepared train and dev labels and the previous choice.json in; the
iteration's choice.json out (:func:`icda.model_selection.select_candidate`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from icda.data.document import read_documents
from icda.errors import ConfigError
from icda.records import Choice
from icda.model_selection import select_candidate


def select_iteration(
    iteration: int,
    candidates: Sequence[str | Path],
    data_dir: str | Path,
    warm_start: str | Path | None = None,
    previous: str | Path | None = None,
    candidate_loss: str = "augmented_dev",
) -> Choice:
    """:func:`~icda.model_selection.select_candidate` on files: the labels come from the prepared ``train.jsonl`` and
    ``dev.jsonl`` in ``data_dir``, the previous choice from its ``choice.json``.

    Raises:
        ConfigError: ``iteration >= 1`` without ``warm_start`` and ``previous``.
        DataError: a file is missing or malformed.
    """
    if iteration >= 1 and (warm_start is None or previous is None):
        raise ConfigError("select: iterations >= 1 need --warm-start and --previous")
    data_dir = Path(data_dir)
    documents = {split: read_documents(data_dir / f"{split}.jsonl") for split in ("train", "dev")}
    return select_candidate(iteration, candidates, [d.label for d in documents["train"]], warm_start,
                            None if previous is None else Choice.read(previous),
                            [d.label for d in documents["dev"]], candidate_loss,
                            {split: [len(d.sentences) for d in docs] for split, docs in documents.items()})
