"""``python -m icda converge``: decide whether the ICDA loop stops after this iteration, and
which iteration is then ICDA."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub) -> None:
    p = sub.add_parser("converge", description=__doc__,
                       help="the stop rule (icda.stop_rule, icda.stop_unchanged, icda.max_iters) and "
                            "the iteration taken as ICDA (icda.final_choice)")
    p.add_argument("--choice", type=Path, required=True, help="choice.json of this iteration")
    p.add_argument("--previous", type=Path, help="converge.json of the previous iteration (k >= 1)")
    p.add_argument("--settings", type=Path, required=True, help="the dataset's settings.json (its icda section)")
    p.add_argument("--out", type=Path, required=True, help="converge.json")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    from icda.steps.converge import converge

    decision = converge(args.choice, args.settings, args.previous, args.out)
    print(("STOP: " if decision.stop else "CONTINUE: ") + decision.reason)
    if decision.stop:
        print(f"ICDA is iteration {decision.final_iteration}: {decision.final_reason}")
