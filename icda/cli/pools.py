"""``python -m icda pools``: kept originals and rationale pools from the selected model."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub) -> None:
    p = sub.add_parser("pools", help="kept originals and counterfactual rationale pools (train and dev)",
                       description=__doc__)
    p.add_argument("--selected", type=Path, required=True, help="selected.json of this iteration")
    p.add_argument("--data-dir", type=Path, required=True, help="prepared dataset folder")
    p.add_argument("--pool-fraction", type=float, default=0.10,
                   help="share of the most confident correct documents per class (paper: 0.10)")
    p.add_argument("--pool-base", choices=["class", "kept"], default="class",
                   help="share of the class's documents (paper) or of the kept ones (authors' code)")
    p.add_argument("--out", type=Path, required=True, help="pools.json")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    from icda.data.document import read_documents
    from icda.io import read_json, write_json
    from icda.pools import build_plan

    selection = read_json(args.selected)
    rationales = read_json(Path(selection["candidate_dir"]) / "rationales.json")
    out = {"selected": selection["selected"], "candidate_dir": selection["candidate_dir"]}
    for split in ("train", "dev"):
        docs = read_documents(args.data_dir / f"{split}.jsonl")
        plan, stats = build_plan(
            [d.label for d in docs], rationales[split]["prob_positive"], rationales[split]["selected"],
            args.pool_fraction, args.pool_base,
        )
        out[split] = {"stats": stats, "plan": plan.to_json(),
                      "pool_sentences": {str(c): [docs[d].sentences[p] for d, p in refs]
                                         for c, refs in plan.pools.items()}}
        print(f"{split}: kept {2 * stats['m_per_class']} of {stats['n_documents']}, pool sizes "
              f"{ {c: len(r) for c, r in plan.pools.items()} }")
    write_json(out, args.out)
