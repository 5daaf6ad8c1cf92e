"""What the workflow reruns: a changed data file reruns its prepare only; a deleted, changed or
replaced artifact is rebuilt with what depends on it."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from icda.records import DatasetVerdict, Decision
from test_workflow import REPO, snakemake
from toy_workflow import planned_jobs, toy_files, workflow_args


@pytest.mark.slow  # runs the workflow several times (about 10 s)
def test_changed_data_file_reruns_its_prepare_only(tmp_path):
    toy_files(tmp_path / "data")
    args = workflow_args(tmp_path, tmp_path / "data", run_datasets=["toy", "synthetic"])
    targets = ["results/toy/data/stats.json", "results/synthetic/data/stats.json"]
    snakemake(*targets, *args)
    assert planned_jobs(snakemake("-n", *targets, *args)) == {}

    earlier = time.time() - 10  # the run finished a while ago
    for path in (tmp_path / "results").rglob("*"):
        os.utime(path, (earlier, earlier))
    with (tmp_path / "data/toy/test.txt").open("a", encoding="utf-8") as fh:
        fh.writelines(f"1\tMore food {i}.[SEP]x.\n" for i in range(10))
    assert planned_jobs(snakemake("-n", *targets, *args)) == {"prepare": 1}
    snakemake(*targets, *args)
    stats = json.loads((tmp_path / "results/toy/data/stats.json").read_text())
    assert stats["splits"]["test"]["documents"] == 20


def fake_finished_run(workdir: Path, args: list[str], iterations: int = 2) -> None:
    """The state of a finished tiny run without training: every file the workflow writes exists
    (empty, except the stop decisions and the dataset's verdict the checkpoint walk reads) and is
    marked up to date."""
    for k in range(iterations):
        decision = workdir / f"results/synthetic/run1/iter{k}/converge.json"
        decision.parent.mkdir(parents=True)
        stop = k == iterations - 1
        Decision(iteration=k, stop=stop, converged=stop, reason="faked for the test",
                 final_iteration=k if stop else None).write(decision)
    # the default verdict (icda.verdict: run_agreement) of the one run: its loop's iteration
    DatasetVerdict(dataset="synthetic", verdict="not measured", reason="faked for the test", runs=[1],
                   loop_iterations=[iterations - 1], reported=[iterations - 1]).write(
        workdir / "results/synthetic/verdict.json")
    marker = "Output files not touched because they don't exist: "
    for _ in range(3):  # --touch walks the checkpoints as a run would; touched in order once all exist
        proc = snakemake("--touch", *args)
        missing = [path for line in (proc.stdout + proc.stderr).splitlines() if line.startswith(marker)
                   for path in line.removeprefix(marker).split(", ")]
        if not missing:
            break
        for path in missing:
            if Path(path).name == "candidates":  # an iteration's training output is a directory
                (workdir / path).mkdir(parents=True, exist_ok=True)
                continue
            (workdir / path).parent.mkdir(parents=True, exist_ok=True)
            (workdir / path).touch()
    assert planned_jobs(snakemake("-n", *args)) == {}


@pytest.mark.slow  # runs the workflow several times (about 10 s)
def test_deleted_or_changed_artifacts_are_rebuilt(tmp_path):
    args = workflow_args(tmp_path, tmp_path / "data")
    fake_finished_run(tmp_path, args)
    results = tmp_path / "results"

    deleted = ["tables/all_results.csv", "tables/synthetic.md", "plots/alpha_synthetic.png",
               "synthetic/run1/iter1/eval.json"]
    for path in deleted:
        (results / path).unlink()
    marker = "reason: Missing output files: "
    missing = {path for line in snakemake("-n", *args).stdout.splitlines() if marker in line
               for path in line.split(marker)[1].split(";")[0].split(", ")}
    assert missing == {f"results/{path}" for path in deleted}
    snakemake("--touch", *args)  # (as if rebuilt)

    model = results / "synthetic/run1/iter0/candidates/seed42/model.pt"
    model.parent.mkdir(parents=True, exist_ok=True)
    model.write_bytes(b"trunc")
    # a directory output is dated by its .snakemake_timestamp (README: after replacing a file in
    # a candidates/ folder by hand, touch it)
    stamp = model.parent.parent / ".snakemake_timestamp"
    stamp.touch()
    later = time.time() + 5
    os.utime(stamp, (later, later))
    # iteration 0's choice is made again (and from it the rest of the run)
    assert planned_jobs(snakemake("-n", *args))["select"] == 1
    proc = snakemake("-n", "results/synthetic/run1/iter0/eval.json", *args)  # iteration 0's evaluation
    assert "reason: Updated input files: results/synthetic/run1/iter0/candidates" in proc.stdout


@pytest.mark.slow  # two tiny workflows with training (about 1.5 minutes)
def test_more_runs_on_a_finished_dataset_judge_every_run_before_any_reports(tmp_path):
    """After ``n_runs`` is raised on a finished dataset, its verdict.json still judges the old
    runs, and Snakemake does not plan the job of a checkpoint output on disk that only an input
    function names: ``snakemake summaries`` (as ``all``) targets the verdict, so it is made again over every run
    and each run's summary carries the new one. (Before, a benchmark going from 3 to 6 runs failed
    in every new run's summary, "the verdict holds runs [1, 2, 3], not run 5", also when rerun.)"""
    base = ["--cores", "2", "-s", str(REPO / "Snakefile"), "--directory", str(tmp_path),
            "--configfile", str(REPO / "config/config.yaml"), str(REPO / "tests/fixtures/tiny_workflow.yaml")]
    data = ["--config", f"data_dir={tmp_path / 'data'}"]
    snakemake(*base, *data, "--", "summaries")
    assert DatasetVerdict.read(tmp_path / "results/synthetic/verdict.json").runs == [1]

    more = tmp_path / "more_runs.yaml"
    more.write_text("n_runs: 2\nruns: [[42, 43], [44, 45]]\n")
    assert "verdict" in planned_jobs(snakemake(*base, str(more), *data, "-n", "--", "summaries"))
    snakemake(*base, str(more), *data, "--", "summaries")
    verdict = DatasetVerdict.read(tmp_path / "results/synthetic/verdict.json")
    assert verdict.runs == [1, 2]
    for run in (1, 2):
        summary = json.loads((tmp_path / f"results/synthetic/run{run}/summary.json").read_text())
        assert (summary["verdict"], summary["verdict_reason"]) == verdict.run_verdict(run)
