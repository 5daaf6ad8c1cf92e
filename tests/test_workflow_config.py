"""icda.workflow_config: which datasets run, what is reported missing, settings, runs and candidates, and what stops
the workflow at start-up (each with the fix)."""

import pytest
import yaml

from icda.workflow_config import availability, config_check, dataset_inputs, plan, run_settings
from icda.errors import ConfigError, DataError
from test_workflow import REPO, snakemake
from toy_workflow import TOY, toy_files, workflow_args


def _config(tmp_path):
    (tmp_path / "present").mkdir(exist_ok=True)
    for split in ("train", "dev", "test"):
        (tmp_path / "present" / split).write_text("1\ta[SEP]b\n")
    return {
        "data_dir": str(tmp_path),
        "run_datasets": [],
        "runs": [[42, 43, 44], [45, 46, 47]],
        "comp": {"lambdas": [0.5, 1.0], "seeds": 2},
        "encoder": {"max_sentences": 16},
        "model": {"d_model": 128},
        "train": {"lr": 0.001, "max_epochs": 20},
        "icda": {"max_iters": 10, "warm_start": True},
        "overrides": {"present": {"train": {"lr": 0.01}, "icda": {"warm_start": False}}},
        "datasets": {
            "present": {"train": "present/train", "dev": "present/dev", "test": "present/test"},
            "absent": {"train": "absent/train", "dev": "absent/dev", "test": "absent/test",
                       "url": "https://example.org/data/"},
            "synthetic": {"source": "synthetic", "synthetic": {"n_train": 10, "n_dev": 4, "n_test": 4}},
        },
    }


def test_absent_public_dataset_is_downloaded_unless_download_is_off(tmp_path):
    config = _config(tmp_path)
    missing = [str(tmp_path / "absent" / split) for split in ("train", "dev", "test")]
    assert availability.downloads(config) == {"absent": missing}
    present, absent = availability.availability(config)
    assert present == ["present", "absent", "synthetic"] and absent == {}
    present, absent = availability.availability(config | {"download": False})
    assert present == ["present", "synthetic"]
    assert list(absent) == ["absent"]
    assert "absent/train" in absent["absent"] and "download" in absent["absent"]


def test_a_dataset_whose_server_cannot_be_reached_is_listed_with_its_urls_and_paths(tmp_path, http_server):
    config = _config(tmp_path)
    config["datasets"]["absent"]["url"] = "http://127.0.0.1:9/data/"  # connection refused
    unreachable = availability.unreachable_downloads(config, timeout=2)
    assert list(unreachable) == ["absent"]
    for split in ("train", "dev", "test"):
        assert f"http://127.0.0.1:9/data/absent/{split} → {tmp_path / 'absent' / split}" in unreachable["absent"]
    present, absent = availability.availability(config, unreachable)
    assert present == ["present", "synthetic"] and absent == unreachable
    report = availability.unfetched_report(unreachable)
    assert report.startswith("1 dataset(s) could not be downloaded") and "absent: could not be downloaded" in report
    assert availability.unfetched_report({}) == ""
    # named in run_datasets: not probed (its download job runs and fails with the same advice)
    assert availability.unreachable_downloads(config | {"run_datasets": ["absent"]}) == {}
    assert availability.unreachable_downloads(config | {"download": False}) == {}
    # a server that answers, even with 404 for the file, is reachable
    config["datasets"]["absent"]["url"] = http_server
    assert availability.unreachable_downloads(config, timeout=2) == {}



def test_the_missing_files_are_listed_once_at_start_up(tmp_path, monkeypatch):
    """The workflow lists the missing files once (``DOWNLOADS`` in common.smk) and hands them to
    the probe and to availability, which then list nothing again and answer the same."""
    config = _config(tmp_path)
    monkeypatch.setattr(availability, "unreachable_urls", lambda urls, timeout: {url: "refused" for url in urls})
    monkeypatch.setenv(availability.UNREACHABLE_ENV, "")  # (restored after the test)
    listed = availability.downloads(config)
    expected = availability.availability(config, availability.unreachable_downloads(config))
    calls = []
    monkeypatch.setattr(availability, "downloads", lambda config: calls.append(config) or listed)
    unreachable = availability.unreachable_downloads_once(config, True, listed)
    assert list(unreachable) == ["absent"]
    assert availability.availability(config, unreachable, listed) == expected
    assert calls == []
    availability.availability(config, unreachable)  # without the list: it makes its own
    assert len(calls) == 1


def test_only_the_download_spec_has_the_checksums(tmp_path):
    config = _config(tmp_path)
    config["datasets"]["absent"]["md5"] = {"absent/train": "0" * 32}
    assert "md5" not in dataset_inputs.dataset_spec(config, "absent")  # a new checksum reruns no prepare
    assert dataset_inputs.dataset_spec(config, "absent", download=True)["md5"] == {"absent/train": "0" * 32}


def test_non_public_or_url_less_dataset_is_never_downloaded(tmp_path):
    config = _config(tmp_path)
    config["datasets"]["absent"]["public"] = False
    config["datasets"]["nourl"] = {"train": "n/train", "dev": "n/dev", "test": "n/test"}
    assert availability.downloads(config) == {}
    present, absent = availability.availability(config)
    assert present == ["present", "synthetic"] and list(absent) == ["absent", "nourl"]
    assert "not public" in absent["absent"]


def test_run_datasets_must_name_configured_datasets(tmp_path):
    config = _config(tmp_path) | {"run_datasets": ["present", "nope"]}
    with pytest.raises(ConfigError, match="nope"):
        availability.selected_datasets(config)


def test_overrides_merge_into_one_section_only(tmp_path):
    settings = run_settings.dataset_settings(_config(tmp_path), "present")
    assert settings["train"] == {"lr": 0.01, "max_epochs": 20}
    assert run_settings.dataset_settings(_config(tmp_path), "synthetic")["train"]["lr"] == 0.001


def test_candidates_and_comp_grid(tmp_path):
    config = _config(tmp_path)
    assert plan.candidates(config, 2, 0, "synthetic") == ["seed45", "seed46", "seed47"]
    assert plan.candidates(config, 1, 3, "synthetic") == ["seed42", "seed43", "seed44", "warm"]
    assert plan.candidate_seeds(config, 1, 1, "synthetic") == {"seed42": 42, "seed43": 43, "seed44": 44, "warm": 42}
    assert plan.candidates(config, 1, 3, "present") == ["seed42", "seed43", "seed44"]  # icda.warm_start off
    assert plan.comp_grid(config, 1) == [
        {"lam": 0.5, "seed": 42}, {"lam": 0.5, "seed": 43}, {"lam": 1.0, "seed": 42}, {"lam": 1.0, "seed": 43}]
    with pytest.raises(ConfigError, match="run 3"):
        plan.run_seeds(config, 3)


def test_gpu_requested_when_finetuning_or_device_is_cuda(tmp_path):
    config = _config(tmp_path)
    assert run_settings.gpus(config, "present") == 0  # frozen encoder, device auto
    config["overrides"]["present"]["model"] = {"finetune": True}
    assert run_settings.gpus(config, "present") == 1
    assert run_settings.gpus(config | {"device": "cuda"}, "synthetic") == 1
    assert run_settings.gpus(config | {"device": "cpu"}, "synthetic") == 0


def test_icda_overrides_of_a_dataset_reach_every_step(tmp_path):
    """overrides: {<dataset>: {icda: ...}} changes that dataset's settings.json, its checkpoint
    bound, and what pools, augment and converge do (they read settings.json, not the global
    config)."""
    import json

    from icda.cli import main
    from icda.counterfactual import augmented_documents
    from icda.data.document import Document, write_documents
    from icda.records import CandidateScore, Choice, Decision, Pools, Predictions, SplitPredictions
    from icda.settings import Settings

    config = _config(tmp_path)
    config["overrides"]["present"] = {"icda": {"max_iters": 1, "pool_fraction": 0.5, "pool_base": "class", "dev_seed": 7,
                                               "pool_min": 3},
                                      "encoder": {"max_sentences": 3}}
    settings = run_settings.dataset_settings(config, "present")
    assert plan.max_iters(config, "present") == 1 and plan.max_iters(config, "synthetic") == 10
    settings_path = tmp_path / "settings.json"
    settings_path.write_text(json.dumps(settings))
    assert Settings.load(settings_path).icda.pool_fraction == 0.5

    data = tmp_path / "data"
    docs = [Document(f"d{i}", i % 2, tuple(f"doc {i} sentence {s}" for s in range(4))) for i in range(8)]
    for split in ("train", "dev"):
        write_documents(docs, data / f"{split}.jsonl")
    split = SplitPredictions(prob_positive=[0.1, 0.9] * 4, positions=[[1]] * 8)
    Predictions(train=split, dev=split).write(tmp_path / "seed42/predictions.json")
    chosen = CandidateScore(name="seed42", candidate_dir=str(tmp_path / "seed42"), warm_start=False, seed=42,
                            dev_loss=0.1, original_dev_loss=None, dev_accuracy=0.9, degenerate=False, best_epoch=2,
                            delta_A=None, score=0.1)
    choice = Choice(iteration=1, candidate_loss="augmented_dev", previous_delta_A=None, chosen=chosen)
    choice.write(tmp_path / "choice.json")

    common = ["--settings", str(settings_path), "--data-dir", str(data)]
    assert main(["pools", "--choice", str(tmp_path / "choice.json"), *common, "--out", str(tmp_path / "pools.json")]) == 0
    pools = Pools.read(tmp_path / "pools.json")
    assert pools.train.stats["pool_fraction"] == 0.5
    # pool_min floors the training pools only: the dev counterfactuals keep the share
    assert pools.train.stats["pool_documents_per_class"] == {"0": 3, "1": 3}
    assert pools.dev.stats["pool_documents_per_class"] == {"0": 2, "1": 2}
    assert main(["augment", "--pools", str(tmp_path / "pools.json"), *common, "--out-dir", str(tmp_path / "aug")]) == 0
    written = [json.loads(line) for line in (tmp_path / "aug/train.jsonl").open()]
    assert written == augmented_documents(docs, pools.train.plan, 7)  # icda.dev_seed 7 of the override
    converge = ["converge", "--choice", str(tmp_path / "choice.json"), "--settings", str(settings_path),
                "--out", str(tmp_path / "converge.json")]
    assert main(converge) == 2  # iteration 1 without the decision of iteration 0: a ConfigError
    Decision(iteration=0, stop=False, converged=False, reason="").write(tmp_path / "converge0.json")
    assert main([*converge, "--previous", str(tmp_path / "converge0.json")]) == 0
    decision = Decision.read(tmp_path / "converge.json")
    assert decision.stop and "max_iters=1" in decision.reason  # the global max_iters is 10


# ------------------------------------------------------------------ names that become files and folders


def _checked(config: dict) -> None:
    from icda.schema import SCHEMA

    config_check.check_config(config, SCHEMA)


_TOY = {"source": "synthetic"}


@pytest.mark.parametrize("group, overwritten", [
    ("compute", "compute.csv"), ("summary", "summary.md"), ("all_results", "all_results.csv"),
    ("compute_jobs", "compute_jobs.csv"), ("your_datasets", "datasets in no group"), ("Summary", "summary.md"),
])
def test_report_group_named_like_a_results_table_is_refused(group, overwritten):
    with pytest.raises(ConfigError) as err:
        _checked({"datasets": {"toy": _TOY}, "report": {"groups": {"real": ["toy"], group: ["toy"]}}})
    message = str(err.value)
    assert message.startswith(f"report.groups.{group}: ") and overwritten in message
    assert "Fix: rename the group" in message


@pytest.mark.parametrize("group", ["../../../escaped_table", "a b", "tables/x", ""])
def test_report_group_names_follow_the_dataset_name_pattern(group):
    with pytest.raises(ConfigError) as err:
        _checked({"datasets": {"toy": _TOY}, "report": {"groups": {group: ["toy"]}}})
    assert f"report.groups: {group!r} does not match '^[A-Za-z0-9_-]+$'" in str(err.value)


def test_report_groups_from_a_file_are_checked_like_the_config(tmp_path):
    import json

    from icda.report.inputs import load_groups

    for groups, problem in (({"compute": ["toy"]}, "compute.csv"), ({"../escaped": ["toy"]}, "letters, digits")):
        (tmp_path / "groups.json").write_text(json.dumps(groups))
        with pytest.raises(ConfigError, match=problem):
            load_groups(tmp_path / "groups.json")
    (tmp_path / "groups.json").write_text(json.dumps({"table2_llm": ["connect"]}))
    assert load_groups(tmp_path / "groups.json") == {"table2_llm": ["connect"]}


def test_dataset_names_equal_but_for_case_are_refused():
    with pytest.raises(ConfigError) as err:
        _checked({"datasets": {"mine": _TOY, "other": _TOY, "Mine": _TOY}})
    message = str(err.value)
    assert message.startswith("datasets: 'mine' and 'Mine' differ only in case") and "'Mine'" in message
    assert "Fix: rename one of them" in message


def test_dataset_names_with_the_same_column_title_are_refused():
    with pytest.raises(ConfigError) as err:
        _checked({"datasets": {"palate": _TOY, "palatability": _TOY}})
    assert str(err.value).startswith("datasets: 'palate' and 'palatability' get the same column title 'Palatability'")


@pytest.mark.parametrize("name", ["tables", "cache", "plots", "logs", "theory", "benchmarks", "sweep", "Logs"])
def test_dataset_named_like_a_results_folder_is_refused(name):
    with pytest.raises(ConfigError) as err:
        _checked({"datasets": {"toy": _TOY, name: _TOY}})
    message = str(err.value)
    assert message.startswith(f"datasets.{name}: ") and f"results/{name.lower()}/" in message
    assert "Fix: rename the dataset" in message


def test_distinct_dataset_and_group_names_pass():
    _checked({"datasets": {"mine": _TOY, "yours": _TOY, "synthetic": _TOY},
              "report": {"groups": {"table1": ["mine", "yours"], "compute_cost": ["synthetic"]}}})


# ------------------------------------------------------------------ values the schema must refuse or read


@pytest.mark.parametrize("config, key", [
    ({"n_runs": 1.0}, "n_runs: 1.0 is not of type 'integer'"),
    ({"comp": {"seeds": 1.0}}, "comp.seeds: 1.0 is not of type 'integer'"),
    ({"runs": [[42.0, 43]]}, "runs.0.0: 42.0 is not of type 'integer'"),
    ({"model": {"d_model": 32.0}}, "model.d_model: 32.0 is not of type 'integer'"),
    ({"overrides": {"toy": {"model": {"k": 2.0}}}}, "overrides.toy.model.k: 2.0 is not of type 'integer'"),
    ({"overrides": {"toy": {"train": {"lr": "fast"}}}}, "overrides.toy.train.lr: 'fast' is not of type 'number'"),
    ({"overrides": {"toy": {"train": {"learning_rate": 0.1}}}}, "overrides.toy.train.learning_rate: unknown key"),
    ({"sweep": {"points": {"p": {"model": {"layers": 1.5}}}}}, "sweep.points.p.model.layers: 1.5 is not of type"),
    ({"device": "tpu"}, "device: 'tpu' does not match"),
    ({"overrides": {"toy": {"device": "tpu"}}}, "overrides.toy.device: 'tpu' does not match"),
])
def test_config_values_of_the_wrong_kind_are_refused_with_their_key(config, key):
    """A float where an integer is due would end as a traceback inside a job (``range(1.0)``,
    ``seed42.0/``); an override is checked like the key it overrides; ``device`` is a device."""
    with pytest.raises(ConfigError) as err:
        _checked({"datasets": {"toy": _TOY}} | config)
    assert key in str(err.value)


def test_yaml12_floats_are_read_as_numbers_where_a_number_is_due():
    """PyYAML reads ``lr: 1e-4`` as the string "1e-4" (YAML 1.1 wants ``1.0e-4``); the docs write
    it the YAML 1.2 way, so the check reads it as the float, in overrides too; a string where a
    string is due stays one."""
    import yaml

    config = yaml.safe_load("datasets: {toy: {source: synthetic}}\ntrain: {lr: 1e-4}\n"
                            "overrides: {toy: {train: {lr: 5E-3, weight_decay: 1e-2}}}\n"
                            "data_dir: 1e-4\ndevice: cuda:1\n")
    assert config["train"]["lr"] == "1e-4"  # what PyYAML gives
    _checked(config)
    assert config["train"]["lr"] == 1e-4 and config["overrides"]["toy"]["train"] == {"lr": 5e-3, "weight_decay": 0.01}
    assert config["data_dir"] == "1e-4"  # a path, not a number


def test_report_group_of_an_undefined_dataset_is_refused():
    with pytest.raises(ConfigError) as err:
        _checked({"datasets": {"toy": _TOY}, "report": {"groups": {"mine": ["toy", "tyo"]}}})
    assert str(err.value).startswith("report.groups.mine: 'tyo' is not a dataset under `datasets` (configured: toy)")
    assert "Fix: correct the name" in str(err.value)


def test_names_longer_than_a_file_name_allows_are_refused_at_start():
    with pytest.raises(ConfigError, match="datasets: '" + "a" * 65 + "' is too long"):
        _checked({"datasets": {"a" * 65: _TOY}})
    with pytest.raises(ConfigError, match="is too long"):
        _checked({"datasets": {"toy": _TOY}, "report": {"groups": {"g" * 300: ["toy"]}}})
    _checked({"datasets": {"a" * 64: _TOY}})


# ------------------------------------------------------------------ refused at start-up, with the fix


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


def test_more_runs_than_seed_lists_says_the_fix(tmp_path):
    proc = snakemake("-n", *workflow_args(tmp_path, tmp_path, n_runs=3), check=False)  # runs: 1 list
    assert proc.returncode != 0
    assert "n_runs: 3, but `runs` has 1 seed lists. Fix: lower n_runs to 1" in proc.stdout + proc.stderr
    assert plan.run_numbers({"n_runs": 2, "runs": [[1], [2], [3]]}) == [1, 2]


def test_seed_lists_that_repeat_or_shrink_a_run_are_refused():
    base = {"n_runs": 1, "runs": [[42, 43]], "comp": {"seeds": 2}}
    with pytest.raises(ConfigError, match=r"runs: run 1 has the seeds \[42, 42\], which repeat \[42\].*Fix: give"):
        plan.run_numbers(base | {"runs": [[42, 42]]})
    with pytest.raises(ConfigError, match=r"runs: runs 1 and 2 have the same seeds \[1, 2\].*Fix: give run 2"):
        plan.run_numbers(base | {"n_runs": 2, "runs": [[1, 2], [2, 1], [3, 4]]})
    with pytest.raises(ConfigError, match="comp.seeds: 5, but run 1 has 2 seeds.* Fix: lower comp.seeds to 2"):
        plan.run_numbers(base | {"comp": {"seeds": 5}})
    assert plan.run_numbers(base | {"n_runs": 2, "runs": [[1, 2], [3, 4], [1, 2]]}) == [1, 2]  # run 3 unused


def test_invalid_model_setting_stops_the_dry_run(tmp_path):
    """A value only the training command checks (d_model not divisible by heads, here in one
    dataset's overrides) stops the workflow at start, naming the dataset, not after embed."""
    toy_files(tmp_path / "data")
    proc = snakemake("-n", *workflow_args(tmp_path, tmp_path / "data", run_datasets=["toy"],
                                          overrides={"toy": {"model": {"heads": 3}}}), check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "config, dataset 'toy'.model: d_model=32 must be divisible by heads=3" in out, out[-2000:]


@pytest.mark.parametrize("model, message", [
    ({"k": 20}, "config, dataset 'synthetic': model.k = 20 is not smaller than encoder.max_sentences = 12, "
                "so every sentence the model sees would be selected"),
    ({"k": 5}, "config, dataset 'synthetic': model.k = 5 is not smaller than datasets.synthetic.min_sentences = 5"),
])
def test_k_that_selects_every_sentence_stops_the_workflow_at_start(tmp_path, model, message):
    proc = snakemake("-n", *workflow_args(tmp_path, tmp_path / "data", run_datasets=["synthetic"], model=model),
                     check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and message in out and "Fix: " in out, out[-2000:]
    assert f"set model.k to {min(model['k'], 12) - 1} or less" in out, out[-2000:]


@pytest.mark.parametrize("min_sentences, k, fix", [
    # k = 1 (the default) and min_sentences = 1: only raising min_sentences can work (k >= 1)
    (1, 1, "Fix: set datasets.toy.min_sentences: 2 (or more; prepare then drops documents of fewer sentences)"),
    (3, 3, "Fix: set datasets.toy.min_sentences: 4 (or more; prepare then drops documents of fewer "
           "sentences), or set model.k to 2 or less"),
])
def test_k_not_below_min_sentences_is_refused_with_only_fixes_that_work(min_sentences, k, fix):
    config = {"datasets": {"toy": TOY | {"min_sentences": min_sentences}}, "model": {"k": k}}
    with pytest.raises(ConfigError) as err:
        run_settings.check_settings(config, ["toy"])
    assert str(err.value).endswith(fix), str(err.value)
    assert "below 1" not in str(err.value) and "to 0" not in str(err.value)
    # each proposed fix passes the check
    run_settings.check_settings(config | {"datasets": {"toy": TOY | {"min_sentences": k + 1}}}, ["toy"])
    if min_sentences >= 2:
        run_settings.check_settings(config | {"model": {"k": min_sentences - 1}}, ["toy"])


def test_the_default_min_sentences_keeps_short_reviews_with_the_default_k():
    """A user's dataset without min_sentences passes with the default model.k (1) and keeps
    documents of 2 or more sentences (4-sentence reviews survive)."""
    from icda.data.dataset_spec import validate_spec

    spec = {key: value for key, value in TOY.items() if key != "min_sentences"}
    assert validate_spec("toy", spec)["min_sentences"] == 2
    run_settings.check_settings({"datasets": {"toy": spec}}, ["toy"])


def test_overrides_of_an_unknown_dataset_are_refused(tmp_path):
    toy_files(tmp_path / "data")
    config = {"data_dir": str(tmp_path / "data"), "datasets": {"toy": TOY}, "overrides": {"tyo": {"train": {"lr": 1}}}}
    with pytest.raises(ConfigError, match="overrides.tyo: there is no dataset 'tyo' under `datasets` "
                                          r"\(configured: toy\), so these overrides would be ignored. Fix"):
        run_settings.check_settings(config, ["toy"])


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


def test_the_paper_config_keeps_the_papers_read_out_and_selector_on_every_dataset():
    """config/paper.yaml over config/config.yaml, merged as Snakemake merges them (key by key): no
    dataset, the hotel aspects included, keeps the CPU default's hotel overrides (#27, #28)."""
    from snakemake.utils import update_config

    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    update_config(config, yaml.safe_load((REPO / "config/paper.yaml").read_text()))
    for name in config["datasets"]:
        merged = run_settings.dataset_settings(config, name)
        assert (merged["encoder"].get("layers", 1), merged["model"].get("selector_input", "sentence"),
                merged["icda"].get("final_selector", "chosen")) == (1, "sentence", "chosen"), name
    default = yaml.safe_load((REPO / "config/config.yaml").read_text())
    assert run_settings.dataset_settings(default, "location")["icda"]["final_selector"] == "ensemble"


@pytest.mark.parametrize("datasets, figures, wanted", [
    (["reviews"], "auto", False), (["reviews", "synthetic"], "auto", True), (["restaurant", "connect"], "auto", True),
    (["reviews"], True, True), (["synthetic"], False, False),
])
def test_theory_figures_are_built_for_a_paper_dataset_or_when_asked(datasets, figures, wanted):
    assert plan.theory_wanted({"theory": {"figures": figures}}, datasets) is wanted
    assert "synthetic" in plan.paper_datasets() and "restaurant" in plan.paper_datasets()


def test_a_run_of_only_your_own_dataset_plans_no_theory_figures(tmp_path):
    """The dry run of the toy dataset alone (one dry run: each costs seconds) has no theory job,
    writes its table as your_datasets, and with keep_models: chosen prunes its models last; the
    theory.figures and keep_models choices themselves: the unit tests beside."""
    from toy_workflow import planned_jobs

    toy_files(tmp_path / "data")
    proc = snakemake("-n", *workflow_args(tmp_path, tmp_path / "data", run_datasets=["toy"], keep_models="chosen"))
    jobs = planned_jobs(proc)
    assert "theory" not in jobs and jobs["prune_models"] == jobs["prepare"] == 1, jobs
    assert "results/tables/your_datasets.md" in proc.stdout + proc.stderr


@pytest.mark.parametrize("icda, runs, problem", [
    ({"stop_rule": "paper", "final_choice": "agreement_guard"}, None,
     "icda.final_choice = agreement_guard is ignored under icda.stop_rule = paper"),
    ({"candidate_choice": "agreement", "final_choice": "last"}, [[42], [45, 46]],
     "icda.candidate_choice = agreement read the fresh candidates' agreement, but run 1 has one seed"),
    ({"candidate_choice": "loss", "final_choice": "agreement_guard"}, [[42, 43], [45]],
     "icda.final_choice = agreement_guard read the fresh candidates' agreement, but run 2 has one seed"),
])
def test_loop_settings_that_would_be_ignored_are_refused(tmp_path, icda, runs, problem):
    """final_choice under stop_rule: paper, and agreement-based choices with one
    seed a run, were silently ignored."""
    config = _config(tmp_path)
    config["icda"] |= icda
    config["overrides"] = {}
    if runs is not None:
        config["runs"] = runs
    with pytest.raises(ConfigError, match="Fix: ") as err:
        run_settings.check_settings(config, ["synthetic"])
    assert problem in str(err.value)
    config["icda"] |= {"stop_rule": "rationales", "candidate_choice": "loss", "final_choice": "last"}
    run_settings.check_settings(config, ["synthetic"])  # the same runs with settings they can honour
