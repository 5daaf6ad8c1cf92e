"""The inter-step records (icda.records): each file round-trips through its class, and a
missing, corrupt or malformed file is named with the field and the fix."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import torch

from icda.errors import DataError
from icda.loading import load_weights
from icda.steps.select import read_candidate
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
    assert icda_iteration([0], 0) is None  # a loop that ran no further: no ICDA
    assert icda_iteration([0, 1, 2], 0) == 0  # the guard (final_choice rationale_probe) took MMI
    with pytest.raises(ValueError):
        icda_iteration([])
    summary = dict(dataset="d", run=1, converged=True, reason="r", per_iteration=[])
    assert RunSummary(iterations=4, final_iteration=2, **summary).icda_iteration == 2
    assert RunSummary(iterations=4, **summary).icda_iteration == 3
    assert RunSummary(iterations=1, **summary).icda_iteration is None


# ------------------------------------------------------------------ corrupt or out-of-range files named with the fix


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
