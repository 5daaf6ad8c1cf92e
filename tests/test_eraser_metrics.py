"""ERASER's metrics (icda/eraser_metrics.py) on small cases whose answers are computed by hand in
the comments (the definitions: ERASER's rationale_benchmark/metrics.py)."""

from __future__ import annotations

import numpy as np
import pytest

from icda.eraser_metrics import Span, aopc, faithfulness, iou_scores, prf, score_results, soft_scores, unit_prf

# annotation A: true spans [0,2) [5,7); B: [1,3); predictions A: [0,2) [3,4); C (no truth): [0,1)
TRUTH = [Span("A", "a", 0, 2), Span("A", "a", 5, 7), Span("B", "b", 1, 3)]
PRED = [Span("A", "a", 0, 2), Span("A", "a", 3, 4), Span("C", "c", 0, 1)]


def close(got: dict, want: dict) -> None:
    for key, value in want.items():
        assert got[key] == pytest.approx(value), key


def test_exact_span_prf_micro_and_macro():
    scores = prf(TRUTH, PRED)
    # one hit of 3 predictions and 3 true spans
    close(scores["instance_micro"], {"p": 1 / 3, "r": 1 / 3, "f1": 1 / 3})
    # A: p = r = f1 = 1/2; B (truth, no prediction): 0, 0, 0; C (prediction, no truth): 0, 0, 0
    close(scores["instance_macro"], {"p": 1 / 6, "r": 1 / 6, "f1": 1 / 6})


def test_token_prf_cuts_spans_into_tokens():
    scores = unit_prf(TRUTH, PRED)
    # true tokens A{0,1,5,6} B{1,2}; predicted A{0,1,3} C{0}: hits A0, A1
    close(scores["instance_micro"], {"p": 2 / 4, "r": 2 / 6, "f1": 0.4})
    # A: p 2/3, r 2/4, f1 4/7; B and C: 0 → means over 3 documents
    close(scores["instance_macro"], {"p": 2 / 9, "r": 1 / 6, "f1": 4 / 21})


def test_macro_f1_is_the_mean_of_document_f1s():
    # A: p = 1, r = 1/2, f1 = 2/3; B: p = r = f1 = 1 → macro f1 = 5/6, not F1(1, 3/4) = 6/7
    truth = [Span("A", "a", 0, 1), Span("A", "a", 1, 2), Span("B", "b", 0, 1)]
    pred = [Span("A", "a", 0, 1), Span("B", "b", 0, 1)]
    close(prf(truth, pred)["instance_macro"], {"p": 1.0, "r": 0.75, "f1": 5 / 6})


def test_empty_prediction_scores_zero():
    close(prf(TRUTH, [])["instance_micro"], {"p": 0.0, "r": 0.0, "f1": 0.0})


def test_iou_counts_a_prediction_whose_best_overlap_reaches_the_threshold():
    (row,) = iou_scores(TRUTH, PRED, [0.5])
    # TP: A's [0,2) (IOU 1); [3,4) and C's [0,1) have IOU 0
    assert row["threshold"] == 0.5
    close(row["micro"], {"p": 1 / 3, "r": 1 / 3, "f1": 1 / 3})
    # p over predicted documents A (1/2), C (0); r over true documents A (1/2), B (0)
    close(row["macro"], {"p": 1 / 4, "r": 1 / 4, "f1": 1 / 4})


def test_iou_partial_match_at_and_above_the_threshold():
    # [0,4) against [0,2): IOU 2/4 = 0.5, a match at 0.5 (>=), not at 0.6
    at_half, at_six = iou_scores([Span("A", "a", 0, 2)], [Span("A", "a", 0, 4)], [0.5, 0.6])
    close(at_half["micro"], {"p": 1.0, "r": 1.0, "f1": 1.0})
    close(at_six["micro"], {"p": 0.0, "r": 0.0, "f1": 0.0})


def test_iou_two_predictions_on_one_true_span_both_count_as_in_eraser():
    # [0,2) and [2,4) each have IOU 1/2 with [0,4): 2 true positives for 1 true span, recall 2
    (row,) = iou_scores([Span("A", "a", 0, 4)], [Span("A", "a", 0, 2), Span("A", "a", 2, 4)], [0.5])
    close(row["micro"], {"p": 1.0, "r": 2.0})


def test_soft_scores_auprc_average_precision_and_roc_auc():
    truth = [[True, False, False], [False, True, False], [True, True]]
    scores = [[0.9, 0.5, 0.1], [0.9, 0.5, 0.1], [0.2, 0.3]]
    got = soft_scores(truth, scores)
    # document 1: the true unit ranks first: AUPRC 1, AP 1, ROC AUC 1.
    # document 2: curve (recall, precision) (0, 1) (0, 0) (1, 0.5): trapezoid area 0.25; AP = 1·0.5;
    #   ROC AUC: the positive beats one of two negatives, 0.5.
    # document 3: one class only: AUPRC 1 (precision 1 everywhere), left out of AP and ROC AUC.
    close(got, {"auprc": (1 + 0.25 + 1) / 3, "average_precision": (1 + 0.5) / 2, "roc_auc_score": (1 + 0.5) / 2})


def test_soft_scores_equal_scikit_learns_functions():
    """Average precision and ROC AUC, computed from the curves soft_scores draws, are
    scikit-learn's average_precision_score and roc_auc_score to the last bit (ties included)."""
    from sklearn.metrics import average_precision_score, roc_auc_score

    rng = np.random.default_rng(0)
    truth = [list(rng.random(n) < 0.3) + [True, False] for n in rng.integers(1, 60, 200)]
    scores = [list(np.round(rng.random(len(t)), 1)) for t in truth]  # rounded: many ties
    got = soft_scores(truth, scores)
    assert got["average_precision"] == float(np.mean([average_precision_score(t, s) for t, s in zip(truth, scores)]))
    assert got["roc_auc_score"] == float(np.mean([roc_auc_score(t, s) for t, s in zip(truth, scores)]))


def test_soft_scores_without_two_class_documents():
    got = soft_scores([[True, True]], [[0.1, 0.2]])
    assert got == {"auprc": 1.0, "average_precision": None, "roc_auc_score": None}
    with pytest.raises(ValueError, match="document 0: 2 truth values but 1 scores"):
        soft_scores([[True, False]], [[0.1]])


def test_faithfulness_and_aopc():
    # comprehensiveness: mean(0.9 − 0.3, 0.6 − 0.7) = 0.25
    assert faithfulness([0.9, 0.6], [0.3, 0.7]) == pytest.approx(0.25)
    assert faithfulness([], []) is None
    # deltas [[0.1, 0.3], [0.0, 0.4]]: mean 0.2, per bin [0.05, 0.35]
    total, points = aopc([0.8, 0.6], [[0.7, 0.5], [0.6, 0.2]])
    assert total == pytest.approx(0.2) and points == pytest.approx([0.05, 0.35])
    with pytest.raises(ValueError, match="not \\[2, B\\]"):
        aopc([0.8, 0.6], [[0.7, 0.5]])


def _bins(comp: dict, suff: dict, thresholds=(0.5, 0.01)) -> list:
    return [{"threshold": t, "comprehensiveness_classification_scores": comp,
             "sufficiency_classification_scores": suff} for t in thresholds]


def test_score_results_on_eraser_records():
    # document d1: sentences of 2, 3 and 1 tokens (tokens 0-1, 2-4, 5); d2: 2 and 2 tokens
    documents = {"d1": [["a", "b"], ["c", "d", "e"], ["f"]], "d2": [["g", "h"], ["i", "j"]]}
    annotations = [
        {"annotation_id": "d1", "classification": "1", "evidences": [
            [{"docid": "d1", "start_token": 2, "end_token": 5, "start_sentence": 1, "end_sentence": 2}]]},
        {"annotation_id": "d2", "classification": "0", "evidences": [
            [{"docid": "d2", "start_token": 0, "end_token": 2, "start_sentence": 0, "end_sentence": 1}]]},
    ]
    results = [
        {"annotation_id": "d1", "classification": "1", "classification_scores": {"0": 0.2, "1": 0.8},
         "comprehensiveness_classification_scores": {"0": 0.6, "1": 0.4},
         "sufficiency_classification_scores": {"0": 0.1, "1": 0.9},
         "thresholded_scores": _bins({"0": 0.5, "1": 0.5}, {"0": 0.3, "1": 0.7}),
         "rationales": [{"docid": "d1", "hard_rationale_predictions": [{"start_token": 2, "end_token": 5}],
                         "soft_sentence_predictions": [0.1, 0.8, 0.1],
                         "soft_rationale_predictions": [0.1, 0.1, 0.8, 0.8, 0.8, 0.1]}]},
        {"annotation_id": "d2", "classification": "1", "classification_scores": {"0": 0.4, "1": 0.6},
         "comprehensiveness_classification_scores": {"0": 0.5, "1": 0.5},
         "sufficiency_classification_scores": {"0": 0.4, "1": 0.6},
         "thresholded_scores": _bins({"0": 0.5, "1": 0.5}, {"0": 0.4, "1": 0.6}),
         "rationales": [{"docid": "d2", "hard_rationale_predictions": [{"start_token": 2, "end_token": 4}],
                         "soft_sentence_predictions": [0.3, 0.7],
                         "soft_rationale_predictions": [0.3, 0.3, 0.7, 0.7]}]},
    ]
    scores = score_results(annotations, results, documents, [0.5], [0.01, 0.5])
    # d1 right, d2 wrong: every rationale measure is 1/2 (micro and macro)
    close(scores["rationale_prf"]["instance_micro"], {"p": 0.5, "r": 0.5, "f1": 0.5})
    close(scores["sentence_prf"]["instance_micro"], {"p": 0.5, "r": 0.5, "f1": 0.5})
    # tokens: 3 of 5 predicted are true, 3 of 5 true are predicted
    close(scores["token_prf"]["instance_micro"], {"p": 0.6, "r": 0.6, "f1": 0.6})
    close(scores["iou_scores"][0]["macro"], {"p": 0.5, "r": 0.5, "f1": 0.5})
    # d1 ranks its true sentence first (AUPRC 1); d2 ranks it last: curve (0,1) (0,0) (1,0.5) → 0.25
    close(scores["sentence_soft_metrics"], {"auprc": 0.625, "average_precision": 0.75, "roc_auc_score": 0.5})
    classification = scores["classification_scores"]
    assert classification["accuracy"] == 0.5
    # predicted class 1 in both: comprehensiveness mean(0.8 − 0.4, 0.6 − 0.5), sufficiency mean(−0.1, 0)
    assert classification["comprehensiveness"] == pytest.approx(0.25)
    assert classification["sufficiency"] == pytest.approx(-0.05)
    # every bin as the 0.5 bin: comprehensiveness deltas 0.3 and 0.1, sufficiency 0.1 and 0
    assert classification["comprehensiveness_aopc"] == pytest.approx(0.2)
    assert classification["sufficiency_aopc_points"] == pytest.approx([0.05, 0.05])
    with pytest.raises(ValueError, match="annotation d1: thresholded_scores holds"):
        score_results(annotations, results, documents, [0.5], [0.1])


def test_macro_scores_do_not_depend_on_the_string_hash_seed():
    """The per-document rows are averaged in one order: a set of (annotation, document) keys
    iterates in an order that changes with PYTHONHASHSEED, and so did the last bits of the mean."""
    import json
    import os
    import subprocess
    import sys

    script = r"""
import json, random
from icda.eraser_metrics import Span, prf
rng = random.Random(0)
truth = [Span(f"a{d}", f"d{d}", i, i + 1) for d in range(300) for i in range(12) if rng.random() < 0.3]
pred = [Span(f"a{d}", f"d{d}", i, i + 1) for d in range(300) for i in range(12) if rng.random() < 0.2]
print(json.dumps(prf(truth, pred)["instance_macro"]))
"""
    outputs = {seed: subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                                    env=dict(os.environ, PYTHONHASHSEED=seed)).stdout
               for seed in ("1", "2", "3", "4")}
    assert len(set(outputs.values())) == 1, outputs
    assert json.loads(outputs["1"])["p"] > 0
