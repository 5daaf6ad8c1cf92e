"""A run that cannot build counterfactuals stops at its last good iteration; every run's verdict
(helped, did not apply, wrong way) from the label-flip check, with known answers."""

import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from icda.counterfactual import NoCounterfactual, build_plan
from icda.errors import DataError
from icda.label_flip import fit_sentence_judge, flip_rate
from icda.model_selection import Signals, convergence, verdict
from icda.records import CandidateScore, Choice, Decision, Pools, RunSummary
from icda.report.tables import run_notes
from icda.settings import IcdaSettings


def _choice(k, flip=None, loss=0.5):
    chosen = CandidateScore(name="seed1", candidate_dir="c/seed1", warm_start=False, seed=1, dev_loss=loss,
                            original_dev_loss=loss, dev_accuracy=0.9, degenerate=False, best_epoch=3,
                            delta_A=None if k == 0 else 0.3, score=loss, label_flip=flip)
    return Choice(iteration=k, candidate_loss="original_dev", previous_delta_A=None, chosen=chosen)


def _run(flips, blocked_at=None, **icda):
    """The decisions of a run whose iterations' chosen selectors have the dev flip rates ``flips``;
    ``blocked_at``: that iteration's pools are blocked."""
    settings = IcdaSettings(**({"max_iters": len(flips) - 1, "stop_delta_a": 0.0, "verdict": "label_flip"} | icda))
    previous = None
    for k, flip in enumerate(flips):
        previous = convergence(_choice(k, flip), settings, previous,
                               "iteration k: no counterfactual" if k == blocked_at else None)
        if previous.stop:
            return previous
    raise AssertionError("the run did not stop")


# --------------------------------------------------------------------------- a blocked iteration


def test_a_class_never_right_raises_no_counterfactual_naming_the_class():
    with pytest.raises(NoCounterfactual, match="every document of class 1 wrong") as exc:
        build_plan(np.array([0, 0, 1, 1]), np.array([0.1, 0.2, 0.3, 0.4]), [[0]] * 4)
    assert exc.value.correct == {0: 2, 1: 0}


def test_a_blocked_iteration_ends_the_run_at_the_last_iteration_that_built_counterfactuals():
    decision = _run([0.8, 0.9, 0.95, 0.97], blocked_at=3, verdict="none")
    assert decision.stop and decision.blocked and not decision.converged
    assert decision.iteration == 3 and decision.final_iteration == 2
    assert "iteration 3, which built no counterfactual" in decision.final_reason
    assert "the loop cannot go on" in decision.reason


def test_mmi_blocked_reports_mmi_with_no_augmented_dataset():
    decision = _run([0.8, 0.9], blocked_at=0, verdict="none")
    assert decision.stop and decision.blocked and decision.final_iteration == 0
    assert "no augmented dataset" in decision.final_reason


def test_a_blocked_pools_record_round_trips_and_augment_refuses_it(tmp_path):
    record = Pools(chosen="seed1", candidate_dir="c/seed1", train=None, dev=None, blocked="no counterfactual")
    record.write(tmp_path / "pools.json")
    assert Pools.read(tmp_path / "pools.json").blocked == "no counterfactual"
    with pytest.raises(DataError, match="built no counterfactual"):
        Pools.read_plans(tmp_path / "pools.json")
    half = {"chosen": "s", "candidate_dir": "c", "train": None, "dev": None}  # neither pools nor a reason
    (tmp_path / "half.json").write_text(json.dumps(half))
    with pytest.raises(DataError, match="either both splits"):
        Pools.read(tmp_path / "half.json")


# --------------------------------------------------------------------------- the verdict


def _signals(flips):
    return [Signals(k, None, None, None, label_flip=f) for k, f in enumerate(flips)]


@pytest.mark.parametrize("flips, final, expected", [
    ([0.6, 0.7, 0.8], 2, ("helped", 2)),
    ([0.8, 0.6, 0.5], 2, ("wrong way", 0)),
    ([0.8, 0.9, 0.7], 2, ("wrong way", 0)),      # the reported iteration, not the best, is compared
    ([0.8, 0.8], 1, ("did not apply", 0)),       # no more than MMI's is not a gain
    ([0.92, 0.89], 1, ("did not apply", 0)),     # within the margin: MMI had already found them
    ([0.3, 0.4, 0.45], 2, ("helped", 2)),        # more flips than MMI's: helped, even when few
    ([0.3, 0.28, 0.27], 2, ("did not apply", 0)),  # few flips anywhere
    ([0.45, 0.6, 0.2], 2, ("wrong way", 0)),
    ([0.7], 0, ("did not apply", 0)),
    ([None, 0.7], 1, ("not measured", 1)),
    ([0.7, None], 1, ("not measured", 1)),
])
def test_verdict_known_answers(flips, final, expected):
    what, reported, why = verdict(_signals(flips), final)
    assert (what, reported) == expected
    assert why


def test_the_verdict_reports_mmi_where_the_loop_went_the_wrong_way():
    decision = _run([0.8, 0.6, 0.5])
    assert decision.verdict == "wrong way" and decision.final_iteration == 0
    assert decision.final_reason.startswith("wrong way:")
    assert _run([0.8, 0.6, 0.5], verdict="none").final_iteration == 2  # the paper: no verdict
    assert _run([0.8, 0.6, 0.5], verdict="none").verdict is None
    # the default judges the runs together after they stop: a run's own stop decision carries no verdict
    assert IcdaSettings().verdict == "run_agreement"
    assert (_run([0.8, 0.6, 0.5], verdict="run_agreement").final_iteration,
            _run([0.8, 0.6, 0.5], verdict="run_agreement").verdict) == (2, None)
    assert _run([0.5, 0.6, 0.9]).verdict == "helped"


def test_a_blocked_run_is_judged_on_its_last_good_iteration():
    decision = _run([0.6, 0.7, 0.2], blocked_at=2)
    assert decision.final_iteration == 1 and decision.verdict == "helped"


def test_run_notes_say_the_verdict_and_a_blocked_stop(tmp_path):
    base = dict(dataset="reviews", iterations=4, converged=False, per_iteration=[])
    RunSummary(run=1, reason="iteration 3: no counterfactual: the loop cannot go on", final_iteration=2,
               final_reason="before iteration 3", blocked=True, verdict="helped",
               verdict_reason="iteration 2's counterfactuals flip 90% of dev labels, MMI's 60%",
               **base).write(tmp_path / "1.json")
    RunSummary(run=2, reason="reached max_iters=3", final_iteration=0, final_reason="wrong way: …",
               verdict="wrong way", verdict_reason="… MMI reported", **base).write(tmp_path / "2.json")
    lines = run_notes([tmp_path / "1.json", tmp_path / "2.json"])["reviews"]
    assert lines[0] == ("reviews run 1: ICDA helped (iteration 2's counterfactuals flip 90% of dev labels, "
                        "MMI's 60%)")
    assert "reviews run 1: stopped at iteration 3: iteration 3: no counterfactual" in lines[2]
    assert not any("did not converge" in line and "run 1" in line for line in lines)
    assert "reviews run 2: ICDA went the wrong way (… MMI reported)" in lines


def test_a_decision_with_an_unknown_verdict_is_refused(tmp_path):
    (tmp_path / "converge.json").write_text(json.dumps(
        {"iteration": 0, "stop": True, "converged": False, "reason": "r", "verdict": "great"}))
    with pytest.raises(DataError, match="verdict"):
        Decision.read(tmp_path / "converge.json")


# --------------------------------------------------------------------------- the label-flip check


def test_flip_rate_known_answer():
    # 2 classes; sentence ids: 0 "food good" (strong 1), 1 "food bad" (strong 0), 2 "parking good"
    # (weak 1), 3 "parking bad" (weak 0), 4 a filler (no opinion)
    scores = np.log(np.array([[0.05, 0.95], [0.95, 0.05], [0.3, 0.7], [0.7, 0.3], [0.5, 0.5]]))
    docs = [[0, 2, 4], [1, 3, 4], [0, 3, 4], [1, 2, 4]]
    labels = [1, 0, 1, 0]
    food = [[0], [0], [0], [0]]
    parking = [[1], [1], [1], [1]]
    assert flip_rate(scores, docs, labels, food, labels) == 1.0
    # swapping the parking sentence keeps the food sentence, which says the old label
    assert flip_rate(scores, docs, labels, parking, labels) == 0.0
    # a document classified wrong is neither kept nor a donor
    assert flip_rate(scores, docs, labels, food, [1, 0, 1, 1]) == 1.0
    assert flip_rate(scores, docs, labels, food, [0, 1, 0, 1]) is None
    with pytest.raises(ValueError, match="outside"):
        flip_rate(scores, docs, labels, [[3], [0], [0], [0]], labels)


def test_the_sentence_judge_trusts_the_sentence_that_sets_the_label_most():
    rng = np.random.default_rng(0)
    # vectors: a "food" axis that always says the label, a "parking" axis that says it 70 % of the time
    n, table, ids, labels = 300, [], [], []
    for d in range(n):
        y = d % 2
        sign = lambda s: 1.0 if s else -1.0
        food = [sign(y), 0.0, rng.normal(0, 0.1)]
        parking = [0.0, sign(y if rng.random() < 0.7 else 1 - y), rng.normal(0, 0.1)]
        ids.append([len(table), len(table) + 1])
        table += [food, parking]
        labels.append(y)
    scores = fit_sentence_judge(np.array(table), ids, labels, 2)
    assert scores.shape == (2 * n, 2)
    food_confidence = np.exp(scores[0::2].max(axis=1)).mean()
    parking_confidence = np.exp(scores[1::2].max(axis=1)).mean()
    assert food_confidence > parking_confidence + 0.1
    with pytest.raises(ValueError, match="two classes"):
        fit_sentence_judge(np.array(table), ids, [0] * n, 2)


def test_pool_flip_keeps_first_the_documents_whose_counterfactuals_flip():
    labels, p1 = np.array([0, 0, 0, 1, 1, 1]), np.array([0.1, 0.2, 0.3, 0.9, 0.8, 0.7])
    plan, _ = build_plan(labels, p1, [[0]] * 6, 0.34, "class")
    assert plan.kept == [0, 3] and plan.pools == {0: [(0, 0), (1, 0)], 1: [(3, 0), (4, 0)]}  # by confidence
    # the most confident document of each class does not flip: it goes last; NaN (not judged) counts as not flipping
    plan, _ = build_plan(labels, p1, [[0]] * 6, 0.34, "class", flips=[0.0, 0.9, np.nan, 0.2, 0.6, 0.7])
    assert plan.kept == [1, 4] and plan.pools == {0: [(1, 0), (0, 0)], 1: [(4, 0), (5, 0)]}


def test_document_flips_are_per_document_and_nan_where_not_judged():
    from icda.label_flip import document_flips

    scores = np.log(np.array([[0.05, 0.95], [0.95, 0.05], [0.3, 0.7], [0.7, 0.3], [0.5, 0.5]]))
    docs = [[0, 2, 4], [1, 3, 4], [0, 3, 4], [1, 2, 4]]
    labels = [1, 0, 1, 0]
    flips = document_flips(scores, docs, labels, [[0], [1], [0], [0]], [1, 0, 1, 1])
    assert np.isnan(flips[3])  # classified wrong
    assert flips.shape == (4,) and np.all((flips[:3] >= 0) & (flips[:3] <= 1))
    assert flips[1] == 0.0  # parking swapped out of doc 1: its food sentence still says class 0


def test_a_small_training_split_is_said_under_the_tables_and_in_summary_md(tmp_path):
    """prepare's small-data warning (stats.json: small_data) reaches the lines under a dataset's
    table and summary.md, first among that dataset's lines; a dataset of enough documents says
    nothing; a stats.json that is not a prepared folder's is one error naming it."""
    from icda.report.tables import write_tables
    from icda.steps.prepare import small_data_warning

    warning = small_data_warning("reviews", 99)
    (tmp_path / "small.json").write_text(json.dumps({"dataset": "reviews", "small_data": warning}))
    (tmp_path / "large.json").write_text(json.dumps({"dataset": "restaurant", "small_data": None}))
    RunSummary(run=1, reason="reached max_iters=1", final_iteration=1, final_reason="the last",
               dataset="reviews", iterations=2, converged=False, per_iteration=[]).write(tmp_path / "1.json")
    notes = run_notes([tmp_path / "1.json"], [tmp_path / "small.json", tmp_path / "large.json"])
    assert set(notes) == {"reviews"}
    assert notes["reviews"][0] == warning and warning.startswith("reviews: 99 training documents, fewer than 300")
    evals = []
    for k in (0, 1):
        it = tmp_path / "ev" / str(k)
        it.mkdir(parents=True)
        (it / "eval.json").write_text(json.dumps({"dataset": "reviews", "run": 1, "iteration": k,
                                                  "precision": 0.5, "recall": 0.5, "f1": 0.5, "accuracy": 0.9}))
        evals.append(it / "eval.json")
    write_tables(evals, tmp_path / "tables", {}, run_lines=notes)
    assert f"- {warning}" in (tmp_path / "tables" / "summary.md").read_text()
    (tmp_path / "bad.json").write_text(json.dumps({"small_data": 3}))
    with pytest.raises(DataError, match=r"bad\.json.*not a prepared data folder's statistics"):
        run_notes([], [tmp_path / "bad.json"])


@settings(max_examples=60, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                        st.sampled_from(["dataset", "small_data", "x"]), inner, max_size=3), max_leaves=6)
       | st.binary(max_size=20))
def test_any_stats_json_is_read_or_refused_in_one_error_naming_it(tmp_path_factory, content):
    """Whatever stats.json holds, read_small_data returns (dataset, text or None) or raises a
    DataError naming the file: never another exception."""
    from icda.data.document import read_small_data

    path = tmp_path_factory.mktemp("s") / "stats.json"
    path.write_bytes(content if isinstance(content, bytes) else json.dumps(content).encode())
    try:
        dataset, small = read_small_data(path)
    except DataError as exc:
        assert str(path) in str(exc)
    else:
        assert isinstance(dataset, str) and (small is None or isinstance(small, str))
