"""Convergence plots: the rationale error α = 1 − precision over ICDA iterations.

The paper's appendix "Convergence Plots" (figure ``img:cda_iters``) shows, per dataset, how α
changes from iteration 0 (MMI) through iteration 1 (CDA) to each run's last iteration (ICDA).
Figures are built with matplotlib's object API on the Agg canvas (no pyplot state, no display).
"""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Iterable

import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from icda.io import atomic_path
from icda.report.tables import display_name

log = logging.getLogger(__name__)

#: grid width of the combined figure
GRID_COLUMNS = 4


def _iterations(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (dataset, run, iteration): the long form holds a file once per method role."""
    rows = df[df["iteration"].notna()]
    return (rows.drop_duplicates(["dataset", "run", "iteration"])
                .sort_values(["dataset", "run", "iteration"]))


def run_color(run: int) -> str:
    """Colour of a run's lines: the same in every panel and file (matplotlib's C0, C1, …)."""
    return f"C{(int(run) - 1) % 10}"


def _draw(ax: Axes, df: pd.DataFrame, dataset: str, show_comp: bool, small: bool) -> None:
    """Draw one dataset's α curves on ``ax``.

    Lines, in order: one solid line with markers per run (ascending run, label "run r",
    y = 1 − precision at each iteration), then, if ``show_comp``, one dashed horizontal line per
    run that has a COMP result (label "COMP, run r", same colour as the run's line). The
    iteration each run takes as ICDA gets a star (a scatter, label "ICDA").
    """
    its = _iterations(df[df["dataset"] == dataset])
    for run, part in its.groupby("run", sort=True):
        ax.plot(part["iteration"].astype(int).to_numpy(), 1.0 - part["precision"].to_numpy(),
                marker="o", color=run_color(run), label=f"run {run}")
    taken = df[(df["dataset"] == dataset) & (df["method"] == "ICDA")].sort_values("run")
    if len(taken):
        ax.scatter(taken["iteration"].astype(int).to_numpy(), 1.0 - taken["precision"].to_numpy(), marker="*",
                   s=160, color=[run_color(r) for r in taken["run"]], edgecolors="black", zorder=3, label="ICDA")
    if show_comp:
        comp = df[(df["dataset"] == dataset) & (df["method"] == "COMP")].sort_values("run")
        for run, precision in zip(comp["run"], comp["precision"]):
            ax.axhline(1.0 - precision, linestyle="--", linewidth=1, color=run_color(run),
                       label=f"COMP, run {run}")
    ax.set_ylim(-0.04, 1.04)  # a point or star at α = 0 or 1 is drawn whole, not half under an axis
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("iteration (0 = MMI, 1 = CDA)", fontsize=8 if small else None)
    ax.set_ylabel("α = 1 − precision", fontsize=8 if small else None)
    ax.grid(True, alpha=0.3)


def convergence_figure(df: pd.DataFrame, dataset: str, show_comp: bool = True) -> Figure:
    """Figure of α = 1 − precision against iteration for one dataset, one line per run.

    Args:
        df: long form from :func:`icda.report.tables.load_evaluations`.
        dataset: dataset id.
        show_comp: also draw each run's COMP α as a dashed horizontal line.

    Returns:
        A Figure with one Axes; ``ax.lines[i]`` is run i's curve (runs ascending; x = iteration,
        y = α in [0, 1]), followed by the COMP lines.

    Raises:
        ValueError: ``df`` has no iteration results for ``dataset``.
    """
    if not (df["iteration"].notna() & (df["dataset"] == dataset)).any():
        raise ValueError(f"no iteration results for dataset {dataset!r}")
    fig = Figure(figsize=(5.0, 3.5), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    _draw(ax, df, dataset, show_comp, small=False)
    ax.set_title(f"{display_name(dataset)}: rationale error over ICDA iterations", fontsize=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    return fig


def convergence_grid(df: pd.DataFrame, datasets: list[str] | None = None,
                     show_comp: bool = True) -> Figure:
    """All datasets in one figure (the paper's appendix "Convergence Plots"), one panel each.

    Args:
        df: long form from :func:`icda.report.tables.load_evaluations`.
        datasets: panel order (default: every dataset with iteration results, sorted).
        show_comp: as in :func:`convergence_figure`.

    Returns:
        A Figure with a grid of at most :data:`GRID_COLUMNS` columns; panels beyond the
        datasets are hidden. With no dataset at all, a single panel saying so.
    """
    if datasets is None:
        datasets = sorted(set(_iterations(df)["dataset"]))
    if not datasets:
        fig = Figure(figsize=(4.0, 2.0))
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        ax.axis("off")
        ax.text(0.5, 0.5, "no ICDA iteration results", ha="center", va="center")
        return fig
    ncols = min(GRID_COLUMNS, len(datasets))
    nrows = math.ceil(len(datasets) / ncols)
    fig = Figure(figsize=(max(3.2 * ncols, 5.0), 2.8 * nrows), layout="constrained")  # room for the title
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    for ax, dataset in zip(axes, datasets):
        _draw(ax, df, dataset, show_comp, small=True)
        ax.set_title(display_name(dataset), fontsize=10)
    for ax in axes[len(datasets):]:
        ax.set_visible(False)
    runs = sorted(set(_iterations(df[df["dataset"].isin(datasets)])["run"]))
    handles = [Line2D([], [], marker="o", color=run_color(r), label=f"run {r}") for r in runs]
    if show_comp and ((df["method"] == "COMP") & df["dataset"].isin(datasets)).any():
        handles.append(Line2D([], [], linestyle="--", linewidth=1, color="grey",
                              label="COMP (run's colour)"))
    fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize=8)
    fig.suptitle("Rationale error α = 1 − precision over ICDA iterations")
    return fig


def _save(fig: Figure, path: Path) -> Path:
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=150)
    return path


def plot_convergence(df: pd.DataFrame | Iterable[str | Path], out_dir: str | Path, show_comp: bool = True,
                     icda: dict[tuple[str, int], int] | None = None) -> list[Path]:
    """Write ``alpha_<dataset>.png`` per dataset with iteration results, and ``alpha_all.png``.

    Args:
        df: long form from :func:`icda.report.tables.load_evaluations`, or the ``eval.json``
            paths to load.
        out_dir: directory, created if needed.
        show_comp: draw the COMP α per run as dashed lines.
        icda: {(dataset, run): the iteration taken as ICDA}, used when ``df`` is paths
            (:func:`icda.report.tables.icda_iterations`; default: each run's last).

    Returns:
        Paths written, per-dataset files first (sorted by dataset), ``alpha_all.png`` last.
        ``alpha_all.png`` is always written (a "no results" panel when there are none). Any
        other ``alpha_<dataset>.png`` in ``out_dir`` (a dataset no longer run) is removed.

    Raises:
        DataError: an evaluation file is malformed.
    """
    if not isinstance(df, pd.DataFrame):
        from icda.report.tables import load_evaluations

        df = load_evaluations(df, icda)
    out_dir = Path(out_dir)
    datasets = sorted(set(_iterations(df)["dataset"]))
    skipped = sorted(set(df["dataset"]) - set(datasets))
    if skipped:
        log.warning("no iteration results (nothing to plot) for: %s", ", ".join(skipped))
    written = [_save(convergence_figure(df, ds, show_comp), out_dir / f"alpha_{ds}.png")
               for ds in datasets]
    written.append(_save(convergence_grid(df, datasets, show_comp), out_dir / "alpha_all.png"))
    log.info("wrote %d convergence plots to %s", len(written), out_dir)
    stale = sorted(set(out_dir.glob("alpha_*.png")) - set(written))  # datasets no longer run
    for path in stale:
        path.unlink()
    if stale:
        log.info("removed the plots of datasets no longer run: %s", ", ".join(p.name for p in stale))
    return written
