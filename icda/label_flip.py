"""The label-flip check: whether swapping a selector's rationales flips a document's label, a
ground-truth-free signal of whether ICDA applies and of which way its loop goes.

ICDA's counterfactual takes a document of class y, replaces its rationale with the rationale of
a document of class c and labels the result c (paper, section "Iterative Counterfactual Data
Augmentation"). That label is right only where the rationale carries the label: where the
selector picked a spurious sentence, or where the label is spread over many sentences (movie
reviews), the sentences a counterfactual keeps still say y, and training on it teaches the
model that the sentence which sets the label does not.

The check reads labels and sentence vectors, never rationale annotations. A sentence judge, a
logistic regression (scikit-learn, L2, C = 1), is fitted on the frozen vectors of the training
documents' sentences, each labelled with its document's class; a document's class scores are the
sum of its sentences' log-probabilities (the sentences as independent experts). A counterfactual
of a dev document d (class y, rationale P) towards class c, with the rationale R of a dev
document of class c, flips when the scores of d's sentences outside P plus those of R's
sentences are highest for c. The **flip rate** is the share of counterfactuals that flip, over
every correctly classified dev document d, every other class c and every correctly classified
dev document of class c as the donor (the pools' documents, :func:`icda.counterfactual.build_plan`,
are the most confident of them); a document's share is the mean over its classes c, the rate the
mean over its documents (:func:`document_flips`).

``icda.pool_flip`` also puts the check into the loop: the kept originals and the pools' donors
are taken first among the documents whose own counterfactuals flip (:func:`document_flips`
≥ 0.5), then by confidence (:func:`icda.counterfactual.build_plan`).

A selector whose rationales carry the label makes counterfactuals that flip; one that picks a
sentence a document's other sentences agree with makes counterfactuals that do not. The judge,
though, learns which sentences *predict* the label: where a shortcut predicts it as well as the
sentence that sets it (the paper's restaurant and connect data), the check cannot tell them apart
and reads ICDA's gains as losses. Measured right on own-style data and wrong there
(docs/experiments/own-data.md), so ``icda.verdict`` and ``icda.pool_flip`` are options.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

#: the sentences the judge is fitted on, at most (a seeded sample beyond: the fit stays seconds)
MAX_JUDGE_SENTENCES = 20000


def sentence_ids(split) -> list[list[int]]:
    """Each document's sentence ids (rows of the sentence vectors), from a
    :class:`icda.data.sentence_ids.SentenceIdSplit` (its padded ``ids`` [D, N] cut to
    ``n_sentences`` [D])."""
    return [row[:n].tolist() for row, n in zip(split.ids, split.n_sentences)]


def predicted_classes(probabilities: Sequence) -> list[int]:
    """The predicted class of each document from P(y=1) [D] (two classes) or the class
    probabilities [D, C]."""
    p = np.asarray(probabilities, dtype=np.float64)
    return (p.argmax(axis=1) if p.ndim == 2 else (p > 0.5).astype(int)).tolist()


def fit_sentence_judge(table: np.ndarray, ids: Sequence[Sequence[int]], labels: Sequence[int], n_classes: int,
                       seed: int = 0) -> np.ndarray:
    """Log-probabilities of each class for every sentence vector of ``table``.

    Args:
        table: float [U, H], one row per sentence id (the frozen sentence vectors).
        ids: per training document, its sentences' ids (rows of ``table``).
        labels: [N] the training documents' classes 0 … C−1.
        n_classes: C.
        seed: the sample's seed when there are more than :data:`MAX_JUDGE_SENTENCES` sentences.

    Returns:
        float64 [U, C]: log p(class | sentence) under the judge.

    Raises:
        ValueError: the lengths differ, or the training sentences hold fewer than two classes.
    """
    from sklearn.linear_model import LogisticRegression

    if len(ids) != len(labels):
        raise ValueError(f"{len(ids)} documents but {len(labels)} labels")
    rows = np.asarray([s for doc in ids for s in doc], dtype=np.int64)
    y = np.asarray([label for doc, label in zip(ids, labels) for _ in doc], dtype=np.int64)
    if len(np.unique(y)) < 2:
        raise ValueError("the sentence judge needs training sentences of at least two classes")
    if len(rows) > MAX_JUDGE_SENTENCES:
        keep = np.random.default_rng(seed).choice(len(rows), MAX_JUDGE_SENTENCES, replace=False)
        rows, y = rows[keep], y[keep]
    judge = LogisticRegression(C=1.0, max_iter=1000).fit(np.asarray(table[rows], dtype=np.float64), y)
    out = np.full((len(table), n_classes), -np.inf)
    out[:, judge.classes_] = judge.predict_log_proba(np.asarray(table, dtype=np.float64))
    return out


def document_flips(scores: np.ndarray, ids: Sequence[Sequence[int]], labels: Sequence[int],
                   positions: Sequence[Sequence[int]], predicted: Sequence[int]) -> np.ndarray:
    """Per document, the share of its counterfactuals that flip (module docstring): the mean over
    the other classes with a donor and over their donors; NaN for a document classified wrong or
    with no donor class.

    Args: as :func:`flip_rate`.

    Returns:
        float64 [D] in [0, 1] or NaN.

    Raises:
        ValueError: the lengths differ, or a position lies outside its document.
    """
    if not len(ids) == len(labels) == len(positions) == len(predicted):
        raise ValueError(f"{len(ids)} documents, {len(labels)} labels, {len(positions)} position lists, "
                         f"{len(predicted)} predictions")
    rests, rationale = {}, {c: [] for c in range(scores.shape[1])}
    for d, (doc, label, selected, guess) in enumerate(zip(ids, labels, positions, predicted)):
        if any(p < 0 or p >= len(doc) for p in selected):
            raise ValueError(f"document {d}: positions {list(selected)} outside its {len(doc)} sentences")
        if guess != label:
            continue
        inside = scores[[doc[p] for p in selected]].sum(axis=0)
        rests[d] = scores[list(doc)].sum(axis=0) - inside
        rationale[label].append(inside)
    donors = {c: np.asarray(r) for c, r in rationale.items() if r}
    out = np.full(len(ids), np.nan)
    for d, rest in rests.items():
        rates = [float((np.argmax(rest + donors[c], axis=1) == c).mean()) for c in donors if c != labels[d]]
        if rates:
            out[d] = float(np.mean(rates))
    return out


def flip_rate(scores: np.ndarray, ids: Sequence[Sequence[int]], labels: Sequence[int],
              positions: Sequence[Sequence[int]], predicted: Sequence[int]) -> float | None:
    """The share of a selector's counterfactuals on one split whose label the sentence judge
    agrees with (module docstring).

    Args:
        scores: float [U, C], :func:`fit_sentence_judge`'s log-probabilities per sentence id.
        ids: per document, its sentences' ids; labels: [D] its class; positions: per document the
            selector's rationale positions; predicted: [D] the selector's predicted class.

    Returns:
        the flip rate in [0, 1], or None where no class has two correctly classified documents
        (no counterfactual to judge).

    Raises:
        ValueError: the lengths differ, or a position lies outside its document.
    """
    flips = document_flips(scores, ids, labels, positions, predicted)
    flips = flips[~np.isnan(flips)]
    return float(flips.mean()) if len(flips) else None
