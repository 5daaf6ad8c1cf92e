"""``python -m icda select``: pick one iteration's model among its candidates."""

from __future__ import annotations

import argparse
from pathlib import Path

from icda.selection import CANDIDATE_LOSSES


def register(sub) -> None:
    p = sub.add_parser("select", help="select the candidate of an ICDA iteration (or the COMP grid)",
                       description=__doc__ + " Score: dev loss, x1e10 if degenerate, x1e10 if k >= 2 and "
                       "ΔA did not decrease.")
    p.add_argument("--iteration", type=int, required=True, help="k (0 = MMI; COMP uses 0)")
    p.add_argument("--candidates", type=Path, nargs="+", required=True, help="fresh candidates' folders")
    p.add_argument("--warm-start", type=Path, help="the warm-started candidate's folder (k >= 1)")
    p.add_argument("--previous", type=Path, help="selected.json of iteration k-1 (k >= 1)")
    p.add_argument("--data-dir", type=Path, required=True, help="prepared dataset (train labels for ΔA)")
    p.add_argument("--candidate-loss", choices=CANDIDATE_LOSSES, default=CANDIDATE_LOSSES[0],
                   help="loss scored from iteration 1 on: on the augmented dev set (the paper) or on the "
                        "original dev set (departure; see docs/departures.md)")
    p.add_argument("--out", type=Path, required=True, help="selected.json")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    from icda.data.document import read_documents
    from icda.errors import ConfigError
    from icda.io import read_json, write_json
    from icda.selection import select_candidate

    if args.iteration >= 1 and (args.warm_start is None or args.previous is None):
        raise ConfigError("select: iterations >= 1 need --warm-start and --previous")
    labels = [d.label for d in read_documents(args.data_dir / "train.jsonl")]
    dev_labels = [d.label for d in read_documents(args.data_dir / "dev.jsonl")]
    previous = read_json(args.previous) if args.previous else None
    record = select_candidate(args.iteration, args.candidates, labels, args.warm_start, previous,
                              dev_labels, args.candidate_loss)
    write_json(record, args.out)
    delta = record["delta_A"]
    print(f"iteration {record['iteration']}: selected {record['selected']} "
          f"(dev loss {record['dev_loss']:.4f}, best epoch {record['best_epoch']}, "
          f"ΔA {'-' if delta is None else f'{delta:.3f}'})")
