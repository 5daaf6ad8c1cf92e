"""Compute cost of the methods: Snakemake's per-job benchmark files summarised per dataset.

The ``embed``, ``train`` and ``train_comp`` rules write a Snakemake ``benchmark:`` file (a TSV
with wall seconds ``s``, ``max_rss`` in MB, ``cpu_time`` in seconds, …) at

- ``results/benchmarks/<dataset>/embed.tsv`` (the frozen-encoder cache),
- ``results/benchmarks/<dataset>/run<r>/iter<k>/train.tsv`` (an ICDA iteration's training job,
  which trains all its candidates),
- ``results/benchmarks/<dataset>/run<r>/comp/train.tsv`` (a run's COMP grid, one job).

The jobs themselves are found from the results (:func:`finished_jobs`: each run's
``summary.json`` gives its iterations, each trained iteration has a ``candidates/`` folder), so a job
finished before the workflow measured it (no benchmark file) counts as a job, "not measured".

``cpu_time`` is Snakemake's sample of the job's process tree (every 0.5 s for its first 15 s,
then every 30 s): what a job spends after its last sample is missing, up to 30 s a job, so the CPU
minutes are a lower bound (a restaurant training job's benchmark file from a workflow run says
96.1 CPU s; the same job rerun alone took 100.4 by ``/usr/bin/time``;
docs/experiments/offline-677c103-first-fixed-path.md).

Methods, as a researcher pays for them: **embed** (once per dataset, shared by every method in
frozen mode), **COMP** (the λ × seed grid), **MMI** (iteration 0's training job) and **ICDA**
(every iteration's training job, iteration 0 included: ICDA starts from MMI).
"""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Iterable

import pandas as pd

from icda.errors import DataError
from icda.io import atomic_path, atomic_write, read_json
from icda.layout import COMP_DIR, RUN_SUMMARY_FILE, candidates_dir, iteration_dir

log = logging.getLogger(__name__)

#: summary rows, in order
METHODS = ["embed", "COMP", "MMI", "ICDA"]

#: columns of :func:`load_benchmarks`
COLUMNS = ["dataset", "job", "run", "iteration", "seconds", "cpu_seconds",
           "max_rss_mb", "benchmark"]

_FIX_BENCHMARK = "delete it and re-run its job (snakemake re-creates it)"


def finished_jobs(results: str | Path, summaries: Iterable[str | Path]) -> list[dict]:
    """The embed/train/train_comp jobs behind the given run summaries, with their benchmark paths.

    Args:
        results: the results folder (``results``).
        summaries: ``<results>/<dataset>/run<r>/summary.json`` files (their ``iterations``
            field: how many iterations the run has).

    Returns:
        Dicts with ``dataset``, ``job`` ("embed", "train" or "comp"), ``run``, ``iteration``,
        and ``benchmark`` (the path the job's benchmark file has, present or not).

    Raises:
        DataError: a summary is not at ``<results>/<dataset>/run<r>/summary.json``.
    """
    results = Path(results)
    bench = results / "benchmarks"
    jobs, datasets = [], []
    for path in map(Path, summaries):
        run_dir = path.parent
        if not (path.name == RUN_SUMMARY_FILE and run_dir.name.startswith("run")
                and run_dir.name[3:].isdigit() and run_dir.parent.parent == results):
            raise DataError(path, None, "not a run summary of this results folder",
                            f"pass {results}/<dataset>/run<r>/summary.json files")
        dataset, run = run_dir.parent.name, int(run_dir.name[3:])
        if dataset not in datasets:
            datasets.append(dataset)
        for k in range(int(read_json(path)["iterations"])):  # one train job per iteration: all its candidates
            if candidates_dir(iteration_dir(run_dir, k)).is_dir():
                jobs.append({"dataset": dataset, "job": "train", "run": run, "iteration": k,
                             "benchmark": iteration_dir(bench / dataset / run_dir.name, k) / "train.tsv"})
        if candidates_dir(run_dir / COMP_DIR).is_dir():  # one train_comp job per run: its whole grid
            jobs.append({"dataset": dataset, "job": "comp", "run": run, "iteration": None,
                         "benchmark": bench / dataset / run_dir.name / COMP_DIR / "train.tsv"})
    for dataset in datasets:
        if (results / dataset / "embeddings.pt").exists():  # frozen mode
            jobs.append({"dataset": dataset, "job": "embed", "run": None, "iteration": None,
                         "benchmark": bench / dataset / "embed.tsv"})
    return jobs


def read_benchmark(path: str | Path) -> dict[str, float]:
    """``seconds``, ``cpu_seconds`` and ``max_rss_mb`` of one benchmark file (mean over its
    repeats); all NaN when the file is absent or empty (the job was not measured).

    Raises:
        DataError: the file is not a Snakemake benchmark TSV.
    """
    path = Path(path)
    if not path.exists() or path.stat().st_size == 0:
        return {"seconds": math.nan, "cpu_seconds": math.nan, "max_rss_mb": math.nan}
    try:
        table = pd.read_csv(path, sep="\t")
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise DataError(path, None, f"cannot read the benchmark file ({exc})", _FIX_BENCHMARK) from None
    if not {"s", "max_rss"} <= set(table.columns):
        raise DataError(path, 1, "no 's' and 'max_rss' columns: not a Snakemake benchmark file",
                        _FIX_BENCHMARK)
    numeric = table.apply(pd.to_numeric, errors="coerce")  # "-" where a value is unknown
    return {"seconds": numeric["s"].mean(),
            "cpu_seconds": numeric["cpu_time"].mean() if "cpu_time" in numeric else math.nan,
            "max_rss_mb": numeric["max_rss"].mean()}


def load_benchmarks(jobs: Iterable[dict]) -> pd.DataFrame:
    """One row per job of :func:`finished_jobs` with its measured numbers, columns
    :data:`COLUMNS` (NaN numbers for a job without a benchmark file)."""
    rows = []
    unmeasured = 0
    for job in jobs:
        numbers = read_benchmark(job["benchmark"])
        unmeasured += math.isnan(numbers["seconds"])
        rows.append(job | numbers | {"benchmark": str(job["benchmark"])})
    if unmeasured:
        log.warning("%d jobs have no benchmark file (finished before the workflow measured "
                    "them): counted as not measured", unmeasured)
    df = pd.DataFrame(rows, columns=COLUMNS)
    return df.astype({"run": "Int64", "iteration": "Int64"}).sort_values(
        ["dataset", "job", "run", "iteration"]).reset_index(drop=True)


def _method_jobs(df: pd.DataFrame, method: str) -> pd.DataFrame:
    if method == "embed":
        return df[df["job"] == "embed"]
    if method == "COMP":
        return df[df["job"] == "comp"]
    train = df[df["job"] == "train"]
    return train[train["iteration"] == 0] if method == "MMI" else train


def compute_summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per dataset and method (:data:`METHODS`): jobs, runs, jobs measured (with a benchmark
    file), wall and CPU minutes in total, wall minutes per run, wall seconds per job, and the
    largest peak memory of a job (MB). Sums and means are over measured jobs."""
    rows = []
    for dataset in sorted(set(df["dataset"])):
        part = df[df["dataset"] == dataset]
        for method in METHODS:
            jobs = _method_jobs(part, method)
            if jobs.empty:
                continue
            runs = jobs["run"].nunique() if method != "embed" else 1
            rows.append({
                "dataset": dataset, "method": method, "jobs": len(jobs), "runs": runs,
                "measured": int(jobs["seconds"].notna().sum()),
                "wall_minutes": jobs["seconds"].sum(min_count=1) / 60,
                "cpu_minutes": jobs["cpu_seconds"].sum(min_count=1) / 60,
                "wall_minutes_per_run": jobs["seconds"].sum(min_count=1) / 60 / runs,
                "wall_seconds_per_job": jobs["seconds"].mean(),
                "max_rss_mb": jobs["max_rss_mb"].max(),
            })
    return pd.DataFrame(rows, columns=["dataset", "method", "jobs", "runs", "measured",
                                       "wall_minutes", "cpu_minutes", "wall_minutes_per_run",
                                       "wall_seconds_per_job", "max_rss_mb"])


def write_compute(results: str | Path, summaries: Iterable[str | Path], out_dir: str | Path) -> list[Path]:
    """Write ``compute_jobs.csv`` (one row per job), ``compute.csv`` and ``compute.md`` (the
    summary per dataset and method) into ``out_dir``; return the paths."""
    out_dir = Path(out_dir)
    jobs = load_benchmarks(finished_jobs(results, summaries))
    summary = compute_summary(jobs)
    written = [out_dir / "compute_jobs.csv", out_dir / "compute.csv", out_dir / "compute.md"]
    with atomic_path(written[0]) as tmp:
        jobs.to_csv(tmp, index=False)
    with atomic_path(written[1]) as tmp:
        summary.to_csv(tmp, index=False)
    shown = summary.rename(columns={
        "wall_minutes": "wall min", "cpu_minutes": "CPU min", "wall_minutes_per_run": "wall min / run",
        "wall_seconds_per_job": "wall s / job", "max_rss_mb": "peak memory MB"})
    shown = shown.astype(object).where(shown.notna(), None)  # tabulate's missingval is for None
    text = ["# Compute cost per dataset and method", "",
            "From the Snakemake benchmark files of the embed, train and train_comp jobs. "
            "embed: the sentence-embedding cache (shared by all methods); COMP: the λ × seed grid; "
            "MMI: iteration 0's training job; ICDA: every iteration's training job (all its candidates), "
            "iteration 0 included. measured: jobs with a benchmark file (jobs finished before the workflow "
            "measured them have none); sums and means are over those. CPU min is a lower bound: "
            "Snakemake samples a job's CPU time every 0.5 s for 15 s, then every 30 s, so up to the "
            "last 30 s of each longer job are missing. Peak memory: the largest max_rss of one job.", ""]
    text.append(shown.to_markdown(index=False, floatfmt=".1f", missingval="–") if len(shown) else "No jobs.")
    with atomic_write(written[2]) as fh:
        fh.write("\n".join(text) + "\n")
    return written
