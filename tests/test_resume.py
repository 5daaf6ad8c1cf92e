"""Resuming a killed run (docs/cluster.md, icda/workflow_config/resume.py): a job whose command
had finished but which Snakemake had not recorded reruns, also where a checkpoint leads to it;
what killed writers left under results/ is removed before the next run."""

from __future__ import annotations

import json
from base64 import urlsafe_b64encode
from pathlib import Path

import pytest

from icda.io import PARTIAL_SUFFIX, stale_writes
from test_workflow import snakemake
from test_workflow_reruns import fake_finished_run
from toy_workflow import planned_jobs, workflow_args


def test_stale_writes_are_only_those_of_our_writers(tmp_path):
    kept = ["notes.tmp", ".notes.tmp", "a.b.tmp", ".eval.json.abc.tmp", "eval.json.abcd1234.tmp",
            "x.partial", ".partial/", "candidates/", "candidates.partially/"]
    stale = [".eval.json.abcd_123.tmp", ".a\nb.json.0000_zzz.tmp", "run1/.model.pt.zz9x8y7w.tmp",
             "run1/iter2/candidates.partial/"]
    for name in kept + stale + ["run1/iter2/candidates.partial/seed42/.model.pt.abcdefgh.tmp"]:
        path = tmp_path / name
        if name.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
    # a .partial folder is one stale write, not walked into
    assert stale_writes(tmp_path) == sorted(tmp_path / name.rstrip("/") for name in stale)
    assert stale_writes(tmp_path / "missing") == []
    assert PARTIAL_SUFFIX == ".partial"


def test_a_snakemake_without_the_hooks_internals_runs_as_before_with_one_warning(caplog):
    """Another Snakemake 9.x than the pin may lack the internals the resume hooks replace: the
    workflow still builds (Snakemake's own resume), and the warning names what is missing and the fix."""
    from types import SimpleNamespace

    from icda.workflow_config import resume

    calls = []
    workflow = SimpleNamespace(is_main_process=True, _build_dag=lambda: calls.append("built"),
                               dag=SimpleNamespace(check_incomplete=None))
    original = workflow._build_dag
    resume.install(workflow)
    assert workflow._build_dag is not original  # hooked: the DAG's internals are checked when it is built
    with caplog.at_level("WARNING", logger="icda.resume"):
        workflow._build_dag()
    assert calls == ["built"]
    assert "has no SimpleNamespace.update_checkpoint_dependencies" in caplog.text
    assert "pip install -c constraints.txt" in caplog.text
    bare = SimpleNamespace(is_main_process=True)
    with caplog.at_level("WARNING", logger="icda.resume"):
        resume.install(bare)
    assert not hasattr(bare, "_build_dag") and "has no SimpleNamespace._build_dag" in caplog.text


def mark_incomplete(workdir: Path, path: str) -> None:
    """Snakemake's mark that the job writing ``path`` started and was not recorded as finished
    (FilePersistence: .snakemake/incomplete/<urlsafe base64 of the path>), as a kill between the
    end of its command and Snakemake's record of it leaves."""
    marker = workdir / ".snakemake/incomplete" / urlsafe_b64encode(path.encode()).decode()
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(json.dumps({"external_jobid": None}))


@pytest.mark.slow  # runs Snakemake several times (about 15 s)
def test_a_finished_unrecorded_job_after_a_checkpoint_reruns(tmp_path):
    """The eraser_scores job of iteration 1 (which the checkpoint of iteration 0 leads to) was
    killed after its command ended: its outputs exist, marked incomplete. It reruns, with the
    tables after it; Snakemake 9.27 alone checked only the jobs known before the checkpoints
    and found nothing to do."""
    args = workflow_args(tmp_path, tmp_path / "data")
    fake_finished_run(tmp_path, args)
    iteration = "results/synthetic/run1/iter1"
    outputs = [f"{iteration}/eraser_scores.json", f"{iteration}/eraser_predictions.jsonl", f"{iteration}/eraser_export"]
    (tmp_path / outputs[2]).unlink(missing_ok=True)
    (tmp_path / outputs[2] / "docs").mkdir(parents=True)
    for path in outputs:
        mark_incomplete(tmp_path, path)

    proc = snakemake("-n", *args)
    assert planned_jobs(proc) == {"eraser_scores": 1, "tables": 1, "all": 1}
    assert f"wildcards: dataset=synthetic, run=1, k=1" in proc.stdout.split("rule eraser_scores:")[1]
    assert "marked incomplete by a killed run: " + ", ".join(outputs) in proc.stderr

    # without --rerun-incomplete (no profiles/default) Snakemake refuses, naming the files
    proc = snakemake("-n", "--workflow-profile", "none", *args, check=False)
    assert proc.returncode != 0
    assert "IncompleteFilesException" in proc.stdout + proc.stderr
    assert all(path in proc.stdout + proc.stderr for path in outputs)


@pytest.mark.slow  # runs Snakemake several times (about 15 s)
def test_a_run_removes_what_killed_writers_left(tmp_path):
    """Before a run: atomic_path's temporary files, *.partial folders and the temp() exports of
    finished jobs are removed from results/ (a dry run, and anything else, keeps them)."""
    args = workflow_args(tmp_path, tmp_path / "data")
    fake_finished_run(tmp_path, args)
    results = tmp_path / "results"
    export = results / "synthetic/run1/iter0/eraser_export"  # recorded job, killed before its removal
    export.unlink(missing_ok=True)
    (export / "docs").mkdir(parents=True)
    (export / "docs/test-0").write_text("x")
    stale = [results / "synthetic/run1/iter0/.eval.json.k3j_9x2a.tmp",
             results / "tables/.all_results.csv.0a1b2c3d.tmp",
             results / "synthetic/run1/iter2/candidates.partial"]
    for path in stale[:2]:
        path.write_text("half")
    (stale[2] / "seed42").mkdir(parents=True)
    (stale[2] / "seed42/model.pt").write_bytes(b"half")
    kept = [results / "synthetic/notes.tmp", results / "synthetic/run1/iter0/choice.json",
            tmp_path / "data/.train.txt.abcdefgh.tmp"]
    kept[0].write_text("mine")
    kept[2].parent.mkdir(parents=True, exist_ok=True)
    kept[2].write_text("not under results/")

    assert planned_jobs(snakemake("-n", *args)) == {}
    assert export.exists() and all(path.exists() for path in stale)  # a dry run removes nothing

    proc = snakemake(*args)
    assert "Nothing to be done" in proc.stdout + proc.stderr
    assert not export.exists()
    assert not any(path.exists() for path in stale)
    assert all(path.exists() for path in kept)
    for path in [*stale, export]:
        assert f"removed {path.relative_to(tmp_path)}, left by a killed run" in proc.stderr
    assert planned_jobs(snakemake("-n", *args)) == {}
