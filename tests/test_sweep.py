"""The dev-only tuning sweep: table, ranks, the choice rule, and the records it reads."""

import json

import pytest

from icda.sweep import SweepRecord, choose, read_record, sweep_table, to_markdown
from icda.workflow_config.availability import sweep_datasets
from icda.workflow_config.run_settings import sweep_settings


def _rec(point, dataset, seed, precision, hist=(1, 0, 0, 0, 0, 0, 0, 0, 0, 0)):
    return SweepRecord(point, dataset, seed, precision, 0.8, 0.5, 3, 5, False, list(hist),
                       min(1.0, 2 * precision), max(0.0, 2 * precision - 1))


def test_mean_rank_over_datasets_decides_not_the_mean_precision():
    # "big" wins one dataset by a mile and loses the other two; "steady" is second-best everywhere
    # and first on one: mean ranks big (1+3+3)/3, steady (2+1+2)/3, base (3+2+1)/3
    records = []
    for seed in (1, 2):
        records += [_rec("big", "a", seed, 0.95), _rec("big", "b", seed, 0.10), _rec("big", "c", seed, 0.10),
                    _rec("steady", "a", seed, 0.60), _rec("steady", "b", seed, 0.60), _rec("steady", "c", seed, 0.55),
                    _rec("base", "a", seed, 0.50), _rec("base", "b", seed, 0.55), _rec("base", "c", seed, 0.60)]
    table = sweep_table(records)
    ranks = table.groupby("point")["mean_rank"].first().to_dict()
    assert ranks == pytest.approx({"big": 7 / 3, "steady": 5 / 3, "base": 2.0})
    assert choose(table) == "steady"
    row = table[(table.point == "big") & (table.dataset == "a")].iloc[0]
    assert row["precision"] == pytest.approx(95.0) and row["precision_sd"] == pytest.approx(0.0)
    assert row["positions"] == "2 0 0 0 0 0 0 0 0 0"  # summed over the two seeds
    assert (row["precision_class0"], row["precision_class1"]) == pytest.approx((100.0, 90.0))
    md = to_markdown(table, {"steady": {"model": {"layers": 2}}})
    assert "**steady**" in md and "| 95.0 ± 0.0 | 100.0 / 90.0 |" in md


def test_ties_in_mean_rank_go_to_the_higher_mean_precision():
    records = [_rec("x", "a", 1, 0.9), _rec("x", "b", 1, 0.2), _rec("y", "a", 1, 0.3), _rec("y", "b", 1, 0.4)]
    assert choose(sweep_table(records)) == "x"  # both mean rank 1.5; x has mean 55 vs 35


def test_read_record_joins_the_dev_evaluation_with_its_history(tmp_path):
    (tmp_path / "history.json").write_text(json.dumps({
        "dev_loss": 0.4, "dev_accuracy": 0.9, "best_epoch": 2, "degenerate": False, "seed": 1,
        "seconds_per_epoch": 0.1, "epochs": [{"epoch": e} for e in (-1, 0, 1, 2, 3)]}))
    (tmp_path / "dev_eval.json").write_text(json.dumps({
        "point": "base", "dataset": "synthetic", "seed": 1, "precision": 0.75, "split": "dev",
        "recall": 0.5, "f1": 0.6, "accuracy": 0.9,
        "position_histogram": [0] * 9 + [4], "model": str(tmp_path / "model.pt"),
        "precision_by_class": {"0": 1.0, "1": 0.5}}))
    rec = read_record(tmp_path / "dev_eval.json")
    assert (rec.point, rec.seed, rec.dev_precision, rec.epochs_trained, rec.best_epoch) == ("base", 1, 0.75, 4, 2)
    assert (rec.precision_class0, rec.precision_class1) == (1.0, 0.5)


def test_sweep_points_merge_over_the_dataset_settings_and_datasets_must_be_available():
    config = {
        "encoder": {"max_tokens": 32}, "model": {"layers": 1, "d_model": 128}, "train": {"lr": 1e-3},
        "icda": {}, "overrides": {"r": {"train": {"lr": 5e-4}}},
        "sweep": {"datasets": [], "points": {"deep": {"model": {"layers": 2}}}},
    }
    merged = sweep_settings(config, "r", "deep")
    assert merged["model"] == {"layers": 2, "d_model": 128, "n_classes": 2} and merged["train"] == {"lr": 5e-4}
    assert sweep_datasets(config, ["r", "s"]) == ["r", "s"]
    config["sweep"]["datasets"] = ["hotel"]
    with pytest.raises(Exception, match="sweep.datasets: \\['hotel'\\] are not available"):
        sweep_datasets(config, ["r"])
