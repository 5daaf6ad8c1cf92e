"""Robustness of ICDA's gain over seed sets and CPU kernel paths: the yardstick of the loop's design.

It runs the ICDA loop (MMI, then the iterations until the stop rule; no COMP) of each dataset
for many seed sets, half of them on the fixed kernel path (the default, see
docs/reproducibility.md) and half on this machine's native one (``ICDA_KERNELS=native``), each
half in its own Snakemake working folder under ``--out``. It resumes where it stopped: run the
same command again and Snakemake redoes no finished job.

Per dataset it prints mean ± sd over runs of the test precision of MMI (iteration 0), CDA
(iteration 1) and ICDA (the iteration the stop rule took), the worst ICDA run, the share of runs
with ICDA < MMI and ICDA < CDA, and writes the per-iteration curves (``curves.png``) and every
run's row (``runs.csv``) into ``--out``. With ``--dev`` it also prints the dev diagnostics of the
loop (datasets whose dev split has ground truth): per iteration the dev precision of the chosen
selector, of each fresh candidate and of their ensemble vote, the precision of the pools and of
the inserted counterfactual sentences, how often the warm start won, and the fresh candidates'
agreement.

    PYTHONPATH=. .venv/bin/python benchmarks/robustness.py --out ../bench/after \\
        --configfile config/offline.yaml --sets 10 --datasets restaurant connect synthetic_small

``--configfile`` (repeatable) adds config files after config/config.yaml (a design to compare);
``--first-seed`` starts the seed triples elsewhere (``--sets 10 --first-seed 72``: seeds 72–101);
``--report-only`` prints the tables of what has finished without running anything;
``--final-choice RULE`` reports ICDA as the iteration RULE takes, replayed from the signals each
run recorded (the loop's course does not depend on it); ``--stop-delta-a X`` replays a stop
threshold at least the runs' own (``icda.stop_delta_a``): a run ends at its first iteration
k >= 1 whose ΔA is below X, which is ICDA (the loop's course up to there does not depend on X).
``--max-iters M`` replays a smaller ``icda.max_iters`` the same way (a run ends at iteration M
at the latest).
``--split dev`` reports the dev split's precision instead of the test split's (datasets whose
dev split has ground truth), where design choices are read. Every number is read from the runs'
own files (eval.json, choice.json, converge.json, pools.json, predictions.json).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import yaml

from icda.errors import DataError, IcdaError
from icda.io import atomic_path, read_yaml
from icda.kernels import FIXED_ENVIRONMENT
from icda.model_selection import Signals, final_iteration
from icda.layout import CHOICE_FILE, EVAL_FILE, iteration_dir, predictions_path
from icda.records import Choice, Decision, Evaluation
from icda.settings import FINAL_CHOICES, Settings
from icda.steps.evaluate import evaluate_predictions
from icda.guard import add_input, add_output, parse_arguments

REPO = Path(__file__).resolve().parents[1]
# The two kernel paths: the fixed one (the default) and this machine's native one.
PATHS = {"fixed": {}, "native": {"ICDA_KERNELS": "native"}}
FIRST_SEED = 42


def seed_sets(n: int, first: int = FIRST_SEED) -> list[list[int]]:
    """n seed triples 42-44, 45-47, ..."""
    return [[first + 3 * i + j for j in range(3)] for i in range(n)]


def plan(n_sets: int, first: int = FIRST_SEED) -> dict[str, list[list[int]]]:
    """{kernel path: its seed sets}: the first half of ``n_sets`` on the fixed path, the rest native."""
    sets = seed_sets(n_sets, first)
    half = (n_sets + 1) // 2
    return {"fixed": sets[:half], "native": sets[half:]}


def run_path(out: Path, path: str, sets: list[list[int]], datasets: list[str], configfiles: list[str],
             cores: int) -> tuple[float, float]:
    """Run (or resume) one kernel path's half; returns its wall seconds and the CPU seconds of
    Snakemake and every job it ran (what ``/usr/bin/time`` reports for the process tree)."""
    work = out / path
    work.mkdir(parents=True, exist_ok=True)
    bench_config = {"run_datasets": datasets, "runs": sets, "n_runs": len(sets)}
    (work / "benchmark.yaml").write_text(yaml.safe_dump(bench_config), encoding="utf-8")
    files = [str(Path(f).resolve()) for f in configfiles] + [str(work / "benchmark.yaml")]
    data_dir = _data_dir(configfiles)
    overrides = [] if data_dir is None else ["--config", f"data_dir={data_dir}"]
    # the native half must not inherit the fixed path's variables (set by any process that imported icda)
    env = {k: v for k, v in os.environ.items() if k not in ("ICDA_KERNELS", *FIXED_ENVIRONMENT)} | PATHS[path]
    cmd = ["snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(work), "--cores", str(cores),
           "--configfile", *files, *overrides, "--rerun-incomplete", "--keep-going", "--quiet", "rules", "--", "summaries"]
    start, before = time.time(), resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"[{path}] {' '.join(cmd)}", flush=True)
    subprocess.run(cmd, env=env, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.time() - start, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def _data_dir(configfiles: list[str]) -> str | None:
    """The last data_dir the config files set, resolved against the current folder (the
    workflow runs in another one)."""
    data_dir = None
    for f in configfiles:
        value = (yaml.safe_load(Path(f).read_text(encoding="utf-8")) or {}).get("data_dir")
        data_dir = value if value is not None else data_dir
    return None if data_dir is None else str(Path(data_dir).resolve())


#: a run folder's name: run<N> (a copy such as run1.bak is no run)
RUN_NAME = re.compile(r"run([1-9][0-9]*)")


def _seed_sets(work: Path) -> list[list[int]]:
    """The seed sets of a kernel path's ``benchmark.yaml`` (written by :func:`run_path`), checked.

    Raises:
        DataError: it is not YAML or its ``runs`` is not a list of seed lists.
    """
    path = work / "benchmark.yaml"
    config = read_yaml(path, "run benchmarks/robustness.py without --report-only first")
    runs = config.get("runs") if isinstance(config, dict) else None
    if not isinstance(runs, list) or not runs or not all(
            isinstance(r, list) and r and all(isinstance(x, int) and not isinstance(x, bool) for x in r) for r in runs):
        raise DataError(path, None, f"runs is {json.dumps(runs)[:60]}, not a list of seed lists",
                        "delete the folder's benchmark.yaml and run benchmarks/robustness.py again (it rewrites it)")
    return runs


def _decisions(run: Path) -> list[Decision]:
    """The run's converge.json files, iteration 0 on, up to the first that stops (each read
    through :class:`icda.records.Decision`: a truncated or malformed one is an error)."""
    decisions: list[Decision] = []
    while (run / f"iter{len(decisions)}" / "converge.json").exists():
        decisions.append(Decision.read(run / f"iter{len(decisions)}" / "converge.json"))
        if decisions[-1].stop:
            break
    return decisions


def run_rows(out: Path, final_choice: str | None = None, stop_delta_a: float | None = None,
             split: str = "test", max_iters: int | None = None) -> list[dict]:
    """One row per finished run (its last converge.json says stop): dataset, kernel path, seeds,
    test precision per iteration, the ICDA iteration and why, MMI, CDA, ICDA. The precision is
    eval.json's, or, where the evaluation job has not run yet, the same number from the test
    positions training recorded for the chosen candidate (predictions.json; the evaluation
    reads those too). ``final_choice``: take the ICDA iteration by this rule from the run's
    recorded signals (:func:`icda.model_selection.final_iteration`; the loop's course does not
    depend on it) instead of the one the run took. ``stop_delta_a``: end each run at its first
    iteration k >= 1 whose chosen selector's ΔA is below it, and take that iteration as ICDA.
    ``max_iters``: end each run at that iteration at the latest (after ``stop_delta_a``).
    ``split="dev"``: the chosen selectors' dev precision (benchmarks/loop_diagnostics.py)."""
    rows = []
    for path in PATHS:
        work = out / path
        if not (work / "benchmark.yaml").exists():
            continue
        sets = _seed_sets(work)
        for run in sorted(p for p in work.glob("results/*/run*") if p.is_dir() and RUN_NAME.fullmatch(p.name)):
            number = int(run.name.removeprefix("run"))
            if number > len(sets):
                raise DataError(run, None, f"run {number} is not among the {len(sets)} seed sets of "
                                f"{work / 'benchmark.yaml'}", "remove the folder, or give the --out it belongs to")
            decisions = _decisions(run)
            if not decisions or not decisions[-1].stop:
                continue  # not finished
            last = decisions[-1]
            if last.final_iteration is None or not 0 <= last.final_iteration < len(decisions):
                raise DataError(run / f"iter{len(decisions) - 1}" / "converge.json", None,
                                f"final_iteration {last.final_iteration} is not one of the run's iterations "
                                f"0-{len(decisions) - 1}", "rerun the run's converge step")
            k, why = last.final_iteration, last.final_reason or last.reason
            signals = _recorded(run, last.signals)
            if stop_delta_a is not None:
                settled = [s.iteration for s in signals
                           if s.iteration >= 1 and s.delta_A is not None and s.delta_A < stop_delta_a]
                if settled and settled[0] < len(decisions) - 1:
                    decisions, k = decisions[: settled[0] + 1], settled[0]
                    why = f"replayed: ΔA {signals[k].delta_A:.3f} < {stop_delta_a}"
            if max_iters is not None and len(decisions) - 1 > max_iters:
                decisions, k, why = decisions[: max_iters + 1], max_iters, f"replayed: max_iters {max_iters}"
            if split == "dev":
                from loop_diagnostics import run_rows as dev_rows

                curve = [r["dev"] for r in dev_rows(run)][: len(decisions)]
            else:
                curve = [100 * _test_precision(run, k) for k in range(len(decisions))]
            if final_choice is not None:
                k, why = final_iteration(_signals(run, decisions[-1].signals, final_choice), final_choice)
            bad = [(i, v) for i, v in enumerate(curve) if not (isinstance(v, (int, float)) and 0 <= v <= 100)]
            if bad or not 0 <= k < len(curve):
                raise DataError(run, None, f"iteration {bad[0][0]}'s precision is {bad[0][1]!r}, not a percentage"
                                if bad else f"ICDA iteration {k} is beyond its {len(curve)} iterations",
                                "rerun the run's evaluate steps (snakemake --forcerun evaluate)")
            rows.append({"dataset": run.parent.name, "path": path, "seeds": sets[number - 1], "run": number,
                         "curve": curve, "icda_iteration": k, "why": why,
                         "MMI": curve[0], "CDA": curve[min(1, len(curve) - 1)], "ICDA": curve[k], "dir": str(run),
                         "verdict": last.verdict if (final_choice, stop_delta_a, max_iters) == (None, None, None) else None})
    return rows


def _recorded(run: Path, recorded: list) -> list[Signals]:
    """The signals a converge.json records, checked: objects of :class:`Signals`' fields with
    numbers (or null) where it holds numbers.

    Raises:
        DataError: naming the run.
    """
    try:
        signals = [Signals(**x) for x in recorded]
    except TypeError as exc:
        raise DataError(run, None, f"a converge.json's signals are not the loop's signals ({exc})",
                        "rerun the run's converge steps") from None
    for s in signals:
        for name, value in dataclasses.asdict(s).items():
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                      or value != value):
                raise DataError(run, None, f"a converge.json's signal {name} of iteration {s.iteration} is "
                                f"{value!r}, not a number", "rerun the run's converge steps")
    return signals


def _signals(run: Path, recorded: list[dict], final_choice: str) -> list[Signals]:
    """A run's recorded signals; the rationale probe, where the run's code did not record it,
    recomputed from its files (``loop_diagnostics.Probe``, the same function training calls)."""
    signals = _recorded(run, recorded)
    if final_choice == "rationale_probe" and any(s.rationale_probe is None for s in signals):
        from loop_diagnostics import run_rows as dev_rows

        probes = [r["probe"] for r in dev_rows(run)]
        signals = [s if s.rationale_probe is not None or probes[s.iteration] is None
                   else dataclasses.replace(s, rationale_probe=probes[s.iteration] / 100) for s in signals]
    return signals


def _test_precision(run: Path, k: int) -> float:
    """Test rationale precision (fraction) of iteration k's chosen selector: its eval.json, or
    the evaluation of the test positions training recorded (:func:`icda.steps.evaluate.evaluate_predictions`)."""
    evaluation = iteration_dir(run, k) / EVAL_FILE
    if evaluation.exists():
        precision = Evaluation.read(evaluation).precision  # NaN, a string, out of [0, 1]: refused
    else:
        chosen = Choice.read(iteration_dir(run, k) / CHOICE_FILE).candidate_path
        chosen = chosen if chosen.is_absolute() else run.parents[2] / chosen
        settings = Settings.load(run.parent / "settings.json")
        precision = evaluate_predictions(settings, run.parent / "data", predictions_path(chosen), split="test").precision
    if precision is None:
        raise DataError(evaluation, None, "no test precision (the split has no ground truth)",
                        "report a dataset whose test split is annotated")
    return precision


def _mean_sd(values: list[float]) -> str:
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.mean(values):.1f} ± {sd:.1f}"


def table(rows: list[dict]) -> str:
    """The per-dataset summary as Markdown, with the failure modes: the lowest run, the
    smallest gain over MMI, the runs below their MMI and their CDA, and the runs whose reported
    ICDA is more than 3 points below their best iteration; then the best iteration's mean and
    lowest run, the bound of any rule that reports one of the run's iterations (MMI included)."""
    lines = ["| dataset | runs | MMI | CDA | ICDA | lowest ICDA | smallest gain: ICDA − MMI (run) | ICDA < MMI | ICDA < CDA "
             "| ICDA > 3 below its best iteration | best iteration: mean (lowest) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for dataset in sorted({r["dataset"] for r in rows}):
        rs = [r for r in rows if r["dataset"] == dataset]
        worst = min(rs, key=lambda r: r["ICDA"] - r["MMI"])
        best = [max(r["curve"]) for r in rs]
        lines.append(f"| {dataset} | {len(rs)} | {_mean_sd([r['MMI'] for r in rs])} | {_mean_sd([r['CDA'] for r in rs])}"
                     f" | {_mean_sd([r['ICDA'] for r in rs])} | {min(r['ICDA'] for r in rs):.1f}"
                     f" | {worst['ICDA'] - worst['MMI']:+.1f} ({worst['ICDA']:.1f} − {worst['MMI']:.1f}, seeds {worst['seeds'][0]}–{worst['seeds'][-1]})"
                     f" | {sum(r['ICDA'] < r['MMI'] for r in rs)}/{len(rs)} | {sum(r['ICDA'] < r['CDA'] for r in rs)}/{len(rs)}"
                     f" | {sum(b - r['ICDA'] > 3 for b, r in zip(best, rs))}/{len(rs)}"
                     f" | {statistics.mean(best):.1f} ({min(best):.1f}) |")
    return "\n".join(lines)


def curves_table(rows: list[dict], split: str = "test") -> str:
    lines = [f"| dataset | path | seeds | {split} precision per iteration (ICDA in bold) | verdict | why |",
             "|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["dataset"], r["seeds"])):
        cells = [f"**{v:.1f}**" if i == r["icda_iteration"] else f"{v:.1f}" for i, v in enumerate(r["curve"])]
        lines.append(f"| {r['dataset']} | {r['path']} | {r['seeds'][0]}–{r['seeds'][-1]} | {' → '.join(cells)} | "
                     f"{r.get('verdict') or '–'} | {r['why']} |")
    return "\n".join(lines)


def plot(rows: list[dict], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    datasets = sorted({r["dataset"] for r in rows})
    fig, axes = plt.subplots(1, len(datasets), figsize=(4.5 * len(datasets), 3.6), squeeze=False)
    for ax, dataset in zip(axes[0], datasets):
        for r in (r for r in rows if r["dataset"] == dataset):
            style = "-" if r["path"] == "fixed" else "--"
            line, = ax.plot(range(len(r["curve"])), r["curve"], style, alpha=0.7)
            ax.plot([r["icda_iteration"]], [r["ICDA"]], "*", color=line.get_color(), markersize=10)
        ax.set_title(dataset)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("iteration (0 = MMI; star: taken as ICDA)")
        ax.set_ylabel("test precision (%)")
    axes[0][0].plot([], [], "k-", label="fixed kernels")
    axes[0][0].plot([], [], "k--", label="native kernels")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    with atomic_path(out / "curves.png") as tmp:
        fig.savefig(tmp, dpi=110, format="png")


def cpu_minutes(out: Path) -> dict[str, float]:
    """{kernel path: CPU minutes of its embedding and training jobs} from Snakemake's benchmark
    files: a lower bound, since Snakemake samples a job's CPU time every 30 s after its first 15 s
    and misses what it spends after the last sample (icda/report/compute.py). The whole cost,
    Snakemake's and every job's, is printed after each invocation of :func:`run_path`."""
    totals = {}
    for path in PATHS:
        seconds = 0.0
        for tsv in (out / path / "results" / "benchmarks").glob("**/*.tsv"):
            with open(tsv, encoding="utf-8") as f:
                rows = list(csv.DictReader(f, delimiter="\t"))
            seconds += sum(float(r["cpu_time"]) for r in rows if r.get("cpu_time") not in (None, "", "NA"))
        if seconds:
            totals[path] = seconds / 60
    return totals


def write_csv(rows: list[dict], out: Path) -> None:
    """``out/runs.csv``, atomically (icda.io.atomic_path)."""
    with atomic_path(out / "runs.csv") as tmp, open(tmp, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["dataset", "path", "seeds", "MMI", "CDA", "ICDA", "icda_iteration", "curve", "why", "verdict"])
        for r in rows:
            w.writerow([r["dataset"], r["path"], " ".join(map(str, r["seeds"])), f"{r['MMI']:.2f}", f"{r['CDA']:.2f}",
                        f"{r['ICDA']:.2f}", r["icda_iteration"], " ".join(f"{v:.2f}" for v in r["curve"]), r["why"],
                        r.get("verdict") or ""])


def build_parser() -> argparse.ArgumentParser:
    """The command line of :func:`main` (its path arguments declared for the output guard, icda.guard)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_output(parser, "--out", kind="folder", required=True, help="working folder (kept; rerun to resume)")
    add_input(parser, "--configfile", action="append", default=[], help="config files after config/config.yaml")
    parser.add_argument("--sets", type=int, default=10, help="seed sets (runs) per dataset, half per kernel path")
    parser.add_argument("--datasets", nargs="+", default=["restaurant", "connect", "synthetic_small"])
    parser.add_argument("--paths", nargs="+", choices=list(PATHS), default=list(PATHS))
    parser.add_argument("--first-seed", type=int, default=FIRST_SEED,
                        help="the first seed of the first set (other seed sets: e.g. 72 after --sets 10)")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument("--dev", action="store_true", help="print the dev diagnostics of every run")
    parser.add_argument("--final-choice", choices=FINAL_CHOICES,
                        help="report ICDA as the iteration this rule takes (replayed from the runs' signals)")
    parser.add_argument("--stop-delta-a", type=float,
                        help="replay this stop threshold (at least the runs' own): ICDA = the first iteration >= 1 with ΔA below it")
    parser.add_argument("--max-iters", type=int,
                        help="replay this max_iters (at most the runs' own): a run ends at this iteration at the latest")
    parser.add_argument("--split", choices=["test", "dev"], default="test",
                        help="the split whose precision is reported (dev: where design choices are read)")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parse_arguments(parser, argv)
    if args.max_iters is not None and args.max_iters < 0:
        parser.error(f"--max-iters {args.max_iters}: give an iteration, 0 or more")
    if args.stop_delta_a is not None and not 0 < args.stop_delta_a <= 1:
        parser.error(f"--stop-delta-a {args.stop_delta_a}: give a share of the rationales in (0, 1]")
    try:
        return _main(args)
    except IcdaError as exc:
        print(f"robustness: {exc}", file=sys.stderr)
        return 2


def _main(args: argparse.Namespace) -> int:
    if not args.report_only:
        args.out.mkdir(parents=True, exist_ok=True)
        for path, sets in plan(args.sets, args.first_seed).items():
            if path in args.paths and sets:
                wall, cpu = run_path(args.out, path, sets, args.datasets, args.configfile, args.cores)
                print(f"[{path}] {len(sets)} seed sets: {wall / 60:.1f} min wall, {cpu / 60:.1f} CPU min "
                      "(Snakemake and its jobs, this invocation)", flush=True)
    sys.path.insert(0, str(REPO / "benchmarks"))
    rows = run_rows(args.out, args.final_choice, args.stop_delta_a, args.split, args.max_iters)
    if not rows:
        print(f"robustness: {args.out}: no finished run (no <path>/results/<dataset>/run*/ that stopped); "
              "give the --out of a robustness run, or wait for its first run to finish", file=sys.stderr)
        return 1
    if (args.final_choice, args.stop_delta_a, args.max_iters, args.split) == (None, None, None, "test"):  # as they ran
        write_csv(rows, args.out)
        plot(rows, args.out)
    else:
        print(f"replayed or read on {args.split}: runs.csv and curves.png are left as they are")
    print(table(rows))
    print()
    print(curves_table(rows, args.split))
    print()
    print("CPU minutes of the embedding and training jobs: " +
          ", ".join(f"{path} {minutes:.1f}" for path, minutes in cpu_minutes(args.out).items()))
    if args.dev:
        from loop_diagnostics import diagnostics_table

        print()
        print(diagnostics_table([Path(r["dir"]) for r in rows]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
