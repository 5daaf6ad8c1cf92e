"""``python -m icda evaluate``: rationale precision, recall, F1 and accuracy on the test set.

The metrics JSON (:class:`icda.records.Evaluation`) also holds, under ``documents``, each
document's id, rationale positions and predicted class (split order), so the positions behind
the numbers can be inspected.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from icda.cli.common import add_workspace_arguments, load_settings


def _null_or_int(text: str) -> int | None:
    return None if text in ("null", "none") else int(text)


def register(sub) -> None:
    p = sub.add_parser("evaluate", help="test-set rationale precision (paper metric) of a model",
                       description=__doc__)
    add_workspace_arguments(p)
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--model", type=Path, help="a model.pt")
    src.add_argument("--choice", type=Path, help="a choice.json of `python -m icda select` (its chosen candidate's "
                     "predictions.json where it holds the split, else its model.pt)")
    src.add_argument("--predictions", type=Path,
                     help="a predictions.json of `python -m icda train` (no model is loaded)")
    p.add_argument("--split", default="test", choices=["train", "dev", "test"])
    p.add_argument("--out", type=Path, required=True, help="metrics JSON")
    p.add_argument("--dataset", help="dataset name recorded in the JSON")
    p.add_argument("--run", type=int, help="run recorded in the JSON")
    p.add_argument("--iteration", type=_null_or_int, help="ICDA iteration recorded (null: COMP)")
    p.add_argument("--point", help="sweep point recorded in the JSON")
    p.add_argument("--seed", type=int, help="seed recorded in the JSON (sweep)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    from icda.steps.evaluate import evaluate_model, evaluate_predictions
    from icda.records import EVAL_LABELS

    labels = {key: value for key in EVAL_LABELS if (value := getattr(args, key)) is not None}
    predictions = args.predictions
    if args.choice is not None:  # the chosen candidate's predictions, where training recorded this split
        from icda.steps.evaluate import holds_split
        from icda.records import PREDICTIONS_FILE, Choice

        chosen = Path(Choice.read(args.choice).chosen.candidate_dir) / PREDICTIONS_FILE
        predictions = chosen if holds_split(chosen, args.split) else None
    if predictions is not None:  # torch is not imported
        from icda.settings import Settings

        evaluation = evaluate_predictions(Settings.load(args.settings), args.data_dir, predictions, args.split,
                                          labels)
    else:
        evaluation = evaluate_model(load_settings(args), args.data_dir, args.embeddings, args.model, args.choice,
                                    args.split, labels)
    evaluation.write(args.out)
    shown = {k: getattr(evaluation, k) for k in ("precision", "recall", "f1", "accuracy")}
    print(" ".join(f"{k}={'-' if v is None else f'{v:.4f}'}" for k, v in shown.items()))
