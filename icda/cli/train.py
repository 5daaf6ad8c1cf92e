"""``python -m icda train``: train one rationale model (one seed, one candidate)."""

from __future__ import annotations

import argparse
from pathlib import Path

from icda.cli.common import add_workspace_arguments, load_settings


def register(sub) -> None:
    p = sub.add_parser("train", help="train one rationale model (MMI, COMP, or on augmented data)",
                       description=__doc__)
    add_workspace_arguments(p)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--out-dir", type=Path, required=True,
                   help="writes model.pt, predictions.json, history.json")
    p.add_argument("--pools", type=Path,
                   help="pools.json of the previous ICDA iteration: train on its kept originals plus "
                        "counterfactuals re-drawn every epoch (with --augmented-dev)")
    p.add_argument("--augmented-dev", type=Path, help="augmented/dev.jsonl of that iteration (selects epochs)")
    p.add_argument("--init", type=Path,
                   help="warm start (fresh optimizer): a model.pt, or a choice.json whose chosen model is used")
    p.add_argument("--objective", choices=["mmi", "comp"], help="override model.objective")
    p.add_argument("--comp-lambda", type=float, help="override model.comp_lambda (COMP)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    from icda.candidate import train_candidate

    train_candidate(load_settings(args), args.data_dir, args.embeddings, args.seed, args.out_dir, init=args.init,
                    pools=args.pools, augmented_dev=args.augmented_dev, objective=args.objective,
                    comp_lambda=args.comp_lambda)
