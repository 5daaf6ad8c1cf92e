"""``python -m icda pools``: kept originals and rationale pools from the chosen model."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub) -> None:
    p = sub.add_parser("pools", help="kept originals and counterfactual rationale pools (train and dev)",
                       description=__doc__ + " Pool share and base: icda.pool_fraction and icda.pool_base "
                       "of the settings; whose rationales: icda.pool_source (chosen or vote); the classes a counterfactual may take: icda.counterfactual_classes.")
    p.add_argument("--choice", type=Path, required=True, help="choice.json of this iteration")
    p.add_argument("--settings", type=Path, required=True, help="the dataset's settings.json")
    p.add_argument("--data-dir", type=Path, required=True, help="prepared dataset folder")
    p.add_argument("--out", type=Path, required=True, help="pools.json")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    from icda.steps.pools import make_pools
    from icda.settings import Settings

    settings = Settings.load(args.settings)
    icda = settings.icda
    make_pools(args.choice, args.data_dir, icda.pool_fraction, icda.pool_base,
               icda.counterfactual_targets(settings.model.n_classes), icda.pool_source).write(args.out)
