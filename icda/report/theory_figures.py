"""Figures 1 and 2 of the paper's binary-variable theory, with the numbers behind them as CSV.

Paper: Figure 1 ("Increasing beta helps CDA", section "Helpful Counterfactual Generation Errors")
and Figure 2 (a: operator J, b: Monte Carlo operator R, c: psi against the identity line,
d: α over iterations; section "Iterative Counterfactual Data Augmentation"). The mathematics is in
:mod:`icda.theory`; this module tabulates it (``pandas.DataFrame``), plots it (matplotlib, Agg
backend) and writes everything atomically (:func:`icda.io.atomic_path`).

Files written by :func:`write_theory_outputs` into the output folder:
``figure1_cda_criterion``, ``figure2a_J``, ``figure2b_R``, ``figure2c_psi``,
``figure2d_alpha_sequence`` (each ``.png`` and ``.csv``) and ``summary.json``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from icda import theory  # noqa: E402
from icda.io import atomic_path, atomic_write, write_json  # noqa: E402

#: points on the α (and δ) axes of the figures; Monte Carlo runs at each one
GRID_POINTS = 101


def _grid(points: int) -> np.ndarray:
    return np.linspace(0.0, 1.0, points)


# ----------------------------------------------------------------------------- tables


def figure1_table(
    p1: float, p2: float, betas: Sequence[float], points: int = GRID_POINTS
) -> pd.DataFrame:
    """CDA success criterion ``Delta I^a(X2,Y1) - Delta I^a(X1,Y1)`` (bits) against α for each β.

    One row per (beta, alpha); columns ``beta, alpha, p_y1_x1_aug, p_y1_x2_aug, delta_I_x1,
    delta_I_x2, criterion``.
    """
    frames = []
    alphas = _grid(points)
    for beta in betas:
        p1a, p2a = theory.augmented_conditionals(p1, p2, alphas, beta)
        drop1 = theory.mutual_information(p1) - theory.mutual_information(p1a)
        drop2 = theory.mutual_information(p2) - theory.mutual_information(p2a)
        frames.append(pd.DataFrame({
            "beta": float(beta), "alpha": alphas, "p_y1_x1_aug": p1a, "p_y1_x2_aug": p2a,
            "delta_I_x1": drop1, "delta_I_x2": drop2,
            "criterion": theory.cda_criterion(p1, p2, alphas, beta),
        }))
    return pd.concat(frames, ignore_index=True)


def figure1_break_even(p1: float, p2: float, betas: Sequence[float]) -> dict[str, list[float]]:
    """α where the Figure 1 criterion crosses zero (the CDA break-even error), per β (as text)."""
    out = {}
    for beta in betas:
        out[f"{beta:g}"] = theory.sign_change_roots(
            lambda a, b=beta: float(theory.cda_criterion(p1, p2, a, b)), np.linspace(0.0, 1.0, 1001)
        )
    return out


def figure2a_table(p1: float, p2: float, beta: float | None = None, points: int = GRID_POINTS) -> pd.DataFrame:
    """Operator J: columns ``alpha_k, beta, p_y1_x1_aug, p_y1_x2_aug, I_x1_aug, I_x2_aug, delta_a``."""
    alphas = _grid(points)
    p1a, p2a = theory.augmented_conditionals(p1, p2, alphas, beta)
    info1, info2 = theory.mutual_information(p1a), theory.mutual_information(p2a)
    return pd.DataFrame({
        "alpha_k": alphas, "beta": 1.0 - alphas if beta is None else float(beta),
        "p_y1_x1_aug": p1a, "p_y1_x2_aug": p2a, "I_x1_aug": info1, "I_x2_aug": info2,
        "delta_a": info1 - info2,
    })


def figure2b_table(
    p1: float,
    p2: float,
    n: int,
    beta: float | None = None,
    simulations: int = theory.PAPER_SIMULATIONS,
    rng: theory.RngLike = None,
    points: int = GRID_POINTS,
    progress: bool = False,
) -> pd.DataFrame:
    """Operator R, exact and Monte Carlo, on two curves (column ``curve``):

    * ``fixed_p1``: R(δ) with p(Y1|X1) = ``p1`` held and p(Y1|X2) chosen for δ
      (:func:`icda.theory.operator_R`), δ over :func:`icda.theory.delta_range`;
    * ``along_J``: the MMI error on the augmented conditionals at δ^a = J(α^k), α^k in [0, 1]
      (what psi uses).

    Columns ``curve, delta, p_y1_x1, p_y1_x2, alpha_exact, alpha_mc, alpha_mc_se``. ``progress``
    shows a bar over the Monte Carlo points.
    """
    rng = np.random.default_rng(rng)
    low, high = theory.delta_range(p1)
    deltas = np.linspace(low, high, points)
    p2_fixed = theory.conditional_for_information(np.clip(theory.mutual_information(p1) - deltas, 0.0, 1.0))
    p1_fixed = np.full_like(deltas, p1)
    p1a, p2a = theory.augmented_conditionals(p1, p2, _grid(points), beta)
    frames = []
    for curve, x1, x2 in (("fixed_p1", p1_fixed, p2_fixed), ("along_J", p1a, p2a)):
        mc = theory.mmi_error_mc(x1, x2, n, simulations, rng, f"Figure 2b, {curve} (Monte Carlo)" if progress else None)
        frames.append(pd.DataFrame({
            "curve": curve,
            "delta": theory.mutual_information(x1) - theory.mutual_information(x2),
            "p_y1_x1": x1, "p_y1_x2": x2,
            "alpha_exact": theory.mmi_error_exact(x1, x2, n),
            "alpha_mc": mc.alpha, "alpha_mc_se": mc.standard_error,
        }))
    return pd.concat(frames, ignore_index=True)


def figure2c_table(
    p1: float,
    p2: float,
    n: int,
    beta: float | None = None,
    simulations: int = theory.PAPER_SIMULATIONS,
    rng: theory.RngLike = None,
    points: int = GRID_POINTS,
    progress: bool = False,
) -> pd.DataFrame:
    """psi = R ∘ J: columns ``alpha_k, delta_a, p_y1_x1_aug, p_y1_x2_aug, psi_exact, psi_mc,
    psi_mc_se``. ``progress`` shows a bar over the Monte Carlo points."""
    alphas = _grid(points)
    p1a, p2a = theory.augmented_conditionals(p1, p2, alphas, beta)
    mc = theory.mmi_error_mc(p1a, p2a, n, simulations, rng, "Figure 2c, psi (Monte Carlo)" if progress else None)
    return pd.DataFrame({
        "alpha_k": alphas, "delta_a": theory.operator_J(p1, p2, alphas, beta),
        "p_y1_x1_aug": p1a, "p_y1_x2_aug": p2a,
        "psi_exact": theory.psi(p1, p2, n, alphas, beta),
        "psi_mc": mc.alpha, "psi_mc_se": mc.standard_error,
    })


def figure2d_table(analysis: theory.Analysis) -> pd.DataFrame:
    """α over iterations: columns ``iteration, alpha_exact, alpha_mc, alpha_mc_se``."""
    return pd.DataFrame({
        "iteration": np.arange(len(analysis.sequence)),
        "alpha_exact": analysis.sequence,
        "alpha_mc": analysis.sequence_mc.alpha,
        "alpha_mc_se": analysis.sequence_mc.standard_error,
    })


# ----------------------------------------------------------------------------- plots


def _beta_label(beta: float | None) -> str:
    return r"$\beta = 1-\alpha^k$" if beta is None else rf"$\beta = {beta:g}$"


def plot_figure1(table: pd.DataFrame, p1: float, p2: float) -> plt.Figure:
    fig, ax = plt.subplots(figsize=(5, 3.6))
    for beta, rows in table.groupby("beta"):
        ax.plot(rows["alpha"], rows["criterion"], label=rf"$\beta = {beta:g}$")
    ax.axhline(0.0, color="black", lw=0.8)
    ax.set_xlabel(r"selector error $\alpha$")
    ax.set_ylabel(r"$\Delta I^a_{X_2,Y_1} - \Delta I^a_{X_1,Y_1}$ (bits)")
    ax.set_title(rf"CDA success criterion, $p(Y_1|X_1)={p1:g}$, $p(Y_1|X_2)={p2:g}$", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_figure2a(table: pd.DataFrame, beta: float | None) -> plt.Figure:
    fig, ax = plt.subplots(figsize=(4, 3.4))
    ax.plot(table["alpha_k"], table["delta_a"])
    ax.axhline(0.0, color="black", lw=0.8)
    ax.set_xlabel(r"$\alpha^k$")
    ax.set_ylabel(r"$\delta^a = I(X_1^a;Y_1^a) - I(X_2^a;Y_1^a)$ (bits)")
    ax.set_title(f"(a) operator J, {_beta_label(beta)}", fontsize=9)
    fig.tight_layout()
    return fig


def plot_figure2b(table: pd.DataFrame, p1: float, n: int, simulations: int) -> plt.Figure:
    fig, ax = plt.subplots(figsize=(4, 3.4))
    styles = {
        "fixed_p1": ("C0", rf"$p(Y_1|X_1)={p1:g}$ fixed"),
        "along_J": ("C1", r"along $J$ ($\psi$)"),
    }
    for curve, rows in table.groupby("curve", sort=False):
        colour, label = styles[curve]
        ax.plot(rows["delta"], rows["alpha_exact"], color=colour, label=label)
        ax.errorbar(rows["delta"][::4], rows["alpha_mc"][::4], yerr=2 * rows["alpha_mc_se"][::4],
                    fmt="o", ms=2.5, color=colour)
    ax.text(0.03, 0.03, f"lines: exact\ndots: Monte Carlo, {simulations:,} runs (±2 s.e.)",
            transform=ax.transAxes, fontsize=6)
    ax.set_xlabel(r"$\delta$ (bits)")
    ax.set_ylabel(r"expected error $\alpha^{k+1}$")
    ax.set_title(f"(b) operator R, n = {n}", fontsize=9)
    ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    return fig


def plot_figure2c(table: pd.DataFrame, analysis: theory.Analysis) -> plt.Figure:
    fig, ax = plt.subplots(figsize=(4, 3.4))
    ax.plot(table["alpha_k"], table["psi_exact"], label=r"$\psi = R \circ J$, exact")
    ax.plot(table["alpha_k"][::4], table["psi_mc"][::4], "o", ms=2.5, color="C0", label="Monte Carlo")
    ax.plot([0, 1], [0, 1], "k--", lw=0.8, label=r"$\alpha^{k+1} = \alpha^k$")
    for fp in analysis.fixed_points:
        ax.plot(fp.alpha, fp.alpha, "o", mfc="C2" if fp.stable else "white", mec="C2", ms=6)
    if analysis.alpha_T is not None:
        ax.annotate(rf"$\alpha_T = {analysis.alpha_T:.3f}$", (analysis.alpha_T, analysis.alpha_T),
                    xytext=(8, -14), textcoords="offset points", fontsize=8)
    ax.set_xlabel(r"$\alpha^k$")
    ax.set_ylabel(r"$\alpha^{k+1}$")
    ax.set_title(f"(c) fixed-point map, {_beta_label(analysis.beta)}", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def plot_figure2d(table: pd.DataFrame) -> plt.Figure:
    fig, ax = plt.subplots(figsize=(4, 3.4))
    ax.plot(table["iteration"], table["alpha_exact"], "-o", ms=3, label="exact")
    ax.errorbar(table["iteration"], table["alpha_mc"], yerr=2 * table["alpha_mc_se"], fmt="s",
                ms=3, mfc="none", label="Monte Carlo (±2 s.e.)")
    ax.set_xlabel("ICDA iteration k")
    ax.set_ylabel(r"$\alpha^k$")
    ax.set_title(rf"(d) $\alpha$ over iterations, $\alpha^0 = {table['alpha_exact'].iloc[0]:.3f}$",
                 fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------------- writing


def _save(fig: plt.Figure, table: pd.DataFrame, out_dir: Path, stem: str) -> None:
    with atomic_path(out_dir / f"{stem}.png") as tmp:
        fig.savefig(tmp, format="png", dpi=150)
    plt.close(fig)
    with atomic_write(out_dir / f"{stem}.csv") as fh:
        table.to_csv(fh, index=False, float_format="%.10g")


def summary(analysis: theory.Analysis, break_even: dict[str, list[float]], figure1: dict[str, Any]) -> dict[str, Any]:
    """The numbers a reader checks first, as a JSON-ready dict."""
    return {
        "p_y1_given_x1": analysis.p1,
        "p_y1_given_x2": analysis.p2,
        "n": analysis.n,
        "beta": "1 - alpha_k" if analysis.beta is None else analysis.beta,
        "simulations": analysis.simulations,
        "seed": analysis.seed,
        "alpha0": {"exact": float(analysis.sequence[0]), "monte_carlo": float(analysis.sequence_mc.alpha[0]),
                   "monte_carlo_se": float(analysis.sequence_mc.standard_error[0])},
        "sequence_exact": [float(a) for a in analysis.sequence],
        "sequence_monte_carlo": [float(a) for a in analysis.sequence_mc.alpha],
        "sequence_monte_carlo_se": [float(a) for a in analysis.sequence_mc.standard_error],
        "fixed_points": [{"alpha": fp.alpha, "slope": fp.slope, "stable": fp.stable}
                         for fp in analysis.fixed_points],
        "alpha_T": analysis.alpha_T,
        "psi_at_0": analysis.psi_at_0,
        "psi_at_1": analysis.psi_at_1,
        "convergence_orders": [None if np.isnan(q) else float(q) for q in analysis.orders],
        "figure1": {**figure1, "break_even_alpha": break_even},
    }


def write_theory_outputs(
    out_dir: str | Path,
    analysis: theory.Analysis,
    betas: Sequence[float],
    figure1_p1: float,
    points: int = GRID_POINTS,
    progress: bool = False,
) -> list[Path]:
    """Write Figures 1 and 2a-d (PNG + CSV) and ``summary.json`` for ``analysis`` into ``out_dir``.

    Figure 1 uses ``p(Y1|X1) = figure1_p1`` (the paper's .95) and ``analysis.p2``; Figure 2 uses the
    analysis' setting. Monte Carlo draws come from streams ``STREAM_R`` and ``STREAM_PSI`` of
    ``analysis.seed``; ``progress`` shows bars over their points. Returns the paths written.
    """
    out = Path(out_dir)
    a = analysis
    tables = {
        "figure1_cda_criterion": figure1_table(figure1_p1, a.p2, betas, points),
        "figure2a_J": figure2a_table(a.p1, a.p2, a.beta, points),
        "figure2b_R": figure2b_table(a.p1, a.p2, a.n, a.beta, a.simulations,
                                     theory.rng_stream(a.seed, theory.STREAM_R), points, progress),
        "figure2c_psi": figure2c_table(a.p1, a.p2, a.n, a.beta, a.simulations,
                                       theory.rng_stream(a.seed, theory.STREAM_PSI), points, progress),
        "figure2d_alpha_sequence": figure2d_table(a),
    }
    figures = {
        "figure1_cda_criterion": plot_figure1(tables["figure1_cda_criterion"], figure1_p1, a.p2),
        "figure2a_J": plot_figure2a(tables["figure2a_J"], a.beta),
        "figure2b_R": plot_figure2b(tables["figure2b_R"], a.p1, a.n, a.simulations),
        "figure2c_psi": plot_figure2c(tables["figure2c_psi"], a),
        "figure2d_alpha_sequence": plot_figure2d(tables["figure2d_alpha_sequence"]),
    }
    written = []
    for stem, table in tables.items():
        _save(figures[stem], table, out, stem)
        written += [out / f"{stem}.png", out / f"{stem}.csv"]
    figure1 = {"p_y1_given_x1": figure1_p1, "p_y1_given_x2": a.p2, "betas": [float(b) for b in betas]}
    write_json(summary(a, figure1_break_even(figure1_p1, a.p2, betas), figure1), out / "summary.json")
    written.append(out / "summary.json")
    return written
