"""``python -m icda converge``: decide whether the ICDA loop stops after this iteration."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub) -> None:
    p = sub.add_parser("converge", description=__doc__,
                       help="the stop rule: warm start won unimproved, rationales unchanged "
                            "(icda.stop_unchanged), or icda.max_iters")
    p.add_argument("--choice", type=Path, required=True, help="choice.json of this iteration")
    p.add_argument("--settings", type=Path, required=True,
                   help="the dataset's settings.json (icda.max_iters, icda.stop_unchanged)")
    p.add_argument("--out", type=Path, required=True, help="converge.json")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    from icda.records import Choice
    from icda.selection import convergence
    from icda.settings import Settings

    icda = Settings.load(args.settings).icda
    decision = convergence(Choice.read(args.choice), icda.max_iters, icda.stop_unchanged)
    decision.write(args.out)
    print(("STOP: " if decision.stop else "CONTINUE: ") + decision.reason)
