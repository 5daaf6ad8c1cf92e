"""``python -m icda finalize``: the dataset's ICDA output, chosen among its runs.

Each run ends with its own augmented training set (the kept originals and counterfactuals of
the iteration its stop rule took as ICDA). The one kept is from the run whose ICDA choice has the lowest
cross-entropy on the *original* dev set, the one yardstick all runs share
(:func:`icda.steps.finalize.write_final_dataset`). With ``--model-out`` the chosen selector of that
run's ICDA iteration is exported too (model.pt and model.json, for ``python -m icda predict``).

The finalize step: each run's ICDA choice.json and augmented training set in; the dataset's ICDA
output out: the augmented training set of the run whose choice has the lowest loss on the original
dev set and, with ``model_out``, that run's selector (model.pt and model.json,
:func:`icda.steps.predict.export_model`).
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
from pathlib import Path
from typing import Sequence

from icda.data.document import read_class_names, read_split
from icda.errors import ConfigError, IcdaError
from icda.guard import add_input, add_output
from icda.io import atomic_path, check_output, check_output_dir
from icda.layout import AUGMENTED_DIR, CHOICE_FILE
from icda.model_selection import cross_entropy
from icda.records import Choice
from icda.steps import command_doc
from icda.steps.predict import export_model

log = logging.getLogger(__name__)


def original_dev_loss(choice: Choice, dev_labels: Sequence[int]) -> float:
    """Mean cross-entropy (nats) of a choice's model on the D original dev documents, from its
    predictions.json (P(y=1) [D], or the class probabilities [D][C]) and ``dev_labels`` [D].

    Raises:
        DataError: the chosen candidate's predictions.json is missing or malformed.
    """
    return cross_entropy(choice.predictions().dev.class_probabilities, dev_labels)


def final_run(choices: Sequence[str | Path], dev_labels: Sequence[int]) -> tuple[int, list[float]]:
    """Which run's ICDA output is kept: the index of the run whose final choice has the lowest
    :func:`original_dev_loss` (the one yardstick every run shares), and every run's loss.

    Args:
        choices: each run's last-iteration ``choice.json``.
        dev_labels: [D] labels of the original dev documents.

    Raises:
        DataError: a choice or its predictions is missing or malformed.
    """
    losses = [original_dev_loss(Choice.read(path), dev_labels) for path in choices]
    return min(range(len(losses)), key=losses.__getitem__), losses


def write_final_dataset(augmented: Sequence[str | Path], choices: Sequence[str | Path], data_dir: str | Path,
                        out: str | Path, model_out: str | Path | None = None,
                        settings: str | Path | None = None) -> Path:
    """Copy the augmented training set of the :func:`final_run` to ``out`` (atomically) and,
    with ``model_out``, export the chosen selector of that run's ``choices[i]`` there
    (:func:`icda.steps.predict.export_model`: model.pt and model.json, which records the class
    names of the prepared data in ``data_dir``; ``settings``: the dataset's settings.json, for a
    candidate without model.json).

    ``augmented[i]`` and ``choices[i]`` belong to run i (the iteration its stop rule took as ICDA).

    Returns:
        the chosen ``augmented`` file.

    Raises:
        ValueError: the two lists differ in length.
        DataError: a file is missing or malformed.
    """
    if len(augmented) != len(choices):
        raise ValueError(f"{len(augmented)} augmented files but {len(choices)} choices: pass one of each per run")
    if not choices:
        raise IcdaError("no run built counterfactuals (each run's MMI got a whole class wrong: its "
                        "iter0/converge.json says which), so there is no ICDA dataset or selector. Fix: give "
                        "the dataset more documents of that class, or more runs (n_runs)")
    labels = [d.label for d in read_split(data_dir, "dev")]
    best, losses = final_run(choices, labels)
    for path, loss in zip(choices, losses):
        log.info("%s: original dev loss %.4f", path, loss)
    if model_out is not None:  # with the dataset's class names (stats.json), for predict's labels
        export_model(choices[best], settings, model_out, read_class_names(data_dir))
    with atomic_path(out) as tmp:
        shutil.copyfile(augmented[best], tmp)
    log.info("final ICDA dataset: %s (original dev loss %.4f) -> %s", augmented[best], losses[best], out)
    return Path(augmented[best])


# --------------------------------------------------------------------------- the command


def register(sub) -> None:
    p = sub.add_parser("finalize", help="pick the final augmented dataset among the runs",
                       description=command_doc(__doc__, 2))
    add_input(p, "--augmented", nargs="*", required=True,
                   help="each run's ICDA iteration's augmented/train.jsonl")
    add_input(p, "--choices", nargs="*", required=True,
                   help="each run's ICDA iteration's choice.json, in the order of --augmented")
    add_input(p, "--data-dir", kind="folder", required=True, help="prepared dataset (original dev labels)")
    add_output(p, "--out", required=True, help="icda_dataset.jsonl")
    add_output(p, "--model-out", kind="owned", help="folder to export the chosen run's ICDA selector to (icda_model)")
    add_input(p, "--settings",
                   help="the dataset's settings.json (recorded with an exported candidate that has no model.json)")
    p.set_defaults(func=run)


def check_runs(augmented: Sequence[str | Path], choices: Sequence[str | Path]) -> None:
    """Refuse ``--augmented`` and ``--choices`` that do not pair up run by run: different counts,
    or an augmented file and a choice of different iterations (where both lie as
    :mod:`icda.layout` places them: ``<iteration>/augmented/train.jsonl`` beside
    ``<iteration>/choice.json``), which would export one iteration's dataset with another's model.

    Raises:
        ConfigError: naming both and the fix.
    """
    if len(augmented) != len(choices):
        raise ConfigError(f"--augmented gives {len(augmented)} files but --choices {len(choices)}: one of each per "
                          "run, in the same order. Fix: give each run's ICDA iteration's augmented/train.jsonl and "
                          "choice.json")
    for i, (a, c) in enumerate(zip(augmented, choices), 1):
        a, c = Path(a), Path(c)
        if a.parent.name != AUGMENTED_DIR or c.name != CHOICE_FILE:
            continue
        here, there = Path(os.path.realpath(a)).parent.parent, Path(os.path.realpath(c)).parent
        if here != there:
            raise ConfigError(f"--augmented {a} and --choices {c} (run {i}) are of different iterations ({here} and "
                              f"{there}): the dataset and the model would not belong together. Fix: give the "
                              "augmented file and the choice of the same iteration, run by run")


def run(args: argparse.Namespace) -> None:
    check_runs(args.augmented, args.choices)
    inputs = {f"the augmented file {a}": a for a in args.augmented} | {f"the choice {c}": c for c in args.choices}
    inputs["the settings"] = args.settings
    folders = {"the prepared data folder": args.data_dir}
    check_output("--out", args.out, "the ICDA dataset", inputs, folders)
    if args.model_out is not None:
        for path in args.choices:  # every candidate of the choices (the export reads some of them)
            choice = Choice.read(path)
            folders |= {f"the candidate folder {c.candidate_dir}": c.candidate_dir for c in choice.candidates}
            folders |= {f"the candidate folder {m.parent}": m.parent for m in choice.reported_models}
        check_output_dir("--model-out", args.model_out, "the ICDA selector", inputs, folders)
    best = write_final_dataset(args.augmented, args.choices, args.data_dir, args.out, args.model_out, args.settings)
    print(f"final ICDA dataset: {best} -> {args.out}")
    if args.model_out is not None:
        print(f"final ICDA selector -> {args.model_out}")
