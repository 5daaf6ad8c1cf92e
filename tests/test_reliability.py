"""Unusable input stops before training, changed data or artifacts rerun what depends on them,
config values reach the shell quoted, corrupt files are named with the fix; no file is written
outside data_dir, no run starts on a meaningless setting, every index of a record is range-checked."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shlex
import time
from pathlib import Path

import pytest
import torch
import yaml

from icda.workflow_config import availability, config_check, plan, run_settings
from icda.steps.prepare import prepare_dataset
from icda.data.readers import read_icda
from icda.errors import ConfigError, DataError
from icda.loading import load_weights
from icda.records import Decision
from icda.steps.select import read_candidate
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
        availability.availability(config)
    assert err.value.path == str(tmp_path / "data/toy/train.txt")
    assert "Or remove 'toy' from run_datasets" in err.value.fix

    proc = snakemake("-n", *workflow_args(tmp_path, tmp_path / "data", run_datasets=["toy"]), check=False)
    assert proc.returncode != 0
    assert f"{tmp_path / 'data/toy/train.txt'}: file not found" in proc.stdout + proc.stderr
    # not named: listed as unavailable, the others run
    synthetic = {"source": "synthetic", "synthetic": {"n_train": 8, "n_dev": 4, "n_test": 4}}
    present, absent = availability.availability(
        config | {"run_datasets": [], "datasets": {"toy": TOY, "synthetic": synthetic}})
    assert present == ["synthetic"] and "toy/train.txt" in absent["toy"]
    with pytest.raises(ConfigError, match="no selected dataset has its files. Fix: get the files"):
        availability.availability(config | {"run_datasets": []})


def test_workflow_downloads_missing_public_files_before_prepare(tmp_path):
    """A public dataset whose files are absent: its download job fetches them into data_dir
    (md5 checked), prepare runs on them, and a second invocation has nothing to do; a wrong
    checksum stops the job, keeps no file and says why in its log."""
    toy_files(tmp_path / "remote")
    train_md5 = hashlib.md5((tmp_path / "remote/toy/train.txt").read_bytes()).hexdigest()
    toy = TOY | {"url": (tmp_path / "remote").as_uri() + "/", "allow_file_url": True,
                 "md5": {"toy/train.txt": train_md5}}
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
        stop = k == iterations - 1
        Decision(iteration=k, stop=stop, converged=stop, reason="faked for the test",
                 final_iteration=k if stop else None).write(decision)
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
        read_candidate(tmp_path / "seed42")
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
        config_check.check_config(config, SCHEMA)
    lines = str(err.value).splitlines()
    assert lines[1].strip().startswith("colour: unknown key (allowed: data_dir, download, run_datasets,")
    assert lines[2].strip().startswith("train.lr: -1 is less than or equal to the minimum of 0")
    assert lines[-1].startswith("Fix:") and len(lines) == 4
    with pytest.raises(ConfigError, match=r"datasets: 'my data; rm' does not match"):
        config_check.check_config({"datasets": {"my data; rm": TOY}}, SCHEMA)

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
    assert plan.run_numbers({"n_runs": 2, "runs": [[1], [2], [3]]}) == [1, 2]


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
    merged = run_settings.dataset_settings(yaml.safe_load((REPO / "config/config.yaml").read_text()) | paper, "x")
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


# ------------------------------------------------------------------ reruns, downloads and names


def test_download_never_writes_outside_data_dir(tmp_path):
    """A dataset path with `..` (or an absolute one) stops the workflow at start, with the key and
    the fix, and nothing is written outside data_dir; so does a file:// URL not asked for."""
    toy_files(tmp_path / "remote/a/b")
    (tmp_path / "remote/escaped").mkdir()
    (tmp_path / "remote/escaped/evil.txt").write_text("1\tx.[SEP]y.\n")  # = url + ../../escaped/evil.txt
    url = (tmp_path / "remote/a/b").as_uri() + "/"
    workdir = tmp_path / "work"
    workdir.mkdir()
    escaping = TOY | {"train": "../../escaped/evil.txt", "url": url, "allow_file_url": True}
    args = workflow_args(workdir, workdir / "data", run_datasets=["toy"], datasets={"toy": escaping})
    proc = snakemake("download", *args, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "datasets.toy.train: '../../escaped/evil.txt' climbs out of data_dir" in out and "Fix:" in out
    assert list(tmp_path.rglob("evil.txt")) == [tmp_path / "remote/escaped/evil.txt"]

    config = {"data_dir": str(workdir / "data"), "run_datasets": ["toy"]}
    cases = [
        (TOY | {"test": str(tmp_path / "remote/a/b/toy/test.txt")}, "datasets.toy.test: '/.*' is an absolute path"),
        (TOY | {"md5": {"../x.txt": "0" * 32}}, r"datasets.toy.md5.../x.txt: '../x.txt' climbs out"),
        (TOY | {"url": url}, "datasets.toy.url: .* is a file:// URL.* Fix: .*allow_file_url: true"),
        (TOY | {"url": "ftp://example.org/data/"}, "datasets.toy.url: .* not an http:// or https:// URL"),
    ]
    for spec, message in cases:
        with pytest.raises(ConfigError, match=message):
            availability.availability(config | {"datasets": {"toy": spec}})

    # a folder inside data_dir that is a link to elsewhere: the download refuses to follow it
    from icda.steps.download import download

    (tmp_path / "elsewhere").mkdir()
    (workdir / "data").mkdir()
    (workdir / "data/toy").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(DataError, match=r"outside data_dir .* \(a symbolic link leads out\)") as err:
        download("toy", TOY | {"url": url, "allow_file_url": True}, workdir / "data")
    assert err.value.path == str(workdir / "data/toy/train.txt") and err.value.fix
    assert list((tmp_path / "elsewhere").iterdir()) == []


@pytest.mark.parametrize("model, message", [
    ({"k": 20}, "config, dataset 'synthetic': model.k = 20 is not smaller than encoder.max_sentences = 12, "
                "so every sentence the model sees would be selected"),
    ({"k": 5}, "config, dataset 'synthetic': model.k = 5 is not smaller than datasets.synthetic.min_sentences = 5"),
])
def test_k_that_selects_every_sentence_stops_the_workflow_at_start(tmp_path, model, message):
    proc = snakemake("-n", *workflow_args(tmp_path, tmp_path / "data", run_datasets=["synthetic"], model=model),
                     check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and message in out and "Fix: lower model.k below" in out, out[-2000:]


def test_k_against_the_shortest_prepared_document_names_the_file_and_line(tmp_path):
    from icda.data.document import Document, write_documents
    from icda.settings import Settings
    from icda.loading import open_workspace

    docs = [Document(f"d{i}", i % 2, tuple(f"s{i}.{j}" for j in range(5))) for i in range(6)]
    short = Document("short", 1, ("only.", "three.", "here."))
    for split in ("train", "dev", "test"):
        write_documents(docs + [short] if split == "dev" else docs, tmp_path / f"{split}.jsonl")
    settings = Settings.from_dict({"encoder": {"max_sentences": 12}, "model": {"k": 3}})
    with pytest.raises(DataError, match="document short shows the model 3 sentences, not more than model.k = 3") as err:
        open_workspace(settings, tmp_path, None)
    assert (err.value.path, err.value.line) == (str(tmp_path / "dev.jsonl"), 7)
    assert "lower model.k below 3" in err.value.fix and "min_sentences" in err.value.fix


def _finished_iteration(tmp_path: Path):
    """Prepared train/dev splits of 8 documents of 3 sentences and a choice.json whose chosen
    candidate predicts every document right (sentence i % 3 as its rationale): (data dir, choice)."""
    from icda.data.document import Document, write_documents
    from icda.records import CandidateScore, Choice, Predictions, SplitPredictions

    data = tmp_path / "data"
    for split in ("train", "dev"):
        write_documents([Document(f"{split}-{i}", i % 2, (f"{split} {i} a.", f"{split} {i} b.", f"{split} {i} c."))
                         for i in range(8)], data / f"{split}.jsonl")
    candidate = tmp_path / "iter0/seed42"
    split = SplitPredictions(prob_positive=[0.9 if i % 2 else 0.1 for i in range(8)], positions=[[i % 3] for i in range(8)])
    Predictions(train=split, dev=split).write(candidate / "predictions.json")
    score = CandidateScore(name="seed42", candidate_dir=str(candidate), warm_start=False, seed=42, dev_loss=0.1,
                           original_dev_loss=0.1, dev_accuracy=1.0, degenerate=False, best_epoch=0, delta_A=None,
                           score=0.1)
    Choice(iteration=0, candidate_loss="augmented_dev", previous_delta_A=None, chosen=score,
           candidates=[score]).write(tmp_path / "iter0/choice.json")
    return data, tmp_path / "iter0/choice.json"


def _edit_json(path: Path, change) -> None:
    obj = json.loads(path.read_text())
    change(obj)
    path.write_text(json.dumps(obj))


@pytest.mark.parametrize("change, message", [
    (lambda p: p["train"]["positions"].__setitem__(0, [-3]), "field 'train': positions[0][0] is -3, not an index"),
    (lambda p: p["train"]["prob_positive"].__setitem__(1, 7.5),
     "field 'train': prob_positive[1] is 7.5, not a probability in [0, 1]"),
    (lambda p: p["dev"]["positions"].__setitem__(2, [3]),
     "field 'dev': a position of document 2 (positions[2]) is 3, outside 0 to 2 (3 sentences)"),
    (lambda p: (p["dev"]["positions"].pop(), p["dev"]["prob_positive"].pop()),
     "field 'dev': 7 documents, but the prepared split has 8"),
])
def test_predictions_out_of_range_are_refused_with_the_file(tmp_path, change, message):
    from icda.steps.pools import make_pools

    data, choice = _finished_iteration(tmp_path)
    predictions = tmp_path / "iter0/seed42/predictions.json"
    make_pools(choice, data, 0.5, "class")  # as written: fine
    _edit_json(predictions, change)
    with pytest.raises(DataError, match=re.escape(message)) as err:
        make_pools(choice, data, 0.5, "class")
    assert err.value.path == str(predictions) and "--forcerun" in err.value.fix


@pytest.mark.parametrize("change, message", [
    (lambda p: p["train"]["plan"]["positions"].__setitem__(0, [-3]), "plan.positions[0][0] is -3, not an index"),
    (lambda p: p["train"]["plan"]["kept"].__setitem__(0, -1), "plan.kept[0] is -1, not an index"),
    (lambda p: p["train"]["plan"]["pools"]["0"].append([-5, -1]), "plan.pools.0[2][0] is -5, not an index"),
    (lambda p: p["train"]["plan"]["kept"].__setitem__(0, 8), "plan.kept[0] is 8, outside 0 to 7 (8 documents"),
    (lambda p: p["dev"]["plan"]["positions"].__setitem__(0, [3]),
     "field 'dev': a position of kept document 0 (plan.positions[0]) is 3, outside 0 to 2 (3 sentences)"),
])
def test_pools_out_of_range_are_refused_with_the_file(tmp_path, change, message):
    from icda.steps.augment import write_augmented
    from icda.steps.pools import make_pools

    data, choice = _finished_iteration(tmp_path)
    pools = tmp_path / "iter0/pools.json"
    make_pools(choice, data, 0.5, "class").write(pools)
    write_augmented(pools, data, 0, 12, tmp_path / "augmented")  # as written: fine
    _edit_json(pools, change)
    with pytest.raises(DataError, match=re.escape(message)) as err:
        write_augmented(pools, data, 0, 12, tmp_path / "augmented")
    assert err.value.path == str(pools) and "--forcerun" in err.value.fix


def test_other_records_check_their_ranges(tmp_path):
    from icda.records import Evaluation, History

    history = {"best_epoch": 0, "dev_loss": 0.3, "dev_accuracy": 1.5, "degenerate": False, "epochs": [],
               "seconds_per_epoch": 1.0, "seed": 1}
    (tmp_path / "history.json").write_text(json.dumps(history))
    with pytest.raises(DataError, match=r"history.json: not a training history: field 'dev_accuracy' is 1.5, "
                                        r"outside \[0, 1\]"):
        History.read(tmp_path / "history.json")
    evaluation = {"precision": 0.5, "recall": 0.5, "f1": 0.5, "accuracy": 1.0,
                  "documents": {"ids": ["a"], "positions": [[-1]], "predicted": [1]}}
    (tmp_path / "eval.json").write_text(json.dumps(evaluation))
    with pytest.raises(DataError, match="eval.json: not an evaluation record: field 'documents/positions/0/0'"):
        Evaluation.read(tmp_path / "eval.json")


def test_seed_lists_that_repeat_or_shrink_a_run_are_refused():
    base = {"n_runs": 1, "runs": [[42, 43]], "comp": {"seeds": 2}}
    with pytest.raises(ConfigError, match=r"runs: run 1 has the seeds \[42, 42\], which repeat \[42\].*Fix: give"):
        plan.run_numbers(base | {"runs": [[42, 42]]})
    with pytest.raises(ConfigError, match=r"runs: runs 1 and 2 have the same seeds \[1, 2\].*Fix: give run 2"):
        plan.run_numbers(base | {"n_runs": 2, "runs": [[1, 2], [2, 1], [3, 4]]})
    with pytest.raises(ConfigError, match="comp.seeds: 5, but run 1 has 2 seeds.* Fix: lower comp.seeds to 2"):
        plan.run_numbers(base | {"comp": {"seeds": 5}})
    assert plan.run_numbers(base | {"n_runs": 2, "runs": [[1, 2], [3, 4], [1, 2]]}) == [1, 2]  # run 3 unused


@pytest.mark.parametrize("config, message", [
    ({"runs": [[-1, 2]]}, "runs.0.0: -1 is less than the minimum of 0 (seeds are folder names"),
    ({"sweep": {"seeds": [-3]}}, "sweep.seeds.0: -3 is less than the minimum of 0 (seeds are folder names"),
    ({"comp": {"lambdas": [1e-5]}}, "comp.lambdas.0: 1e-05 is less than the minimum of 0.0001 (λ is a folder name"),
    ({"comp": {"lambdas": [-1]}}, "comp.lambdas.0: -1 is less than the minimum of 0.0001 (λ is a folder name"),
    ({"sweep": {"points": {"a b": {}}}}, "sweep.points: 'a b' does not match '^[A-Za-z0-9_-]+$' (point names become "
                                         "folder names and shell words: letters, digits, _ and - only)"),
    ({"sweep": {"points": {"..": {}}}}, "sweep.points: '..' does not match"),
    ({"theory": {"p1": 1.5}}, "theory.p1: 1.5 is greater than the maximum of 1 (p(Y1|X1)"),
    ({"theory": {"p2": -0.2}}, "theory.p2: -0.2 is less than the minimum of 0.5"),
    ({"theory": {"betas": [0.5, 2]}}, "theory.betas.1: 2 is greater than the maximum of 1"),
    ({"datasets": {"toy": TOY | {"seed": -1}}}, "datasets.toy.seed: -1 is less than the minimum of 0"),
])
def test_values_the_workflow_cannot_use_fail_the_schema_in_words(config, message):
    with pytest.raises(ConfigError) as err:
        config_check.check_config({"datasets": {"toy": TOY}} | config, SCHEMA)
    assert message in str(err.value), str(err.value)


def test_every_lambda_the_schema_accepts_fits_the_wildcard():
    """The λ bounds keep str(λ) in the COMP folder pattern lambda<[0-9.]+> (Python writes
    floats below 1e-4 or from 1e16 in exponent form)."""
    bounds = yaml.safe_load(SCHEMA.read_text())["properties"]["comp"]["properties"]["lambdas"]["items"]
    for lam in (bounds["minimum"], 0.5, 1, 0.30000000000000004, bounds["maximum"], float(bounds["maximum"])):
        assert re.fullmatch(r"[0-9.]+", str(lam)), lam
    assert not re.fullmatch(r"[0-9.]+", str(bounds["minimum"] / 10))  # the bound is where it must be


def test_overrides_of_an_unknown_dataset_are_refused(tmp_path):
    toy_files(tmp_path / "data")
    config = {"data_dir": str(tmp_path / "data"), "datasets": {"toy": TOY}, "overrides": {"tyo": {"train": {"lr": 1}}}}
    with pytest.raises(ConfigError, match="overrides.tyo: there is no dataset 'tyo' under `datasets` "
                                          r"\(configured: toy\), so these overrides would be ignored. Fix"):
        run_settings.check_settings(config, ["toy"])


def test_contradictory_duplicates_are_counted_and_warned(tmp_path, caplog):
    toy_files(tmp_path / "data")
    train = tmp_path / "data/toy/train.txt"
    lines = train.read_text().splitlines()
    flipped = ("0" if lines[3].startswith("1") else "1") + lines[3][1:]
    train.write_text("\n".join(lines + [flipped, lines[3]]) + "\n")  # a contradiction, and a true duplicate
    with caplog.at_level(logging.WARNING):
        stats = prepare_dataset("toy", TOY | {"balance": False}, tmp_path / "data", tmp_path / "out")
    assert stats["contradictory"] == {"train": 1, "dev": 0}
    assert stats["dropped"]["train"]["duplicates"] == 1
    warning = (f"toy: 1 text(s) of the train split appear with different labels (contradictory duplicates, each "
               f"kept once per label); check the labels in {train}")
    assert warning in stats["warnings"] and warning in caplog.text


def _alias_bomb(levels: int) -> str:
    """YAML whose report.groups nests aliases `levels` deep, 9 copies a level (9^levels values)."""
    lines = ["report:", "  groups:", '    g0: &a0 ["s", "s", "s", "s", "s", "s", "s", "s", "s"]']
    lines += [f"    g{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def test_alias_expansion_of_config_files_is_bounded(tmp_path):
    from icda.io import read_yaml

    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(_alias_bomb(9))
    with pytest.raises(DataError, match="its YAML aliases expand it to more than 100,000 values") as err:
        read_yaml(bomb, "")
    assert err.value.path == str(bomb) and "nest fewer aliases" in err.value.fix
    assert read_yaml(REPO / "config/config.yaml", "")["datasets"]["smell"]["public"] is False  # its aliases are fine
    start = time.time()
    with pytest.raises(ConfigError, match="config: expands to more than 100,000 values through YAML aliases"):
        config_check.check_config(yaml.safe_load(bomb.read_text()), SCHEMA)
    assert time.time() - start < 10

    proc = snakemake("-n", "-s", str(REPO / "Snakefile"), "--directory", str(tmp_path), "--configfile",
                     str(REPO / "config/config.yaml"), str(REPO / "tests/fixtures/tiny_workflow.yaml"), str(bomb),
                     check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and f"{bomb}: its YAML aliases expand it to more than 100,000 values" in out


def test_the_api_key_goes_only_to_base_url_as_documented(tmp_path, monkeypatch, caplog):
    from icda.generate.run import generate
    from test_llm import FakeServer, llm_spec

    assert "`api_key_env` names is sent as the API" in (REPO / "docs/llm.md").read_text()
    assert "backend.api_key_env names the environment variable whose value is sent as the API key to " \
           "backend.base_url" in (REPO / "config/README.md").read_text()
    server = FakeServer()
    try:
        monkeypatch.setenv("ICDA_TEST_KEY", "sk-test-123")
        with caplog.at_level(logging.INFO, logger="icda.generate"):
            generate("d", llm_spec(server.url, per_label=1, api_key_env="ICDA_TEST_KEY"), tmp_path / "r.jsonl",
                     cache=tmp_path / "c.jsonl")
    finally:
        server.close()
    assert f"sending the value of $ICDA_TEST_KEY as the API key to {server.url}" in caplog.text
    assert "sk-test-123" not in caplog.text
