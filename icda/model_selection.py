"""Candidate selection, rationale-set change ΔA and the stop rule (paper "Implementation",
Algorithm 2 in the appendix "Detailed Iterative CDA Implementation").

Iteration 0 (MMI): the lowest dev loss over the seeds. Iteration k >= 1: the candidates are a
fresh model per seed and one warm-started from the previous selection; score = dev loss (the
paper: on the augmented dev set; ``candidate_loss="original_dev"``: on the original dev set),
× 1e10 if degenerate, × 1e10 if k >= 2 and the candidate's ΔA is not smaller than the ΔA of the
previous iteration's selection (the paper's gate; ``delta_a_gate=False`` drops it); the lowest
score wins (with ``"original_dev"``, an unimproved warm start wins only where the augmented dev
loss ranks it first too: :func:`choose`), or with ``candidate_choice="agreement"`` the candidate
whose dev rationales agree most with the other fresh candidates' (:func:`agreement`). The loop
stops when the warm start wins with its best epoch the initial evaluation (epoch −1: training did
not improve it), optionally when the chosen selector's rationales did not change (ΔA = 0), or at
``max_iters``. Across runs, the final ICDA dataset is the one of the run
whose last choice has the lowest loss on the original dev set (:func:`cross_entropy`;
:func:`icda.steps.finalize.write_final_dataset`). Nothing here reads a file: the steps
(:mod:`icda.steps.select`, :mod:`icda.steps.finalize`) read the records and pass them in.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Sequence

from icda.records import CandidateScore, Choice, Decision, History, Predictions
from icda.settings import CANDIDATE_CHOICES, CANDIDATE_LOSSES, FINAL_CHOICES, IcdaSettings

PENALTY = 1e10


def probability_of(p: float | Sequence[float], y: int) -> float:
    """P(y) of one document from its :attr:`~icda.records.SplitPredictions.class_probabilities`
    entry: P(y=1) (a float, two classes) or the C class probabilities (a list)."""
    if isinstance(p, (int, float)):
        return p if y == 1 else 1 - p
    return p[y]


def cross_entropy(probabilities: Sequence[float | Sequence[float]], labels: Sequence[int]) -> float:
    """Mean cross-entropy (nats) −mean log P(y) of D predictions against labels [D]; per document
    P(y=1) (two classes) or the C class probabilities (:func:`probability_of`)."""
    eps = 1e-12
    return -sum(math.log(max(probability_of(p, y), eps)) for p, y in zip(probabilities, labels)) / len(labels)


def accuracy(predicted: Sequence[int], labels: Sequence[int]) -> float:
    """Share of D documents whose predicted class [D] is their label [D]."""
    return sum(p == y for p, y in zip(predicted, labels)) / len(labels)


def rationale_sets(labels: Sequence[int], positions: Sequence[Sequence[int]]) -> dict[int, set[tuple[int, int]]]:
    """A_c: the (document index, rationale position) pairs over the documents of class c (every
    class 0 … max(labels), and at least 0 and 1)."""
    sets: dict[int, set[tuple[int, int]]] = {c: set() for c in range(max(2, 1 + max(labels, default=1)))}
    for doc, (y, doc_positions) in enumerate(zip(labels, positions)):
        sets[int(y)].update((doc, int(p)) for p in doc_positions)
    return sets


def delta_a(current: dict[int, set], previous: dict[int, set]) -> float:
    """ΔA^k = mean over classes c of |A^k_c \\ A^{k−1}_c| / |A^k_c| (the paper's definition)."""
    shares = [len(current[c] - previous[c]) / len(current[c]) for c in current if current[c]]
    return sum(shares) / len(shares) if shares else 0.0


def score(dev_loss: float, degenerate: bool, iteration: int, delta: float | None, previous_delta: float | None,
          delta_a_gate: bool = True) -> float:
    """The selection score of one candidate (lower is better): the loss, × 1e10 if degenerate, and
    with ``delta_a_gate`` (the paper) × 1e10 if k >= 2 and its ΔA is not below the previous
    iteration's."""
    value = dev_loss * (PENALTY if degenerate else 1.0)
    if (delta_a_gate and iteration >= 2 and previous_delta is not None and delta is not None
            and not delta < previous_delta):
        value *= PENALTY
    return value


def agreement(a: Sequence[Sequence[int]], b: Sequence[Sequence[int]]) -> float:
    """The share of D documents on which two selectors pick the same rationale: positions [D]
    each (a fraction in [0, 1]; 1.0 for D = 0)."""
    return sum(sorted(x) == sorted(y) for x, y in zip(a, b)) / len(a) if len(a) else 1.0


def majority_vote(selections: Sequence[Sequence[Sequence[int]]], tie_break: Sequence[Sequence[int]]) -> list[list[int]]:
    """The rationale of D documents that most of S selectors pick: per document the position
    set chosen by the most selectors, ties going to ``tie_break``'s when it is among them, else to
    the largest set in sort order.

    Args:
        selections: [S][D] positions per selector and document.
        tie_break: [D] positions (e.g. the chosen candidate's).
    """
    out = []
    for d, own in enumerate(tie_break):
        counts: dict[tuple[int, ...], int] = {}
        for selector in selections:
            key = tuple(sorted(selector[d]))
            counts[key] = counts.get(key, 0) + 1
        best = max(counts.values(), default=0)
        mine = tuple(sorted(own))
        out.append(list(own) if counts.get(mine, 0) == best else list(max(k for k, n in counts.items() if n == best)))
    return out


def ranking_loss(candidate_loss: str, iteration: int, dev_loss: float, original_dev_loss: float | None) -> float:
    """The loss in a candidate's score: its loss on the original dev set from iteration 1 on when
    ``candidate_loss`` is ``"original_dev"``, else the dev loss training recorded (nats)."""
    return original_dev_loss if candidate_loss == "original_dev" and iteration >= 1 else dev_loss


def choose(candidates: Sequence[CandidateScore], iteration: int, candidate_loss: str,
           previous_delta: float | None, delta_a_gate: bool = True,
           candidate_choice: str = "loss") -> tuple[CandidateScore, str]:
    """The candidate with the lowest :func:`score` under ``candidate_loss``, and why it won
    (the ``reason`` of ``choice.json``).

    With ``candidate_choice="agreement"``, from iteration 1 on the non-degenerate candidate whose
    dev rationales agree most with the iteration's other fresh candidates'
    (:attr:`~icda.records.CandidateScore.agreement`) wins instead, ties to the lower score: no
    label or ground truth is read (a departure, docs/departures.md).

    With ``"original_dev"`` an unimproved warm start (best epoch −1: the previous iteration's
    model, unchanged) wins only where the paper's ranking (the augmented dev loss) also puts it
    first, i.e. where the paper's stop test passes; otherwise the best other candidate wins. The
    previous model was fitted to earlier data, so on the original dev set it keeps the spurious
    cue that the counterfactuals take away, and ranked by that loss alone it ends the loop at
    iteration 1 whenever warm-start training fails to improve it (measured:
    docs/sweep/stop_test.md). ``previous_delta``: ΔA of the previous iteration's selection.
    """
    def by(loss_name: str):
        return lambda c: score(ranking_loss(loss_name, iteration, c.dev_loss, c.original_dev_loss),
                               c.degenerate, iteration, c.delta_A, previous_delta, delta_a_gate)

    if candidate_choice == "agreement" and iteration >= 1 and any(c.agreement is not None for c in candidates):
        pick = min(candidates, key=lambda c: (c.degenerate, -(c.agreement or 0.0), by(candidate_loss)(c)))
        return pick, (f"the highest agreement with the other fresh candidates' dev rationales "
                      f"({pick.agreement:.3f}) among the non-degenerate candidates")
    pick = min(candidates, key=by(candidate_loss))
    if (candidate_loss == "original_dev" and pick.warm_start and pick.best_epoch == -1
            and min(candidates, key=by("augmented_dev")) is not pick):
        passed_over = pick
        pick = min((c for c in candidates if c is not pick), key=by(candidate_loss))
        return pick, (f"{passed_over.name} had the lowest score but is the unimproved warm start (best epoch -1) "
                      "and the augmented dev loss ranks another candidate first (the paper's stop test "
                      "fails), so the best other candidate wins")
    loss = ranking_loss(candidate_loss, iteration, pick.dev_loss, pick.original_dev_loss)
    what = "original dev loss" if candidate_loss == "original_dev" and iteration >= 1 else "dev loss"
    penalty = "" if pick.score == loss else f", × {pick.score / loss:.0e} by the degeneration or ΔA penalty"
    return pick, f"the lowest score ({what} {loss:.4f}{penalty})"


def rechoose(choice: Choice, candidate_loss: str) -> CandidateScore:
    """The candidate ``choice`` would have chosen had ``candidate_loss`` ranked its candidates,
    from the scores it recorded (:func:`choose`; no file is read)."""
    return choose(choice.candidates, choice.iteration, candidate_loss, choice.previous_delta_A,
                  choice.delta_a_gate, choice.candidate_choice)[0]


@dataclass(frozen=True)
class TrainedCandidate:
    """One trained candidate of an iteration as selection sees it: its name and folder (recorded
    in choice.json, never read here), whether it is the warm start, and the records training
    wrote (``python -m icda train``: history.json, predictions.json)."""

    name: str
    directory: str
    warm_start: bool
    history: History
    predictions: Predictions


def select_candidate(
    iteration: int,
    candidates: Sequence[TrainedCandidate],
    train_labels: Sequence[int],
    previous: Choice | None = None,
    previous_positions: Sequence[Sequence[int]] | None = None,
    dev_labels: Sequence[int] | None = None,
    candidate_loss: str = "augmented_dev",
    delta_a_gate: bool = True,
    candidate_choice: str = "loss",
) -> Choice:
    """Pick the candidate of one iteration.

    Args:
        iteration: k.
        candidates: the fresh seeds first, then (k >= 1) the warm start.
        train_labels: [N] labels of the original training documents (for ΔA).
        previous: the previous iteration's choice (k >= 1), for ΔA.
        previous_positions: [N] the previous choice's rationale positions per training document
            (its predictions.json), for ΔA; needed with ``previous``.
        dev_labels: [D] labels of the original dev documents: each candidate's loss (nats) and
            accuracy on them are recorded (``original_dev_loss``, ``original_dev_accuracy``), and
            the loss scores it when ``candidate_loss`` is ``"original_dev"``.
        candidate_loss: the loss in the score from iteration 1 on: ``"augmented_dev"`` (the
            paper: the dev loss training recorded, on the iteration's augmented dev set) or
            ``"original_dev"`` (a departure: the candidate's loss on the original dev set).
        delta_a_gate: the paper's × 1e10 on a candidate whose ΔA did not decrease (k >= 2).
        candidate_choice: ``"loss"`` (the lowest score) or ``"agreement"`` (:func:`choose`).

    Each candidate's :attr:`~icda.records.CandidateScore.agreement` is its mean
    :func:`agreement` with the other fresh candidates on the dev split, and the choice's
    ``agreement`` the fresh candidates' mean pairwise agreement (None with one fresh candidate).

    Returns:
        the :class:`~icda.records.Choice`: chosen candidate, its dev loss, best epoch, ΔA,
        every candidate's numbers and score, and why it won.

    Raises:
        ValueError: ``candidate_loss`` is unknown, ``"original_dev"`` without ``dev_labels``, or
            ``previous`` without ``previous_positions``.
    """
    if candidate_loss not in CANDIDATE_LOSSES:
        raise ValueError(f"candidate_loss={candidate_loss!r}: use one of {CANDIDATE_LOSSES}")
    if candidate_choice not in CANDIDATE_CHOICES:
        raise ValueError(f"candidate_choice={candidate_choice!r}: use one of {CANDIDATE_CHOICES}")
    if candidate_loss == "original_dev" and dev_labels is None:
        raise ValueError("candidate_loss='original_dev' needs dev_labels")
    if previous is not None and previous_positions is None:
        raise ValueError("a previous choice needs its rationale positions (previous_positions)")
    prev_sets = None if previous is None else rationale_sets(train_labels, previous_positions)
    previous_delta = None if previous is None else previous.chosen.delta_A
    rows = []
    for candidate in candidates:
        history, predictions = candidate.history, candidate.predictions
        delta = None
        if prev_sets is not None:
            delta = delta_a(rationale_sets(train_labels, predictions.train.positions), prev_sets)
        original = correct = None
        if dev_labels is not None:
            original = cross_entropy(predictions.dev.class_probabilities, dev_labels)
            correct = accuracy(predictions.dev.predicted(), dev_labels)
        loss = ranking_loss(candidate_loss, iteration, history.dev_loss, original)
        others = [c.predictions.dev.positions for c in candidates if not c.warm_start and c is not candidate]
        rows.append(CandidateScore(
            name=candidate.name, candidate_dir=candidate.directory, warm_start=candidate.warm_start, seed=history.seed,
            dev_loss=history.dev_loss, original_dev_loss=original, dev_accuracy=history.dev_accuracy,
            degenerate=history.degenerate, best_epoch=history.best_epoch, delta_A=delta,
            score=score(loss, history.degenerate, iteration, delta, previous_delta, delta_a_gate),
            original_dev_accuracy=correct,
            agreement=sum(agreement(predictions.dev.positions, f) for f in others) / len(others) if others else None,
            rationale_probe=history.rationale_probe, label_flip=history.label_flip,
        ))
    fresh = [c.predictions.dev.positions for c in candidates if not c.warm_start]
    pairs = [agreement(a, b) for i, a in enumerate(fresh) for b in fresh[i + 1:]]
    chosen, reason = choose(rows, iteration, candidate_loss, previous_delta, delta_a_gate, candidate_choice)
    return Choice(iteration=iteration, candidate_loss=candidate_loss, previous_delta_A=previous_delta,
                  chosen=chosen, candidates=rows, reason=reason, delta_a_gate=delta_a_gate,
                  candidate_choice=candidate_choice, agreement=sum(pairs) / len(pairs) if pairs else None)


@dataclass(frozen=True)
class Signals:
    """What the stop rule and the final choice read of iteration ``iteration``, none of it ground
    truth: the chosen selector's ΔA (None at iteration 0), its cross-entropy (nats) and accuracy
    (fraction) on the original dev set, the fresh candidates' mean pairwise agreement on dev
    rationales (fraction) and the chosen selector's rationale-probe accuracy on dev (fraction,
    :mod:`icda.rationale_probe`) and the dev flip rate of its counterfactuals (fraction,
    :mod:`icda.label_flip`); the last three None where ``choice.json`` lacks them."""

    iteration: int
    delta_A: float | None
    original_dev_loss: float | None
    original_dev_accuracy: float | None
    agreement: float | None = None
    rationale_probe: float | None = None
    label_flip: float | None = None

    @classmethod
    def of(cls, choice: Choice) -> "Signals":
        c = choice.chosen
        return cls(choice.iteration, c.delta_A, c.original_dev_loss, c.original_dev_accuracy, choice.agreement,
                   c.rationale_probe, c.label_flip)


def stalled(signals: Sequence[Signals], patience: int, signal: str = "original_dev_loss") -> bool:
    """Whether ``signal`` (``"original_dev_loss"`` or ``"delta_a"``; lower is better) of
    iterations >= 1 has reached no new minimum in the last ``patience`` iterations (False while
    fewer than ``patience + 1`` of them exist)."""
    values = [v for v in (_value(s, signal) for s in signals if s.iteration >= 1) if v is not None]
    if len(values) <= patience:
        return False
    return min(values[-patience:]) >= min(values[:-patience])


def _value(s: Signals, name: str) -> float | None:
    return s.delta_A if name == "delta_a" else getattr(s, name)


def agreement_guard(signals: Sequence[Signals]) -> tuple[int, str]:
    """The iteration a run reports under ``icda.final_choice: agreement_guard`` (departure 29;
    docs/experiments/loop-guard.md), and why, from the fresh candidates' agreement (fraction of
    dev documents where two independently trained selectors pick the same sentences; no label or
    ground truth read):

    - iteration 1's agreement below iteration 0's: the first counterfactual round made the
      candidates disagree more than MMI's did, the sign of a loop going the wrong way (connect,
      seeds 126–128: 0.668 → 0.284, then a wrong consensus): MMI, iteration 0;
    - else the last iteration K, unless K's agreement is below K − 1's: then K − 1.

    A run without recorded agreement (one fresh candidate, or old files) reports its last iteration.
    """
    last = signals[-1].iteration
    agree = {s.iteration: s.agreement for s in signals}
    if last < 1 or None in (agree.get(0), agree.get(1)):
        return last, "the last iteration" + ("" if last < 1 else " (no agreement recorded)")
    if agree[1] < agree[0]:
        return 0, (f"MMI: the fresh candidates agreed less after the first counterfactual round "
                   f"({agree[1]:.3f}) than at MMI ({agree[0]:.3f}), the loop went the wrong way")
    if last >= 2 and None not in (agree[last - 1], agree[last]) and agree[last] < agree[last - 1]:
        return last - 1, (f"iteration {last - 1}: the last iteration's candidates agreed less "
                          f"({agree[last]:.3f}) than the one before ({agree[last - 1]:.3f})")
    return last, "the last iteration"


def final_iteration(signals: Sequence[Signals], final_choice: str) -> tuple[int, str]:
    """The iteration whose selector and augmented dataset are "ICDA", and why.

    ``final_choice``: ``"last"``; ``"original_dev_loss"``, the lowest loss on the original dev
    set; ``"original_dev_accuracy"``, the highest accuracy there; ``"delta_a"``, the smallest
    ΔA, the selector whose rationales moved least from the previous iteration's (the nearest to
    a fixed point of the loop); ``"agreement"``, the highest agreement between the iteration's
    independently trained fresh candidates (a collapsed iteration's disagree);
    ``"rationale_probe"``, the highest rationale-probe accuracy on dev (the rationales that
    predict the label best, :mod:`icda.rationale_probe`; departure 29). Ties go to the later
    iteration.
    Iteration 0 (MMI, fitted to the original data with its spurious cue) is never taken, except
    in a loop that ran no further and under ``"rationale_probe"``, where MMI is eligible like
    every other iteration. ``"agreement_guard"`` (:func:`agreement_guard`) reports MMI when the
    first counterfactual round made the fresh candidates disagree, else the last iteration or,
    when its candidates came apart, the one before.

    Raises:
        ValueError: ``final_choice`` is unknown.
    """
    if final_choice not in FINAL_CHOICES:
        raise ValueError(f"final_choice={final_choice!r}: use one of {FINAL_CHOICES}")
    last = signals[-1].iteration
    if final_choice == "agreement_guard":
        return agreement_guard(signals)
    eligible = [s for s in signals if s.iteration >= (0 if final_choice == "rationale_probe" else 1)]
    if final_choice == "last" or not eligible:
        return last, "the last iteration"
    measured = [s for s in eligible if _value(s, final_choice) is not None]
    if not measured:
        return last, f"the last iteration (no {final_choice} recorded)"
    sign = -1 if final_choice in ("original_dev_accuracy", "agreement", "rationale_probe") else 1
    best = min(reversed(measured), key=lambda s: sign * _value(s, final_choice))
    what = "ΔA" if final_choice == "delta_a" else final_choice.replace("_", " ")
    return best.iteration, (f"the {'highest' if sign == -1 else 'lowest'} {what} of iterations "
                            f"{eligible[0].iteration}-{last} "
                            f"({_value(best, final_choice):.4f})")


#: below this flip rate at every iteration, a run's counterfactuals mostly keep their original label:
#: ICDA "did not apply" (:func:`verdict`)
APPLIES_FLIP_RATE = 0.5
#: a reported iteration whose flip rate lies more than this below MMI's went "the wrong way";
#: within it, the loop left the rationales' hold on the label where MMI had it (:func:`verdict`)
WRONG_WAY_MARGIN = 0.05


def verdict(signals: Sequence[Signals], final: int) -> tuple[str, int, str]:
    """Whether ICDA applied to a run, the iteration it then reports, and why in a line
    (``icda.verdict: label_flip``; docs/judging-a-run.md), from the dev flip rates F_k of each
    iteration's chosen selector (:mod:`icda.label_flip`; labels read, no rationale annotation):

    - ``"helped"``: ``final`` >= 1 and F_final > F_0, the loop's counterfactuals flip labels more
      often than MMI's: ``final`` is reported;
    - ``"wrong way"``: F_final < F_0 − :data:`WRONG_WAY_MARGIN`, the loop's counterfactuals flip
      fewer labels than MMI's (it taught the model a sentence that does not set the label): MMI
      is reported;
    - ``"did not apply"``: otherwise, every F_k < :data:`APPLIES_FLIP_RATE` (swapping the
      selected sentences leaves most labels where they were: the label is not carried by one
      sentence, or no selector found the one that carries it), or F_final within the margin of
      F_0 (the loop did not change how well the rationales carry the label; MMI may already have
      found them): MMI is reported;
    - ``"not measured"``: F_0 or F_final is missing (fine-tuning mode has no fixed sentence
      vectors): ``final`` is reported.

    Args:
        signals: the run's iterations 0 … K, in order.
        final: the iteration the stop rule and ``icda.final_choice`` took.
    """
    flips = {s.iteration: s.label_flip for s in signals}
    first, last = flips.get(0), flips.get(final)
    if first is None or last is None:
        return "not measured", final, "no flip rate recorded (fine-tuning mode has no fixed sentence vectors)"
    compared = f"iteration {final}'s counterfactuals flip {last:.0%} of dev labels, MMI's {first:.0%}"
    if final >= 1 and last > first:
        return "helped", final, compared
    if last < first - WRONG_WAY_MARGIN:
        return "wrong way", 0, (f"{compared}: the loop moved away from the sentences that set the label; "
                                "MMI reported")
    highest = max(f for f in flips.values() if f is not None)
    if highest < APPLIES_FLIP_RATE:
        return "did not apply", 0, (f"at most {highest:.0%} of any iteration's dev counterfactuals flip their "
                                    "label: swapping the selected sentences does not change what the others say; "
                                    "MMI reported")
    if final == 0:
        return "did not apply", 0, "the loop built no counterfactual past MMI; MMI reported"
    return "did not apply", 0, (f"{compared}: the loop did not change how well the rationales carry the "
                                "label; MMI reported")


def convergence(choice: Choice, icda: IcdaSettings, previous: Decision | None = None,
                blocked: str | None = None) -> Decision:
    """The stop rule after iteration k = ``choice.iteration`` (paper Algorithm 2; departures
    ``icda.stop_rule: rationales``, ``icda.stop_unchanged``; docs/sweep/stop_rule.md).

    Both rules stop at ``icda.max_iters`` and, with ``stop_unchanged``, when the chosen selector
    of an iteration k >= 1 picks the same rationales as the previous one (ΔA = 0, converged).
    ``"paper"`` also stops when the warm start won with its best epoch the initial evaluation
    (epoch −1: training did not improve it); the last iteration is ICDA. ``"rationales"`` (the
    warm start always trains) also stops when ΔA < ``stop_delta_a`` or when the signal
    ``patience_on`` (original dev loss or ΔA) reached no new minimum for ``stop_patience``
    iterations; ICDA is the iteration :func:`final_iteration` takes under ``final_choice``.

    Whatever the rule, a ``blocked`` iteration (its selector gets a whole class wrong, so its pools
    hold no counterfactual: :attr:`icda.records.Pools.blocked`) stops the run unconverged; ICDA
    is then taken among the iterations before it by the same rule (MMI where k = 0: the run has no
    augmented dataset, :attr:`icda.records.Decision.blocked`).

    Args:
        previous: the decision of iteration k − 1 (its ``signals`` carry the run's history);
            None at k = 0.
        blocked: the iteration's pools record's ``blocked`` reason, or None.

    Raises:
        ValueError: k >= 1 without ``previous``, or ``previous`` is not iteration k − 1.
    """
    k, chosen = choice.iteration, choice.chosen
    if k >= 1 and (previous is None or previous.iteration != k - 1):
        raise ValueError(f"iteration {k}: the stop rule needs the decision of iteration {k - 1}")
    signals = ([] if previous is None else [Signals(**s) for s in previous.signals]) + [Signals.of(choice)]
    rule = "last" if icda.stop_rule == "paper" else icda.final_choice
    if blocked is not None:
        final, why = final_iteration(signals[:-1], rule) if k >= 1 else (0, "MMI")
        why = (f"{why} before iteration {k}, which built no counterfactual" if k >= 1 else
               "MMI: no iteration built counterfactuals (no augmented dataset)")
        return _judged(Decision(iteration=k, stop=True, converged=False, reason=f"{blocked}: the loop cannot go on",
                                signals=[dataclasses.asdict(s) for s in signals], final_iteration=final,
                                final_reason=why, blocked=True), signals, icda)
    unimproved = icda.stop_rule == "paper" and bool(chosen.warm_start and chosen.best_epoch == -1)
    unchanged = icda.stop_unchanged and k >= 1 and chosen.delta_A == 0
    settled = (icda.stop_rule == "rationales" and k >= 1 and chosen.delta_A is not None
               and chosen.delta_A < icda.stop_delta_a)
    flat = (icda.stop_rule == "rationales" and icda.stop_patience is not None
            and stalled(signals, icda.stop_patience, icda.patience_on))
    if unimproved:
        reason = "the warm start won and training did not improve it (best epoch -1)"
    elif unchanged:
        reason = f"the rationales did not change (ΔA = 0; {chosen.name} won)"
    elif settled:
        reason = f"the rationales settled (ΔA = {chosen.delta_A:.4f} < stop_delta_a = {icda.stop_delta_a})"
    elif flat:
        what = "ΔA" if icda.patience_on == "delta_a" else "the original dev loss"
        reason = f"{what} reached no new minimum in {icda.stop_patience} iteration(s) (stop_patience)"
    elif k >= icda.max_iters:
        reason = f"reached max_iters={icda.max_iters} without convergence"
    else:
        reason = ("the warm start won but training improved it" if chosen.warm_start
                  else f"a fresh model won ({chosen.name})") + f"; iteration {k + 1} follows"
    converged = unimproved or unchanged or settled or flat
    stop = converged or k >= icda.max_iters
    final = final_iteration(signals, rule) if stop else None
    decision = Decision(iteration=k, stop=stop, converged=converged, reason=reason,
                        signals=[dataclasses.asdict(s) for s in signals],
                        final_iteration=None if final is None else final[0],
                        final_reason=None if final is None else final[1])
    return _judged(decision, signals, icda) if stop else decision


def _judged(decision: Decision, signals: Sequence[Signals], icda: IcdaSettings) -> Decision:
    """A stop decision with its :func:`verdict` (``icda.verdict: label_flip``); where the verdict
    is not "helped", MMI is ICDA (the reason says so). Unchanged under the other verdicts (``none``;
    ``run_agreement`` judges the runs once all have stopped, in the ``verdict`` step)."""
    if icda.verdict != "label_flip":
        return decision
    what, final, why = verdict(signals, decision.final_iteration)
    if final != decision.final_iteration:
        decision = dataclasses.replace(decision, final_iteration=final, final_reason=f"{what}: {why}")
    return dataclasses.replace(decision, verdict=what, verdict_reason=why)


#: how many iterations' candidates the reported selector of each ``icda.final_selector`` reads
#: (``"chosen"`` reads the chosen candidate alone and has no window)
ENSEMBLE_ITERATIONS = {"candidates": 1, "ensemble": 3}


def ensemble_window(choice: Choice, previous: Choice | None, final_selector: str = "ensemble") -> list[list[str]] | None:
    """The reported ensemble of iteration k = ``choice.iteration``: with ``final_selector``
    ``"ensemble"`` (departure 28) the candidate folders of iterations max(1, k − 2) … k, oldest
    first; with ``"candidates"`` those of iteration k alone (docs/experiments/iteration-candidates.md);
    each iteration's non-degenerate candidates and its chosen one (a degenerate chosen
    candidate stays: it is what the iteration reports). None at k = 0 (MMI keeps its chosen
    candidate: it is fitted to the original data, the augmented iterations are not).

    Args:
        previous: the choice of iteration k − 1 (its ``ensemble`` carries the window so far).

    Raises:
        ValueError: k >= 1 without ``previous``.
    """
    k = choice.iteration
    if k == 0:
        return None
    if previous is None:
        raise ValueError(f"iteration {k}: the ensemble window needs the choice of iteration {k - 1}")
    own = [c.candidate_dir for c in choice.candidates if not c.degenerate or c.name == choice.chosen.name]
    before = previous.ensemble or []
    return [*before[max(0, len(before) - ENSEMBLE_ITERATIONS[final_selector] + 1):], own]
