"""Where a workflow run's CPU time goes: training epochs, evaluation and predictions, loading
inputs, process start-up and imports, bookkeeping jobs, embedding, the Snakemake main process.

By default it runs the tiny workflow (``tests/fixtures/tiny_workflow.yaml``) from scratch in a
temporary folder, with every job's ``python`` behind a shim that records the job's CPU time
(``os.wait4``), and splits the total CPU time of Snakemake and all its jobs (one invocation):

- **training epochs**, **evaluation and predictions** (per-epoch dev evaluation, the initial
  evaluation, the final train/dev predictions) and **loading inputs** (data and embedding
  cache): measured inside each training process (``history.json``: each epoch's
  ``cpu_seconds``/``eval_cpu_seconds``, ``cpu_seconds.load``/``predictions``);
- **start-up and imports** of the training processes: their CPU time minus the three above;
- **bookkeeping jobs**: every other job (select, pools, augment, converge, evaluate, prepare,
  tables, plots, ...); **embed**: the sentence-embedding jobs;
- **Snakemake main process**: the total minus all jobs (its DAG work and the ``run:`` rules).

``--results DIR`` instead reads a finished run's ``results/`` (e.g. the offline reproduction):
the in-process shares per dataset from its histories, and the least wall time the training
epochs alone need on ``--cores`` cores, however well the jobs are packed.

``--configfile FILE`` (repeatable) runs the workflow with these config files after
config/config.yaml instead of the tiny one, e.g. the offline reproduction from scratch
(``--configfile config/offline.yaml --cores 2``; its relative ``data_dir`` is resolved against
the current directory); the run's wall time and the share of its cores kept busy are printed too.

``--repeat N`` runs it N times and reports the median of each share. ``--repo PATH`` runs the
Snakefile of another checkout (e.g. a ``git worktree`` of an older commit) for a before/after
comparison, which it prints as ratios when given twice (``--repo OLD --repo NEW``). Per ICDA
iteration k >= 1 it also prints the CPU seconds of the jobs of that iteration (training,
select, pools, augment, converge, evaluate).

    PYTHONPATH=. .venv/bin/python benchmarks/time_split.py
    PYTHONPATH=. .venv/bin/python benchmarks/time_split.py --repo /tmp/icda-old --repo .

Timings are CPU seconds of this machine; compare only numbers from one invocation.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

import icda  # noqa: F401  (the repository's package on sys.path)
from icda.guard import add_input, add_output, parse_arguments

REPO = Path(__file__).resolve().parents[1]
SHIM = '''import json, os, resource, subprocess, sys, time
start = time.perf_counter()
proc = subprocess.Popen([os.environ["TIME_SPLIT_PYTHON"], *sys.argv[1:]])
_, status, usage = os.wait4(proc.pid, 0)
own = resource.getrusage(resource.RUSAGE_SELF)
with open(os.environ["TIME_SPLIT_LOG"], "a") as fh:
    fh.write(json.dumps({"argv": sys.argv[1:], "cpu": usage.ru_utime + usage.ru_stime,
                         "shim_cpu": own.ru_utime + own.ru_stime, "wall": time.perf_counter() - start}) + "\\n")
sys.exit(os.waitstatus_to_exitcode(status))
'''
SHARES = ["training epochs", "evaluation and predictions", "loading inputs", "start-up and imports (training)",
          "bookkeeping jobs", "embed", "Snakemake main process"]
ITERATION = re.compile(r"/iter(\d+)/")


def data_dir(configfiles: list[Path], workdir: Path) -> Path:
    """The ``data_dir`` the last of ``configfiles`` that sets one gives, a relative one resolved
    against the current directory (where ``snakemake`` would run); none: ``workdir/data``."""
    for path in reversed(configfiles):
        value = (yaml.safe_load(path.read_text()) or {}).get("data_dir")
        if value:
            return Path(value).resolve()
    return workdir / "data"


def run_workflow(repo: Path, workdir: Path, configfiles: list[Path] | None = None,
                 targets: list[str] | None = None, cores: int = 1) -> tuple[float, list[dict], float]:
    """Run the workflow of ``repo`` in ``workdir`` (config/config.yaml plus ``configfiles``,
    default the tiny workflow's; ``targets``, default all) on ``cores``; (total CPU seconds of
    Snakemake and its jobs, one record per job process: ``argv``, ``cpu``, ``shim_cpu``, ``wall``;
    wall seconds of the whole run)."""
    bin_dir = workdir / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "shim.py").write_text(SHIM)
    shim = bin_dir / "python"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{bin_dir / "shim.py"}" "$@"\n')
    shim.chmod(0o755)
    log = workdir / "jobs.jsonl"
    env = os.environ | {"PATH": f"{bin_dir}:{Path(sys.executable).parent}:{os.environ['PATH']}",
                        "TIME_SPLIT_PYTHON": sys.executable, "TIME_SPLIT_LOG": str(log),
                        "PYTHONPATH": str(repo)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    configfiles = configfiles or [repo / "tests/fixtures/tiny_workflow.yaml"]
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--cores", str(cores), "-s", str(repo / "Snakefile"),
                    "--directory", str(workdir), "--configfile", str(repo / "config/config.yaml"),
                    *map(str, configfiles), "--config", f"data_dir={data_dir(configfiles, workdir)}", "--quiet",
                    "--", *(targets or [])], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode:
        raise SystemExit(f"snakemake failed in {workdir}:\n{proc.stderr[-3000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return total, [json.loads(line) for line in log.read_text().splitlines()], wall


def command(job: dict) -> str:
    argv = [a for a in job["argv"] if not a.startswith("-")]
    return argv[argv.index("icda") + 1] if "icda" in argv else "other"


def history_cpu(history: dict) -> dict[str, float]:
    """CPU seconds of one training history (``history.json``): ``epochs`` trained (a count),
    ``training`` (the epochs without their dev evaluations), ``evaluation`` (those dev
    evaluations), ``predictions`` (the final ones), ``load``, and ``after_kept``: the epochs
    after the kept checkpoint, with their evaluations."""
    cpu = history.get("cpu_seconds") or {}
    out = {"epochs": 0, "training": 0.0, "evaluation": 0.0, "after_kept": 0.0,
           "predictions": cpu.get("predictions", 0.0), "load": cpu.get("load", 0.0)}
    for epoch in history["epochs"]:
        evaluation = epoch.get("eval_cpu_seconds", 0.0)
        out["epochs"] += epoch["epoch"] >= 0
        out["training"] += epoch.get("cpu_seconds", 0.0) - evaluation
        out["evaluation"] += evaluation
        if epoch["epoch"] > history["best_epoch"]:
            out["after_kept"] += epoch.get("cpu_seconds", 0.0)
    return out


def in_process(results: Path) -> dict[str, float]:
    """CPU seconds inside the training processes, from every history.json under ``results``."""
    out = {"training epochs": 0.0, "evaluation and predictions": 0.0, "loading inputs": 0.0}
    for path in results.rglob("history.json"):
        cpu = history_cpu(json.loads(path.read_text()))
        out["training epochs"] += cpu["training"]
        out["evaluation and predictions"] += cpu["evaluation"] + cpu["predictions"]
        out["loading inputs"] += cpu["load"]
    return out


def split(total: float, jobs: list[dict], results: Path) -> tuple[dict[str, float], dict[int, float]]:
    """(CPU seconds per share, CPU seconds of the jobs of each ICDA iteration k >= 1)."""
    train = sum(j["cpu"] for j in jobs if command(j) == "train")
    shares = in_process(results)
    shares["start-up and imports (training)"] = train - sum(shares.values())
    shares["embed"] = sum(j["cpu"] for j in jobs if command(j) == "embed")
    shares["bookkeeping jobs"] = sum(j["cpu"] for j in jobs if command(j) not in ("train", "embed"))
    shares["Snakemake main process"] = total - sum(j["cpu"] + j["shim_cpu"] for j in jobs)
    return shares, {k: v for k, v in iteration_cpu(jobs).items() if k >= 1}


def iteration_cpu(jobs: list[dict]) -> dict[int, float]:
    """CPU seconds of the jobs of each ICDA iteration k (training, select, pools, augment,
    converge, evaluate; a job belongs to the highest iteration its arguments name)."""
    out: dict[int, float] = {}
    for job in jobs:
        ks = {int(m) for m in ITERATION.findall(" ".join(job["argv"]))}
        if ks and command(job) in ("train", "select", "pools", "augment", "converge", "evaluate"):
            out[max(ks)] = out.get(max(ks), 0.0) + job["cpu"]
    return out


def measure(repo: Path, repeat: int, configfiles: list[Path] | None, cores: int, keep: Path | None = None
            ) -> tuple[dict[str, float], float, float, float]:
    """Median CPU seconds per share, median total, median CPU seconds per ICDA iteration, median
    wall seconds. ``keep``: run in this new folder (its results and Snakemake log stay) instead
    of a temporary one."""
    runs, totals, per_iteration, walls = [], [], [], []
    for _ in range(repeat):
        with contextlib.nullcontext(keep) if keep else tempfile.TemporaryDirectory() as tmp:
            workdir = Path(tmp)
            total, jobs, wall = run_workflow(repo, workdir, configfiles, cores=cores)
            shares, iterations = split(total, jobs, workdir / "results")
        runs.append(shares)
        totals.append(total)
        walls.append(wall)
        per_iteration.append(statistics.mean(iterations.values()))
    return ({s: statistics.median(r[s] for r in runs) for s in SHARES}, statistics.median(totals),
            statistics.median(per_iteration), statistics.median(walls))


def results_split(results: Path, cores: int) -> None:
    """Print the in-process CPU shares of a finished run, per dataset, the epochs' floor, and
    which parts of the protocol the epochs (with their dev evaluations) were spent on: COMP's
    grid, each MMI/ICDA iteration's last fresh seed, and the epochs after a candidate's kept
    checkpoint (early stopping's patience)."""
    print("| dataset | candidates | epochs | training epochs CPU s | dev evaluations CPU s "
          "| final predictions CPU s | loading CPU s |")
    print("|---|---|---|---|---|---|---|")
    columns = ["epochs", "training", "evaluation", "predictions", "load"]
    totals = dict.fromkeys(["candidates", *columns], 0.0)
    protocol = dict.fromkeys(["COMP's λ × seed grid", "MMI/ICDA: each iteration's last fresh seed",
                              "MMI/ICDA: epochs after a candidate's kept checkpoint"], 0.0)
    comp, last_seed, after_kept = protocol
    for dataset in sorted(p.name for p in results.iterdir() if list(p.glob("run*/*/candidates/*/history.json"))):
        row = dict.fromkeys(totals, 0.0)
        for path in sorted((results / dataset).glob("run*/*/candidates/*/history.json")):
            cpu = history_cpu(json.loads(path.read_text()))
            row["candidates"] += 1
            for column in columns:
                row[column] += cpu[column]
            epochs_cpu = cpu["training"] + cpu["evaluation"]
            if path.parts[-4] == "comp":
                protocol[comp] += epochs_cpu
                continue
            if path.parent.name == max(path.parent.parent.glob("seed*"), key=lambda p: int(p.name[4:])).name:
                protocol[last_seed] += epochs_cpu
            protocol[after_kept] += cpu["after_kept"]
        totals = {key: totals[key] + row[key] for key in totals}
        print(f"| {dataset} | {row['candidates']:.0f} | {row['epochs']:.0f} | "
              + " | ".join(f"{row[c]:.1f}" for c in columns[1:]) + " |")
    print(f"| **total** | {totals['candidates']:.0f} | {totals['epochs']:.0f} | "
          + " | ".join(f"{totals[c]:.1f}" for c in columns[1:]) + " |")
    epochs = totals["training"] + totals["evaluation"]
    print(f"\nThe epochs with their dev evaluations: {epochs / 60:.1f} CPU min, at least "
          f"{epochs / 60 / cores:.1f} min of wall time on {cores} cores however the jobs are packed.")
    print("\n| of the epochs' CPU | CPU s | % |\n|---|---|---|")
    for name, value in protocol.items():
        print(f"| {name} | {value:.1f} | {100 * value / epochs:.0f} |")


def build_parser() -> argparse.ArgumentParser:
    """The command line of :func:`main` (its path arguments declared for the output guard, icda.guard)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_input(parser, "--results", kind="tree", help="a finished run's results/ folder: split its histories")
    parser.add_argument("--cores", type=int,
                        help="cores of the workflow run (default 1); with --results: of the floor printed (default 2)")
    add_input(parser, "--configfile", action="append",
                        help="run the workflow with these config files (after config/config.yaml) instead "
                             "of the tiny one, e.g. config/offline.yaml")
    add_input(parser, "--repo", kind="tree", action="append",
                        help="checkout whose Snakefile runs (default: this one); twice: before, after")
    parser.add_argument("--repeat", type=int, default=1, help="runs per checkout (median reported)")
    add_output(parser, "--keep", kind="owned", help="run in this new folder and keep it (one checkout, one run)")
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parse_arguments(parser, argv)
    if args.results:
        results_split(args.results, args.cores or 2)
        return
    repos = args.repo or [REPO]
    args.cores = args.cores or 1
    if args.keep and (len(repos) > 1 or args.repeat > 1 or args.keep.exists()):
        parser.error("--keep takes a new folder and one run of one checkout")
    results = [measure(repo.resolve(), args.repeat, args.configfile, args.cores, args.keep) for repo in repos]
    header = "| share | " + " | ".join(f"{r} CPU s | %" for r in repos) + (" | after / before |" if len(repos) == 2 else "")
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for share in SHARES:
        cells = " | ".join(f"{shares[share]:.1f} | {100 * shares[share] / total:.0f}" for shares, total, *_ in results)
        ratio = ""
        if len(results) == 2 and results[0][0][share] > 0:
            ratio = f" | {results[1][0][share] / results[0][0][share]:.2f} |"
        print(f"| {share} | {cells}{ratio or ' |'}")
    print("| **total** | " + " | ".join(f"{t:.1f} | 100" for _, t, *_ in results)
          + (f" | {results[1][1] / results[0][1]:.2f} |" if len(results) == 2 else " |"))
    print()
    for repo, (_, total, per_iteration, wall) in zip(repos, results):
        print(f"{repo}: {per_iteration:.1f} CPU s per ICDA iteration (jobs of iterations >= 1, mean); "
              f"wall {wall / 60:.1f} min on {args.cores} core(s), {total / (wall * args.cores):.0%} of them busy")
    if len(results) == 2:
        print(f"per-iteration cost, after / before: {results[1][2] / results[0][2]:.2f}")


if __name__ == "__main__":
    main()
