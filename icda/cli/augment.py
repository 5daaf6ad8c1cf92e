"""``python -m icda augment``: write the counterfactually augmented train and dev sets."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub) -> None:
    p = sub.add_parser("augment", help="materialise the augmented dataset (originals + counterfactuals)",
                       description=__doc__ + " The dev draw is the one training evaluates on; training "
                       "re-draws the train counterfactuals every epoch, the train file is one draw. Seed: "
                       "icda.dev_seed; sentences per document: encoder.max_sentences of the settings.")
    p.add_argument("--pools", type=Path, required=True, help="pools.json of this iteration")
    p.add_argument("--settings", type=Path, required=True, help="the dataset's settings.json")
    p.add_argument("--data-dir", type=Path, required=True, help="prepared dataset folder")
    p.add_argument("--out-dir", type=Path, required=True, help="writes train.jsonl and dev.jsonl")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    from icda.steps.augment import write_augmented
    from icda.settings import Settings

    settings = Settings.load(args.settings)
    write_augmented(args.pools, args.data_dir, settings.icda.dev_seed, settings.encoder.max_sentences, args.out_dir)
