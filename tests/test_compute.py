"""Compute-cost summary from Snakemake benchmark files (icda.report.compute)."""

from __future__ import annotations

from pathlib import Path

import pytest

from icda.cli import main
from icda.errors import DataError
from icda.report.compute import compute_summary, load_benchmarks

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def _bench(root: Path, rel: str, seconds: float, rss: float, cpu: float = 1.0) -> Path:
    path = root / "results/benchmarks" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + f"{seconds}\t0:00:01\t{rss}\t1\t1\t1\t0\t0\t50\t{cpu}\n")
    return path


@pytest.fixture
def benchmarks(tmp_path: Path) -> list[Path]:
    b = [_bench(tmp_path, "toy/embed.tsv", 30, 900)]
    for run in (1, 2):
        b += [_bench(tmp_path, f"toy/run{run}/iter0/seed{s}.tsv", 60, 500) for s in (1, 2)]
        b += [_bench(tmp_path, f"toy/run{run}/iter1/{c}.tsv", 120, 700) for c in ("seed1", "warm")]
        b.append(_bench(tmp_path, f"toy/run{run}/comp/lambda0.5_seed1.tsv", 90, 650))
    return b


def test_summary_per_method(benchmarks):
    jobs = load_benchmarks(benchmarks)
    assert len(jobs) == 11 and set(jobs["job"]) == {"embed", "train", "comp"}
    summary = compute_summary(jobs).set_index("method")
    assert list(summary.index) == ["embed", "COMP", "MMI", "ICDA"]
    assert summary.loc["MMI", "jobs"] == 4 and summary.loc["ICDA", "jobs"] == 8
    assert summary.loc["MMI", "wall_minutes_per_run"] == pytest.approx(2.0)   # 2 × 60 s
    assert summary.loc["ICDA", "wall_minutes_per_run"] == pytest.approx(6.0)  # + 2 × 120 s
    assert summary.loc["ICDA", "wall_minutes"] == pytest.approx(12.0)
    assert summary.loc["MMI", "wall_seconds_per_job"] == pytest.approx(60.0)
    assert summary.loc["ICDA", "max_rss_mb"] == 700 and summary.loc["embed", "max_rss_mb"] == 900
    assert summary.loc["COMP", "runs"] == 2


def test_empty_file_counts_as_unmeasured(benchmarks):
    benchmarks[1].write_text("")
    summary = compute_summary(load_benchmarks(benchmarks)).set_index("method")
    assert summary.loc["MMI", "measured"] == 3 and summary.loc["MMI", "jobs"] == 4
    assert summary.loc["MMI", "wall_minutes"] == pytest.approx(3.0)


def test_foreign_path_and_file_are_named(tmp_path, benchmarks):
    stray = tmp_path / "elsewhere.tsv"
    stray.write_text(HEADER + "1\t0\t1\t1\t1\t1\t0\t0\t0\t1\n")
    with pytest.raises(DataError, match="not a benchmark path") as err:
        load_benchmarks([stray])
    assert str(stray) in str(err.value)
    benchmarks[0].write_text("a\tb\n1\t2\n")
    with pytest.raises(DataError, match="not a Snakemake benchmark file"):
        load_benchmarks(benchmarks)


def test_cli_writes_markdown(benchmarks, tmp_path):
    out = tmp_path / "tables"
    assert main(["report", "compute", "--benchmarks", *map(str, benchmarks), "--out-dir", str(out)]) == 0
    text = (out / "compute.md").read_text()
    assert "| toy" in text and "ICDA" in text and "MMI" in text
    assert (out / "compute_jobs.csv").read_text().count("\n") == 12
