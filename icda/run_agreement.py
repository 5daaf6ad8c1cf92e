"""Whether ICDA applied to a dataset, read from how far its independent runs agree on the
rationales (``icda.verdict: run_agreement``; docs/judging-a-run.md; no ground truth read).

The paper's premise (Method, "Iterative Counterfactual Data Augmentation": the rationale error
α^{k+1} = ψ(α^k) falls from iteration to iteration) is that the loop moves every run toward the
one sentence that sets the label. Runs that start from different seeds and end on the same
rationales have found something the data fixes; runs that end further apart than their MMI
selectors started have each amplified their own first lean (docs/experiments/own-data.md: at 100
own-style reviews some runs go to the sentence that sets the label and others to the shortcut).

A run's selections are, per dev document in a fixed order, the sentence indices its chosen
selector picks (``Predictions.positions``); two runs agree on a document when they pick the same
set of sentences.

Where the runs' verdict is not "helped", each run is then judged on its own
(:func:`run_verdicts`): a run whose rationales predict its dev labels better after the loop than
before, under a sentence judge that never saw the selector (:func:`rationale_sufficiency`), went
the right way while the others split, and reports its ICDA (docs/experiments/own-data.md, "Each
run's own rationales").
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from icda.records import REPORTS_ICDA

#: the runs' ICDA selectors agree at least this much more than their MMI selectors: the loop
#: "helped" (a fraction of dev documents; docs/experiments/own-data.md, the rule of the cross-run check)
HELPED_GAIN = 0.03
#: and on at least this fraction of the dev documents: below it the runs' rationales still differ
#: on a quarter of the documents, and the loop is "did not apply"
AGREED = 0.75

#: a run whose rationale sufficiency rose by at least this much (nats) over its MMI's went the
#: right way on its own (:func:`run_verdicts`; docs/experiments/own-data.md, "Each run's own rationales")
SUFFICIENCY_GAIN = 0.03

#: the least class log-probability a rationale gets (nats; a class absent from the judge's training
#: sentences scores -inf there)
LOG_FLOOR = -50.0

Selections = Sequence[Sequence[int]]


def agreement(a: Selections, b: Selections) -> float:
    """The fraction of documents on which two selectors pick the same set of sentences.

    Args:
        a, b: per document (the same documents, in the same order), the selected sentence indices.

    Returns:
        a fraction in [0, 1].

    Raises:
        ValueError: the two hold different numbers of documents, or none.
    """
    if len(a) != len(b) or not a:
        raise ValueError(f"agreement needs the same documents in both selections, got {len(a)} and {len(b)}")
    return sum(set(x) == set(y) for x, y in zip(a, b)) / len(a)


def mean_agreement(runs: Sequence[Selections]) -> float:
    """The mean :func:`agreement` over every pair of runs (at least two). Raises ValueError with
    fewer than two runs, or where :func:`agreement` does."""
    if len(runs) < 2:
        raise ValueError(f"agreement between runs needs at least two runs, got {len(runs)}")
    pairs = list(itertools.combinations(runs, 2))
    return sum(agreement(a, b) for a, b in pairs) / len(pairs)


@dataclass(frozen=True)
class RunAgreement:
    """The verdict of a dataset's runs (:func:`run_agreement_verdict`)."""

    #: one of :data:`icda.records.VERDICTS`
    verdict: str
    #: the mean agreement of the runs' MMI selectors and of their ICDA selectors (None: one run)
    mmi: float | None
    icda: float | None
    #: why, in a line a researcher reads
    reason: str

    @property
    def reports_icda(self) -> bool:
        """Whether each run reports its ICDA iteration (:data:`icda.records.REPORTS_ICDA`); else MMI."""
        return self.verdict in REPORTS_ICDA


def run_agreement_verdict(mmi: Sequence[Selections], icda: Sequence[Selections], gain: float = HELPED_GAIN,
                          agreed: float = AGREED) -> RunAgreement:
    """Whether ICDA helped a dataset's runs, from how far they agree before and after the loop.

    With A_0 the mean agreement of the runs' MMI selectors (iteration 0) and A_K that of their
    ICDA selectors (each run's iteration K_r, the one its stop rule took):

    - ``"helped"``: A_K >= A_0 + ``gain`` and A_K >= ``agreed``: the loop brought the runs to the
      same rationales; each run reports its ICDA;
    - ``"wrong way"``: A_K <= A_0 - ``gain``: the runs' loops went apart, each
      amplifying its own first lean; each run reports MMI;
    - ``"did not apply"``: otherwise (the loop left the runs' agreement where MMI had it, or the
      runs still differ on more than 1 − ``agreed`` of the documents): each run reports MMI;
    - ``"not measured"``: fewer than two runs; each run reports its ICDA.

    Args:
        mmi: per run, the MMI selector's selections on the dev documents.
        icda: per run (the same runs, in the same order), its ICDA selector's selections.
        gain, agreed: the thresholds (fractions of dev documents; defaults :data:`HELPED_GAIN`,
            :data:`AGREED`, the rule's; other values only for replays that test the rule).

    Raises:
        ValueError: ``mmi`` and ``icda`` hold different numbers of runs, or runs' selections
            cover different numbers of documents.
    """
    if len(mmi) != len(icda):
        raise ValueError(f"run agreement needs the same runs before and after the loop, got {len(mmi)} and {len(icda)}")
    if len(mmi) < 2:
        return RunAgreement("not measured", None, None,
                            f"{len(mmi)} run: the runs' agreement needs at least two (config n_runs)")
    a0, ak = mean_agreement(mmi), mean_agreement(icda)
    compared = (f"the {len(mmi)} runs' ICDA rationales agree on {ak:.0%} of dev documents, "
                f"their MMI rationales on {a0:.0%}")
    if ak >= a0 + gain - 1e-12 and ak >= agreed:
        return RunAgreement("helped", a0, ak, f"{compared}: the loop brought the runs to the same rationales")
    if ak <= a0 - gain + 1e-12:
        return RunAgreement("wrong way", a0, ak, f"{compared}: each run's loop amplified its own first lean; "
                                                 "MMI reported")
    if ak < agreed:
        return RunAgreement("did not apply", a0, ak, f"{compared}: the runs still differ on more than "
                                                     f"{1 - agreed:.0%} of the documents; MMI reported")
    return RunAgreement("did not apply", a0, ak, f"{compared}: the loop did not change how far the runs agree; "
                                                 "MMI reported")


def rationale_sufficiency(scores: np.ndarray, ids: Sequence[Sequence[int]], labels: Sequence[int],
                          positions: Selections) -> float:
    """How well a selector's rationales alone predict the documents' labels under a sentence judge:
    the mean over documents of log p(y | rationale), the rationale's sentences' class
    log-probabilities summed and normalised over the classes (the paper's premise, Method: the
    rationale sets the label every time). Labels are read; rationale annotations never.

    Args:
        scores: float [U, C], log p(class | sentence) per sentence id
            (:func:`icda.label_flip.fit_sentence_judge`, fitted on the training split).
        ids: per document, its sentences' ids (rows of ``scores``).
        labels: [D] each document's class.
        positions: per document, the selector's rationale (positions in the document).

    Returns:
        the mean log-probability, in nats (≤ 0; a class log-probability is at least
        :data:`LOG_FLOOR`).

    Raises:
        ValueError: the lengths differ, there are no documents, or a rationale is empty or lies
            outside its document.
    """
    if not len(ids) == len(labels) == len(positions) or not len(ids):
        raise ValueError(f"{len(ids)} documents, {len(labels)} labels and {len(positions)} rationales")
    total = 0.0
    for d, (doc, label, selected) in enumerate(zip(ids, labels, positions)):
        if not len(selected) or any(p < 0 or p >= len(doc) for p in selected):
            raise ValueError(f"document {d}: rationale {list(selected)} is empty or outside its {len(doc)} sentences")
        # a class the judge never saw scores -inf: floored, so that the mean stays finite
        summed = np.maximum(scores[[doc[p] for p in selected]].sum(axis=0), LOG_FLOOR)
        top = summed.max()
        total += float(summed[label] - top - np.log(np.exp(summed - top).sum()))
    return total / len(ids)


def run_verdicts(dataset: RunAgreement, mmi: Sequence[float | None], icda: Sequence[float | None],
                 gain: float = SUFFICIENCY_GAIN) -> list[tuple[str, str]]:
    """Each run's verdict and reason under the dataset's (:func:`run_agreement_verdict`).

    Where the dataset's verdict reports ICDA ("helped", "not measured"), every run takes it. Where
    it is "did not apply" or "wrong way", a run whose rationale sufficiency
    (:func:`rationale_sufficiency` on the dev documents) rose from its MMI selector to its ICDA
    selector by at least ``gain`` nats is "helped" on its own and reports its ICDA; the others take
    the dataset's verdict.

    Args:
        dataset: the runs' verdict.
        mmi, icda: per run (in the same order), the sufficiency of its MMI and of its ICDA
            selector; None for a run without a sentence judge (fine-tuning mode): it takes the
            dataset's verdict.
        gain: the threshold in nats (default :data:`SUFFICIENCY_GAIN`, the rule's).

    Returns:
        per run, (verdict, reason).

    Raises:
        ValueError: ``mmi`` and ``icda`` hold different numbers of runs.
    """
    if len(mmi) != len(icda):
        raise ValueError(f"rationale sufficiency of {len(mmi)} MMI and {len(icda)} ICDA selectors: one of each per run")
    out = []
    for before, after in zip(mmi, icda):
        if dataset.reports_icda or before is None or after is None:
            out.append((dataset.verdict, dataset.reason))
            continue
        moved = f"this run's rationales predict the dev labels at {before:.3f} → {after:.3f} nats under a sentence judge"
        if after >= before + gain - 1e-12:
            out.append(("helped", f"{moved}: the loop moved this run toward the sentences that set the label, "
                                  f"though the runs split ({dataset.reason.removesuffix('; MMI reported')})"))
        else:
            out.append((dataset.verdict, f"{dataset.reason}; {moved}"))
    return out
