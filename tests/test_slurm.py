"""Cluster execution through `--profile profiles/slurm`.

- The sbatch options the profile, the rules and snakemake-executor-plugin-slurm give each job
  (GPU request, CPUs from `threads`, partition, memory): no cluster needed.
- The tiny workflow on a real SLURM (marker `slurm`): start one with
  `bash scripts/slurm_cluster.sh install && bash scripts/slurm_cluster.sh start` (as root, as
  .ci/run does), run `pytest -m slurm`, then `bash scripts/slurm_cluster.sh stop`. Without a
  cluster the test is skipped with the reason; with ICDA_REQUIRE_SLURM=1 (the CI's slurm stage)
  a missing cluster fails it instead.
"""

import csv
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
PROFILE = REPO / "profiles" / "slurm"
PAPER_PROFILE = REPO / "profiles" / "slurm-paper"
TINY = [str(REPO / "config/config.yaml"), str(REPO / "tests/fixtures/tiny_workflow.yaml")]
GPU_RULES = ("embed", "train", "train_comp")
# A run that outlives this is hung, the way the profile without a working status command hung
# (no error, waiting for jobs the plugin no longer watched): fail with the log instead of hanging.
HANG_LIMIT_S = 3600


def snakemake(*args, cwd=REPO, timeout=None):
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    try:
        proc = subprocess.run([sys.executable, "-m", "snakemake", *args], cwd=cwd, env=env,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"").decode(errors="replace") + (exc.stderr or b"").decode(errors="replace")
        raise AssertionError(f"snakemake {' '.join(args)} still ran after {timeout} s (hung?):\n"
                             f"{out[-6000:]}") from None
    if proc.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-6000:]}")
    return proc.stdout + proc.stderr


class _Resources(dict):
    """A job's resources as the plugin reads them: `.get(name)` and `.name`."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def _dry_run_jobs(tmp_path, *config) -> list[SimpleNamespace]:
    """The jobs of a dry run of the tiny workflow with the SLURM profile: rule, threads and the
    resources Snakemake evaluated for it (profile default-/set-resources and the rule's own)."""
    out = snakemake("-n", "-s", str(REPO / "Snakefile"), "--profile", str(PROFILE),
                    "--directory", str(tmp_path), "--configfile", *TINY,
                    "--config", f"data_dir={tmp_path / 'data'}", *config)
    jobs = []
    for block in re.split(r"\n(?:local)?rule ", out)[1:]:
        lines = block.splitlines()
        fields = dict(line.strip().partition(": ")[::2] for line in lines[1:] if ": " in line)
        resources = _Resources()
        for item in fields.get("resources", "").split(", "):
            key, _, value = item.partition("=")
            resources[key] = int(value) if value.isdigit() else value
        jobs.append(SimpleNamespace(name=lines[0].rstrip(":"), threads=int(fields.get("threads", 1)),
                                    resources=resources))
    assert jobs, out
    return jobs


def _sbatch_line(job) -> str:
    """The sbatch command snakemake-executor-plugin-slurm builds for `job` (its own functions, as
    its Executor.run_job calls them; account and partition as its get_*_arg format them)."""
    from snakemake_executor_plugin_slurm.submit_string import get_submit_command
    from snakemake_executor_plugin_slurm.utils import set_gres_string

    params = {"run_uuid": "test", "slurm_logfile": "%j.log", "comment_str": f"rule_{job.name}",
              "account": f" -A {job.resources['slurm_account']}",
              "partition": f" -p {job.resources['slurm_partition']}", "workdir": "/work"}
    return get_submit_command(job, params) + set_gres_string(job)


@pytest.mark.parametrize("device, gpus", [("cuda", 1), ("cpu", 0)])
def test_sbatch_requests_a_gpu_exactly_when_the_rule_asks_for_one(tmp_path, device, gpus):
    """gpu=1 (device cuda) -> `--gpus=1` on the embed/train/train_comp jobs; gpu=0 -> no GPU
    option on any job. Every job asks for its rule's threads as CPUs and gets the partition and
    memory of profiles/slurm/profile.yaml."""
    profile = yaml.safe_load((PROFILE / "profile.yaml").read_text())
    train_threads = yaml.safe_load(Path(TINY[0]).read_text())["train_threads"]
    jobs = _dry_run_jobs(tmp_path, f"device={device}")
    assert {job.name for job in jobs} >= set(GPU_RULES)
    for job in jobs:
        line = _sbatch_line(job)
        gpu_options = re.findall(r"--(?:gpus|gres|gpus-per-\w+)=\S+", line)
        if job.name in GPU_RULES and gpus:
            assert gpu_options == ["--gpus=1"], (job.name, line)
        else:
            assert gpu_options == [], (job.name, line)
        assert f"--cpus-per-task={job.threads}" in line.split(), (job.name, line)
        expected = {**profile["default-resources"], **profile["set-resources"].get(job.name, {})}
        assert f" -p {expected['slurm_partition']} " in line and f" --mem {expected['mem_mb']} " in line, line
    for job in jobs:
        if job.name in ("train", "train_comp"):
            assert job.threads == train_threads  # CPUs come from threads, not a profile default


def _resources(profile: dict) -> dict[str, dict]:
    """Each rule's resources under ``profile`` (``"*"``: every other rule): default-resources
    with the rule's set-resources on top."""
    default = profile["default-resources"]
    return {"*": dict(default), **{rule: {**default, **res} for rule, res in profile["set-resources"].items()}}


def test_the_default_profile_fits_the_default_configuration():
    """profiles/slurm sends every job of the default (CPU) configuration to one CPU partition,
    none to a GPU partition, with memory and wall time that hold the offline reproduction's
    measured jobs (docs/results_inputs/offline/compute.csv: peak memory and wall seconds per
    job) with room to spare (at least twice the memory, ten times the time), and asks for no
    more than 8 GB (what a modest node has)."""
    resources = _resources(yaml.safe_load((PROFILE / "profile.yaml").read_text()))
    with open(REPO / "docs/results_inputs/offline/compute.csv") as fh:
        measured = list(csv.DictReader(fh))
    peak_mb = max(float(row["max_rss_mb"]) for row in measured)
    longest_min = max(float(row["wall_seconds_per_job"]) for row in measured) / 60
    assert peak_mb > 500 and longest_min > 1  # the measurement is there
    for rule, res in resources.items():
        assert res["slurm_partition"] == "cpu", (rule, res)
        assert 2 * peak_mb <= res["mem_mb"] <= 8000, (rule, res, peak_mb)
        assert res["runtime"] >= 10 * longest_min, (rule, res, longest_min)


def test_the_paper_profile_differs_only_in_its_resources():
    """profiles/slurm-paper: the GPU rules on a "gpu" partition with 32 GB for training
    (config/paper.yaml's fine-tuned BERT); every other key as in profiles/slurm."""
    default = yaml.safe_load((PROFILE / "profile.yaml").read_text())
    paper = yaml.safe_load((PAPER_PROFILE / "profile.yaml").read_text())
    resources = _resources(paper)
    for rule in GPU_RULES:
        assert resources[rule]["slurm_partition"] == "gpu", rule
    assert resources["train"]["mem_mb"] == resources["train_comp"]["mem_mb"] == 32000
    assert resources["*"]["slurm_partition"] == "cpu"
    others = {"default-resources", "set-resources"}
    assert {k: v for k, v in paper.items() if k not in others} == {k: v for k, v in default.items() if k not in others}
    assert "profiles/slurm-paper" in (REPO / "docs/cluster.md").read_text()
    assert "profiles/slurm-paper" in (REPO / "config/paper.yaml").read_text()


def _cluster_problem() -> str | None:
    """Why no SLURM cluster can run the test here, or None."""
    if shutil.which("sbatch") is None:
        return ("sbatch not found: no SLURM here (start a single-node one as root with "
                "`bash scripts/slurm_cluster.sh install && bash scripts/slurm_cluster.sh start`)")
    ping = subprocess.run(["scontrol", "ping"], capture_output=True, text=True)
    if "is UP" not in ping.stdout:
        return (f"sbatch is installed but no slurmctld answers (`scontrol ping`: "
                f"{((ping.stdout + ping.stderr).strip().splitlines() or [''])[-1]}); start one with `bash scripts/slurm_cluster.sh start`")
    partitions = set(subprocess.run(["sinfo", "-h", "-o", "%R"], capture_output=True, text=True).stdout.split())
    if "cpu" not in partitions:
        return f"the cluster has partitions {sorted(partitions)}, profiles/slurm uses 'cpu'"
    return None


@pytest.fixture
def slurm_cluster():
    problem = _cluster_problem()
    if problem and os.environ.get("ICDA_REQUIRE_SLURM") == "1":
        pytest.fail(f"ICDA_REQUIRE_SLURM=1 but {problem}")
    if problem:
        pytest.skip(problem)


def _fitting_profile(tmp_path) -> Path:
    """profiles/slurm's resources with every mem_mb capped at the smallest node's memory: what the
    profile's comment tells the owner of a small node to do (a CI machine has far less than the
    32 GB the training jobs ask for, and sbatch refuses a job no node can hold)."""
    nodes = subprocess.run(["scontrol", "-o", "show", "node"], capture_output=True, text=True, check=True).stdout
    node_mb = min(int(m) for m in re.findall(r"RealMemory=(\d+)", nodes))
    profile = yaml.safe_load((PROFILE / "profile.yaml").read_text())
    fitted = {"default-resources": dict(profile["default-resources"]),
              "set-resources": {rule: dict(res) for rule, res in profile["set-resources"].items()}}
    for res in [fitted["default-resources"], *fitted["set-resources"].values()]:
        if "mem_mb" in res:
            res["mem_mb"] = min(res["mem_mb"], node_mb)
    folder = tmp_path / "fit-node"
    folder.mkdir()
    (folder / "profile.yaml").write_text(yaml.safe_dump(fitted))
    return folder


@pytest.mark.slurm
def test_tiny_workflow_runs_through_slurm(tmp_path, slurm_cluster):
    """Every non-local job is a SLURM job (an sbatch call, a SLURM job id, a per-job SLURM log
    that ran the rule), the tables and plots are written, and a second run has nothing to do."""
    args = ["-s", str(REPO / "Snakefile"), "--directory", str(tmp_path), "--configfile", *TINY,
            "--config", f"data_dir={tmp_path / 'data'}",
            # the shipped profile, then only the memory of this node (a later --profile replaces
            # the keys it sets)
            "--profile", str(PROFILE), "--profile", str(_fitting_profile(tmp_path))]
    start = time.monotonic()
    out = snakemake(*args,
                    # the first status check after 2 s instead of 40 s: tiny jobs, short waits
                    "--slurm-init-seconds-before-status-checks", "2",
                    # keep the SLURM log of every job (by default only failed jobs' logs stay)
                    "--slurm-keep-successful-logs", "--verbose", timeout=HANG_LIMIT_S)

    submitted = re.findall(r"Job \d+ has been submitted with SLURM jobid (\d+) \(log: (\S+)\)\.", out)
    calls = re.findall(r"^sbatch call: (sbatch .*)$", out, flags=re.M)
    assert submitted and len(calls) == len(submitted), out[-4000:]
    ids = [int(job_id) for job_id, _ in submitted]
    assert len(set(ids)) == len(ids)
    rules = []
    for job_id, log in submitted:
        log = Path(log)
        assert log.name == f"{job_id}.log" and log.is_relative_to(tmp_path / ".snakemake/slurm_logs")
        rule = next(part for part in log.parts if part.startswith("rule_")).removeprefix("rule_")
        # written by the job itself: Snakemake's job step ran exactly this rule inside SLURM
        assert re.search(rf"^local(?:rule|checkpoint) {rule}:$", log.read_text(), flags=re.M), \
            log.read_text()[-2000:]
        rules.append(rule)
    assert {"prepare", "embed", "train", "train_comp", "evaluate", "tables", "plots"} <= set(rules), rules
    # every job the run executed went through SLURM, except the workflow's local rules
    executed = re.findall(r"^(local)?(?:rule|checkpoint) (\w+):$", out, flags=re.M)
    assert sorted(rules) == sorted(name for local, name in executed if not local)

    train_threads = yaml.safe_load(Path(TINY[0]).read_text())["train_threads"]
    for call in calls:
        rule = re.search(r"--comment rule_(\w+?)(?:_wildcards_\S*)? ", call).group(1)
        assert "--gpus" not in call and "--gres" not in call  # device auto: gpu=0
        if rule in ("train", "train_comp"):
            assert " -p cpu " in call and f"--cpus-per-task={train_threads}" in call.split(), call

    # for the CI log (shown with -rA): what went through SLURM, not asserted
    print(f"{len(submitted)} SLURM jobs in {time.monotonic() - start:.0f} s; rules: "
          f"{dict(sorted(Counter(rules).items()))}")
    print("sbatch call of a train job:", next(c for c in calls if "--comment rule_train_wildcards" in c))

    results = tmp_path / "results"
    with open(results / "tables/synthetic.csv") as fh:
        rows = {r[0]: r[1:] for r in csv.reader(fh)}
    for method in ("COMP", "MMI", "CDA", "ICDA"):
        assert 0.0 <= float(rows[method][0]) <= 100.0, rows
    for name in ("alpha_all.png", "alpha_synthetic.png"):
        assert (results / "plots" / name).stat().st_size > 1000

    again = snakemake(*args, "-n")
    assert "Nothing to be done" in again
