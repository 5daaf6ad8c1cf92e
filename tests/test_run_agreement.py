"""The run-agreement verdict (icda.verdict: run_agreement): how far a dataset's runs agree before
and after the loop, its known answers and invariants, its record, the verdict step, and the run
summaries that follow it."""

import json
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from icda.errors import ConfigError, DataError
from icda.records import CandidateScore, Choice, DatasetVerdict, Decision, Predictions, RunSummary
from icda.run_agreement import (
    AGREED,
    HELPED_GAIN,
    SUFFICIENCY_GAIN,
    agreement,
    mean_agreement,
    rationale_sufficiency,
    run_agreement_verdict,
    run_verdicts,
)
from icda.steps.verdict import verdict as verdict_step
from icda.workflow_config.outputs import write_run_summary


def _same(n, value=0):
    return [[value]] * n


# --------------------------------------------------------------------------- known answers

def test_agreement_counts_documents_with_the_same_sentence_set():
    assert agreement([[0], [1], [2], [3]], [[0], [2], [2], [1]]) == 0.5
    assert agreement([[0, 3]], [[3, 0]]) == 1.0  # a set, not a list
    assert mean_agreement([[[0], [1]], [[0], [0]], [[1], [1]]]) == pytest.approx((0.5 + 0.0 + 0.5) / 3)


def test_runs_that_come_together_helped_and_report_their_icda():
    mmi = [[[0]] * 6 + [[1]] * 4, [[1]] * 10]  # agree on 4 of 10
    icda = [[[1]] * 10, [[1]] * 9 + [[0]]]  # agree on 9 of 10
    v = run_agreement_verdict(mmi, icda)
    assert (v.verdict, v.mmi, v.icda, v.reports_icda) == ("helped", 0.4, 0.9, True)
    assert "agree on 90% of dev documents, their MMI rationales on 40%" in v.reason


def test_runs_that_go_apart_went_the_wrong_way_and_report_mmi():
    # own-style data at 100 reviews: one run's loop goes to the food sentence, the other's to parking
    v = run_agreement_verdict([_same(10, 0), [[0]] * 8 + [[1]] * 2], [_same(10, 0), _same(10, 1)])
    assert (v.verdict, v.reports_icda) == ("wrong way", False)
    assert "MMI reported" in v.reason


def test_runs_that_stay_where_mmi_had_them_did_not_apply():
    v = run_agreement_verdict([_same(4), _same(4)], [_same(4), _same(4)])
    assert (v.verdict, v.mmi, v.icda, v.reports_icda) == ("did not apply", 1.0, 1.0, False)
    assert "did not change how far the runs agree" in v.reason


def test_runs_that_come_closer_but_still_differ_on_a_quarter_did_not_apply():
    # movies: the runs agree more after the loop (47 % → 61 %) but still differ on 39 % of reviews
    a = [[0]] * 100
    b = [[0]] * 47 + [[1]] * 53
    c = [[0]] * 61 + [[1]] * 39
    v = run_agreement_verdict([a, b], [a, c])
    assert (v.verdict, v.reports_icda) == ("did not apply", False)
    assert "differ on more than 25% of the documents" in v.reason


def test_one_run_is_not_measured_and_reports_its_icda():
    v = run_agreement_verdict([_same(3)], [_same(3, 1)])
    assert (v.verdict, v.mmi, v.icda, v.reports_icda) == ("not measured", None, None, True)


@pytest.mark.parametrize("a0, ak, expected", [
    (80, 80 + round(100 * HELPED_GAIN), "helped"),  # the gain is inclusive
    (80, 80 + round(100 * HELPED_GAIN) - 1, "did not apply"),
    (80, 80 - round(100 * HELPED_GAIN), "wrong way"),  # so is the fall
    (80, 80 - round(100 * HELPED_GAIN) + 1, "did not apply"),
    (round(100 * AGREED) - 10, round(100 * AGREED), "helped"),  # and the floor
    (round(100 * AGREED) - 10, round(100 * AGREED) - 1, "did not apply"),
])
def test_the_thresholds_known_answers(a0, ak, expected):
    agreeing = lambda k: [[0]] * k + [[1]] * (100 - k)  # agrees with all-0 on k of 100 documents
    assert run_agreement_verdict([agreeing(100), agreeing(a0)], [agreeing(100), agreeing(ak)]).verdict == expected


@pytest.mark.parametrize("mmi, icda, match", [
    ([_same(3), _same(3)], [_same(3)], "same runs"),
    ([_same(3), _same(2)], [_same(3), _same(3)], "same documents"),
])
def test_mismatched_runs_or_documents_are_refused(mmi, icda, match):
    with pytest.raises(ValueError, match=match):
        run_agreement_verdict(mmi, icda)


def test_agreement_between_runs_needs_two():
    with pytest.raises(ValueError, match="at least two runs"):
        mean_agreement([_same(3)])


# --------------------------------------------------------------------------- invariants

selections = st.integers(1, 12).flatmap(lambda n: st.lists(
    st.lists(st.lists(st.integers(0, 4), min_size=1, max_size=2), min_size=n, max_size=n), min_size=2, max_size=5))


@given(selections)
def test_agreement_is_a_symmetric_fraction_and_one_with_itself(runs):
    a, b = runs[0], runs[1]
    assert 0.0 <= agreement(a, b) == agreement(b, a) <= 1.0
    assert agreement(a, a) == 1.0


@given(selections, st.data())
def test_the_verdict_is_the_dataset_s_whatever_the_order_of_its_runs(mmi, data):
    icda = data.draw(st.lists(st.lists(st.lists(st.integers(0, 4), min_size=1, max_size=2),
                                       min_size=len(mmi[0]), max_size=len(mmi[0])),
                              min_size=len(mmi), max_size=len(mmi)))
    order = data.draw(st.permutations(range(len(mmi))))
    v = run_agreement_verdict(mmi, icda)
    w = run_agreement_verdict([mmi[i] for i in order], [icda[i] for i in order])
    assert (v.verdict, v.reports_icda) == (w.verdict, w.reports_icda)
    assert v.mmi == pytest.approx(w.mmi) and v.icda == pytest.approx(w.icda)
    # "helped" needs the runs to agree more after the loop, and on at least AGREED of the documents
    assert v.verdict != "helped" or (v.icda >= v.mmi and v.icda >= AGREED)
    assert v.reports_icda == (v.verdict == "helped")


# --------------------------------------------------------------------------- each run's own rationales

#: a judge over 3 sentence ids and 2 classes: id 0 says class 0 (0.9), id 1 nothing, id 2 class 1 (0.8)
JUDGE = np.log(np.array([[0.9, 0.1], [0.5, 0.5], [0.2, 0.8]]))


def test_rationale_sufficiency_is_the_mean_log_probability_of_the_label_given_the_rationale():
    # document 0 (class 0) picks id 0: log 0.9; document 1 (class 1) picks id 2: log 0.8
    assert rationale_sufficiency(JUDGE, [[0, 1], [2, 1]], [0, 1], [[0], [0]]) == pytest.approx(
        (math.log(0.9) + math.log(0.8)) / 2)
    # two sentences: their log-probabilities summed and normalised (0.9 x 0.2 against 0.1 x 0.8)
    assert rationale_sufficiency(JUDGE, [[0, 2]], [0], [[0, 1]]) == pytest.approx(math.log(0.18 / (0.18 + 0.08)))
    # the uninformative sentence: log 0.5, whatever the label
    assert rationale_sufficiency(JUDGE, [[1, 0]], [1], [[0]]) == pytest.approx(math.log(0.5))
    # a class the judge never saw (log-probability -inf) stays finite
    unseen = np.array([[0.0, -np.inf]])
    assert rationale_sufficiency(unseen, [[0]], [1], [[0]]) == pytest.approx(-50.0)


@pytest.mark.parametrize("ids, labels, positions, match", [
    ([[0, 1]], [0, 1], [[0]], "1 documents, 2 labels"),
    ([], [], [], "0 documents"),
    ([[0, 1]], [0], [[2]], "outside its 2 sentences"),
    ([[0, 1]], [0], [[]], "empty"),
])
def test_rationale_sufficiency_refuses_inconsistent_input(ids, labels, positions, match):
    with pytest.raises(ValueError, match=match):
        rationale_sufficiency(JUDGE, ids, labels, positions)


@given(st.lists(st.tuples(st.permutations([0, 1, 2]), st.integers(0, 1), st.integers(0, 2)), min_size=1, max_size=8),
       st.randoms())
def test_sufficiency_is_a_log_probability_bounded_by_the_best_pick_and_blind_to_order(docs, rnd):
    ids, labels, picks = [list(d) for d, _, _ in docs], [y for _, y, _ in docs], [[p] for _, _, p in docs]
    value = rationale_sufficiency(JUDGE, ids, labels, picks)
    best = rationale_sufficiency(JUDGE, ids, labels, [[int(np.argmax(JUDGE[d, y]))] for d, y in zip(ids, labels)])
    assert value <= best + 1e-12 <= 1e-12
    order = list(range(len(docs)))
    rnd.shuffle(order)
    assert rationale_sufficiency(JUDGE, [ids[i] for i in order], [labels[i] for i in order],
                                 [picks[i] for i in order]) == pytest.approx(value)


def _split():
    """Two runs that went apart (the dataset's verdict: wrong way)."""
    return run_agreement_verdict([_same(4), _same(4)], [_same(4, 0), _same(4, 1)])


def test_a_run_whose_rationales_carry_the_labels_better_after_the_loop_is_helped_on_its_own():
    dataset = _split()
    assert dataset.verdict == "wrong way"
    per_run = run_verdicts(dataset, [-0.3, -0.05], [-0.3 + SUFFICIENCY_GAIN, -0.5])
    assert [v for v, _ in per_run] == ["helped", "wrong way"]
    assert "-0.300 → -0.270 nats" in per_run[0][1] and "the runs split" in per_run[0][1]
    assert per_run[1][1].startswith(dataset.reason) and "-0.050 → -0.500" in per_run[1][1]
    # just under the margin: the dataset's verdict
    assert run_verdicts(dataset, [-0.3], [-0.3 + SUFFICIENCY_GAIN - 1e-6])[0][0] == "wrong way"


def test_runs_of_a_helped_dataset_or_without_a_judge_take_the_dataset_s_verdict():
    helped = run_agreement_verdict([[[0], [1]], [[1], [0]]], [_same(2), _same(2)])
    assert helped.verdict == "helped"
    assert run_verdicts(helped, [-0.1, -0.1], [-0.9, -0.9]) == [("helped", helped.reason)] * 2
    assert run_verdicts(_split(), [None, None], [None, None]) == [("wrong way", _split().reason)] * 2
    with pytest.raises(ValueError, match="2 MMI and 1 ICDA"):
        run_verdicts(_split(), [-0.1, -0.1], [-0.1])


# --------------------------------------------------------------------------- the record

def _verdict(**fields):
    return DatasetVerdict(**({"dataset": "reviews", "verdict": "wrong way", "reason": "r", "runs": [1, 2],
                              "loop_iterations": [3, 1], "reported": [0, 0]} | fields))


def test_a_dataset_verdict_round_trips_and_gives_each_run_its_iteration(tmp_path):
    _verdict(mmi_agreement=0.7, icda_agreement=0.4).write(tmp_path / "verdict.json")
    read = DatasetVerdict.read(tmp_path / "verdict.json")
    assert read == _verdict(mmi_agreement=0.7, icda_agreement=0.4)
    assert read.reported_iteration(2) == 0
    with pytest.raises(ValueError, match="not run 3"):
        read.reported_iteration(3)


@pytest.mark.parametrize("fields, match", [
    ({"reported": [0, 2]}, "run 2: field 'reported' is 2"),
    ({"verdict": "helped"}, "run 1: field 'reported' is 0, not 3"),  # reported must be what the verdict says
    ({"reported": [0]}, "not one per run"),
    ({"verdict": "great"}, "field 'verdict'"),
    ({"icda_agreement": 1.5}, "field 'icda_agreement'"),
    ({"run_verdicts": ["helped"]}, "field 'run_verdicts' holds 1 entries for 2 runs"),
    ({"run_verdicts": ["helped", "wrong way"]}, "run 1: field 'reported' is 0, not 3"),  # reported follows the run's
    ({"run_verdicts": ["did not apply", "wrong way"]}, "run 1: verdict 'did not apply' under the dataset's 'wrong way'"),
    ({"mmi_sufficiency": [0.2, -0.1]}, "not a log-probability"),
    ({"mmi_sufficiency": ["helped", -0.1]}, "not a log-probability"),  # found by the reader's Hypothesis test
    ({"loop_iterations": ["helped", "helped"]}, "field 'loop_iterations' holds"),
    ({"run_verdicts": [1, 2]}, "field 'run_verdicts' holds"),
])
def test_a_dataset_verdict_that_contradicts_itself_is_refused_naming_the_field(tmp_path, fields, match):
    (tmp_path / "verdict.json").write_text(json.dumps(_verdict().to_json() | fields))
    with pytest.raises(DataError, match=match):
        DatasetVerdict.read(tmp_path / "verdict.json")


@given(st.dictionaries(st.sampled_from(["dataset", "verdict", "reason", "runs", "loop_iterations", "reported",
                                         "mmi_agreement", "icda_agreement", "run_verdicts", "mmi_sufficiency"]),
                       st.one_of(st.none(), st.booleans(), st.integers(-2, 4), st.floats(-1, 2), st.text(max_size=5),
                                 st.sampled_from(["helped", "wrong way", "did not apply", "not measured"]),
                                 st.lists(st.integers(-1, 3), max_size=3),
                                 st.lists(st.sampled_from(["helped", "wrong way", "did not apply"]), max_size=3),
                                 st.lists(st.one_of(st.none(), st.floats(-2, 1)), max_size=3))))
def test_any_verdict_json_is_read_into_a_consistent_record_or_refused_naming_it(tmp_path_factory, fields):
    path = tmp_path_factory.mktemp("v") / "verdict.json"
    path.write_text(json.dumps(_verdict().to_json() | fields))
    try:
        read = DatasetVerdict.read(path)
    except DataError as exc:
        assert str(path) in str(exc)
        return
    for run, loop, reported in zip(read.runs, read.loop_iterations, read.reported):
        verdict = read.run_verdict(run)[0]
        assert verdict == read.verdict or (verdict == "helped" and read.verdict in ("wrong way", "did not apply"))
        assert read.reported_iteration(run) == reported == (loop if verdict in ("helped", "not measured") else 0)


# --------------------------------------------------------------------------- the step and the run summaries

def _choice_file(folder, k, positions):
    """An iteration's choice.json whose chosen candidate selected ``positions`` on dev."""
    cand = folder / f"iter{k}" / "seed1"
    cand.mkdir(parents=True)
    split = {"prob_positive": [0.5] * len(positions), "positions": positions}
    Predictions.from_json({"train": split, "dev": split}).write(cand / "predictions.json")
    chosen = CandidateScore(name="seed1", candidate_dir=str(cand), warm_start=False, seed=1, dev_loss=0.5,
                            original_dev_loss=0.5, dev_accuracy=0.9, degenerate=False, best_epoch=1,
                            delta_A=None, score=0.5)
    path = folder / f"iter{k}" / "choice.json"
    Choice(iteration=k, candidate_loss="original_dev", previous_delta_A=None, chosen=chosen).write(path)
    return path


def test_the_verdict_step_reports_mmi_for_runs_that_went_apart(tmp_path):
    mmi = [_choice_file(tmp_path / "run1", 0, [[0]] * 4), _choice_file(tmp_path / "run2", 0, [[0]] * 3 + [[1]])]
    icda = [_choice_file(tmp_path / "run1", 2, [[0]] * 4), _choice_file(tmp_path / "run2", 1, [[1]] * 4)]
    record = verdict_step("reviews", [1, 2], mmi, icda, tmp_path / "verdict.json")
    assert DatasetVerdict.read(tmp_path / "verdict.json") == record
    assert (record.verdict, record.loop_iterations, record.reported) == ("wrong way", [2, 1], [0, 0])
    assert (record.mmi_agreement, record.icda_agreement) == (0.75, 0.0)


def test_the_verdict_step_refuses_an_mmi_choice_of_another_iteration(tmp_path):
    late = _choice_file(tmp_path / "run1", 1, [[0]])
    with pytest.raises(ConfigError, match="iteration 1, not MMI's"):
        verdict_step("reviews", [1, 2], [late, late], [late, late], tmp_path / "verdict.json")
    with pytest.raises(ConfigError, match="one of each per run"):
        verdict_step("reviews", [1], [late, late], [late, late], tmp_path / "verdict.json")


def test_the_verdict_step_needs_the_judge_s_settings_and_data_with_the_vectors(tmp_path):
    mmi = [_choice_file(tmp_path / f"run{r}", 0, [[0]] * 4) for r in (1, 2)]
    with pytest.raises(ConfigError, match="--embeddings needs --settings and --data-dir"):
        verdict_step("reviews", [1, 2], mmi, mmi, tmp_path / "verdict.json", embeddings=tmp_path / "embeddings.pt")
    assert not (tmp_path / "verdict.json").exists()


def _run_files(folder, last):
    """The choice, stop decision and evaluation files of a run that stops at iteration ``last``
    and takes it as ICDA."""
    choices, decisions, evals = [], [], []
    for k in range(last + 1):
        choices.append(_choice_file(folder, k, [[0]]))
        decisions.append(folder / f"iter{k}" / "converge.json")
        Decision(iteration=k, stop=k == last, converged=False, reason=f"reason {k}",
                 final_iteration=last if k == last else None,
                 final_reason="the last" if k == last else None).write(decisions[-1])
        evals.append(folder / f"iter{k}" / "eval.json")
        evals[-1].write_text(json.dumps({"precision": 0.5, "recall": 0.5, "f1": 0.5, "accuracy": 0.9}))
    return choices, decisions, evals


def test_a_run_summary_takes_its_own_verdict_where_the_runs_split(tmp_path):
    choices, decisions, evals = _run_files(tmp_path, 1)
    _verdict(loop_iterations=[1, 1], reported=[1, 0], run_verdicts=["helped", "wrong way"],
             run_reasons=["its own", "the dataset's"]).write(tmp_path / "verdict.json")
    for run, expected in ((1, (1, "helped", "its own")), (2, (0, "wrong way", "the dataset's"))):
        write_run_summary("reviews", run, choices, decisions, evals, tmp_path / f"summary{run}.json",
                          tmp_path / "summary.log", tmp_path / "verdict.json")
        summary = RunSummary.read(tmp_path / f"summary{run}.json")
        assert (summary.icda_iteration, summary.verdict, summary.verdict_reason) == expected


def test_a_run_summary_reports_the_iteration_the_dataset_verdict_gives_it(tmp_path):
    choices, decisions, evals = _run_files(tmp_path, 2)
    log = tmp_path / "summary.log"
    for judged, expected in ((_verdict(runs=[1], loop_iterations=[2], reported=[0]), 0),
                             (_verdict(runs=[1], loop_iterations=[2], reported=[2], verdict="helped"), 2)):
        judged.write(tmp_path / "verdict.json")
        write_run_summary("reviews", 1, choices, decisions, evals, tmp_path / "summary.json", log,
                          tmp_path / "verdict.json")
        summary = RunSummary.read(tmp_path / "summary.json")
        assert (summary.icda_iteration, summary.verdict, summary.verdict_reason) == (expected, judged.verdict, "r")
        assert ("as the verdict says" in summary.final_reason) == (expected == 0)
    _verdict(runs=[2], loop_iterations=[2], reported=[0]).write(tmp_path / "verdict.json")
    with pytest.raises(ValueError, match="not run 1"):
        write_run_summary("reviews", 1, choices, decisions, evals, tmp_path / "summary.json", log,
                          tmp_path / "verdict.json")


# --------------------------------------------------------------------------- the workflow

@pytest.mark.slow  # two tiny runs of two iterations (about 2 min on 2 cores)
def test_a_workflow_judged_across_runs_reports_what_its_verdict_says(tmp_path):
    """icda.verdict: run_agreement: once both runs stop, verdict.json decides the iteration each
    run's summary, the tables' notes and the ICDA rows report, and the rationale viewer shows it;
    a second invocation has nothing to do."""
    from test_workflow import REPO, snakemake

    extra = tmp_path / "extra.yaml"
    extra.write_text("n_runs: 2\nruns: [[42, 43], [44, 45]]\n"
                     "icda: {max_iters: 2, warm_start: true, verdict: run_agreement}\n")
    args = ["--cores", "2", "-s", str(REPO / "Snakefile"), "--directory", str(tmp_path),
            "--configfile", str(REPO / "config/config.yaml"), str(REPO / "tests/fixtures/tiny_workflow.yaml"),
            str(extra), "--config", f"data_dir={tmp_path / 'data'}"]
    snakemake(*args)
    results = tmp_path / "results"
    judged = DatasetVerdict.read(results / "synthetic/verdict.json")
    assert judged.runs == [1, 2] and judged.mmi_agreement is not None and judged.icda_agreement is not None
    # frozen mode: the per-run step's sentence judge scored every run's MMI and ICDA rationales
    assert all(s is not None and s <= 0 for s in judged.mmi_sufficiency + judged.icda_sufficiency)
    notes = (results / "tables/summary.md").read_text()
    viewer = (results / "synthetic/rationales.html").read_text(encoding="utf-8")
    for run, reported in zip(judged.runs, judged.reported):
        summary = RunSummary.read(results / f"synthetic/run{run}/summary.json")
        assert (summary.verdict, summary.verdict_reason) == judged.run_verdict(run)
        assert summary.icda_iteration == reported
        assert f"synthetic run {run}: ICDA " in notes and summary.verdict_reason in notes
    assert judged.run_verdict(1)[1] in viewer  # the viewer says it too
    again = snakemake(*args, "--dry-run")
    assert "Nothing to be done" in again.stdout + again.stderr
