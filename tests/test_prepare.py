"""The prepare step (icda.steps.prepare) on unusable or suspicious data: a test set without ground truth
stops it, low coverage, train/test overlap and contradictory duplicates are counted and warned, and a
failed prepare leaves no old output."""

from __future__ import annotations

import logging

import pytest

from icda.errors import DataError
from icda.steps.prepare import prepare_dataset
from toy_workflow import TOY, toy_files


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
    assert stats["test_overlap"] == {"train": {"exact": 2, "near": 0}, "dev": {"exact": 0, "near": 0}}
    assert ("toy: 2 of 20 train and 0 of 10 dev documents share their text with a test document (2 the same "
            "text after normalising case and whitespace, 0 near-duplicate(s)") in caplog.text


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


def test_a_config_without_the_dataset_to_work_on_is_refused_naming_the_command(tmp_path, capsys):
    from icda.cli import main

    config = tmp_path / "config.yaml"
    config.write_text("data_dir: data\ndatasets: {toy: {source: synthetic}}\n", encoding="utf-8")
    assert main(["prepare", "--config", str(config), "--out-dir", str(tmp_path / "out")]) == 2
    assert "--config needs --dataset NAME. Fix: name the dataset to prepare" in capsys.readouterr().err


def test_a_small_training_split_is_warned_with_the_measured_size(tmp_path, caplog):
    from icda.steps.prepare import SMALL_TRAIN, small_data_warning

    toy_files(tmp_path / "data")
    with caplog.at_level(logging.WARNING):
        stats = prepare_dataset("toy", TOY, tmp_path / "data", tmp_path / "out")
    assert stats["small_data"].startswith("toy: 20 training documents, fewer than 300")
    assert "15 of 24 runs" in caplog.text and "judging-a-run" in caplog.text and "run_agreement" in caplog.text
    assert small_data_warning("toy", SMALL_TRAIN) is None


def test_a_dataset_file_reached_through_a_link_out_of_data_dir_is_refused(tmp_path):
    """data_dir/mine -> /elsewhere passed the lexical check (no '..'): the
    path is resolved, at prepare and when the workflow reads its config."""
    from icda.data.dataset_spec import validate_spec
    from icda.errors import ConfigError
    from icda.steps.prepare import read_splits
    from icda.workflow_config.availability import availability

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for split in ("train", "dev", "test"):
        (elsewhere / f"{split}.txt").write_text("1\tthe food was good.[SEP]we came.\n0\tthe food was bad.[SEP]we left.\n")
    data = tmp_path / "data"
    data.mkdir()
    (data / "mine").symlink_to(elsewhere)
    raw = {"train": "mine/train.txt", "dev": "mine/dev.txt", "test": "mine/test.txt", "keywords": ["food"]}
    with pytest.raises(ConfigError, match=r"datasets\.mine\.train: .* resolves to .*elsewhere/train\.txt, outside "
                                          r"data_dir .* Fix: set data_dir"):
        read_splits("mine", validate_spec("mine", raw), data)
    with pytest.raises(ConfigError, match="outside data_dir"):
        availability({"data_dir": str(data), "datasets": {"mine": raw}, "download": False})
    direct = {k: v.replace("mine/", "elsewhere/") if isinstance(v, str) else v for k, v in raw.items()}
    assert len(read_splits("mine", validate_spec("mine", direct), tmp_path)["train"]) == 2  # no link: read
