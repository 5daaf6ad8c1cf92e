"""Compute-cost summary from Snakemake benchmark files (icda.report.compute)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from icda.cli import main
from icda.errors import DataError
from icda.report.compute import compute_summary, finished_jobs, load_benchmarks

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def _job(results: Path, rel: str, seconds: float | None, rss: float = 500, bench_rel: str | None = None) -> None:
    """A trained candidate folder results/<rel>/ with its history.json and the benchmark file
    results/benchmarks/<bench_rel or rel>.tsv of its job (None: none)."""
    (results / rel).mkdir(parents=True, exist_ok=True)
    (results / rel / "history.json").write_text("{}")
    if seconds is not None:
        bench = results / "benchmarks" / f"{bench_rel or rel}.tsv"
        bench.parent.mkdir(parents=True, exist_ok=True)
        bench.write_text(HEADER + f"{seconds}\t0:00:01\t{rss}\t1\t1\t1\t0\t0\t50\t{seconds / 2}\n")


@pytest.fixture
def toy(tmp_path: Path) -> dict:
    """Dataset toy, 2 runs of 2 iterations (one training job each, for candidates seed1, seed2
    and from iteration 1 warm), one COMP job per run, and an embedding cache; run 2
    iteration 1's training job has no benchmark file; a stale iteration 2 (beyond the summary)
    must be ignored."""
    results = tmp_path / "results"
    (results / "toy").mkdir(parents=True)
    (results / "toy/embeddings.pt").write_text("")
    bench = results / "benchmarks/toy/embed.tsv"
    bench.parent.mkdir(parents=True)
    bench.write_text(HEADER + "30\t0:00:30\t900\t1\t1\t1\t0\t0\t50\t20\n")
    summaries = []
    for run in (1, 2):
        for cand in ("seed1", "seed2"):
            _job(results, f"toy/run{run}/iter0/candidates/{cand}", 60, bench_rel=f"toy/run{run}/iter0/train")
            _job(results, f"toy/run{run}/iter1/candidates/{cand}", None)
        _job(results, f"toy/run{run}/iter1/candidates/warm", None if run == 2 else 120, rss=700,
             bench_rel=f"toy/run{run}/iter1/train")
        _job(results, f"toy/run{run}/comp/candidates/lambda0.5_seed1", 90, rss=650, bench_rel=f"toy/run{run}/comp/train")
        summary = results / f"toy/run{run}/summary.json"
        summary.write_text(json.dumps({"iterations": 2}))
        summaries.append(summary)
    _job(results, "toy/run1/iter2/candidates/seed1", 999, bench_rel="toy/run1/iter2/train")
    return {"results": results, "summaries": summaries}


def test_jobs_come_from_the_results_and_missing_benchmarks_are_unmeasured(toy):
    jobs = load_benchmarks(finished_jobs(toy["results"], toy["summaries"]))
    assert len(jobs) == 1 + 2 * (2 + 1)  # embed; per run one training job per iteration and COMP
    assert 999 not in set(jobs["seconds"])  # iteration 2 is not in run 1's summary
    summary = compute_summary(jobs).set_index("method")
    assert list(summary.index) == ["embed", "COMP", "MMI", "ICDA"]
    assert summary.loc["MMI", "jobs"] == 2 and summary.loc["ICDA", "jobs"] == 4
    assert summary.loc["ICDA", "measured"] == 3 and summary.loc["MMI", "measured"] == 2
    assert summary.loc["MMI", "wall_minutes_per_run"] == pytest.approx(1.0)   # one 60 s job
    assert summary.loc["ICDA", "wall_minutes"] == pytest.approx((2 * 60 + 120) / 60)
    assert summary.loc["MMI", "wall_seconds_per_job"] == pytest.approx(60.0)
    assert summary.loc["ICDA", "cpu_minutes"] == pytest.approx((2 * 30 + 60) / 60)
    assert summary.loc["ICDA", "max_rss_mb"] == 700 and summary.loc["embed", "max_rss_mb"] == 900
    assert summary.loc["COMP", "runs"] == 2 and summary.loc["embed", "jobs"] == 1


def test_foreign_summary_and_bad_benchmark_are_named(toy, tmp_path):
    stray = tmp_path / "elsewhere/summary.json"
    stray.parent.mkdir()
    stray.write_text('{"iterations": 1}')
    with pytest.raises(DataError, match="not a run summary") as err:
        finished_jobs(toy["results"], [stray])
    assert str(stray) in str(err.value)
    bad = toy["results"] / "benchmarks/toy/embed.tsv"
    bad.write_text("a\tb\n1\t2\n")
    with pytest.raises(DataError, match="not a Snakemake benchmark file") as err:
        load_benchmarks(finished_jobs(toy["results"], toy["summaries"]))
    assert str(bad) in str(err.value)


def test_cli_writes_markdown(toy, tmp_path):
    out = tmp_path / "tables"
    assert main(["report", "compute", "--results", str(toy["results"]), "--summaries",
                 *map(str, toy["summaries"]), "--out-dir", str(out)]) == 0
    text = (out / "compute.md").read_text()
    assert "| toy" in text and "ICDA" in text and "MMI" in text
    assert (out / "compute_jobs.csv").read_text().count("\n") == 8  # header + 7 jobs
