"""icda.workflow: which datasets run, what is reported missing, settings and candidates."""

import pytest

from icda import workflow
from icda.errors import ConfigError


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
        "icda": {"max_iters": 10},
        "overrides": {"present": {"train": {"lr": 0.01}}},
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
    assert workflow.downloads(config) == {"absent": missing}
    present, absent = workflow.availability(config)
    assert present == ["present", "absent", "synthetic"] and absent == {}
    present, absent = workflow.availability(config | {"download": False})
    assert present == ["present", "synthetic"]
    assert list(absent) == ["absent"]
    assert "absent/train" in absent["absent"] and "download" in absent["absent"]


def test_only_the_download_spec_has_the_checksums(tmp_path):
    config = _config(tmp_path)
    config["datasets"]["absent"]["md5"] = {"absent/train": "0" * 32}
    assert "md5" not in workflow.dataset_spec(config, "absent")  # a new checksum reruns no prepare
    assert workflow.dataset_spec(config, "absent", download=True)["md5"] == {"absent/train": "0" * 32}


def test_non_public_or_url_less_dataset_is_never_downloaded(tmp_path):
    config = _config(tmp_path)
    config["datasets"]["absent"]["public"] = False
    config["datasets"]["nourl"] = {"train": "n/train", "dev": "n/dev", "test": "n/test"}
    assert workflow.downloads(config) == {}
    present, absent = workflow.availability(config)
    assert present == ["present", "synthetic"] and list(absent) == ["absent", "nourl"]
    assert "not public" in absent["absent"]


def test_run_datasets_must_name_configured_datasets(tmp_path):
    config = _config(tmp_path) | {"run_datasets": ["present", "nope"]}
    with pytest.raises(ConfigError, match="nope"):
        workflow.selected_datasets(config)


def test_overrides_merge_into_one_section_only(tmp_path):
    settings = workflow.dataset_settings(_config(tmp_path), "present")
    assert settings["train"] == {"lr": 0.01, "max_epochs": 20}
    assert workflow.dataset_settings(_config(tmp_path), "synthetic")["train"]["lr"] == 0.001


def test_candidates_and_comp_grid(tmp_path):
    config = _config(tmp_path)
    assert workflow.candidates(config, 2, 0) == ["seed45", "seed46", "seed47"]
    assert workflow.candidates(config, 1, 3) == ["seed42", "seed43", "seed44", "warm"]
    assert workflow.comp_candidates(config, 1) == [
        "lambda0.5_seed42", "lambda0.5_seed43", "lambda1.0_seed42", "lambda1.0_seed43"]
    with pytest.raises(ConfigError, match="run 3"):
        workflow.run_seeds(config, 3)


def test_gpu_requested_when_finetuning_or_device_is_cuda(tmp_path):
    config = _config(tmp_path)
    assert workflow.gpus(config, "present") == 0  # frozen encoder, device auto
    config["overrides"]["present"]["model"] = {"finetune": True}
    assert workflow.gpus(config, "present") == 1
    assert workflow.gpus(config | {"device": "cuda"}, "synthetic") == 1
    assert workflow.gpus(config | {"device": "cpu"}, "synthetic") == 0
