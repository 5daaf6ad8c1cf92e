"""Config values (paths with spaces and `;`) reach the workflow's shell commands quoted: every command parses
into the intended words and nothing runs an injected command."""

from __future__ import annotations

import json
import shlex

import pytest

from test_workflow import snakemake
from toy_workflow import toy_files, workflow_args


def _hostile_paths(tmp_path):
    """A working folder, data_dir (with the toy data) and embedding cache with a space and a `;`,
    and the Snakemake arguments of the toy workflow there."""
    workdir = tmp_path / "work dir; touch PWNED-workdir"
    data_dir = workdir / "data dir; touch PWNED-data"
    workdir.mkdir()
    toy_files(data_dir)
    cache = "cache dir; touch PWNED; echo"
    return workdir, cache, workflow_args(workdir, data_dir, run_datasets=["toy"], embedding_cache=cache)


def test_config_paths_reach_the_shell_quoted(tmp_path):
    """A working folder, data_dir and embedding cache with a space and a `;`: every shell command
    parses into the intended words and nothing runs the injected command (a dry run)."""
    workdir, cache, args = _hostile_paths(tmp_path)
    proc = snakemake("-n", "-p", "--forceall", *args)
    commands = [line.removeprefix("Shell command: ") for line in proc.stdout.splitlines()
                if line.startswith("Shell command: python")]  # (run: blocks print None)
    assert {c.split()[3] for c in commands} >= {"prepare", "embed", "train", "select", "evaluate"}
    for command in commands:
        words = shlex.split(command)
        assert "touch" not in words, command
        if "--cache-dir" in words:
            assert words[words.index("--cache-dir") + 1] == cache
    assert any("--cache-dir" in c for c in commands)
    assert not list(tmp_path.rglob("PWNED*"))


@pytest.mark.slow  # runs prepare through the workflow (about 12 s)
def test_prepare_runs_under_hostile_paths(tmp_path):
    """The same folders for real: prepare runs, and nothing runs the injected command."""
    workdir, _, args = _hostile_paths(tmp_path)
    snakemake("results/toy/data/stats.json", *args)  # data_dir reaches prepare through its spec file
    stats = json.loads((workdir / "results/toy/data/stats.json").read_text())
    assert stats["splits"]["test"]["documents"] == 10
    assert not list(tmp_path.rglob("PWNED*"))
