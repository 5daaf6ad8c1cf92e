"""More than two classes: pools and counterfactuals over C classes, the degeneration
guard over every pair of classes, per-class precision, the records, the settings, the dataset
spec and the C-class synthetic benchmark. The binary results themselves are pinned by
tests/test_workflow.py (tiny_binary_pin.json) and tests/test_data.py (synthetic digests)."""

import json
from collections import Counter

import numpy as np
import pytest
import torch

from icda.counterfactual import augmented_documents, build_plan, draw_counterfactuals
from icda.steps.prepare import prepare_dataset
from icda.data.document import Document
from icda.data.sentence_ids import SentenceIdSplit, to_sentence_ids
from icda.data.synthetic import ASPECTS, LEVELS, sentence_bank, generate_synthetic
from icda.degeneration import check_degeneration
from icda.errors import ConfigError, DataError, IcdaError
from icda.metrics import rationale_metrics
from icda.records import AugmentationPlan, SplitPools, SplitPredictions
from icda.model_selection import cross_entropy
from icda.settings import IcdaSettings
from icda.workflow_config.run_settings import dataset_settings


def _three_class_predictions():
    """12 documents, 4 per class; per class the first three predicted right (most confident
    first), the fourth wrong."""
    labels = np.array([0] * 4 + [1] * 4 + [2] * 4)
    probs = []
    for y in range(3):
        for confidence in (0.9, 0.8, 0.5, 0.2):
            row = [(1 - confidence) / 2] * 3
            row[y] = confidence
            if confidence == 0.2:  # wrong: another class is the most probable
                row[(y + 1) % 3] = 0.7
                row[(y + 2) % 3] = 0.1
            probs.append(row)
    return labels, np.array(probs)


def test_pools_and_kept_originals_over_three_classes():
    labels, probs = _three_class_predictions()
    positions = [[d % 3] for d in range(12)]
    plan, stats = build_plan(labels, probs, positions, pool_fraction=0.5)
    assert stats["correct_per_class"] == {"0": 3, "1": 3, "2": 3}
    assert stats["m_per_class"] == 2  # min(12 // (2 * 3), 3, 3, 3): originals + counterfactuals <= N
    assert plan.kept == [0, 1, 4, 5, 8, 9]  # per class the two lowest errors 1 − P(y)
    assert plan.pools == {0: [(0, 0), (1, 1)], 1: [(4, 1), (5, 2)], 2: [(8, 2), (9, 0)]}
    with pytest.raises(IcdaError, match="correct predictions per class"):
        build_plan(labels, np.tile([0.1, 0.1, 0.8], (12, 1)), positions)


def _split(labels, n_slots=4):
    ids = torch.arange(len(labels) * n_slots).reshape(len(labels), n_slots)
    return SentenceIdSplit(ids, torch.tensor(labels), torch.full((len(labels),), n_slots), [])


def test_a_counterfactual_takes_another_class_uniformly_and_its_pool():
    labels = [0, 1, 2]
    split = _split(labels)
    pools = {0: [(0, 3)], 1: [(1, 3)], 2: [(2, 3)]}
    plan = AugmentationPlan(kept=[0, 1, 2], positions=[[0], [1], [2]], pools=pools)
    taken = Counter()
    rng = np.random.default_rng(0)
    for _ in range(600):
        cf = draw_counterfactuals(split, plan, rng)
        for row, (y, c) in enumerate(zip(labels, cf.labels.tolist())):
            assert c != y
            assert cf.drawn[row] == pools[c]  # the inserted sentence comes from A_c
            assert cf.ids[row, plan.positions[row][0]] == split.ids[c, 3]
            taken[y, c] += 1
    for y in labels:  # uniform over the two other classes: 300 ± 4 sd each
        others = [taken[y, c] for c in range(3) if c != y]
        assert all(abs(n - 300) < 4 * np.sqrt(600 * 0.25) for n in others), taken

    mapped = AugmentationPlan(plan.kept, plan.positions, pools, targets={0: [2], 1: [2], 2: [0]})
    for _ in range(20):
        assert draw_counterfactuals(split, mapped, rng).labels.tolist() == [2, 2, 0]


def test_a_binary_counterfactual_draws_only_the_sentences():
    """Two classes: the other class is taken without a draw, so the random stream (hence every
    binary result) is the one before multi-class."""
    split = _split([0, 1, 1])
    plan = AugmentationPlan(kept=[0, 1, 2], positions=[[0, 1], [2], [3]],
                            pools={0: [(0, 2), (0, 3)], 1: [(1, 0), (2, 1), (2, 2)]})
    cf = draw_counterfactuals(split, plan, np.random.default_rng(5))
    reference = np.random.default_rng(5)
    expected = [[plan.pools[1 - y][int(i)] for i in reference.integers(len(plan.pools[1 - y]), size=len(p))]
                for y, p in zip([0, 1, 1], plan.positions)]
    assert cf.labels.tolist() == [1, 0, 0] and cf.drawn == expected


def test_the_augment_steps_text_is_the_draw_training_makes():
    """The augment job draws on the text without torch (``augmented_documents``); for the same
    seed its counterfactuals are, sentence by sentence and label by label, the id rows that
    training draws (``draw_counterfactuals``), over three classes."""
    docs = [Document(f"d{i}", i % 3, [f"s{i}.{j}" for j in range(4)]) for i in range(6)]
    table = {s: n for n, s in enumerate(s for d in docs for s in d.sentences)}
    split = to_sentence_ids(docs, table.__getitem__, 4)
    plan = AugmentationPlan(kept=[0, 1, 2, 4], positions=[[0], [1, 2], [3], [0]],
                            pools={0: [(3, 1), (0, 2)], 1: [(4, 0)], 2: [(5, 3), (2, 0)]})
    records = augmented_documents(docs, plan, seed=11)
    cf = draw_counterfactuals(split, plan, np.random.default_rng(11))
    counterfactuals = [r for r in records if r["counterfactual"]]
    assert [r["source"] for r in records[:4]] == ["d0", "d1", "d2", "d4"]
    assert [r["label"] for r in counterfactuals] == cf.labels.tolist()
    assert [[table[s] for s in r["sentences"]] for r in counterfactuals] == cf.ids.tolist()


def test_degeneration_guard_compares_every_pair_of_classes():
    # classes 0 and 1 select anywhere; class 2 always the first sentence: degenerate
    selected = [[i // 2 % 10] for i in range(40)] + [[0]] * 20
    labels = [i % 2 for i in range(40)] + [2] * 20
    report = check_degeneration(selected, [10] * 60, labels, labels, n_classes=3)
    assert report.degenerate and report.max_bin_gap == pytest.approx(0.9)
    assert len(report.histograms) == 3 and sum(report.histograms[2]) == 20
    healthy = [[i // 3 % 10] for i in range(60)]
    labels = [i % 3 for i in range(60)]
    assert not check_degeneration(healthy, [10] * 60, labels, labels, n_classes=3).degenerate
    # a class never predicted right makes it degenerate
    assert check_degeneration(healthy, [10] * 60, labels, [min(y, 1) for y in labels], n_classes=3).degenerate


def test_precision_per_gold_class_and_cross_entropy_over_three_classes():
    metrics = rationale_metrics([[0], [1], [2]], [frozenset({0}), frozenset({0}), frozenset({2})], [3, 3, 3],
                                labels=[0, 1, 2], predictions=[0, 1, 1], n_classes=3)
    assert metrics["precision_by_class"] == {"0": 1.0, "1": 0.0, "2": 1.0}
    assert metrics["accuracy"] == pytest.approx(2 / 3)
    assert cross_entropy([[0.5, 0.25, 0.25], [0.1, 0.1, 0.8]], [0, 2]) == pytest.approx(
        -(np.log(0.5) + np.log(0.8)) / 2)
    assert cross_entropy([0.8, 0.3], [1, 0]) == pytest.approx(-(np.log(0.8) + np.log(0.7)) / 2)


def test_predictions_and_pools_records_with_three_classes():
    record = SplitPredictions.from_json({"prob_positive": [0.2, 0.1], "positions": [[0], [1]],
                                         "probabilities": [[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]]})
    assert record.predicted() == [0, 2] and record.class_probabilities == record.probabilities
    binary = SplitPredictions.from_json({"prob_positive": [0.2, 0.6], "positions": [[0], [1]]})
    assert binary.predicted() == [0, 1] and "probabilities" not in binary.to_json()
    with pytest.raises(ValueError, match=r"probabilities\[1\]"):
        SplitPredictions.from_json({"prob_positive": [0.2, 0.1], "positions": [[0], [1]],
                                    "probabilities": [[0.7, 0.2, 0.1], [0.1, 1.9, 0.8]]})

    plan = {"kept": [0], "positions": [[0]], "pools": {"0": [[0, 0]], "1": [[1, 0]], "2": [[2, 0]]},
            "targets": {"0": [2], "1": [0, 2], "2": [0]}}
    pools = SplitPools.from_json({"stats": {"n_documents": 3}, "plan": plan, "pool_sentences": {}})
    assert pools.plan.target_classes(1) == [0, 2] and pools.to_json()["plan"] == plan
    with pytest.raises(ValueError, match="classes"):
        SplitPools.from_json({"stats": {"n_documents": 3}, "pool_sentences": {},
                              "plan": plan | {"pools": {"0": [], "2": []}}})
    with pytest.raises(ValueError, match="plan.targets"):
        SplitPools.from_json({"stats": {"n_documents": 3}, "pool_sentences": {},
                              "plan": plan | {"targets": {"0": [0], "1": [0], "2": [0]}}})


def test_counterfactual_classes_setting_and_the_datasets_number_of_classes():
    settings = IcdaSettings(counterfactual_classes={"0": 2, "2": [0, 1]})
    assert settings.counterfactual_targets(3) == {0: [2], 1: [0, 2], 2: [0, 1]}
    assert IcdaSettings().counterfactual_targets(3) is None
    with pytest.raises(ConfigError, match="counterfactual_classes"):
        IcdaSettings(counterfactual_classes={"1": 1}).counterfactual_targets(3)
    with pytest.raises(ConfigError, match="counterfactual_classes"):
        IcdaSettings(counterfactual_classes={"0": 3}).counterfactual_targets(3)

    config = {"datasets": {"three": {"classes": 3}, "two": {}}, "model": {"d_model": 32}}
    assert dataset_settings(config, "three")["model"] == {"d_model": 32, "n_classes": 3}
    assert dataset_settings(config, "two")["model"]["n_classes"] == 2
    with pytest.raises(ConfigError, match="datasets.three.classes"):
        dataset_settings(config | {"overrides": {"three": {"model": {"n_classes": 3}}}}, "three")


def test_a_label_outside_the_datasets_classes_names_file_line_and_fix(tmp_path):
    lines = [{"label": y % 3, "sentences": [f"s{i} {j}" for j in range(5)]} for i, y in enumerate(range(12))]
    for split in ("train", "dev", "test"):
        (tmp_path / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    spec = {"train": "train.jsonl", "dev": "dev.jsonl", "test": "test.jsonl", "keywords": ["s1"]}
    with pytest.raises(DataError, match=r"train.jsonl:3: label 2 is outside the classes \[0, 1\].*"
                                        r"set datasets.mine.classes"):
        prepare_dataset("mine", spec, tmp_path, tmp_path / "out")
    stats = prepare_dataset("mine", spec | {"classes": 3}, tmp_path, tmp_path / "out")
    assert stats["splits"]["train"]["labels"] == {"0": 4, "1": 4, "2": 4}
    with pytest.raises(DataError, match=r"class\(es\) \[3\] missing"):
        prepare_dataset("mine", spec | {"classes": 4}, tmp_path, tmp_path / "out")


def _value_of() -> dict[str, tuple[str, int]]:
    """Sentence → (aspect, value) over the three-class bank (each sentence has one)."""
    lookup = {}
    for (aspect, value), sentences in sentence_bank(3).items():
        for s in sentences:
            assert s not in lookup, s  # a sentence expresses one value only
            lookup[s] = (aspect, value)
    return lookup


def test_synthetic_three_classes_are_balanced_and_agree_at_their_rates():
    docs = generate_synthetic(3000, 0, 0, p_x1=0.9, p_x2=0.75, seed=0, n_classes=3)["train"]
    assert Counter(d.label for d in docs) == {0: 1000, 1: 1000, 2: 1000}
    lookup = _value_of()
    agree, other = Counter(), Counter()
    for d in docs:
        (target,) = d.rationale
        assert lookup[d.sentences[target]][0] == "food"
        for s in d.sentences:
            if s in lookup:
                aspect, value = lookup[s]
                agree[aspect] += value == d.label
                if value != d.label:
                    other[aspect, (value - d.label) % 3] += 1
    se = np.sqrt(0.25 / len(docs))
    assert abs(agree["food"] / len(docs) - 0.9) < 4 * se
    assert abs(agree["service"] / len(docs) - 0.75) < 4 * se
    assert abs(agree["price"] / len(docs) - 1 / 3) < 4 * se  # other aspects: uniform value
    # a disagreeing X2 sentence takes either other class equally often
    assert abs(other["service", 1] - other["service", 2]) < 4 * np.sqrt(other["service", 1] + other["service", 2])


def test_synthetic_five_classes_have_distinct_values_and_refuse_a_verdict():
    bank = sentence_bank(5)
    for aspect in ASPECTS:
        values = [set(bank[aspect, v]) for v in range(5)]
        assert all(not (values[i] & values[j]) for j in range(5) for i in range(j))
    docs = generate_synthetic(50, 0, 0, seed=1, n_classes=5)["train"]
    assert Counter(d.label for d in docs) == {c: 10 for c in range(5)}
    assert sorted(LEVELS) == [2, 3, 4, 5]
    with pytest.raises(ValueError, match="verdict needs n_classes=2"):
        generate_synthetic(5, 0, 0, verdict="end", n_classes=3)
    with pytest.raises(ValueError, match="n_classes"):
        generate_synthetic(5, 0, 0, n_classes=6)
