"""``python -m icda sweep``: the dev-only tuning table, plot and choice from the sweep's dev
evaluations (``snakemake sweep``; see :mod:`icda.sweep`)."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub) -> None:
    p = sub.add_parser("sweep", help="dev-only tuning table and choice of a settings sweep", description=__doc__)
    p.add_argument("--evals", nargs="+", required=True, type=Path, metavar="FILE",
                   help="dev_eval.json of every (point, dataset, seed), labelled point/dataset/seed")
    p.add_argument("--points", type=Path, help="JSON: point name → its overrides (shown in the table)")
    p.add_argument("--out-dir", required=True, type=Path,
                   help="writes sweep.csv, sweep.md, sweep.png and chosen.json")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    from icda.io import atomic_write, read_json, write_json
    from icda.sweep import choose, plot, read_record, sweep_table, to_markdown

    table = sweep_table([read_record(path) for path in args.evals])
    points = read_json(args.points) if args.points else None
    args.out_dir.mkdir(parents=True, exist_ok=True)
    with atomic_write(args.out_dir / "sweep.csv") as fh:
        table.to_csv(fh, index=False, float_format="%.4f")
    with atomic_write(args.out_dir / "sweep.md") as fh:
        fh.write(to_markdown(table, points))
    plot(table, args.out_dir / "sweep.png")
    chosen = choose(table)
    write_json({"chosen": chosen, "overrides": (points or {}).get(chosen)}, args.out_dir / "chosen.json")
    print(f"chosen: {chosen}")
