"""``python -m icda select``: choose one iteration's model among its candidates."""

from __future__ import annotations

import argparse
from pathlib import Path

from icda.settings import CANDIDATE_CHOICES, CANDIDATE_LOSSES, IcdaSettings


def register(sub) -> None:
    p = sub.add_parser("select", help="choose the candidate of an ICDA iteration (or the COMP grid)",
                       description=__doc__ + " Score: dev loss, x1e10 if degenerate, and with the ΔA gate "
                       "x1e10 if k >= 2 and ΔA did not decrease; the lowest score wins, or from k = 1 with "
                       "--candidate-choice agreement the candidate that agrees most with the other fresh "
                       "candidates' dev rationales.")
    p.add_argument("--iteration", type=int, required=True, help="k (0 = MMI; COMP uses 0)")
    p.add_argument("--candidates", type=Path, nargs="+", required=True, help="fresh candidates' folders")
    p.add_argument("--warm-start", type=Path, help="the warm-started candidate's folder (k >= 1)")
    p.add_argument("--previous", type=Path, help="choice.json of iteration k-1 (k >= 1)")
    p.add_argument("--data-dir", type=Path, required=True, help="prepared dataset (train labels for ΔA)")
    p.add_argument("--candidate-loss", choices=CANDIDATE_LOSSES, default=CANDIDATE_LOSSES[0],
                   help="loss scored from iteration 1 on: on the augmented dev set (the paper) or on the "
                        "original dev set (departure; see docs/departures.md)")
    defaults = IcdaSettings()
    p.add_argument("--candidate-choice", choices=CANDIDATE_CHOICES, default=defaults.candidate_choice,
                   help="from iteration 1: the lowest score (loss, the paper) or the highest agreement with the "
                        "other fresh candidates (agreement; icda.candidate_choice)")
    p.add_argument("--delta-a-gate", choices=("on", "off"), default="on" if defaults.delta_a_gate else "off",
                   help="the paper's x1e10 on a candidate whose ΔA did not decrease (icda.delta_a_gate)")
    p.add_argument("--out", type=Path, required=True, help="choice.json")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    from icda.steps.select import select_iteration

    choice = select_iteration(args.iteration, args.candidates, args.data_dir, args.warm_start, args.previous,
                              args.candidate_loss, args.delta_a_gate == "on", args.candidate_choice)
    choice.write(args.out)
    chosen = choice.chosen
    print(f"iteration {choice.iteration}: chose {chosen.name} (dev loss {chosen.dev_loss:.4f}, "
          f"best epoch {chosen.best_epoch}, ΔA {'-' if chosen.delta_A is None else f'{chosen.delta_A:.3f}'}): "
          f"{choice.reason}")
