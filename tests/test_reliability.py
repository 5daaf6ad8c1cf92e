"""Issue 8: unusable input stops before training, changed data or artifacts rerun what depends on
them, config values reach the shell quoted, corrupt files are named with the fix."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shlex
import time
from pathlib import Path

import pytest
import torch
import yaml

from icda import workflow_helpers as helpers
from icda.data.datasets import prepare_dataset
from icda.data.readers import read_icda
from icda.errors import ConfigError, DataError
from icda.selection import select_candidate
from icda.workspace import load_weights
from test_workflow import REPO, snakemake

SCHEMA = REPO / "workflow/schemas/config.schema.yaml"


def toy_files(data_dir: Path, test_lines: list[str] | None = None) -> None:
    """A small dataset in the ICDA format: 20 balanced train and 10 dev documents of 5 sentences,
    and a test file whose first sentences mention the keyword "food"."""
    (data_dir / "toy").mkdir(parents=True, exist_ok=True)

    def docs(prefix: str, n: int) -> str:
        return "".join(f"{i % 2}\tThe {prefix} food {i} was {'good' if i % 2 else 'bad'}."
                       f"[SEP]A{i}.[SEP]B{i}.[SEP]C{i}.[SEP]D{i}.\n" for i in range(n))

    (data_dir / "toy/train.txt").write_text(docs("train", 20), encoding="utf-8")
    (data_dir / "toy/dev.txt").write_text(docs("dev", 10), encoding="utf-8")
    if test_lines is None:
        test_lines = docs("test", 10).splitlines()
    (data_dir / "toy/test.txt").write_text("".join(f"{line}\n" for line in test_lines), encoding="utf-8")


TOY = {"train": "toy/train.txt", "dev": "toy/dev.txt", "test": "toy/test.txt", "keywords": ["food"]}


def workflow_args(workdir: Path, data_dir: Path, **config) -> list[str]:
    """Snakemake arguments: the default and tiny configs plus ``config`` (with the toy dataset)."""
    extra = workdir / "extra.yaml"
    extra.write_text(yaml.safe_dump({"data_dir": str(data_dir), "datasets": {"toy": TOY}} | config))
    return ["--cores", "1", "-s", str(REPO / "Snakefile"), "--directory", str(workdir), "--configfile",
            str(REPO / "config/config.yaml"), str(REPO / "tests/fixtures/tiny_workflow.yaml"), str(extra)]


def planned_jobs(proc) -> dict[str, int]:
    """The 'Job stats' table of a dry run: {rule: count}."""
    out = proc.stdout + proc.stderr
    if "Nothing to be done" in out:
        return {}
    table = out.split("Job stats:")[1].split("\n\n")[0].splitlines()[3:]
    return {rule: int(n) for rule, n in (line.split() for line in table) if rule != "total"}


# ------------------------------------------------------------------ 1. no shell injection


def test_config_paths_reach_the_shell_quoted(tmp_path):
    """A working folder, data_dir and embedding cache with a space and a `;`: every shell command
    parses into the intended words, nothing runs the injected command, and prepare runs."""
    workdir = tmp_path / "work dir; touch PWNED-workdir"
    data_dir = workdir / "data dir; touch PWNED-data"
    workdir.mkdir()
    toy_files(data_dir)
    cache = "cache dir; touch PWNED; echo"
    args = workflow_args(workdir, data_dir, run_datasets=["toy"], embedding_cache=cache)
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

    snakemake("results/toy/data/stats.json", *args)  # data_dir reaches prepare through its spec file
    stats = json.loads((workdir / "results/toy/data/stats.json").read_text())
    assert stats["splits"]["test"]["documents"] == 10
    assert not list(tmp_path.rglob("PWNED*"))


# ------------------------------------------------------------------ 2. changed data reruns prepare


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


# ------------------------------------------------------------------ 3. test sets without ground truth


@pytest.mark.parametrize(
    "spec, test_lines, problem",
    [
        (TOY, [], "the test split has no documents"),
        ({**TOY, "keywords": None}, None, "neither keywords nor annotated rationales"),
        ({**TOY, "keywords": ["sushi"]}, None, "none of the 10 test documents has a ground-truth"),
    ],
)
def test_test_set_without_ground_truth_stops_prepare(tmp_path, spec, test_lines, problem):
    toy_files(tmp_path / "data", test_lines)
    with pytest.raises(DataError, match=problem) as err:
        prepare_dataset("toy", spec, tmp_path / "data", tmp_path / "out")
    assert err.value.path == str(tmp_path / "data/toy/test.txt") and err.value.fix
    assert not (tmp_path / "out/stats.json").exists()


def test_low_ground_truth_coverage_warns(tmp_path, caplog):
    lines = ["1\tThe food was fine.[SEP]x.", "0\tNothing here.[SEP]y.", "0\tNor here.[SEP]z."]
    toy_files(tmp_path / "data", lines)
    with caplog.at_level(logging.WARNING):
        stats = prepare_dataset("toy", TOY, tmp_path / "data", tmp_path / "out")
    assert stats["warnings"] == ["toy: ground truth covers only 1 of 3 test documents (33%); "
                                 "precision rests on those documents alone"]
    assert stats["warnings"][0] in caplog.text


# ------------------------------------------------------------------ 4. missing files of a named dataset


def test_named_dataset_with_a_missing_file_stops_at_start(tmp_path):
    toy_files(tmp_path / "data")
    (tmp_path / "data/toy/train.txt").unlink()
    config = {"data_dir": str(tmp_path / "data"), "run_datasets": ["toy"], "datasets": {"toy": TOY}}
    with pytest.raises(DataError, match="dataset 'toy' is named in run_datasets") as err:
        helpers.availability(config)
    assert err.value.path == str(tmp_path / "data/toy/train.txt")
    assert "Or remove 'toy' from run_datasets" in err.value.fix

    proc = snakemake("-n", *workflow_args(tmp_path, tmp_path / "data", run_datasets=["toy"]), check=False)
    assert proc.returncode != 0
    assert f"{tmp_path / 'data/toy/train.txt'}: file not found" in proc.stdout + proc.stderr
    # not named: listed as unavailable, the others run
    synthetic = {"source": "synthetic", "synthetic": {"n_train": 8, "n_dev": 4, "n_test": 4}}
    present, absent = helpers.availability(
        config | {"run_datasets": [], "datasets": {"toy": TOY, "synthetic": synthetic}})
    assert present == ["synthetic"] and "toy/train.txt" in absent["toy"]
    with pytest.raises(ConfigError, match="no selected dataset has its files. Fix: get the files"):
        helpers.availability(config | {"run_datasets": []})


def test_workflow_downloads_missing_public_files_before_prepare(tmp_path):
    """A public dataset whose files are absent: its download job fetches them into data_dir
    (md5 checked), prepare runs on them, and a second invocation has nothing to do; a wrong
    checksum stops the job, keeps no file and says why in its log."""
    toy_files(tmp_path / "remote")
    train_md5 = hashlib.md5((tmp_path / "remote/toy/train.txt").read_bytes()).hexdigest()
    toy = TOY | {"url": (tmp_path / "remote").as_uri() + "/", "md5": {"toy/train.txt": train_md5}}
    workdir, data_dir = tmp_path / "work", tmp_path / "work/data dir"
    workdir.mkdir()
    args = workflow_args(workdir, data_dir, run_datasets=["toy"], datasets={"toy": toy})
    snakemake("results/toy/data/stats.json", *args)
    for split in ("train", "dev", "test"):
        remote = tmp_path / f"remote/toy/{split}.txt"
        assert (data_dir / f"toy/{split}.txt").read_bytes() == remote.read_bytes()
    download_log = (workdir / "results/logs/toy/download.log").read_text()
    assert f"md5 {train_md5} verified" in download_log and "toy/dev.txt has no known checksum" in download_log
    stats = json.loads((workdir / "results/toy/data/stats.json").read_text())
    assert stats["splits"]["test"]["documents"] == 10
    assert planned_jobs(snakemake("-n", "results/toy/data/stats.json", *args)) == {}

    bad = toy | {"md5": {"toy/train.txt": "0" * 32}}
    args = workflow_args(workdir, tmp_path / "other", run_datasets=["toy"], datasets={"toy": bad})
    proc = snakemake("results/toy/data/stats.json", *args, check=False)
    assert proc.returncode != 0
    download_log = (workdir / "results/logs/toy/download.log").read_text()
    assert f"has md5 {train_md5}, expected {'0' * 32}" in download_log
    assert f"expected {'0' * 32}" in proc.stdout + proc.stderr  # the failed job's log is shown
    assert not (tmp_path / "other/toy/train.txt").exists()


# ------------------------------------------------------------------ 5. deleted, changed, corrupt artifacts


def fake_finished_run(workdir: Path, args: list[str], iterations: int = 2) -> None:
    """The state of a finished tiny run without training: every file the workflow writes exists
    (empty, except the stop decisions the checkpoint walk reads) and is marked up to date."""
    for k in range(iterations):
        decision = workdir / f"results/synthetic/run1/iter{k}/converge.json"
        decision.parent.mkdir(parents=True)
        decision.write_text(json.dumps({"iteration": k, "stop": k == iterations - 1}))
    marker = "Output files not touched because they don't exist: "
    for _ in range(3):  # --touch walks the checkpoints as a run would; touched in order once all exist
        proc = snakemake("--touch", *args)
        missing = [path for line in (proc.stdout + proc.stderr).splitlines() if line.startswith(marker)
                   for path in line.removeprefix(marker).split(", ")]
        if not missing:
            break
        for path in missing:
            (workdir / path).parent.mkdir(parents=True, exist_ok=True)
            (workdir / path).touch()
    assert planned_jobs(snakemake("-n", *args)) == {}


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

    model = results / "synthetic/run1/iter0/seed42/model.pt"
    model.write_bytes(b"trunc")
    later = time.time() + 5
    os.utime(model, (later, later))
    assert planned_jobs(snakemake("-n", *args))["train"] == 1  # iteration 1's warm start loads it
    proc = snakemake("-n", "results/synthetic/run1/iter0/eval.json", *args)  # iteration 0's evaluation
    assert "reason: Updated input files: results/synthetic/run1/iter0/seed42/model.pt" in proc.stdout


def test_corrupt_model_and_history_are_named_with_the_fix(tmp_path):
    model = tmp_path / "seed42/model.pt"
    model.parent.mkdir()
    torch.save({"state_dict": {}, "model": {}}, model)
    model.write_bytes(model.read_bytes()[:20])  # truncated
    with pytest.raises(DataError, match="corrupt model file") as err:
        load_weights(torch.nn.Linear(1, 1), model)
    assert err.value.path == str(model) and f"--forcerun {model}" in err.value.fix

    (tmp_path / "seed42/history.json").write_text('{"dev_loss": 0.')
    (tmp_path / "seed42/predictions.json").write_text('{}')
    with pytest.raises(DataError, match="history.json:1: not valid JSON") as err:
        select_candidate(0, [tmp_path / "seed42"], [0, 1])
    assert "--forcerun" in err.value.fix


# ------------------------------------------------------------------ smaller items


def test_decoding_error_is_reported_on_its_line(tmp_path):
    path = tmp_path / "latin1.txt"
    good = "".join(f"1\tSentence {i}.[SEP]More.\n" for i in range(10)).encode()
    path.write_bytes(good + "0\tCaf\u00e9 au lait.[SEP]Fine.\n".encode("latin-1"))
    with pytest.raises(DataError, match="not UTF-8 text") as err:
        read_icda(path)
    assert err.value.line == 11


def test_config_errors_one_line_per_problem(tmp_path):
    config = {"datasets": {"toy": TOY}, "colour": "red", "train": {"lr": -1}}
    with pytest.raises(ConfigError) as err:
        helpers.check_config(config, SCHEMA)
    lines = str(err.value).splitlines()
    assert lines[1].strip().startswith("colour: unknown key (allowed: data_dir, download, run_datasets,")
    assert lines[2].strip().startswith("train.lr: -1 is less than or equal to the minimum of 0")
    assert lines[-1].startswith("Fix:") and len(lines) == 4
    with pytest.raises(ConfigError, match=r"datasets: 'my data; rm' does not match"):
        helpers.check_config({"datasets": {"my data; rm": TOY}}, SCHEMA)

    bad = tmp_path / "bad.yaml"
    bad.write_text("colour: red\n")
    proc = snakemake("-n", "-s", str(REPO / "Snakefile"), "--directory", str(tmp_path),
                     "--configfile", str(REPO / "config/config.yaml"), str(bad), check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "colour: unknown key" in out and len(out.splitlines()) < 15


def test_more_runs_than_seed_lists_says_the_fix(tmp_path):
    proc = snakemake("-n", *workflow_args(tmp_path, tmp_path, n_runs=3), check=False)  # runs: 1 list
    assert proc.returncode != 0
    assert "n_runs: 3, but `runs` has 1 seed lists. Fix: lower n_runs to 1" in proc.stdout + proc.stderr
    assert helpers.run_numbers({"n_runs": 2, "runs": [[1], [2], [3]]}) == [1, 2]


def test_invalid_model_setting_stops_the_dry_run(tmp_path):
    """A value only the training command checks (d_model not divisible by heads, here in one
    dataset's overrides) stops the workflow at start, naming the dataset, not after embed."""
    toy_files(tmp_path / "data")
    proc = snakemake("-n", *workflow_args(tmp_path, tmp_path / "data", run_datasets=["toy"],
                                          overrides={"toy": {"model": {"heads": 3}}}), check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "config, dataset 'toy'.model: d_model=32 must be divisible by heads=3" in out, out[-2000:]


def test_finetuning_at_the_adapter_rate_is_refused_with_the_fix():
    """model.finetune with the CPU defaults' lr 1e-3 and no encoder_lr would train the pretrained
    encoder at 1e-3: refused; an explicit encoder_lr, or a small lr (config/paper.yaml), passes."""
    from icda.settings import Settings

    config = {"encoder": {}, "model": {"finetune": True}, "train": {"lr": 1e-3}}
    with pytest.raises(ConfigError, match=r"train.lr = 0.001, .* Fix: set train.encoder_lr"):
        Settings.from_dict(config, where="config, dataset 'r'")
    assert Settings.from_dict(config | {"train": {"lr": 1e-3, "encoder_lr": 2e-5}}).train.encoder_lr == 2e-5
    assert Settings.from_dict(config | {"train": {"lr": 1e-6}}).model.finetune
    assert not Settings.from_dict(config | {"model": {"finetune": False}}).model.finetune
    paper = yaml.safe_load((REPO / "config/paper.yaml").read_text())
    merged = helpers.dataset_settings(yaml.safe_load((REPO / "config/config.yaml").read_text()) | paper, "x")
    assert Settings.from_dict(merged).model.finetune


def test_failed_prepare_leaves_no_old_output(tmp_path):
    toy_files(tmp_path / "data")
    prepare_dataset("toy", TOY, tmp_path / "data", tmp_path / "out")
    with pytest.raises(DataError, match="file not found"):
        prepare_dataset("other", {**TOY, "train": "absent.txt"}, tmp_path / "data", tmp_path / "out")
    assert list((tmp_path / "out").iterdir()) == []


def test_train_documents_in_test_are_counted_and_warned(tmp_path, caplog):
    toy_files(tmp_path / "data")
    train = (tmp_path / "data/toy/train.txt").read_text().splitlines()
    test = tmp_path / "data/toy/test.txt"
    test.write_text(test.read_text() + train[0] + "\n" + train[1] + "\n")
    with caplog.at_level(logging.WARNING):
        stats = prepare_dataset("toy", TOY, tmp_path / "data", tmp_path / "out")
    assert stats["overlap"] == {"train_test": 2, "dev_test": 0}
    assert "toy: 2 of 20 train documents also appear in the test split" in caplog.text
