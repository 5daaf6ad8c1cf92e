"""``python -m icda select``: choose one iteration's model among its candidates."""

from __future__ import annotations

import argparse
from pathlib import Path

from icda.settings import CANDIDATE_LOSSES


def register(sub) -> None:
    p = sub.add_parser("select", help="choose the candidate of an ICDA iteration (or the COMP grid)",
                       description=__doc__ + " Score: dev loss, x1e10 if degenerate, x1e10 if k >= 2 and "
                       "ΔA did not decrease.")
    p.add_argument("--iteration", type=int, required=True, help="k (0 = MMI; COMP uses 0)")
    p.add_argument("--candidates", type=Path, nargs="+", required=True, help="fresh candidates' folders")
    p.add_argument("--warm-start", type=Path, help="the warm-started candidate's folder (k >= 1)")
    p.add_argument("--previous", type=Path, help="choice.json of iteration k-1 (k >= 1)")
    p.add_argument("--data-dir", type=Path, required=True, help="prepared dataset (train labels for ΔA)")
    p.add_argument("--candidate-loss", choices=CANDIDATE_LOSSES, default=CANDIDATE_LOSSES[0],
                   help="loss scored from iteration 1 on: on the augmented dev set (the paper) or on the "
                        "original dev set (departure; see docs/departures.md)")
    p.add_argument("--out", type=Path, required=True, help="choice.json")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    from icda.steps.select import select_iteration

    choice = select_iteration(args.iteration, args.candidates, args.data_dir, args.warm_start, args.previous,
                              args.candidate_loss)
    choice.write(args.out)
    chosen = choice.chosen
    print(f"iteration {choice.iteration}: chose {chosen.name} (dev loss {chosen.dev_loss:.4f}, "
          f"best epoch {chosen.best_epoch}, ΔA {'-' if chosen.delta_A is None else f'{chosen.delta_A:.3f}'}): "
          f"{choice.reason}")
