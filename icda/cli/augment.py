"""``python -m icda augment``: write the counterfactually augmented train and dev sets."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub) -> None:
    p = sub.add_parser("augment", help="materialise the augmented dataset (originals + counterfactuals)",
                       description=__doc__ + " The dev draw is the one training evaluates on; training "
                       "re-draws the train counterfactuals every epoch, the train file is one draw.")
    p.add_argument("--pools", type=Path, required=True, help="pools.json of this iteration")
    p.add_argument("--data-dir", type=Path, required=True, help="prepared dataset folder")
    p.add_argument("--seed", type=int, default=0, help="seed of the draws")
    p.add_argument("--max-sentences", type=int, default=16, help="sentences a document the model sees")
    p.add_argument("--out-dir", type=Path, required=True, help="writes train.jsonl and dev.jsonl")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:

    from icda.augment import augmented_documents
    from icda.data.document import read_documents
    from icda.io import read_json, write_jsonl
    from icda.splits import AugmentationPlan

    pools = read_json(args.pools)
    for offset, split in enumerate(("train", "dev")):
        docs = read_documents(args.data_dir / f"{split}.jsonl")
        plan = AugmentationPlan.from_json(pools[split]["plan"])
        records = augmented_documents(docs, plan, args.seed + offset, args.max_sentences)
        write_jsonl(records, args.out_dir / f"{split}.jsonl")
        print(f"{split}: {len(records)} documents ({len(plan.kept)} originals + counterfactuals)")
