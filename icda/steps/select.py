"""``python -m icda select``: choose one iteration's model among its candidates.

Score: dev loss, x1e10 if degenerate, and with the ΔA gate x1e10 if k >= 2 and ΔA did not
decrease; the lowest score wins, or from k = 1 with --candidate-choice agreement the candidate
that agrees most with the other fresh candidates' dev rationales.

The select step: an iteration's candidate folders (history.json, predictions.json), the prepared
train and dev labels and the previous choice.json in; the iteration's choice.json out
(:func:`icda.model_selection.select_candidate`, which reads no file). The loss scored from
iteration 1 on (``--candidate-loss``) is the one on the augmented dev set (the paper) or on the
original dev set (departure; docs/departures.md).
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Sequence

from icda.data.document import read_split
from icda.errors import ConfigError
from icda.guard import add_input, add_output
from icda.io import check_output
from icda.layout import history_path, predictions_path
from icda.model_selection import TrainedCandidate, ensemble_window, select_candidate
from icda.records import Choice, History, Predictions
from icda.settings import CANDIDATE_CHOICES, CANDIDATE_LOSSES, FINAL_SELECTORS, IcdaSettings
from icda.steps import command_doc


def read_candidate(directory: str | Path, warm_start: bool = False,
                   n_sentences: dict[str, Sequence[int]] | None = None) -> TrainedCandidate:
    """The records ``python -m icda train`` wrote to a candidate folder (history.json and
    predictions.json, the positions checked against ``n_sentences``, ``{"train": [N], "dev":
    [D]}`` sentences per document, when given).

    Raises:
        DataError: a file is missing or corrupt, or does not fit ``n_sentences``.
    """
    directory = Path(directory)
    return TrainedCandidate(directory.name, str(directory), warm_start, History.read(history_path(directory)),
                            Predictions.read(predictions_path(directory), n_sentences))


def select_iteration(
    iteration: int,
    candidates: Sequence[str | Path],
    data_dir: str | Path,
    warm_start: str | Path | None = None,
    previous: str | Path | None = None,
    candidate_loss: str = "augmented_dev",
    delta_a_gate: bool = True,
    candidate_choice: str = "loss",
    final_selector: str = "chosen",
) -> Choice:
    """:func:`~icda.model_selection.select_candidate` on files: the labels come from the prepared ``train.jsonl`` and
    ``dev.jsonl`` in ``data_dir``, the previous choice from its ``choice.json``. With
    ``final_selector`` ``"candidates"`` or ``"ensemble"`` the choice also records the ensemble this iteration
    reports (:func:`~icda.model_selection.ensemble_window`).

    Raises:
        ConfigError: ``iteration >= 1`` without ``previous``.
        DataError: a file is missing or malformed.
    """
    if iteration >= 1 and previous is None:
        raise ConfigError("select: iterations >= 1 need --previous (the previous iteration's choice.json)")
    documents = {split: read_split(data_dir, split) for split in ("train", "dev")}
    previous_choice = None if previous is None else Choice.read(previous)
    choice = select_folders(iteration, candidates, [d.label for d in documents["train"]], warm_start, previous_choice,
                            [d.label for d in documents["dev"]], candidate_loss,
                            {split: [len(d.sentences) for d in docs] for split, docs in documents.items()},
                            delta_a_gate, candidate_choice)
    if final_selector != "chosen":
        choice = dataclasses.replace(choice, ensemble=ensemble_window(choice, previous_choice, final_selector))
    return choice


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


# --------------------------------------------------------------------------- the command


def register(sub) -> None:
    p = sub.add_parser("select", help="choose the candidate of an ICDA iteration (or the COMP grid)",
                       description=command_doc(__doc__, 2))
    p.add_argument("--iteration", type=int, required=True, help="k (0 = MMI; COMP uses 0)")
    add_input(p, "--candidates", kind="folder", nargs="+", required=True, help="fresh candidates' folders")
    add_input(p, "--warm-start", kind="folder", help="the warm-started candidate's folder (k >= 1, with icda.warm_start)")
    add_input(p, "--previous", help="choice.json of iteration k-1 (k >= 1)")
    add_input(p, "--data-dir", kind="folder", required=True, help="prepared dataset (train labels for ΔA)")
    p.add_argument("--candidate-loss", choices=CANDIDATE_LOSSES, default=CANDIDATE_LOSSES[0],
                   help="loss scored from iteration 1 on: on the augmented dev set (the paper) or on the "
                        "original dev set (departure; see docs/departures.md)")
    defaults = IcdaSettings()
    p.add_argument("--candidate-choice", choices=CANDIDATE_CHOICES, default=defaults.candidate_choice,
                   help="from iteration 1: the lowest score (loss, the paper) or the highest agreement with the "
                        "other fresh candidates (agreement; icda.candidate_choice)")
    p.add_argument("--delta-a-gate", choices=("on", "off"), default="on" if defaults.delta_a_gate else "off",
                   help="the paper's x1e10 on a candidate whose ΔA did not decrease (icda.delta_a_gate)")
    p.add_argument("--final-selector", choices=FINAL_SELECTORS, default=defaults.final_selector,
                   help="the selector the iteration reports: the chosen candidate (the paper), the iteration's "
                        "candidates together (candidates) or the last three iterations' (ensemble; icda.final_selector)")
    add_output(p, "--out", required=True, help="choice.json")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    folders = {f"the candidate folder {c}": c for c in [*args.candidates, args.warm_start] if c is not None}
    check_output("--out", args.out, "the choice", {"the previous choice": args.previous},
                 folders | {"the prepared data folder": args.data_dir})
    choice = select_iteration(args.iteration, args.candidates, args.data_dir, args.warm_start, args.previous,
                              args.candidate_loss, args.delta_a_gate == "on", args.candidate_choice,
                              args.final_selector)
    choice.write(args.out)
    chosen = choice.chosen
    print(f"iteration {choice.iteration}: chose {chosen.name} (dev loss {chosen.dev_loss:.4f}, "
          f"best epoch {chosen.best_epoch}, ΔA {'-' if chosen.delta_A is None else f'{chosen.delta_A:.3f}'}): "
          f"{choice.reason}")
