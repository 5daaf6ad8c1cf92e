"""The inter-step records (icda.records): each file round-trips through its class, and a
missing, corrupt or malformed file is named with the field and the fix."""

from __future__ import annotations

import json

import pytest

from icda.errors import DataError
from icda.records import (AugmentationPlan, CandidateScore, Choice, Decision, Evaluation, History, Pools, Predictions,
                          RunSummary, SplitPools, SplitPredictions, icda_iteration)

SCORE = CandidateScore(name="seed42", candidate_dir="r/iter1/seed42", warm_start=False, seed=42, dev_loss=0.3,
                       original_dev_loss=0.4, dev_accuracy=0.9, degenerate=False, best_epoch=2, delta_A=0.1,
                       score=0.3)
PLAN = AugmentationPlan(kept=[0, 2], positions=[[1], [0]], pools={0: [(0, 1)], 1: [(2, 0)]})
RECORDS = [
    History(best_epoch=-1, dev_loss=0.25, dev_accuracy=0.875, degenerate=False,
            epochs=[{"epoch": -1, "dev_loss": 0.25}, {"epoch": 0, "dev_loss": 0.3}], seconds_per_epoch=1.5,
            seed=42, init="r/iter0/choice.json", augmented="r/iter0/pools.json"),
    Predictions(train=SplitPredictions(prob_positive=[0.1, 0.9], positions=[[0], [3]]),
                dev=SplitPredictions(prob_positive=[0.5], positions=[[1]])),
    Choice(iteration=1, candidate_loss="augmented_dev", previous_delta_A=None, chosen=SCORE, candidates=[SCORE]),
    Pools(chosen="seed42", candidate_dir="r/iter1/seed42",
          train=SplitPools(stats={"n_documents": 3, "m_per_class": 1}, plan=PLAN, pool_sentences={"0": ["a"], "1": ["b"]}),
          dev=SplitPools(stats={"n_documents": 3, "m_per_class": 1}, plan=PLAN, pool_sentences={"0": ["a"], "1": ["b"]})),
    Decision(iteration=2, stop=True, converged=True, reason="the warm start won"),
    Evaluation(precision=0.75, recall=0.5, f1=0.6, accuracy=None, alpha=0.25, n_docs=2, n_annotated=2,
               position_histogram=[1] + [0] * 9, model="m.pt", split="test",
               documents={"ids": ["a", "b"], "positions": [[0], [1]], "predicted": [1, 0]},
               dataset="synthetic", run=1, iteration=None),
    RunSummary(dataset="synthetic", run=1, iterations=1, converged=True, reason="r", per_iteration=[{"iteration": 0}]),
]


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: type(r).__name__)
def test_every_record_round_trips_through_its_file(record, tmp_path):
    record.write(tmp_path / "r.json")
    assert type(record).read(tmp_path / "r.json") == record
    assert json.loads((tmp_path / "r.json").read_text()) == record.to_json()


def test_choice_follows_its_candidate_folder(tmp_path):
    choice = RECORDS[2]
    assert str(choice.model_path) == "r/iter1/seed42/model.pt"
    folder = tmp_path / "seed42"
    RECORDS[1].write(folder / "predictions.json")
    moved = Choice.from_json(choice.to_json() | {"chosen": SCORE.to_json() | {"candidate_dir": str(folder)}})
    assert moved.predictions() == RECORDS[1]


def test_an_evaluation_keeps_only_the_labels_it_has():
    out = RECORDS[5].to_json()
    assert list(out)[:2] == ["dataset", "run"] and "iteration" not in out and "point" not in out
    assert Evaluation.from_json(out).iteration is None  # COMP


@pytest.mark.parametrize("cls, content, message", [
    (History, None, "file not found"),
    (History, '{"dev_loss": 0.', ":1: not valid JSON"),
    (History, '[1]', "not a training history: not a JSON object"),
    (History, '{"best_epoch": 1}', "not a training history: field 'dev_loss' is missing"),
    (Decision, '{"iteration": 0, "stop": "yes", "converged": false, "reason": ""}',
     "not a stop decision: field 'stop' is str"),
    (Predictions, '{"train": {"prob_positive": [0.5], "positions": []}, "dev": {"prob_positive": [], "positions": []}}',
     "field 'train': 1 probabilities but 0 position lists"),
    (Choice, json.dumps(RECORDS[2].to_json() | {"candidates": [{"name": "x"}]}),
     "field 'candidates': field 'candidate_dir' is missing"),
    (Pools, json.dumps(RECORDS[3].to_json() | {"dev": {"stats": {}, "plan": {"kept": []}, "pool_sentences": {}}}),
     "field 'dev': field 'plan' is not an augmentation plan"),
    (Evaluation, '{"precision": 1.5, "recall": null, "f1": null, "accuracy": null}',
     "field 'precision': 1.5 is greater than the maximum"),
    (Evaluation, '{"precision": NaN, "recall": null, "f1": null, "accuracy": null}', "NaN"),
])
def test_a_bad_record_names_the_file_the_field_and_the_fix(cls, content, message, tmp_path):
    path = tmp_path / "iter0" / "record.json"
    if content is not None:
        path.parent.mkdir()
        path.write_text(content)
    with pytest.raises(DataError) as err:
        cls.read(path)
    assert str(path) in str(err.value) and message in str(err.value), str(err.value)
    assert f"python -m icda {cls.COMMAND}" in err.value.fix


def test_icda_is_the_taken_iteration_else_the_last_and_never_iteration_0():
    """The one rule every reader follows (summaries, tables, viewer, workflow)."""
    assert icda_iteration([0, 1, 2, 3], 2) == 2  # the stop rule's pick
    assert icda_iteration([0, 1, 2, 3]) == 3  # none recorded: the last
    assert icda_iteration(range(3), None) == 2
    assert icda_iteration([0]) is None  # only MMI so far: no ICDA yet
    assert icda_iteration([0, 1], 0) is None  # MMI is never ICDA
    with pytest.raises(ValueError):
        icda_iteration([])
    summary = dict(dataset="d", run=1, converged=True, reason="r", per_iteration=[])
    assert RunSummary(iterations=4, final_iteration=2, **summary).icda_iteration == 2
    assert RunSummary(iterations=4, **summary).icda_iteration == 3
    assert RunSummary(iterations=1, **summary).icda_iteration is None
