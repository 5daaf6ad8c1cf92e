"""The select step, ``python -m icda select``: an iteration's candidate folders (history.json,
predictions.json), the prepared train and dev labels and the previous choice.json in; the
iteration's choice.json out (:func:`icda.model_selection.select_candidate`, which reads no file).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from icda.data.document import read_documents
from icda.errors import ConfigError
from icda.records import HISTORY_FILE, PREDICTIONS_FILE, Choice, History, Predictions
from icda.model_selection import TrainedCandidate, select_candidate


def read_candidate(directory: str | Path, warm_start: bool = False,
                   n_sentences: dict[str, Sequence[int]] | None = None) -> TrainedCandidate:
    """The records ``python -m icda train`` wrote to a candidate folder (history.json and
    predictions.json, the positions checked against ``n_sentences``, ``{"train": [N], "dev":
    [D]}`` sentences per document, when given).

    Raises:
        DataError: a file is missing or corrupt, or does not fit ``n_sentences``.
    """
    directory = Path(directory)
    return TrainedCandidate(directory.name, str(directory), warm_start, History.read(directory / HISTORY_FILE),
                            Predictions.read(directory / PREDICTIONS_FILE, n_sentences))


def select_iteration(
    iteration: int,
    candidates: Sequence[str | Path],
    data_dir: str | Path,
    warm_start: str | Path | None = None,
    previous: str | Path | None = None,
    candidate_loss: str = "augmented_dev",
    delta_a_gate: bool = True,
    candidate_choice: str = "loss",
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
    return select_folders(iteration, candidates, [d.label for d in documents["train"]], warm_start,
                          None if previous is None else Choice.read(previous), [d.label for d in documents["dev"]],
                          candidate_loss, {split: [len(d.sentences) for d in docs] for split, docs in documents.items()},
                          delta_a_gate, candidate_choice)


def select_folders(
    iteration: int,
    candidates: Sequence[str | Path],
    train_labels: Sequence[int],
    warm_start: str | Path | None = None,
    previous: Choice | None = None,
    dev_labels: Sequence[int] | None = None,
    candidate_loss: str = "augmented_dev",
    n_sentences: dict[str, Sequence[int]] | None = None,
    delta_a_gate: bool = True,
    candidate_choice: str = "loss",
) -> Choice:
    """:func:`~icda.model_selection.select_candidate` over candidate folders (fresh seeds first,
    then ``warm_start``), each read by :func:`read_candidate`; ΔA against the positions of
    ``previous``'s predictions.json.

    Raises:
        DataError: a file is missing or corrupt, or does not fit ``n_sentences``.
        ValueError: as :func:`~icda.model_selection.select_candidate`.
    """
    trained = [read_candidate(c, False, n_sentences) for c in candidates]
    if warm_start is not None:
        trained.append(read_candidate(warm_start, True, n_sentences))
    positions = None if previous is None else previous.predictions(n_sentences).train.positions
    return select_candidate(iteration, trained, train_labels, previous, positions, dev_labels, candidate_loss,
                            delta_a_gate, candidate_choice)
