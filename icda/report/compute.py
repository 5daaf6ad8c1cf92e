"""Compute cost of the methods: Snakemake's per-job benchmark files summarised per dataset.

The ``embed``, ``train`` and ``train_comp`` rules write a Snakemake ``benchmark:`` file (a TSV
with wall seconds ``s``, ``max_rss`` in MB, ``cpu_time`` in seconds, …) at

- ``results/benchmarks/<dataset>/embed.tsv`` (the frozen-encoder cache),
- ``results/benchmarks/<dataset>/run<r>/iter<k>/<candidate>.tsv`` (ICDA training jobs),
- ``results/benchmarks/<dataset>/run<r>/comp/<candidate>.tsv`` (COMP grid).

Methods, as a researcher pays for them: **embed** (once per dataset, shared by every method in
frozen mode), **COMP** (the λ × seed grid), **MMI** (iteration 0's candidates) and **ICDA**
(every iteration's candidates, iteration 0 included: ICDA starts from MMI).
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Iterable

import pandas as pd

from icda.errors import DataError
from icda.io import atomic_path, atomic_write

log = logging.getLogger(__name__)

_PATH = re.compile(r"(?P<dataset>[^/]+)/(?:embed|run(?P<run>\d+)/(?:iter(?P<iteration>\d+)|comp)/"
                   r"(?P<candidate>[^/]+))\.tsv$")

#: summary rows, in order
METHODS = ["embed", "COMP", "MMI", "ICDA"]

#: columns of :func:`load_benchmarks`
COLUMNS = ["dataset", "job", "run", "iteration", "candidate", "seconds", "cpu_seconds", "max_rss_mb"]


def _job(path: Path) -> dict:
    match = _PATH.search(path.as_posix())
    if match is None:
        raise DataError(path, None, "not a benchmark path of this workflow",
                        "pass results/benchmarks/<dataset>/{embed,run<r>/iter<k>/<cand>,"
                        "run<r>/comp/<cand>}.tsv files")
    g = match.groupdict()
    job = "embed" if g["run"] is None else ("comp" if g["iteration"] is None else "train")
    return {"dataset": g["dataset"], "job": job,
            "run": None if g["run"] is None else int(g["run"]),
            "iteration": None if g["iteration"] is None else int(g["iteration"]),
            "candidate": g["candidate"]}


def load_benchmarks(paths: Iterable[str | Path]) -> pd.DataFrame:
    """One row per benchmark file (mean over its repeats), columns :data:`COLUMNS`.

    An empty file (``snakemake --touch`` creates one for a job finished before the workflow
    measured it) gives a row of unknown (NaN) numbers.

    Raises:
        DataError: a path does not follow the layout above, or a file lacks the ``s`` and
            ``max_rss`` columns Snakemake writes.
    """
    rows = []
    for path in map(Path, paths):
        if path.exists() and path.stat().st_size == 0:  # `snakemake --touch` of an older result
            log.warning("%s is empty (job not measured): its times count as unknown", path)
            rows.append(_job(path) | {"seconds": float("nan"), "cpu_seconds": float("nan"),
                                      "max_rss_mb": float("nan")})
            continue
        try:
            table = pd.read_csv(path, sep="\t")
        except (FileNotFoundError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
            raise DataError(path, None, f"cannot read the benchmark file ({exc})",
                            "delete it and re-run its job (snakemake re-creates it)") from None
        if not {"s", "max_rss"} <= set(table.columns):
            raise DataError(path, 1, "no 's' and 'max_rss' columns: not a Snakemake benchmark file",
                            "delete it and re-run its job (snakemake re-creates it)")
        numeric = table.apply(pd.to_numeric, errors="coerce")  # "-" where a value is unknown
        rows.append(_job(path) | {
            "seconds": numeric["s"].mean(),
            "cpu_seconds": numeric["cpu_time"].mean() if "cpu_time" in numeric else float("nan"),
            "max_rss_mb": numeric["max_rss"].mean(),
        })
    df = pd.DataFrame(rows, columns=COLUMNS)
    return df.astype({"run": "Int64", "iteration": "Int64"}).sort_values(
        ["dataset", "job", "run", "iteration", "candidate"]).reset_index(drop=True)


def _method_jobs(df: pd.DataFrame, method: str) -> pd.DataFrame:
    if method == "embed":
        return df[df["job"] == "embed"]
    if method == "COMP":
        return df[df["job"] == "comp"]
    train = df[df["job"] == "train"]
    return train[train["iteration"] == 0] if method == "MMI" else train


def compute_summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per dataset and method (:data:`METHODS`): jobs, runs, jobs measured (with a non-empty
    benchmark file), wall and CPU minutes in total, wall minutes per run, wall seconds per job, and the
    largest peak memory of a job (MB). Sums are over measured jobs."""
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


def write_compute(paths: Iterable[str | Path], out_dir: str | Path) -> list[Path]:
    """Write ``compute_jobs.csv`` (one row per job), ``compute.csv`` and ``compute.md`` (the
    summary per dataset and method) into ``out_dir``; return the paths."""
    out_dir = Path(out_dir)
    jobs = load_benchmarks(paths)
    summary = compute_summary(jobs)
    written = [out_dir / "compute_jobs.csv", out_dir / "compute.csv", out_dir / "compute.md"]
    with atomic_path(written[0]) as tmp:
        jobs.to_csv(tmp, index=False)
    with atomic_path(written[1]) as tmp:
        summary.to_csv(tmp, index=False)
    shown = summary.rename(columns={
        "wall_minutes": "wall min", "cpu_minutes": "CPU min", "wall_minutes_per_run": "wall min / run",
        "wall_seconds_per_job": "wall s / job", "max_rss_mb": "peak memory MB"})
    text = ["# Compute cost per dataset and method", "",
            "From the Snakemake benchmark files of the embed, train and train_comp jobs. "
            "embed: the sentence-embedding cache (shared by all methods); COMP: the λ × seed grid; "
            "MMI: iteration 0's candidates; ICDA: every iteration's candidates, iteration 0 "
            "included. Peak memory: the largest max_rss of one job.", ""]
    text.append(shown.to_markdown(index=False, floatfmt=".1f") if len(shown) else "No benchmark files.")
    with atomic_write(written[2]) as fh:
        fh.write("\n".join(text) + "\n")
    return written
