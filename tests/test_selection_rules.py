"""Hand-made cases for the degeneration guard, precision, pools, ΔA, selection score and stop rule."""

import dataclasses

import numpy as np
import pytest

from icda.degeneration import check_degeneration, check_histograms, position_bins
from icda.errors import DataError, IcdaError
from icda.metrics import rationale_metrics
from icda.counterfactual import build_plan
from icda.model_selection import convergence, delta_a, rationale_sets, score
from icda.settings import Settings


def test_position_bins_use_exact_integer_edges():
    # index 3 of 10 sentences is exactly 0.3: bin 3 (float 3/10*10 can land in bin 2)
    assert position_bins(np.array([3, 0, 9, 1]), np.array([10, 5, 10, 5])).tolist() == [1, 0, 1, 1, 0, 0, 0, 0, 0, 1]
    assert position_bins(np.array([6]), np.array([10])).tolist()[6] == 1
    with pytest.raises(ValueError):
        position_bins(np.array([5]), np.array([5]))


def test_positional_degeneration_is_caught():
    # class 0 always picks the first sentence, class 1 any other: the paper's failure mode
    selected = [[0]] * 20 + [[i % 9 + 1] for i in range(20)]
    n = [10] * 40
    labels = [0] * 20 + [1] * 20
    report = check_degeneration(selected, n, labels, labels)
    assert report.degenerate and report.max_bin_gap == pytest.approx(1.0)


def test_healthy_model_passes_and_wrong_predictions_are_ignored():
    selected = [[i % 10] for i in range(40)]
    labels = [i % 2 for i in range(40)]
    predictions = list(labels)
    # wrong predictions all in bin 0 for class 1 do not count
    selected += [[0]] * 10
    labels += [1] * 10
    predictions += [0] * 10
    report = check_degeneration(selected, [10] * 50, labels, predictions)
    assert not report.degenerate
    assert report.max_bin_gap <= 0.2


def test_first_second_bin_rule_alone():
    # per-bin gaps 0.15 (<= 0.2) but |0.3-0.0| vs |0.15-0.15|: first-bins gap 0.3 > 0.2
    h0 = np.array([30, 0, 10, 10, 10, 10, 10, 10, 10, 0])
    h1 = np.array([15, 15, 10, 10, 10, 10, 10, 10, 10, 0])
    report = check_histograms(h0, h1)
    assert report.max_bin_gap == pytest.approx(0.15)
    assert report.first_bins_gap == pytest.approx(0.30)
    assert report.degenerate


def test_a_class_without_correct_predictions_is_degenerate():
    assert check_histograms(np.zeros(10), np.ones(10)).degenerate


def test_precision_recall_on_a_hand_made_example():
    selected = [[0], [2], [1], [3]]
    truth = [frozenset({0}), frozenset({1, 2}), frozenset(), None]  # last: not annotated
    m = rationale_metrics(selected, truth, [4, 4, 4, 4], [1, 0, None, 1], [1, 1, 0, 1])
    assert m["precision"] == pytest.approx(2 / 3)
    assert m["alpha"] == pytest.approx(1 / 3)
    assert m["recall"] == pytest.approx(2 / 3)  # 2 of 3 ground-truth sentences
    assert m["accuracy"] == pytest.approx(2 / 3)  # the unlabelled document is skipped
    assert m["n_annotated"] == 3
    assert m["position_histogram"] == [1, 0, 1, 0, 0, 1, 0, 1, 0, 0]
    assert m["precision_by_class"] == {"0": 1.0, "1": 1.0}  # the unlabelled document is skipped
    assert rationale_metrics(selected, truth, [4] * 4)["precision_by_class"] is None


def test_precision_by_class_shows_a_label_dependent_selector():
    """The target sentence (0) in negative documents, another one (1) in positive documents:
    precision 0.5 overall, which is 1.0 for class 0 and 0.0 for class 1."""
    labels = [0, 1] * 5
    selected = [[0] if y == 0 else [1] for y in labels]
    m = rationale_metrics(selected, [frozenset({0})] * 10, [3] * 10, labels, labels)
    assert m["precision"] == pytest.approx(0.5)
    assert m["precision_by_class"] == {"0": 1.0, "1": 0.0}
    only_negative = rationale_metrics([[0]], [frozenset({0})], [3], [0], [0])
    assert only_negative["precision_by_class"] == {"0": 1.0, "1": None}


def test_pools_keep_the_most_confident_correct_documents():
    labels = np.array([0] * 10 + [1] * 10)
    prob = np.concatenate([np.linspace(0.05, 0.6, 10), np.linspace(0.95, 0.3, 10)])
    # class 0 correct (p <= 0.5): the first 8; class 1 correct (p >= 0.5): the first 7
    selected = [[i % 3] for i in range(20)]
    plan, stats = build_plan(labels, prob, selected, pool_fraction=0.2)
    assert stats["correct_per_class"] == {"0": 8, "1": 7}
    assert stats["m_per_class"] == 5  # min(20 // 4, 8, 7)
    assert plan.kept == [0, 1, 2, 3, 4, 10, 11, 12, 13, 14]
    assert plan.pools[0] == [(0, 0), (1, 1)]  # 20 % of 10 documents: the 2 most confident
    assert plan.pools[1] == [(10, 1), (11, 2)]
    assert 4 * stats["m_per_class"] <= len(labels)
    plan_kept, _ = build_plan(labels, prob, selected, pool_fraction=0.2, pool_base="kept")
    assert len(plan_kept.pools[0]) == 1  # 20 % of m = 5


def test_pool_min_floors_a_pool_at_the_most_confident_correct_documents():
    labels = np.array([0] * 10 + [1] * 10)
    prob = np.concatenate([np.linspace(0.05, 0.6, 10), np.linspace(0.95, 0.3, 10)])
    selected = [[i % 3] for i in range(20)]
    plan, stats = build_plan(labels, prob, selected, pool_fraction=0.2, pool_base="kept", pool_min=6)
    # the share gives 1 document per class; the floor 6, but class 1 has only 7 correct, class 0 8
    assert [d for d, _ in plan.pools[0]] == [0, 1, 2, 3, 4, 5]
    assert [d for d, _ in plan.pools[1]] == [10, 11, 12, 13, 14, 15]
    assert stats["pool_documents_per_class"] == {"0": 6, "1": 6}
    capped, _ = build_plan(labels, prob, selected, pool_fraction=0.2, pool_base="kept", pool_min=50)
    assert [len(capped.pools[c]) for c in (0, 1)] == [8, 7]  # never a wrongly predicted document
    unbound, _ = build_plan(labels, prob, selected, pool_fraction=0.2, pool_min=1)
    assert unbound.pools == build_plan(labels, prob, selected, pool_fraction=0.2)[0].pools


def test_pools_fail_clearly_when_a_class_is_never_right():
    with pytest.raises(IcdaError, match="correct predictions per class"):
        build_plan(np.array([0, 0, 1, 1]), np.array([0.9, 0.9, 0.9, 0.9]), [[0]] * 4)


def test_delta_a_uses_the_papers_direction():
    prev = rationale_sets([0, 0, 1, 1], [[0], [1], [0], [2]])
    cur = rationale_sets([0, 0, 1, 1], [[0], [2], [0], [2]])
    assert delta_a(cur, prev) == pytest.approx((1 / 2 + 0 / 2) / 2)
    assert delta_a(prev, prev) == 0.0


def test_selection_score_penalties():
    assert score(0.5, False, 1, 0.4, 0.1) == 0.5  # k = 1: ΔA rule not applied
    assert score(0.5, True, 1, None, None) == pytest.approx(0.5e10)
    assert score(0.5, False, 2, 0.2, 0.3) == 0.5
    assert score(0.5, False, 2, 0.3, 0.3) == pytest.approx(0.5e10)  # not smaller -> penalised


def _choice(**fields):
    from icda.records import CandidateScore, Choice

    base = dict(name="warm", candidate_dir="x/warm", warm_start=True, seed=42, dev_loss=0.1, original_dev_loss=None,
                dev_accuracy=0.9, degenerate=False, best_epoch=-1, delta_A=None, score=0.1)
    return Choice(iteration=3, candidate_loss="augmented_dev", previous_delta_A=None,
                  chosen=CandidateScore(**(base | fields)))


#: the paper's loop (Algorithm 2), which the tests of its stop rule change key by key
PAPER_LOOP = {"stop_rule": "paper", "stop_delta_a": 0.0, "max_iters": 10}


def _stop(choice, previous="auto", **icda):
    """convergence() of ``choice`` under the paper's loop with ``icda`` over it, after a previous
    decision that recorded no signals (``previous="auto"``)."""
    from icda.records import Decision
    from icda.settings import IcdaSettings

    if previous == "auto":
        previous = Decision(iteration=choice.iteration - 1, stop=False, converged=False, reason="")
    return convergence(choice, IcdaSettings(**(PAPER_LOOP | icda)), previous)


def test_stop_rule():
    sel = _choice()
    assert _stop(sel).converged and _stop(sel).stop
    assert _stop(sel).final_iteration == 3  # the paper's rule takes the last iteration
    improved = _choice(best_epoch=2)
    assert not _stop(improved).stop and _stop(improved).final_iteration is None
    capped = _stop(improved, max_iters=3)
    assert (capped.stop, capped.converged, capped.reason) == (True, False, "reached max_iters=3 without convergence")
    fresh = _choice(warm_start=False, name="seed42")
    assert not _stop(fresh).stop
    assert "a fresh model won (seed42); iteration 4 follows" == _stop(fresh).reason
    with pytest.raises(ValueError, match="needs the decision of iteration 2"):
        _stop(fresh, previous=None)


def test_stop_when_the_rationales_did_not_change_is_an_option():
    """ΔA = 0 ends the loop as converged only with stop_unchanged, and never at iteration 0."""
    same = _choice(warm_start=False, name="seed42", best_epoch=5, delta_A=0.0)
    assert not _stop(same).stop  # the paper's rule alone
    decision = _stop(same, stop_unchanged=True)
    assert decision.stop and decision.converged
    assert decision.reason == "the rationales did not change (ΔA = 0; seed42 won)"
    assert not _stop(_choice(warm_start=False, name="seed42", delta_A=0.0005), stop_unchanged=True).stop
    mmi = dataclasses.replace(same, iteration=0)
    assert not _stop(mmi, previous=None, stop_unchanged=True).stop  # iteration 0 has no previous selection


def _trajectory(losses, deltas, accuracies, **icda):
    """Replay the rationales stop rule (no ΔA threshold unless ``icda`` sets one) over iterations
    0, 1, ... with the chosen selector's original dev loss, ΔA and accuracy given per iteration;
    the decisions up to the first stop."""
    from icda.records import CandidateScore, Choice
    from icda.settings import IcdaSettings

    settings = IcdaSettings(**(PAPER_LOOP | {"stop_rule": "rationales"} | icda))
    decisions, previous = [], None
    for k, (loss, delta, acc) in enumerate(zip(losses, deltas, accuracies)):
        chosen = CandidateScore(name="seed1", candidate_dir="x", warm_start=False, seed=1, dev_loss=0.1,
                                original_dev_loss=loss, dev_accuracy=0.9, degenerate=False, best_epoch=-1 if k else 2,
                                delta_A=delta, score=0.1, original_dev_accuracy=acc)
        previous = convergence(Choice(iteration=k, candidate_loss="original_dev", previous_delta_A=None,
                                      chosen=chosen), settings, previous)
        decisions.append(previous)
        if previous.stop:
            break
    return decisions


def test_rationales_rule_never_stops_on_an_unimproved_warm_start():
    """Under stop_rule rationales a best epoch of −1 is no stop (the warm start must train)."""
    decisions = _trajectory([0.3, 0.5, 0.45, 0.4], [None, 0.3, 0.2, 0.1], [0.9, 0.8, 0.8, 0.8], max_iters=3,
                            final_choice="last")
    assert [d.stop for d in decisions] == [False, False, False, True]
    assert decisions[-1].reason == "reached max_iters=3 without convergence"
    assert decisions[-1].final_iteration == 3 and decisions[-1].final_reason == "the last iteration"
    assert [s["original_dev_loss"] for s in decisions[-1].signals] == [0.3, 0.5, 0.45, 0.4]


def test_rationales_rule_stops_when_delta_a_settles_or_the_loss_stalls():
    deltas = [None, 0.3, 0.12, 0.04, 0.01]
    settled = _trajectory([0.3, 0.5, 0.4, 0.45, 0.46], deltas, [0.9] * 5, stop_delta_a=0.05)
    assert len(settled) == 4 and settled[-1].converged
    assert settled[-1].reason == "the rationales settled (ΔA = 0.0400 < stop_delta_a = 0.05)"
    # losses of iterations >= 1: 0.5, 0.4 (new minimum), 0.45, 0.46 -> no new minimum for 2 iterations
    stalled = _trajectory([0.3, 0.5, 0.4, 0.45, 0.46], deltas, [0.9] * 5, stop_patience=2)
    assert len(stalled) == 5 and stalled[-1].converged
    assert stalled[-1].reason == "the original dev loss reached no new minimum in 2 iteration(s) (stop_patience)"
    assert not _trajectory([0.3, 0.5, 0.4, 0.35, 0.3], deltas, [0.9] * 5, stop_patience=2, max_iters=10)[-1].stop


def test_final_choice_never_takes_mmi_and_breaks_ties_late():
    """ICDA is an iteration >= 1 even where MMI has the lowest original dev loss; ties go to
    the later iteration."""
    losses, accs = [0.1, 0.5, 0.3, 0.4], [0.95, 0.8, 0.85, 0.85]
    by_loss = _trajectory(losses, [None, 0.3, 0.2, 0.1], accs, max_iters=3, final_choice="original_dev_loss")[-1]
    assert by_loss.final_iteration == 2
    assert by_loss.final_reason == "the lowest original dev loss of iterations 1-3 (0.3000)"
    by_acc = _trajectory(losses, [None, 0.3, 0.2, 0.1], accs, max_iters=3, final_choice="original_dev_accuracy")[-1]
    assert by_acc.final_iteration == 3


def _candidate(root, name, dev_loss, dev_prob, train_positions, best_epoch=3, degenerate=False):
    import json

    folder = root / name
    folder.mkdir()
    (folder / "history.json").write_text(json.dumps({
        "seed": 1, "dev_loss": dev_loss, "dev_accuracy": 0.9, "degenerate": degenerate, "best_epoch": best_epoch,
        "epochs": [], "seconds_per_epoch": None}))
    (folder / "predictions.json").write_text(json.dumps({
        "train": {"prob_positive": [0.5] * len(train_positions), "positions": train_positions},
        "dev": {"prob_positive": dev_prob, "positions": [[0]] * len(dev_prob)}}))
    return folder


def test_candidate_loss_original_dev_ranks_by_the_original_dev_set(tmp_path):
    from icda.model_selection import cross_entropy
    from icda.steps.select import select_folders

    dev_labels = [1, 0, 1, 0]
    train_labels, sel = [0, 1], [[0], [1]]
    # "a" has the lower augmented-dev loss, "b" predicts the original dev set far better
    a = _candidate(tmp_path, "a", 0.001, [0.6, 0.4, 0.6, 0.4], sel)
    b = _candidate(tmp_path, "b", 0.002, [0.99, 0.01, 0.99, 0.01], sel)
    warm = _candidate(tmp_path, "warm", 0.003, [0.5] * 4, sel)
    prev_dir = _candidate(tmp_path, "prev", 0.1, [0.5] * 4, sel)
    previous = _choice(candidate_dir=str(prev_dir), delta_A=None)
    paper = select_folders(1, [a, b], train_labels, warm, previous, dev_labels)
    assert paper.chosen.name == "a" and paper.candidate_loss == "augmented_dev"
    departure = select_folders(1, [a, b], train_labels, warm, previous, dev_labels, "original_dev")
    assert departure.chosen.name == "b"
    assert departure.chosen.original_dev_loss == pytest.approx(cross_entropy([0.99, 0.01, 0.99, 0.01], dev_labels))
    assert cross_entropy([0.99, 0.01], [1, 0]) == pytest.approx(-np.log(0.99))
    # iteration 0 (MMI) always uses the dev loss training recorded, which is the original dev loss
    assert select_folders(0, [a, b], train_labels, dev_labels=dev_labels, candidate_loss="original_dev").chosen.name == "a"
    with pytest.raises(ValueError, match="candidate_loss"):
        select_folders(1, [a, b], train_labels, warm, previous, dev_labels, "test")


def test_original_dev_keeps_the_papers_stop_test_for_an_unimproved_warm_start(tmp_path):
    """The unimproved warm start (the previous model) predicts the original dev set best, but the
    fresh model has the lower augmented-dev loss: the paper's stop test fails, so the fresh model
    wins and the loop goes on. Where the augmented dev loss also ranks the warm start first, it
    wins and the loop stops."""
    from icda.model_selection import rechoose
    from icda.steps.select import select_folders

    dev_labels, train_labels, sel = [1, 0], [0, 1], [[0], [1]]
    fresh = _candidate(tmp_path, "seed1", 0.08, [0.7, 0.3], sel)
    unimproved = _candidate(tmp_path, "warm", 0.10, [0.9, 0.1], sel, best_epoch=-1)
    previous = _choice(candidate_dir=str(_candidate(tmp_path, "prev", 0.1, [0.9, 0.1], sel)))
    choice = select_folders(1, [fresh], train_labels, unimproved, previous, dev_labels, "original_dev")
    assert choice.chosen.name == "seed1" and not _stop(choice).stop
    assert {c.name: c.score for c in choice.candidates}["warm"] < choice.chosen.score
    assert choice.reason.startswith("warm had the lowest score") and "stop test fails" in choice.reason
    assert rechoose(choice, "original_dev").name == "seed1"

    worse = _candidate(tmp_path, "seed2", 0.12, [0.7, 0.3], sel)
    choice = select_folders(1, [worse], train_labels, unimproved, previous, dev_labels, "original_dev")
    assert choice.chosen.name == "warm" and _stop(choice).converged
    assert choice.reason == f"the lowest score (original dev loss {choice.chosen.original_dev_loss:.4f})"
    improved = _candidate(tmp_path, "warm2", 0.10, [0.9, 0.1], sel, best_epoch=2)
    assert select_folders(1, [fresh], train_labels, improved, previous, dev_labels, "original_dev").chosen.name == "warm2"


def test_select_candidate_applies_the_degeneration_and_delta_a_penalties(tmp_path):
    from icda.steps.select import select_folders

    train_labels = [0, 0, 1, 1]
    prev = _candidate(tmp_path, "prev", 0.5, [0.5] * 2, [[0], [1], [0], [1]])
    # lowest loss but degenerate: x1e10
    degenerate = _candidate(tmp_path, "seed1", 0.01, [0.5] * 2, [[0], [1], [0], [1]], degenerate=True)
    # same rationales as before: ΔA = 0, smaller than 0.5: no penalty
    same = _candidate(tmp_path, "seed2", 0.30, [0.5] * 2, [[0], [1], [0], [1]])
    # every rationale changed: ΔA = 1, not smaller than 0.5: x1e10
    moved = _candidate(tmp_path, "seed3", 0.20, [0.5] * 2, [[2], [3], [2], [3]])
    warm = _candidate(tmp_path, "warm", 0.40, [0.5] * 2, [[0], [1], [0], [1]], best_epoch=-1)
    choice = select_folders(2, [degenerate, same, moved], train_labels, warm,
                            _choice(candidate_dir=str(prev), delta_A=0.5))
    scores = {row.name: row.score for row in choice.candidates}
    assert scores == pytest.approx({"seed1": 0.01e10, "seed2": 0.30, "seed3": 0.20e10, "warm": 0.40})
    assert (choice.chosen.name, choice.chosen.delta_A, choice.previous_delta_A) == ("seed2", 0.0, 0.5)
    assert [row.delta_A for row in choice.candidates] == [0.0, 0.0, 1.0, 0.0]
    assert choice.model_path == same / "model.pt"
    assert choice.reason == "the lowest score (dev loss 0.3000)"
    # only penalised candidates: the reason says the winner's score carries the penalty
    choice = select_folders(2, [degenerate, moved], train_labels, None, _choice(candidate_dir=str(prev), delta_A=0.5))
    assert choice.chosen.name == "seed1"
    assert choice.reason == "the lowest score (dev loss 0.0100, × 1e+10 by the degeneration or ΔA penalty)"


def test_original_dev_loss_and_the_final_run(tmp_path):
    from icda.data.document import Document, write_documents
    from icda.steps.finalize import original_dev_loss, write_final_dataset

    dev = [Document(f"d{i}", y, ("s",)) for i, y in enumerate([1, 0])]
    write_documents(dev, tmp_path / "dev.jsonl")
    runs = []
    for run, prob in ((1, [0.6, 0.4]), (2, [0.9, 0.1])):
        folder = _candidate(tmp_path, f"run{run}", 0.1, prob, [[0]])
        choice = _choice(candidate_dir=str(folder))
        choice.write(tmp_path / f"choice{run}.json")
        (tmp_path / f"aug{run}.jsonl").write_text(f"run {run}\n")
        runs.append(choice)
    assert original_dev_loss(runs[0], [1, 0]) == pytest.approx(-np.log(0.6))
    assert original_dev_loss(runs[1], [1, 0]) == pytest.approx(-np.log(0.9))
    best = write_final_dataset([tmp_path / "aug1.jsonl", tmp_path / "aug2.jsonl"],
                               [tmp_path / "choice1.json", tmp_path / "choice2.json"], tmp_path, tmp_path / "out.jsonl")
    assert best == tmp_path / "aug2.jsonl" and (tmp_path / "out.jsonl").read_text() == "run 2\n"
    with pytest.raises(ValueError, match="one of each per run"):
        write_final_dataset([tmp_path / "aug1.jsonl"], [], tmp_path, tmp_path / "x.jsonl")


def test_compare_candidate_losses_reports_the_other_losses_pick_on_dev(tmp_path, capsys):
    """Hand-made iteration: the augmented-dev loss chose `a` (selects sentence 1, wrong), the
    original-dev loss prefers `b` (selects sentence 0, the dev ground truth of both documents)."""
    import importlib.util
    from pathlib import Path

    from icda.data.document import Document, write_documents
    from icda.records import Choice, CandidateScore, Predictions

    spec = importlib.util.spec_from_file_location(
        "compare", Path(__file__).parents[1] / "scripts" / "compare_candidate_losses.py")
    compare = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(compare)

    results = tmp_path / "results"
    dev = [Document(f"d{i}", i % 2, ("good food", "nice view"), frozenset({0})) for i in range(2)]
    write_documents(dev, results / "synthetic" / "data" / "dev.jsonl")
    iteration = results / "synthetic" / "run1" / "iter1"
    scores = {}
    for name, position, aug, orig in (("a", 1, 0.01, 0.9), ("b", 0, 0.02, 0.3)):
        folder = iteration / name
        folder.mkdir(parents=True)
        split = {"prob_positive": [0.2, 0.8], "positions": [[position], [position]]}
        Predictions.from_json({"train": split, "dev": split}).write(folder / "predictions.json")
        scores[name] = CandidateScore(name, f"results/synthetic/run1/iter1/{name}", False, 1, aug, orig,
                                      1.0, False, 0, 0.1, aug)
    Choice(1, "augmented_dev", None, scores["a"], [scores["a"], scores["b"]]).write(iteration / "choice.json")

    compare.main([str(results), "--datasets", "synthetic"])
    out = capsys.readouterr().out
    assert "| synthetic | run1 | 1 | augmented_dev | a 0.0 | b | 100.0 |" in out
    assert "different candidate in 1 iterations; its pick has the higher dev precision in 1 of them" in out


def test_agreement_and_majority_vote_on_hand_made_selections():
    from icda.model_selection import agreement, majority_vote

    a, b, c = [[0], [1], [2], [3]], [[0], [1], [4], [4]], [[0], [2], [4], [1, 3]]
    assert agreement(a, b) == 0.5 and agreement(a, a) == 1.0 and agreement([], []) == 1.0
    assert agreement([[1, 3]], [[3, 1]]) == 1.0  # a set of positions, in any order
    # doc 0: all three agree; doc 1: a and b; doc 2: b and c; doc 3: three different sets, a tie
    assert majority_vote([a, b, c], tie_break=a) == [[0], [1], [4], [3]]
    assert majority_vote([a, b, c], tie_break=c)[3] == [1, 3]
    # the tie-break's own pick loses to a majority it is not part of
    assert majority_vote([a, b, c], tie_break=[[5], [2], [2], [9]]) == [[0], [1], [4], [4]]


def test_without_the_delta_a_gate_a_fresh_candidate_that_moves_the_rationales_can_win():
    assert score(0.5, False, 2, 0.3, 0.3, delta_a_gate=False) == 0.5
    assert score(0.5, True, 2, 0.3, 0.3, delta_a_gate=False) == pytest.approx(0.5e10)  # degeneration still counts


def _scored_candidate(tmp_path, name, dev_positions, dev_loss=0.3, degenerate=False, train=None):
    import json

    folder = tmp_path / name
    folder.mkdir()
    (folder / "history.json").write_text(json.dumps({
        "seed": 1, "dev_loss": dev_loss, "dev_accuracy": 0.9, "degenerate": degenerate, "best_epoch": 2,
        "epochs": [], "seconds_per_epoch": None}))
    train = train or [[0], [1]]
    (folder / "predictions.json").write_text(json.dumps({
        "train": {"prob_positive": [0.5] * len(train), "positions": train},
        "dev": {"prob_positive": [0.5] * len(dev_positions), "positions": dev_positions}}))
    return folder


def test_agreement_choice_takes_the_candidate_the_other_fresh_candidates_agree_with(tmp_path):
    """From iteration 1, candidate_choice="agreement" picks the non-degenerate candidate whose dev
    rationales agree most with the other fresh candidates', whatever the losses; iteration 0 (MMI)
    keeps the lowest dev loss. The choice records each candidate's agreement and the fresh
    candidates' mean pairwise agreement, which final_choice="agreement" reads."""
    from icda.steps.select import select_folders

    # dev picks of 4 documents: seed1 and seed2 agree on 3, seed3 is the odd one out (lowest loss)
    s1 = _scored_candidate(tmp_path, "seed1", [[0], [1], [2], [3]], dev_loss=0.30)
    s2 = _scored_candidate(tmp_path, "seed2", [[0], [1], [2], [0]], dev_loss=0.40)
    s3 = _scored_candidate(tmp_path, "seed3", [[1], [0], [0], [0]], dev_loss=0.10)
    warm = _scored_candidate(tmp_path, "warm", [[0], [1], [2], [3]], dev_loss=0.20, degenerate=True)
    prev = _choice(candidate_dir=str(_scored_candidate(tmp_path, "prev", [[0]] * 4)), delta_A=0.0)
    labels = [0, 1]
    choice = select_folders(2, [s1, s2, s3], labels, warm, prev, candidate_choice="agreement", delta_a_gate=False)
    agreements = {c.name: c.agreement for c in choice.candidates}
    assert agreements == pytest.approx({"seed1": (0.75 + 0.0) / 2, "seed2": (0.75 + 0.25) / 2,
                                        "seed3": (0.0 + 0.25) / 2, "warm": (1.0 + 0.75 + 0.0) / 3})
    # warm agrees most but is degenerate; seed2 (0.5) beats seed1 (0.375) and the low-loss seed3
    assert choice.chosen.name == "seed2" and "agreement" in choice.reason
    assert choice.agreement == pytest.approx((0.75 + 0.0 + 0.25) / 3)
    assert (choice.candidate_choice, choice.delta_a_gate) == ("agreement", False)
    assert select_folders(2, [s1, s2, s3], labels, warm, prev, delta_a_gate=False).chosen.name == "seed3"  # by loss
    assert select_folders(0, [s1, s2, s3], labels, candidate_choice="agreement").chosen.name == "seed3"  # MMI


def test_final_choice_agreement_takes_the_iteration_whose_fresh_candidates_agree_most():
    from icda.model_selection import Signals, final_iteration

    signals = [Signals(0, None, 0.5, 0.8, 0.9), Signals(1, 0.4, 0.5, 0.8, 0.3), Signals(2, 0.2, 0.4, 0.8, 0.7),
               Signals(3, 0.1, 0.3, 0.8, 0.7), Signals(4, 0.1, 0.3, 0.8, 0.5)]
    k, why = final_iteration(signals, "agreement")
    assert k == 3 and why == "the highest agreement of iterations 1-4 (0.7000)"  # not MMI; ties late
    assert final_iteration([Signals(0, None, 0.5, 0.8), Signals(1, 0.4, 0.5, 0.8)], "agreement")[0] == 1


def test_final_choice_rationale_probe_may_take_mmi_and_ties_go_late():
    """The guard (departure 29): MMI is eligible, so a loop whose rationales became less
    predictive reports its start; among equals the later iteration wins; without a recorded probe
    (fine-tuning mode) the last iteration."""
    from icda.model_selection import Signals, final_iteration

    fell = [Signals(0, None, 0.5, 0.8, 0.9, 0.91), Signals(1, 0.4, 0.5, 0.8, 0.3, 0.88), Signals(2, 0.05, 0.4, 0.8, 0.9, 0.80)]
    assert final_iteration(fell, "rationale_probe") == (0, "the highest rationale probe of iterations 0-2 (0.9100)")
    rose = [Signals(0, None, 0.5, 0.8, 0.9, 0.85), Signals(1, 0.4, 0.5, 0.8, 0.3, 0.93), Signals(2, 0.05, 0.4, 0.8, 0.9, 0.93)]
    assert final_iteration(rose, "rationale_probe")[0] == 2
    assert final_iteration(fell, "agreement")[0] == 2  # the other rules never take MMI
    unrecorded = [Signals(0, None, 0.5, 0.8), Signals(1, 0.4, 0.5, 0.8)]
    assert final_iteration(unrecorded, "rationale_probe") == (1, "the last iteration (no rationale_probe recorded)")


def test_agreement_guard_reports_mmi_after_a_wrong_first_round_and_steps_back_from_a_split_last():
    """Known answers from the account runs (docs/experiments/loop-guard.md): connect seeds
    126–128 (agreement 0.668 → 0.284 → … ) reports MMI; restaurant seeds 129–131 (… 0.897 →
    0.807 at its last iteration) reports iteration 5; a run whose agreement rose reports its last."""
    from icda.model_selection import Signals, final_iteration

    def run(agreements):
        return [Signals(k, None if k == 0 else 0.2, 0.4, 0.8, a) for k, a in enumerate(agreements)]

    k, why = final_iteration(run([0.668, 0.284, 0.807, 0.887, 0.877]), "agreement_guard")
    assert k == 0 and why.startswith("MMI: the fresh candidates agreed less after the first counterfactual round (0.284)")
    k, why = final_iteration(run([0.717, 0.761, 0.812, 0.821, 0.798, 0.897, 0.807]), "agreement_guard")
    assert k == 5 and "(0.807) than the one before (0.897)" in why
    assert final_iteration(run([0.735, 0.790, 0.813, 0.859, 0.857, 0.837, 0.878]), "agreement_guard") == (6, "the last iteration")
    assert final_iteration(run([0.5, 0.5]), "agreement_guard") == (1, "the last iteration")  # equal is no fall
    assert final_iteration([Signals(0, None, 0.4, 0.8), Signals(1, 0.2, 0.4, 0.8)], "agreement_guard")[0] == 1


def test_rationale_probe_scores_rationales_by_how_well_they_alone_predict_the_label():
    """A known answer: rationales that carry the label give a probe accuracy of 1, rationales
    that carry noise give chance; vectors are the means of the selected sentences'."""
    import numpy as np

    from icda.rationale_probe import probe_accuracy, rationale_vectors

    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, 200)
    # sentence 0 of each document carries its label (±1 on dimension 0), sentence 1 is noise
    table = np.concatenate([np.stack([2 * labels - 1, np.zeros(200)], 1), rng.normal(size=(200, 2))])
    ids = [[d, 200 + d] for d in range(200)]
    right, wrong = [[0]] * 200, [[1]] * 200
    fit = lambda pos: probe_accuracy(rationale_vectors(table, ids[:100], pos[:100]), labels[:100],  # noqa: E731
                                     rationale_vectors(table, ids[100:], pos[100:]), labels[100:])
    assert fit(right) == 1.0
    assert 0.3 < fit(wrong) < 0.7
    assert np.allclose(rationale_vectors(table, ids[:1], [[0, 1]]), (table[0] + table[200]) / 2)
    with pytest.raises(ValueError, match="document 0: positions \\[2\\] do not select from its 2 sentences"):
        rationale_vectors(table, ids[:1], [[2]])
    with pytest.raises(ValueError, match="at least two classes"):
        probe_accuracy(table[:3], [1, 1, 1], table[:3], [1, 0, 1])


def test_a_missing_or_corrupt_settings_file_is_named_with_the_fix(tmp_path, capsys):
    """Every command reads settings.json through Settings.load: a missing or broken file is an
    error line naming it (exit 2), not a traceback."""
    from icda.cli import main

    assert main(["converge", "--choice", str(tmp_path / "choice.json"), "--settings", str(tmp_path / "none.json"),
                 "--out", str(tmp_path / "converge.json")]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'none.json'}: file not found" in err and "settings.json" in err
    (tmp_path / "cut.json").write_text('{"model": {', encoding="utf-8")
    with pytest.raises(DataError, match="not valid JSON"):
        Settings.load(tmp_path / "cut.json")


def test_paper_stop_rule_needs_the_warm_start():
    """stop_rule paper stops when the unimproved warm start wins: without a warm start it could
    never stop before max_iters, so the combination is refused with the fix."""
    from icda.errors import ConfigError
    from icda.settings import IcdaSettings

    IcdaSettings(stop_rule="paper", warm_start=True).validate()
    IcdaSettings(stop_rule="rationales", warm_start=False).validate()
    with pytest.raises(ConfigError, match=r"icda.stop_rule='paper'.*warm_start is off\. Fix: set warm_start: true"):
        IcdaSettings(stop_rule="paper", warm_start=False).validate()


def test_pool_confidence_mean_picks_the_pools_documents_by_the_fresh_candidates_mean(tmp_path):
    """pool_confidence="mean": which documents fill a class's pool follows the fresh candidates'
    mean class probability, so one candidate's confident mistake cannot fill it alone; "chosen"
    (the paper) follows the chosen candidate's. Pool share 1/4 of a class's 4 documents: one each."""
    from icda.data.document import Document, write_documents
    from icda.records import CandidateScore, Choice, Predictions, SplitPredictions
    from icda.steps.pools import make_pools

    data = tmp_path / "data"
    for split in ("train", "dev"):
        write_documents([Document(f"{split}-{i}", i % 2, ("a.", "b.", "c.")) for i in range(8)], data / f"{split}.jsonl")
    # P(y=1) of documents 0..7 (labels 0,1,0,1,...): seed1 is surest of 0 and 1, seed2 of 2 and 3
    probs = {"seed1": [0.01, 0.99, 0.40, 0.60, 0.40, 0.60, 0.40, 0.60],
             "seed2": [0.45, 0.55, 0.01, 0.99, 0.30, 0.80, 0.30, 0.80]}
    scores = []
    for seed, (name, p) in enumerate(probs.items(), 1):
        split = SplitPredictions(prob_positive=p, positions=[[i % 3] for i in range(8)])
        Predictions(train=split, dev=split).write(tmp_path / name / "predictions.json")
        scores.append(CandidateScore(name=name, candidate_dir=str(tmp_path / name), warm_start=False, seed=seed,
                                     dev_loss=0.1, original_dev_loss=0.1, dev_accuracy=1.0, degenerate=False,
                                     best_epoch=0, delta_A=None, score=0.1))
    Choice(iteration=1, candidate_loss="original_dev", previous_delta_A=None, chosen=scores[0],
           candidates=scores).write(tmp_path / "choice.json")
    chosen = make_pools(tmp_path / "choice.json", data, 0.25, "class", pool_source="chosen")
    mean = make_pools(tmp_path / "choice.json", data, 0.25, "class", pool_source="chosen", pool_confidence="mean")
    assert {c: [d for d, _ in refs] for c, refs in chosen.train.plan.pools.items()} == {0: [0], 1: [1]}
    # means: class 0 documents 0.23, 0.205, 0.35, 0.35 -> 2; class 1 0.77, 0.795, 0.70, 0.70 -> 3
    assert {c: [d for d, _ in refs] for c, refs in mean.train.plan.pools.items()} == {0: [2], 1: [3]}
    assert mean.train.plan.positions == chosen.train.plan.positions  # the rationales stay the chosen one's
    from icda.errors import ConfigError
    from icda.settings import IcdaSettings
    with pytest.raises(ConfigError, match=r"icda.pool_confidence='vote': use one of \['chosen', 'mean'\]"):
        IcdaSettings(pool_confidence="vote").validate()
