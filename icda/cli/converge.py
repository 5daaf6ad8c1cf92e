"""``python -m icda converge``: decide whether the ICDA loop stops after this iteration."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub) -> None:
    p = sub.add_parser("converge", help="the stop rule: warm start won unimproved, or max_iters",
                       description=__doc__)
    p.add_argument("--selected", type=Path, required=True, help="selected.json of this iteration")
    p.add_argument("--max-iters", type=int, default=10)
    p.add_argument("--out", type=Path, required=True, help="converge.json")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    from icda.io import read_json, write_json
    from icda.selection import convergence

    decision = convergence(read_json(args.selected), args.max_iters)
    write_json(decision, args.out)
    print(("STOP: " if decision["stop"] else "CONTINUE: ") + decision["reason"])
