"""``python -m icda theory``: the binary-variable theory of ICDA (paper Figures 1 and 2).

Prints α^0 (the MMI error on the original data), the α sequence exact and in simulation side by
side, the fixed points of psi with alpha_T; with ``--out DIR`` also writes the figures, their CSVs
and ``summary.json`` (:func:`icda.report.theory_figures.write_theory_outputs`). The defaults are the
schema's ``theory`` section (the paper's values; :mod:`icda.schema`), and so are the bounds of
``--n``, ``--simulations`` and ``--iterations``, which keep a run within minutes; a loop that runs
longer than a few seconds shows a progress bar on standard error.

The theory itself (operators J, R, psi, the α sequence, the fixed points) is :mod:`icda.theory`
(no files); its figures are :mod:`icda.report.theory_figures` (matplotlib, imported only when
``--out`` asks for them).
"""

from __future__ import annotations

import argparse
import logging
import math

from icda import theory
from icda.guard import add_output

log = logging.getLogger(__name__)


def _probability(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.5 <= value <= 1.0:
        raise argparse.ArgumentTypeError(
            f"{text} is outside [0.5, 1]: give p(Y1|X), the probability that the label agrees with "
            "the signal (at least 1/2 in the binary theory)"
        )
    return value


def _unit(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} is outside [0, 1]")
    return value


def _at_least(minimum: int, maximum: int | None = None, key: str | None = None):
    """An integer in [minimum, maximum]; ``maximum``: the schema's bound of ``theory.<key>``,
    which keeps a run's cost within minutes."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{value} is below the minimum {minimum}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(
                f"{value} is above the maximum {maximum}: the theory's run time grows with it, and the bound "
                f"(theory.{key} in workflow/schemas/config.schema.yaml) keeps it within minutes. "
                f"Fix: give at most {maximum}")
        return value

    return parse


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "theory",
        help="binary-variable theory: operators J, R, psi, the α sequence and fixed points (Figs 1, 2)",
        description=(
            "Binary X1, X2, Y1 with p(X1)=p(X2)=p(Y1)=1/2. Prints α0 (the MMI error on the original "
            "data), the ICDA α sequence alpha^(k+1) = psi(alpha^k) exactly and by Monte Carlo, and the "
            "fixed points of psi including the threshold alpha_T; --out writes the paper's "
            "Figures 1 and 2a-d (PNG + CSV) and summary.json."
        ),
    )
    from icda.schema import section_defaults, section_maxima

    default, maximum = section_defaults("theory"), section_maxima("theory")
    p.add_argument("--p1", type=_probability, default=default["p1"],
                   help=f"p(Y1|X1), target signal (default {default['p1']})")
    p.add_argument("--p2", type=_probability, default=default["p2"],
                   help=f"p(Y1|X2), spurious signal (default {default['p2']})")
    p.add_argument("--n", type=_at_least(1, maximum["n"], "n"), default=default["n"],
                   help=f"observations seen by the MMI scheme (default {default['n']}, at most {maximum['n']})")
    p.add_argument("--simulations", type=_at_least(2, maximum["simulations"], "simulations"),
                   default=default["simulations"],
                   help=f"Monte Carlo runs per estimate (default {default['simulations']}, as the paper; "
                        f"at most {maximum['simulations']})")
    p.add_argument("--seed", type=_at_least(0), default=default["seed"], help=f"random seed (default {default['seed']})")
    p.add_argument("--iterations", type=_at_least(0, maximum["iterations"], "iterations"),
                   default=default["iterations"],
                   help=f"ICDA iterations to show (default {default['iterations']}, at most {maximum['iterations']})")
    p.add_argument("--beta", type=_unit, default=default["beta"],
                   help="fixed beta for J and psi (default: beta = 1 - alpha^k, as the paper)")
    p.add_argument("--betas", type=_unit, nargs="+", default=default["betas"],
                   help=f"beta values of Figure 1 (default {' '.join(map(str, default['betas']))})")
    p.add_argument("--figure1-p1", type=_probability, default=default["figure1_p1"],
                   help=f"p(Y1|X1) of Figure 1 (default {default['figure1_p1']}, as the paper; p(Y1|X2) is --p2)")
    add_output(p, "--out", kind="owned", default=None, help="folder for the figures, CSVs and summary.json")
    p.set_defaults(func=run)


def _fmt(value: float) -> str:
    return f"{value:.6f}" if value >= 1e-3 or value == 0.0 else f"{value:.4e}"


def report(analysis: theory.Analysis) -> str:
    """The text ``theory`` prints for ``analysis``."""
    a = analysis
    beta = "1 - alpha^k" if a.beta is None else f"{a.beta:g}"
    mc0, se0 = a.sequence_mc.alpha[0], a.sequence_mc.standard_error[0]
    lines = [
        f"binary ICDA theory: p(Y1|X1)={a.p1:g} p(Y1|X2)={a.p2:g} n={a.n} beta={beta} "
        f"(Monte Carlo: {a.simulations} simulations, seed {a.seed})",
        f"I(X1;Y1)={float(theory.mutual_information(a.p1)):.6f} bits  "
        f"I(X2;Y1)={float(theory.mutual_information(a.p2)):.6f} bits",
        f"alpha0 (MMI error on the original data): exact {_fmt(a.sequence[0])}  "
        f"Monte Carlo {_fmt(mc0)} ± {se0:.1e}",
        "",
        f"{'k':>3}  {'alpha exact':>12}  {'alpha MC':>12}  {'MC s.e.':>8}",
    ]
    for k, (exact, mc, se) in enumerate(zip(a.sequence, a.sequence_mc.alpha, a.sequence_mc.standard_error)):
        lines.append(f"{k:>3}  {_fmt(exact):>12}  {_fmt(mc):>12}  {se:>8.1e}")
    lines += ["", "fixed points of psi (psi(alpha) = alpha):"]
    for fp in a.fixed_points:
        tag = "stable" if fp.stable else "unstable"
        if a.alpha_T is not None and fp.alpha == a.alpha_T:
            tag += "  <- alpha_T"
        lines.append(f"  alpha = {_fmt(fp.alpha):>12}  psi' = {fp.slope:.3e}  {tag}")
    if a.alpha_T is None:
        lines.append("  no threshold alpha_T: psi has no unstable fixed point above its lowest attractor")
    if a.beta is None:
        lines.append(f"psi(0) = R(delta^a = I(X1;Y1)) = {_fmt(a.psi_at_0)} (the theorem's lower bound)   "
                     f"psi(1) = R(delta^a = -I(X2;Y1)) = {_fmt(a.psi_at_1)}")
    else:
        lines.append(f"psi(0) = {_fmt(a.psi_at_0)}   psi(1) = {_fmt(a.psi_at_1)}")
    orders = ", ".join("n/a" if math.isnan(q) else f"{q:.2f}" for q in a.orders[:4])
    lines.append(f"empirical convergence orders towards the lowest fixed point (k = 1, 2, ...): {orders}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    analysis = theory.analyse(
        args.p1, args.p2, args.n, iterations=args.iterations, beta=args.beta,
        simulations=args.simulations, seed=args.seed, progress=True,
    )
    print(report(analysis), flush=True)
    if args.out is not None:
        from icda.report import theory_figures  # matplotlib only when figures are asked for

        written = theory_figures.write_theory_outputs(args.out, analysis, betas=args.betas, figure1_p1=args.figure1_p1,
                                                      progress=True)
        print(f"wrote {len(written)} files to {args.out}")
    return 0
