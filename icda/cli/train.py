"""``python -m icda train``: train one rationale model (one seed), or the candidates of one ICDA
iteration or of a run's COMP grid one after another in one process (``--candidates``: the dataset
is loaded once)."""

from __future__ import annotations

import argparse
from pathlib import Path

from icda.cli.common import add_workspace_arguments, load_settings
from icda.errors import ConfigError


def candidate(text: str) -> tuple[str, int]:
    """``NAME=SEED`` → (name, seed)."""
    name, sep, seed = text.partition("=")
    if not sep or not name or not seed.lstrip("-").isdigit():
        raise argparse.ArgumentTypeError(f"{text!r}: write a candidate as NAME=SEED, e.g. seed42=42")
    return name, int(seed)


def register(sub) -> None:
    p = sub.add_parser("train", help="train one rationale model (MMI, COMP, or on augmented data), or the "
                       "candidates of an ICDA iteration", description=__doc__)
    add_workspace_arguments(p)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--seed", type=int, help="train one model into --out-dir")
    which.add_argument("--candidates", type=candidate, nargs="+", metavar="NAME=SEED",
                       help="train each candidate into --out-dir/NAME, e.g. seed42=42 seed43=43 warm=42")
    p.add_argument("--out-dir", type=Path, required=True,
                   help="writes model.pt, predictions.json, history.json (with --candidates: per candidate folder)")
    p.add_argument("--pools", type=Path,
                   help="pools.json of the previous ICDA iteration: train on its kept originals plus "
                        "counterfactuals re-drawn every epoch (with --augmented-dev)")
    p.add_argument("--augmented-dev", type=Path, help="augmented/dev.jsonl of that iteration (selects epochs)")
    p.add_argument("--init", type=Path,
                   help="warm start (fresh optimizer): a model.pt, or a choice.json whose chosen model is used")
    p.add_argument("--warm-start", metavar="NAME", help="with --candidates: the candidate that starts from --init")
    p.add_argument("--objective", choices=["mmi", "comp"], help="override model.objective")
    p.add_argument("--comp-lambda", type=float, nargs="+",
                   help="override model.comp_lambda (COMP); with --candidates one λ per candidate, in order")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    from icda.steps.train import train_candidate, train_candidates

    lambdas = args.comp_lambda or []
    if args.candidates and (args.objective or lambdas) and (args.objective != "comp" or len(lambdas) != len(args.candidates)):
        raise ConfigError(f"--objective {args.objective} --comp-lambda with {len(lambdas)} value(s) for "
                          f"{len(args.candidates)} candidates: with --candidates, train COMP with "
                          "--objective comp and one λ per candidate (or neither option)")
    if not args.candidates and len(lambdas) > 1:
        raise ConfigError(f"--comp-lambda gives {len(lambdas)} values for one model (--seed): give one")
    settings = load_settings(args)
    if args.candidates:
        names = [name for name, _ in args.candidates]
        train_candidates(settings, args.data_dir, args.embeddings, dict(args.candidates), args.out_dir,
                         warm=args.warm_start, init=args.init, pools=args.pools, augmented_dev=args.augmented_dev,
                         comp_lambdas=dict(zip(names, lambdas)) if lambdas else None)
        return
    train_candidate(settings, args.data_dir, args.embeddings, args.seed, args.out_dir, init=args.init,
                    pools=args.pools, augmented_dev=args.augmented_dev, objective=args.objective,
                    comp_lambda=lambdas[0] if lambdas else None)
