"""Does the stop rule's ΔA threshold lie above what retraining alone changes? (never ground truth)

The paper stops the loop when fewer than ``icda.stop_delta_a`` (10 %) of the training rationales
change from one iteration's selector to the next (ΔA, Algorithm 2). It warm-starts a fine-tuned
BERT at lr 1e-6, so a selector that sees the same data moves little. Here every candidate is
trained fresh (departure 26), at lr 1e-3 with sentence dropout, so two selectors trained on the
*same* data already disagree: the fresh candidates' disagreement (1 − their mean pairwise
agreement on dev rationales, recorded in ``converge.json``) is the noise floor of ΔA. Per dataset,
from each finished run's last ``converge.json`` (:class:`icda.records.Decision`), for iterations
k >= 2 (from where the pools have moved off MMI's): the median ΔA, the median disagreement, the
share of iterations whose ΔA is at or below their disagreement, and the share below the run's
``stop_delta_a``; and how many runs the stop rule ended as converged.

    PYTHONPATH=. .venv/bin/python benchmarks/noise_floor.py RESULTS_DIR [RESULTS_DIR ...]

A RESULTS_DIR is a workflow's ``results/`` (or ``benchmarks/robustness.py``'s ``<out>/fixed/results``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from icda.errors import DataError, IcdaError
from icda.layout import CONVERGE_FILE, iteration_dir
from icda.model_selection import Signals
from icda.records import Decision
from icda.settings import Settings
from icda.guard import add_input, parse_arguments


def last_decision(run: Path) -> Decision | None:
    """The run's last ``converge.json`` if it says stop (None: unfinished)."""
    k = 0
    while (iteration_dir(run, k + 1) / CONVERGE_FILE).exists():
        k += 1
    path = iteration_dir(run, k) / CONVERGE_FILE
    if not path.exists():
        return None
    decision = Decision.read(path)
    return decision if decision.stop else None


def dataset_row(decisions: list[Decision], stop_delta_a: float) -> dict:
    """The noise-floor summary of one dataset's finished runs (see the module's docstring)."""
    signals = [Signals(**x) for d in decisions for x in d.signals]
    pairs = [(s.delta_A, 1 - s.agreement) for s in signals
             if s.iteration >= 2 and s.delta_A is not None and s.agreement is not None]
    return {"runs": len(decisions), "converged": sum(d.converged for d in decisions), "iterations": len(pairs),
            "delta_a": statistics.median(a for a, _ in pairs) if pairs else None,
            "disagreement": statistics.median(b for _, b in pairs) if pairs else None,
            "at_floor": sum(a <= b for a, b in pairs), "below_threshold": sum(a < stop_delta_a for a, _ in pairs),
            "stop_delta_a": stop_delta_a}


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f} %"


def table(results: list[Path]) -> str:
    """One Markdown row per results folder and dataset.

    Raises:
        DataError: a folder holds no finished run, or a file is malformed.
    """
    lines = ["| results | dataset | runs | converged | iterations k ≥ 2 | median ΔA | median disagreement "
             "| ΔA ≤ disagreement | ΔA < stop_delta_a |", "|---|---|---|---|---|---|---|---|---|"]
    for root in results:
        found = False
        for folder in sorted(p.parent for p in root.glob("*/settings.json")):
            decisions = [d for d in (last_decision(run) for run in sorted(folder.glob("run*"))) if d is not None]
            if not decisions:
                continue
            found = True
            r = dataset_row(decisions, Settings.load(folder / "settings.json").icda.stop_delta_a)
            lines.append(f"| {root} | {folder.name} | {r['runs']} | {r['converged']} | {r['iterations']} "
                         f"| {_percent(r['delta_a'])} | {_percent(r['disagreement'])} | {r['at_floor']}/{r['iterations']} "
                         f"| {r['below_threshold']}/{r['iterations']} (< {100 * r['stop_delta_a']:.0f} %) |")
        if not found:
            raise DataError(root, None, "holds no finished run (<dataset>/run*/iter*/converge.json saying stop)",
                            "give a workflow's results/ folder, e.g. ../bench/<name>/fixed/results")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    """The command line of :func:`main` (its path arguments declared for the output guard, icda.guard)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_input(parser, "results", kind="tree", nargs="+", help="workflow results/ folders")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(build_parser(), argv)
    try:
        print(table(args.results))
    except IcdaError as exc:
        print(f"noise_floor: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
