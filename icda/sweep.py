"""``python -m icda sweep``: the dev-only tuning table, plot and choice from the sweep's dev
evaluations (``snakemake sweep``; see :mod:`icda.sweep`).

Writes ``--out-dir``/sweep.csv, sweep.md, sweep.png and chosen.json from the dev_eval.json of
every (point, dataset, seed), labelled point/dataset/seed (``--evals``); ``--points`` (JSON: point
name → its overrides) shows each point's overrides in the table.

Dev-only tuning sweep: train MMI per grid point, dataset and seed; tabulate dev metrics; choose.
A sweep point is a set of overrides of the ``encoder``/``model``/``train`` settings (merged over
each dataset's own settings, ``base`` = none). Each (point, dataset, seed) trains one MMI model
(``python -m icda train``) and evaluates it on the **dev** split (``python -m icda evaluate
--split dev``): dev rationale precision needs dev ground truth (keyword rules and the synthetic
data give every split one), test ground truth is never read.

The choice rule is fixed before a sweep runs (:func:`choose`): per dataset the points are
ranked by mean dev precision over seeds (1 = best); a point's score is its mean rank over the
datasets; the lowest score wins, ties going to the higher mean precision.
"""

from __future__ import annotations

import argparse
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from icda.guard import add_input, add_output
from icda.io import atomic_write, read_json, write_json
from icda.layout import history_path
from icda.records import Evaluation, History


@dataclass(frozen=True)
class SweepRecord:
    """One trained model of the sweep: its dev metrics (fractions) and training length."""

    point: str
    dataset: str
    seed: int
    dev_precision: float | None
    dev_accuracy: float
    dev_loss: float
    best_epoch: int
    epochs_trained: int
    degenerate: bool
    position_histogram: list[int]  #: selected positions on dev, 10 bins of index / sentences
    precision_class0: float | None = None  #: dev precision over the documents of gold class 0
    precision_class1: float | None = None  #: … of gold class 1


def read_record(dev_eval: str | Path) -> SweepRecord:
    """The record of one sweep model from its dev evaluation (``python -m icda evaluate --split dev
    --point … --dataset … --seed …``) and the ``history.json`` beside its model.

    Raises:
        DataError: either file is missing or malformed.
    """
    ev = Evaluation.read(dev_eval)
    history = History.read(history_path(Path(ev.model).parent))
    return SweepRecord(
        point=str(ev.point), dataset=str(ev.dataset), seed=int(ev.seed),
        dev_precision=ev.precision, dev_accuracy=history.dev_accuracy, dev_loss=history.dev_loss,
        best_epoch=history.best_epoch, epochs_trained=history.epochs_trained,
        degenerate=history.degenerate, position_histogram=list(ev.position_histogram),
        precision_class0=ev.class_precision(0), precision_class1=ev.class_precision(1),
    )


def sweep_table(records: Sequence[SweepRecord]) -> pd.DataFrame:
    """Per (point, dataset): mean and sd over seeds of dev precision, accuracy and loss (percent
    for precision and accuracy), the mean dev precision of each gold class (percent), mean best
    epoch and epochs trained, degenerate count, the summed position histogram, the rank of the
    point on the dataset and its mean rank over datasets."""
    df = pd.DataFrame([asdict(r) for r in records])
    df["dev_precision"] = df["dev_precision"].astype(float) * 100
    df["dev_accuracy"] = df["dev_accuracy"] * 100
    for c in (0, 1):
        df[f"precision_class{c}"] = df[f"precision_class{c}"].astype(float) * 100
    grouped = df.groupby(["point", "dataset"], sort=False)
    table = grouped.agg(
        precision=("dev_precision", "mean"), precision_sd=("dev_precision", "std"),
        accuracy=("dev_accuracy", "mean"), accuracy_sd=("dev_accuracy", "std"),
        loss=("dev_loss", "mean"), loss_sd=("dev_loss", "std"),
        precision_class0=("precision_class0", "mean"), precision_class1=("precision_class1", "mean"),
        best_epoch=("best_epoch", "mean"), epochs=("epochs_trained", "mean"),
        degenerate=("degenerate", "sum"), seeds=("seed", "count"),
    ).reset_index()
    table["positions"] = [
        " ".join(str(int(c)) for c in np.sum(list(g["position_histogram"]), axis=0))
        for _, g in grouped
    ]
    table["rank"] = table.groupby("dataset")["precision"].rank(ascending=False, method="average")
    table["mean_rank"] = table.groupby("point")["rank"].transform("mean")
    return table


def ranking(table: pd.DataFrame) -> list[str]:
    """The points, best first: by mean rank of dev precision over datasets (ties: the higher mean
    precision over datasets)."""
    per_point = table.groupby("point", sort=False).agg(mean_rank=("mean_rank", "first"),
                                                       precision=("precision", "mean"))
    return [str(p) for p in per_point.sort_values(["mean_rank", "precision"], ascending=[True, False]).index]


def choose(table: pd.DataFrame) -> str:
    """The chosen point: the first of :func:`ranking`."""
    return ranking(table)[0]


def to_markdown(table: pd.DataFrame, overrides: dict[str, dict] | None = None) -> str:
    """The sweep table as Markdown: one row per point, per dataset ``precision ± sd`` (dev, %),
    the precision of each gold class (a selector whose choice depends on the label shows as one
    high and one low value), accuracy, loss, epochs and the position histogram; then the choice."""
    lines = ["# Dev-only sweep (MMI; test ground truth never read)", ""]
    chosen = choose(table)
    lines.append(f"Chosen by mean rank of dev precision over datasets: **{chosen}**"
                 + (f" = `{overrides[chosen]}`" if overrides and chosen in overrides else ""))
    lines.append("")
    cols = ["point", "mean rank", "dataset", "dev precision %", "class 0 / class 1 %", "dev accuracy %",
            "dev loss", "best epoch", "epochs", "degenerate", "positions (10 bins)"]
    lines += ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for point in ranking(table):
        for _, r in table[table["point"] == point].iterrows():
            lines.append("| " + " | ".join([
                point, f"{r['mean_rank']:.2f}", r["dataset"], _pm(r["precision"], r["precision_sd"]),
                f"{r['precision_class0']:.1f} / {r['precision_class1']:.1f}",
                _pm(r["accuracy"], r["accuracy_sd"]), _pm(r["loss"], r["loss_sd"], 3),
                f"{r['best_epoch']:.1f}", f"{r['epochs']:.1f}", f"{int(r['degenerate'])}/{int(r['seeds'])}",
                r["positions"],
            ]) + " |")
    if overrides:
        lines += ["", "## Points", ""] + [f"- **{p}**: `{o}`" for p, o in overrides.items()]
    return "\n".join(lines) + "\n"


def _pm(mean: float, sd: float, digits: int = 1) -> str:
    return f"{mean:.{digits}f}" + ("" if np.isnan(sd) else f" ± {sd:.{digits}f}")


def plot(table: pd.DataFrame, out: str | Path) -> None:
    """Dev precision (mean ± sd over seeds) per point, one panel per dataset, best point first."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    datasets = list(dict.fromkeys(table["dataset"]))
    order = ranking(table)
    fig, axes = plt.subplots(1, len(datasets), figsize=(4 * len(datasets), 0.35 * len(order) + 1.5),
                             sharey=True, squeeze=False)
    for ax, dataset in zip(axes[0], datasets):
        sub = table[table["dataset"] == dataset].set_index("point").reindex(order)
        ax.barh(range(len(order)), sub["precision"], xerr=sub["precision_sd"].fillna(0), color="tab:blue")
        ax.set_title(dataset)
        ax.set_xlabel("dev rationale precision (%)")
        ax.set_xlim(0, 100)
    axes[0][0].set_yticks(range(len(order)), order)
    axes[0][0].invert_yaxis()
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


# --------------------------------------------------------------------------- the command


def register(sub) -> None:
    p = sub.add_parser("sweep", help="dev-only tuning table and choice of a settings sweep",
                       description=__doc__.split("\n\n")[0])
    add_input(p, "--evals", nargs="+", required=True, metavar="FILE",
                   help="dev_eval.json of every (point, dataset, seed), labelled point/dataset/seed")
    add_input(p, "--points", help="JSON: point name → its overrides (shown in the table)")
    add_output(p, "--out-dir", kind="folder", required=True,
                   help="writes sweep.csv, sweep.md, sweep.png and chosen.json")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
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
