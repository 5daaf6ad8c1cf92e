"""ERASER's rationale metrics (DeYoung et al. 2020, "ERASER: A Benchmark to Evaluate Rationalized
NLP Models"), written anew from the definitions of its scorer ``rationale_benchmark/metrics.py``
(github.com/jayded/eraserbenchmark), beside the paper's precision (:mod:`icda.metrics`).

Vocabulary (ERASER's): an **annotation** is one labelled instance (``annotation_id``; here one
document), a **span** a half-open range ``[start, end)`` of token (or sentence) indices of one
document of one annotation (:class:`Span`), the **truth** the human rationale's spans (the
``evidences``), the **prediction** a model's hard rationale spans. Scores are fractions in
[0, 1] (comprehensiveness, sufficiency and AOPC: differences of probabilities, in [−1, 1]).

Every function mirrors one of ERASER's, named in its docstring, including ERASER's averaging
(micro: pooled over every annotation; macro: per annotation, then averaged). Where ERASER fails
(a division by zero on an empty prediction, the mean of an empty list) these return 0.0 or None,
as each docstring says. No file paths: :mod:`icda.steps.eraser` reads and writes the files.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

#: ERASER's default AOPC bins (``--aopc_thresholds``): the fraction of a document's tokens
#: removed (comprehensiveness) or kept (sufficiency)
AOPC_THRESHOLDS = (0.01, 0.05, 0.1, 0.2, 0.5)
#: ERASER's default intersection-over-union threshold (``--iou_thresholds``)
IOU_THRESHOLDS = (0.5,)


@dataclass(frozen=True)
class Span:
    """``[start, end)`` of one document (``docid``) of one annotation (``annotation_id``); the
    unit (tokens or sentences) is the caller's. ERASER's ``Rationale``."""

    annotation_id: str
    docid: str
    start: int
    end: int

    def units(self) -> list["Span"]:
        """The span as one-unit spans ``[i, i+1)`` (ERASER's ``Rationale.to_token_level``)."""
        return [Span(self.annotation_id, self.docid, i, i + 1) for i in range(self.start, self.end)]


def _f1(p: float, r: float) -> float:
    """The harmonic mean, 0 where either is 0 (ERASER's ``_f1``)."""
    return 0.0 if p == 0 or r == 0 else 2 * p * r / (p + r)


def _by_document(spans: Iterable[Span]) -> dict[tuple[str, str], set[Span]]:
    out: dict[tuple[str, str], set[Span]] = {}
    for s in spans:
        out.setdefault((s.annotation_id, s.docid), set()).add(s)
    return out


def prf(truth: Iterable[Span], pred: Iterable[Span]) -> dict[str, dict[str, float]]:
    """Exact-match precision, recall and F1 of predicted spans against true spans (ERASER's
    ``score_hard_rationale_predictions``, its ``rationale_prf``).

    A predicted span counts only if a true span has the same annotation, document, start and end
    (duplicates count once). ``instance_micro``: p = |T ∩ P| / |P|, r = |T ∩ P| / |T| over all
    annotations, f1 their harmonic mean; ``instance_macro``: per (annotation, document) present in
    either T or P, p (0 without a prediction), r (0 without truth) and f1, each averaged over them
    (the macro f1 is the mean of the per-document F1s, not the F1 of the means).

    Returns:
        ``{"instance_micro": {"p", "r", "f1"}, "instance_macro": {"p", "r", "f1"}}``; an empty
        P (or T) gives micro p (or r) 0.0 where ERASER divides by zero, and no document at all
        macro scores of 0.0.
    """
    truth, pred = set(truth), set(pred)
    hits = len(truth & pred)
    micro_p = hits / len(pred) if pred else 0.0
    micro_r = hits / len(truth) if truth else 0.0
    t_docs, p_docs = _by_document(truth), _by_document(pred)
    rows = []
    for key in sorted(set(t_docs) | set(p_docs)):  # in one order: a set's depends on PYTHONHASHSEED
        t, p = t_docs.get(key, set()), p_docs.get(key, set())
        prec = len(t & p) / len(p) if p else 0.0
        rec = len(t & p) / len(t) if t else 0.0
        rows.append((prec, rec, _f1(prec, rec)))
    macro = np.mean(rows, axis=0).tolist() if rows else [0.0, 0.0, 0.0]
    return {"instance_micro": {"p": micro_p, "r": micro_r, "f1": _f1(micro_p, micro_r)},
            "instance_macro": dict(zip(("p", "r", "f1"), macro))}


def unit_prf(truth: Iterable[Span], pred: Iterable[Span]) -> dict[str, dict[str, float]]:
    """:func:`prf` of the spans cut into one-unit spans: with token spans, ERASER's ``token_prf``
    (``score_hard_rationale_predictions`` of ``to_token_level``); with sentence spans (start and
    end sentence indices), the sentence-level precision, recall and F1 of the selected sentences.
    With every document annotated and k selected sentences per document, the sentence
    ``instance_micro`` precision is the paper's rationale precision (:func:`icda.metrics.rationale_metrics`)."""
    return prf((u for s in truth for u in s.units()), (u for s in pred for u in s.units()))


def iou_scores(truth: Iterable[Span], pred: Iterable[Span],
               thresholds: Sequence[float] = IOU_THRESHOLDS) -> list[dict[str, Any]]:
    """Partial-match ("IOU") precision, recall and F1 (ERASER's ``partial_match_score``, its
    ``iou_scores``; paper Section 4, after Carton et al. 2018).

    Each predicted span's IOU is its largest |p ∩ t| / |p ∪ t| (token sets) over the true spans
    of its annotation and document; it is a true positive at threshold τ if IOU ≥ τ (so two
    predictions overlapping one true span may both count, as in ERASER). Micro: TP over all
    predictions (p) and all true spans (r); macro: per (annotation, document) TP / |P| averaged
    over the documents with predictions (p) and TP / |T| over those with truth (r); each f1 is the
    harmonic mean of its p and r.

    Returns:
        one ``{"threshold", "micro": {"p", "r", "f1"}, "macro": {"p", "r", "f1"}}`` per threshold
        (0.0 where a denominator is empty, as in ERASER).
    """
    t_docs, p_docs = _by_document(truth), _by_document(pred)
    best: dict[tuple[str, str], list[float]] = {}
    for key, spans in p_docs.items():
        tokens = [set(range(t.start, t.end)) for t in t_docs.get(key, ())]
        row = []
        for p in spans:
            own = set(range(p.start, p.end))
            row.append(max([len(own & t) / len(own | t) for t in tokens if own | t] + [0.0]))
        best[key] = row
    n_truth = {k: len(v) for k, v in t_docs.items()}
    n_pred = {k: len(v) for k, v in p_docs.items()}
    out = []
    for threshold in thresholds:
        tp = {k: sum(iou >= threshold for iou in row) for k, row in best.items()}
        micro_p = sum(tp.values()) / sum(n_pred.values()) if sum(n_pred.values()) else 0.0
        micro_r = sum(tp.values()) / sum(n_truth.values()) if sum(n_truth.values()) else 0.0
        ps = [tp.get(k, 0) / n for k, n in n_pred.items()]
        rs = [tp.get(k, 0) / n for k, n in n_truth.items()]
        macro_p = sum(ps) / len(ps) if ps else 0.0
        macro_r = sum(rs) / len(rs) if rs else 0.0
        out.append({"threshold": threshold,
                    "micro": {"p": micro_p, "r": micro_r, "f1": _f1(micro_r, micro_p)},
                    "macro": {"p": macro_p, "r": macro_r, "f1": _f1(macro_r, macro_p)}})
    return out


def soft_scores(truth: Sequence[Sequence[bool]], scores: Sequence[Sequence[float]]) -> dict[str, float | None]:
    """Ranking quality of soft (per-token or per-sentence) rationale scores (ERASER's
    ``score_soft_tokens``: ``token_soft_metrics`` on tokens, ``sentence_soft_metrics`` on
    sentences).

    Args:
        truth: per document, one bool per unit (True: in the human rationale).
        scores: per document, one score per unit (any real numbers; only their order matters).

    Returns:
        ``auprc``: per document the area under its precision-recall curve
        (``sklearn.metrics.precision_recall_curve``, then ``sklearn.metrics.auc``: trapezoids, as
        ERASER's ``_auprc``), averaged over every document (0.0 without documents);
        ``average_precision`` (``sklearn.metrics.average_precision_score``) and ``roc_auc_score``
        (``sklearn.metrics.roc_auc_score``), averaged over the documents whose truth holds both
        True and False (ERASER's ``_score_aggregator`` with ``discard_single_class_answers``);
        None where no document qualifies (ERASER: NaN). Computed as those two functions compute
        them for two classes, from the same curves: average precision is the step integral
        ``-Σ Δrecall · precision`` over the precision-recall curve already drawn for the AUPRC,
        ROC AUC ``auc`` over ``roc_curve``, with scikit-learn's argument checks off (a test holds
        the numbers equal to the two functions'): cheaper than calling them per document, which
        took most of an ERASER scoring job's time (docs/results.md).

    Raises:
        ValueError: the two lists differ in length, or a document's truth and scores do.
    """
    import sklearn
    from sklearn.metrics import auc, precision_recall_curve, roc_curve

    if len(truth) != len(scores):
        raise ValueError(f"{len(truth)} truth rows but {len(scores)} score rows")
    for d, (t, s) in enumerate(zip(truth, scores)):
        if len(t) != len(s):
            raise ValueError(f"document {d}: {len(t)} truth values but {len(s)} scores")
    aucs, aps, rocs = [], [], []
    with sklearn.config_context(skip_parameter_validation=True):
        for t, s in zip(truth, scores):
            t, s = [int(x) for x in t], list(s)
            precision, recall, _ = precision_recall_curve(t, s)
            aucs.append(auc(recall, precision))
            if 0 < sum(t) < len(t):
                aps.append(float(max(0.0, -np.sum(np.diff(recall) * precision[:-1]))))
                fpr, tpr, _ = roc_curve(t, s)
                rocs.append(auc(fpr, tpr))
    return {"auprc": float(np.mean(aucs)) if aucs else 0.0,
            "average_precision": float(np.mean(aps)) if aps else None,
            "roc_auc_score": float(np.mean(rocs)) if rocs else None}


def faithfulness(full: Sequence[float], reduced: Sequence[float]) -> float | None:
    """Mean drop of the predicted class's probability when the input is reduced (ERASER's
    ``score_classifications``; paper Section 4, "Faithfulness").

    Comprehensiveness: ``reduced`` [D] is the model's probability of its predicted class on the
    document without its rationale (higher = the rationale mattered); sufficiency: on the
    rationale alone (lower = the rationale suffices). ``full`` [D]: the probability of that same
    class on the whole document. Returns mean(full − reduced), None without documents.

    Raises:
        ValueError: the lengths differ.
    """
    if len(full) != len(reduced):
        raise ValueError(f"{len(full)} full-document scores but {len(reduced)} reduced ones")
    return float(np.mean(np.asarray(full, float) - np.asarray(reduced, float))) if len(full) else None


def aopc(full: Sequence[float], binned: Sequence[Sequence[float]]) -> tuple[float | None, list[float]]:
    """Area over the perturbation curve (ERASER's ``_instances_aopc``; Samek et al. 2017):
    :func:`faithfulness` averaged over bins.

    Args:
        full: [D] the probability of each document's predicted class on the whole document.
        binned: [D, B] the probability of that class with the document reduced at each of the B
            thresholds (:data:`AOPC_THRESHOLDS`: its top 1 %, 5 %, … of tokens removed for
            comprehensiveness, kept alone for sufficiency), in threshold order.

    Returns:
        (the mean of full − binned over documents and bins, [B] its mean per bin); (None, [])
        without documents.

    Raises:
        ValueError: ``binned`` is not [D, B] with one row per document and as many bins in each.
    """
    if not len(full):
        return None, []
    rows = np.asarray(binned, float)
    if rows.ndim != 2 or rows.shape[0] != len(full):
        raise ValueError(f"binned scores of shape {rows.shape}, not [{len(full)}, B]")
    delta = np.asarray(full, float)[:, None] - rows
    return float(delta.mean()), delta.mean(axis=0).tolist()


def _truth_masks(annotations: Sequence[Mapping], results: Sequence[Mapping], lengths: Mapping[str, int],
                 unit: str, field: str) -> tuple[list[list[bool]], list[list[float]]]:
    """ERASER's ``PositionScoredDocument.from_results``: per (annotation, document) of the results,
    the true units from the evidences (``start_<unit>`` to ``end_<unit>``) and the scores."""
    masks: dict[tuple[str, str], list[bool]] = {}
    for ann in annotations:
        for group in ann["evidences"]:
            for ev in group:
                mask = masks.setdefault((ann["annotation_id"], ev["docid"]), [False] * lengths[ev["docid"]])
                for i in range(ev[f"start_{unit}"], ev[f"end_{unit}"]):
                    mask[i] = True
    truth, scores = [], []
    for inst in results:
        for rat in inst["rationales"]:
            truth.append(masks.get((inst["annotation_id"], rat["docid"]), [False] * lengths[rat["docid"]]))
            scores.append(rat[field])
    return truth, scores


def score_results(annotations: Sequence[Mapping], results: Sequence[Mapping],
                  documents: Mapping[str, Sequence[Sequence[str]]],
                  iou_thresholds: Sequence[float] = IOU_THRESHOLDS,
                  aopc_thresholds: Sequence[float] = AOPC_THRESHOLDS) -> dict[str, Any]:
    """ERASER's scorer (``metrics.py`` ``main`` with ``--strict``) on parsed ERASER records.

    Args:
        annotations: the lines of ERASER's ``<split>.jsonl`` (``annotation_id``,
            ``classification`` (a class, or None: no gold label; only the accuracy needs one),
            ``evidences``: groups of evidence dicts with ``docid``,
            ``start_token``/``end_token`` and ``start_sentence``/``end_sentence``, end exclusive).
        results: the lines of a predictions JSONL (``annotation_id``, ``rationales``: per document
            ``docid``, ``hard_rationale_predictions`` [{"start_token", "end_token"}],
            ``soft_rationale_predictions`` [one per token], ``soft_sentence_predictions`` [one
            per sentence]; ``classification``, ``classification_scores`` {class: probability},
            ``comprehensiveness_classification_scores``, ``sufficiency_classification_scores``,
            ``thresholded_scores`` [{"threshold", both of those}]); every line must hold every field.
        documents: docid → its sentences, each a list of tokens (ERASER's ``docs/<docid>``).

    Returns:
        ERASER's keys: ``iou_scores`` (:func:`iou_scores`), ``rationale_prf`` (:func:`prf` of
        the hard spans), ``token_prf`` (:func:`unit_prf` of the token spans),
        ``token_soft_metrics`` and ``sentence_soft_metrics`` (:func:`soft_scores`),
        ``classification_scores`` (``accuracy``: predicted equals gold over the annotations with a
        ``classification`` (None where none has one: a test set without gold labels, such as the
        hotel files); ``gold_labels``: how many have one;
        ``comprehensiveness``, ``sufficiency``: :func:`faithfulness`; ``aopc_thresholds``,
        ``comprehensiveness_aopc``, ``comprehensiveness_aopc_points``, ``sufficiency_aopc``,
        ``sufficiency_aopc_points``: :func:`aopc`); and ours: ``sentence_prf`` (:func:`unit_prf`
        of the predicted and true sentence spans: each hard span's sentences are those of its
        start and end token).

    Raises:
        KeyError: a field is missing, a docid is not in ``documents``, or an annotation has no
            result line.
        ValueError: an instance lacks one of the ``aopc_thresholds`` (ERASER asserts).
    """
    lengths = {d: sum(len(s) for s in sents) for d, sents in documents.items()}
    n_sentences = {d: len(sents) for d, sents in documents.items()}
    starts = {d: np.cumsum([0] + [len(s) for s in sents]).tolist() for d, sents in documents.items()}

    def sentence_of(docid: str, token: int) -> int:
        return int(np.searchsorted(starts[docid], token, side="right")) - 1

    truth = [Span(a["annotation_id"], ev["docid"], ev["start_token"], ev["end_token"])
             for a in annotations for group in a["evidences"] for ev in group]
    pred = [Span(r["annotation_id"], rat["docid"], h["start_token"], h["end_token"])
            for r in results for rat in r["rationales"] for h in rat.get("hard_rationale_predictions", [])]
    truth_sent = [Span(a["annotation_id"], ev["docid"], ev["start_sentence"], ev["end_sentence"])
                  for a in annotations for group in a["evidences"] for ev in group]
    pred_sent = [Span(s.annotation_id, s.docid, sentence_of(s.docid, s.start), sentence_of(s.docid, s.end - 1) + 1)
                 for s in pred if s.end > s.start]
    scores: dict[str, Any] = {
        "iou_scores": iou_scores(truth, pred, iou_thresholds),
        "rationale_prf": prf(truth, pred),
        "token_prf": unit_prf(truth, pred),
        "sentence_prf": unit_prf(truth_sent, pred_sent),
        "token_soft_metrics": soft_scores(*_truth_masks(annotations, results, lengths, "token",
                                                        "soft_rationale_predictions")),
        "sentence_soft_metrics": soft_scores(*_truth_masks(annotations, results, n_sentences, "sentence",
                                                           "soft_sentence_predictions")),
    }
    by_id = {r["annotation_id"]: r for r in results}
    missing = [a["annotation_id"] for a in annotations if a["annotation_id"] not in by_id]
    if missing:  # every annotation has its results line
        raise KeyError(missing[0])
    labelled = [a for a in annotations if a.get("classification") is not None]
    accuracy = float(np.mean([by_id[a["annotation_id"]]["classification"] == a["classification"]
                              for a in labelled])) if labelled else None

    def predicted(r: Mapping, field: str, kls: str | None = None) -> float:
        return r[field][kls or r["classification"]]

    full = [predicted(r, "classification_scores") for r in results]
    binned = {key: [] for key in ("comprehensiveness_classification_scores", "sufficiency_classification_scores")}
    for r in results:
        rows = sorted((b for b in r["thresholded_scores"] if b["threshold"] in aopc_thresholds),
                      key=lambda b: b["threshold"])
        if len(rows) != len(aopc_thresholds):
            raise ValueError(f"annotation {r['annotation_id']}: thresholded_scores holds "
                             f"{sorted(b['threshold'] for b in r['thresholded_scores'])}, not {list(aopc_thresholds)}")
        for key, out in binned.items():
            out.append([predicted(b, key, r["classification"]) for b in rows])
    comp_aopc, comp_points = aopc(full, binned["comprehensiveness_classification_scores"])
    suff_aopc, suff_points = aopc(full, binned["sufficiency_classification_scores"])
    scores["classification_scores"] = {
        "accuracy": accuracy,
        "gold_labels": len(labelled),
        "comprehensiveness": faithfulness(full, [predicted(r, "comprehensiveness_classification_scores")
                                                 for r in results]),
        "sufficiency": faithfulness(full, [predicted(r, "sufficiency_classification_scores") for r in results]),
        "aopc_thresholds": sorted(aopc_thresholds),
        "comprehensiveness_aopc": comp_aopc,
        "comprehensiveness_aopc_points": comp_points,
        "sufficiency_aopc": suff_aopc,
        "sufficiency_aopc_points": suff_points,
    }
    return scores
