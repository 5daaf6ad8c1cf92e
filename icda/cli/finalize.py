"""``python -m icda finalize``: the dataset's ICDA output, chosen among its runs.

Each run ends with its own augmented training set (the kept originals and counterfactuals of
the iteration its stop rule took as ICDA). The one kept is from the run whose ICDA choice has the lowest
cross-entropy on the *original* dev set, the one yardstick all runs share
(:func:`icda.steps.finalize.write_final_dataset`). With ``--model-out`` the chosen selector of that
run's ICDA iteration is exported too (model.pt and model.json, for ``python -m icda predict``).
"""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub) -> None:
    p = sub.add_parser("finalize", help="pick the final augmented dataset among the runs", description=__doc__)
    p.add_argument("--augmented", type=Path, nargs="+", required=True,
                   help="each run's ICDA iteration's augmented/train.jsonl")
    p.add_argument("--choices", type=Path, nargs="+", required=True,
                   help="each run's ICDA iteration's choice.json, in the order of --augmented")
    p.add_argument("--data-dir", type=Path, required=True, help="prepared dataset (original dev labels)")
    p.add_argument("--out", type=Path, required=True, help="icda_dataset.jsonl")
    p.add_argument("--model-out", type=Path, help="folder to export the chosen run's ICDA selector to (icda_model)")
    p.add_argument("--settings", type=Path,
                   help="the dataset's settings.json (recorded with an exported candidate that has no model.json)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    from icda.steps.finalize import write_final_dataset

    best = write_final_dataset(args.augmented, args.choices, args.data_dir, args.out, args.model_out, args.settings)
    print(f"final ICDA dataset: {best} -> {args.out}")
    if args.model_out is not None:
        print(f"final ICDA selector -> {args.model_out}")
