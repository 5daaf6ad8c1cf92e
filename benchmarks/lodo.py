"""Leave-one-dataset-out check of the loop's ground-truth-free rules, on dev only.

Each rule is scored on the dev split's ground truth (never test) by replaying it on finished
runs (``benchmarks/robustness.py`` folders), and chosen on all datasets but one by the criterion
written down before the check (docs/experiments/robust-icda.md); the table shows what the choice
made on the others scores on the left-out dataset.

- ``candidate_choice`` (iterations k >= 1): dev precision of the candidate each rule picks among
  the same candidates (``loss``: the lowest score as recorded; ``agreement``: the highest mean
  agreement with the other fresh candidates). Criterion: the higher mean over iterations.
- ``pool_source``: precision (train ground truth) of the positions the counterfactuals swap
  out and of the pool sentences they swap in, from the chosen selector or the fresh candidates'
  vote, replayed on the same candidates. Criterion: the higher mean swap + pool precision.
- ``final_choice``: dev precision of the iteration each rule takes (:data:`FINAL_RULES`) minus
  the run's MMI dev precision; the rationale probe, where the run did not record it, is computed
  from its files (``loop_diagnostics.Probe``). Criterion: the highest worst-run gain, ties
  (within 0.1 point) to the higher mean gain, then to the earlier rule of :data:`FINAL_RULES`
  (docs/experiments/loop-guard.md). ``final_choice_table`` adds, per rule and dataset, the runs
  below their MMI and the runs more than 3 points below their best iteration.
- ``final_selector``: dev precision of the selector reported for the last iteration (``chosen``,
  or an ensemble of its candidates: ``vote``, ``mean_scores``, ``mean_scores_fresh``;
  ``benchmarks/final_selector.py``, which loads the candidates' models) minus the run's MMI dev
  precision. Criterion: that of ``final_choice``.
- ``max_iters``: dev precision of ICDA when the run stops at ΔA < 0.1 or at iteration M, for M
  in :data:`MAX_ITERS`, minus the run's MMI dev precision; replayed on runs that went to
  iteration 10 without the stop rule (``icda: {max_iters: 10, stop_delta_a: 0}``). Criterion:
  the highest worst-run gain, ties (within 0.1 point) to the higher mean gain, then to the
  smaller M (docs/experiments/more-iterations.md).

    PYTHONPATH=. .venv/bin/python benchmarks/lodo.py RESULTS_DIR [RESULTS_DIR ...]

RESULTS_DIR: a Snakemake ``results/`` folder (e.g. ../bench/after/fixed/results).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import final_selector  # noqa: E402
import robustness  # noqa: E402
from loop_diagnostics import RUN_NAME, run_rows  # noqa: E402

from icda.errors import DataError, IcdaError  # noqa: E402
from icda.guard import add_input, parse_arguments  # noqa: E402
from icda.model_selection import Signals, final_iteration  # noqa: E402
from icda.records import Decision  # noqa: E402
from icda.settings import Settings  # noqa: E402

FINAL_RULES = ("last", "agreement", "delta_a", "original_dev_loss", "original_dev_accuracy", "rationale_probe",
               "agreement_guard")
MAX_ITERS = (6, 8, 10)


def runs_of(results: list[Path]) -> dict[str, list[Path]]:
    """{dataset: finished run folders} (a run is finished when a converge.json says stop)."""
    out: dict[str, list[Path]] = {}
    for root in results:
        for run in sorted(root.glob("*/run*")):
            if not (run.is_dir() and RUN_NAME.fullmatch(run.name)):
                continue  # a copy such as run1.bak is no run
            if any(Decision.read(c).stop for c in run.glob("iter*/converge.json")):
                out.setdefault(run.parent.name, []).append(run)
    return out


def replay(runs: dict[str, list[Path]]) -> dict[str, dict[str, list[float]]]:
    """{dataset: {measure: values}} for every rule of the first three components."""
    table: dict[str, dict[str, list[float]]] = {}
    for dataset, folders in runs.items():
        m = table.setdefault(dataset, {})
        for run in folders:
            try:
                rows = run_rows(run)
            except DataError as missing:  # a candidate's files were deleted (a rerun began)
                if missing.problem != "file not found":
                    raise
                print(f"skipped {run}: {missing.path} is gone", file=sys.stderr)
                continue
            if rows[0]["dev"] is None:
                continue  # no dev ground truth
            for r in rows[1:]:
                if r.get("by_agree") is not None:
                    m.setdefault("candidate_choice=loss", []).append(r["by_loss"])
                    m.setdefault("candidate_choice=agreement", []).append(r["by_agree"])
            vote_used = Settings.load(run.parent / "settings.json").icda.pool_source == "vote"
            for r in rows:
                if r.get("pool") is None:
                    continue
                own, other = (r["pool"] + r["swap"]) / 2, (r["pool_other"] + r["swap_other"]) / 2
                m.setdefault("pool_source=vote", []).append(own if vote_used else other)
                m.setdefault("pool_source=chosen", []).append(other if vote_used else own)
            last = Decision.read(run / f"iter{len(rows) - 1}" / "converge.json").to_json()
            # runs of code that did not record the fresh candidates' agreement get it from their files
            try:
                signals = [Signals(**(s | {"agreement": s.get("agreement", rows[s["iteration"]]["agree"]),
                                           "rationale_probe": s.get("rationale_probe")
                                           or _fraction(rows[s["iteration"]]["probe"])}))
                           for s in last["signals"]]
            except (TypeError, KeyError, IndexError) as exc:
                raise DataError(run / f"iter{len(rows) - 1}" / "converge.json", None, f"its signals are not the "
                                f"loop's signals of the run's {len(rows)} iterations ({exc!r})",
                                "rerun the run's converge steps") from None
            best = max(r["dev"] for r in rows[: len(signals)])
            for rule in FINAL_RULES:
                k, _ = final_iteration(signals, rule)
                m.setdefault(f"final_choice={rule}", []).append(rows[k]["dev"] - rows[0]["dev"])
                m.setdefault(f"below_best:{rule}", []).append(best - rows[k]["dev"])
    return table


def _fraction(percent: float | None) -> float | None:
    return None if percent is None else percent / 100


def final_choice_table(table: dict[str, dict[str, list[float]]]) -> str:
    """Per dataset and final-choice rule: runs, mean and worst dev gain over MMI, the runs below
    their MMI and the runs more than 3 points below their best iteration."""
    lines = ["| dataset | rule | runs | mean gain | worst gain | < MMI | > 3 below best |", "|---|---|---|---|---|---|---|"]
    for dataset in sorted(table):
        for rule in FINAL_RULES:
            gains, gaps = table[dataset].get(f"final_choice={rule}"), table[dataset].get(f"below_best:{rule}")
            if gains:
                lines.append(f"| {dataset} | {rule} | {len(gains)} | {statistics.mean(gains):+.1f} | {min(gains):+.1f} "
                             f"| {sum(g < 0 for g in gains)} | {sum(g > 3 for g in gaps)} |")
    return "\n".join(lines)
    return table


def replay_final_selector(results: list[Path], table: dict[str, dict[str, list[float]]]) -> None:
    """Adds ``final_selector=<rule>`` gains over MMI (dev precision points) to ``table``."""
    for dataset, rows in final_selector.replay(results).items():
        m = table.setdefault(dataset, {})
        for row in rows:
            for rule in final_selector.SELECTORS:
                m.setdefault(f"final_selector={rule}", []).append(row[rule] - row["mmi"])


def replay_max_iters(results: list[Path], table: dict[str, dict[str, list[float]]]) -> None:
    """Adds ``max_iters=<M>`` gains over MMI (dev precision points) to ``table``, from the runs of
    ``results`` that ran to iteration 10 with the stop rule off."""
    for root in results:
        settings = sorted(root.glob("*/settings.json"))
        if not settings or Settings.load(settings[0]).icda.stop_delta_a != 0:
            continue
        # one replay at ΔA < 0.1; stopping at M as well takes iteration min(settled, M)
        for row in robustness.run_rows(root.parents[1], stop_delta_a=0.1, split="dev"):
            if Path(row["dir"]).parent.parent == root:
                for m in MAX_ITERS:
                    gain = row["curve"][min(row["icda_iteration"], m)] - row["MMI"]
                    table.setdefault(row["dataset"], {}).setdefault(f"max_iters={m}", []).append(gain)


def criterion(component: str, values: list[float]) -> tuple:
    """Larger is better: final_choice, final_selector and max_iters by (worst, mean) gain, the
    others by mean."""
    if component in ("max_iters", "final_choice"):  # ties within 0.1 point, then the rule order
        return (round(min(values), 1), round(statistics.mean(values), 1))
    return (min(values), statistics.mean(values)) if component.startswith("final_") else (statistics.mean(values),)


def rule_order(rule: str) -> float:
    """Sort key: ``max_iters`` rules by M, so that max() takes the smaller M among equals, and
    ``final_choice`` rules in the order of :data:`FINAL_RULES`."""
    if rule.startswith("final_choice="):
        return float(FINAL_RULES.index(rule.split("=")[1]))
    return float(rule.split("=")[1]) if rule.startswith("max_iters=") else 0.0


def lodo(table: dict[str, dict[str, list[float]]]) -> str:
    lines = ["| component | left out | chosen on the others | its dev score on the left-out (mean; worst) | every rule there |",
             "|---|---|---|---|---|"]
    datasets = sorted(d for d in table if table[d])
    for component in ("candidate_choice", "pool_source", "final_choice", "final_selector", "max_iters"):
        for left in datasets:
            rules = sorted({k for d in datasets for k in table[d] if k.startswith(component + "=")}, key=lambda r: (rule_order(r), r))
            others = [d for d in datasets if d != left]

            def score(rule):
                per = [criterion(component, table[d][rule]) for d in others if table[d].get(rule)]
                return tuple(statistics.mean(x[i] for x in per) for i in range(len(per[0]))) if per else (float("-inf"),)

            if not rules or not table[left].get(rules[0]):
                continue
            best = max(rules, key=score)  # the first of equals: rules are in rule_order
            here = table[left][best]
            every = "; ".join(f"{r.split('=')[1]} {statistics.mean(table[left][r]):.1f}" for r in rules if table[left].get(r))
            lines.append(f"| {component} | {left} | {best.split('=')[1]} | {statistics.mean(here):.1f}; {min(here):.1f} | {every} |")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    """The command line of :func:`main` (its path arguments declared for the output guard, icda.guard)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_input(parser, "results", kind="tree", nargs="+", help="Snakemake results/ folders of finished runs")
    parser.add_argument("--final-choice-only", action="store_true",
                        help="replay the final choice (and the other loop rules) but not final_selector and max_iters")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parse_arguments(parser, argv)
    try:
        runs = runs_of(args.results)
        if not runs:
            parser.error(f"no finished run under {', '.join(map(str, args.results))}")
        table = replay(runs)
        if not args.final_choice_only:
            replay_final_selector(args.results, table)
            replay_max_iters(args.results, table)
    except IcdaError as exc:
        print(f"lodo: {exc}", file=sys.stderr)
        return 2
    print(lodo(table))
    print()
    print(final_choice_table(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
