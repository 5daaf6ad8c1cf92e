"""Candidate selection, rationale-set change ΔA and the stop rule (paper "Implementation",
Algorithm 2 in the appendix "Detailed Iterative CDA Implementation").

Iteration 0 (MMI): the lowest dev loss over the seeds. Iteration k >= 1: the candidates are a
fresh model per seed and one warm-started from the previous selection; score = dev loss (the
paper: on the augmented dev set; ``candidate_loss="original_dev"``: on the original dev set),
× 1e10 if degenerate, × 1e10 if k >= 2 and the candidate's ΔA is not smaller than the ΔA of the
previous iteration's selection; the lowest score wins. The loop stops when the warm start wins
with its best epoch the initial evaluation (epoch −1: training did not improve it), or at
``max_iters``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

from icda.errors import DataError, rebuild_fix
from icda.io import read_json

PENALTY = 1e10
CANDIDATE_LOSSES = ("augmented_dev", "original_dev")


def cross_entropy(prob_positive: Sequence[float], labels: Sequence[int]) -> float:
    """Mean cross-entropy (nats) of binary predictions P(y=1) [D] against labels [D]."""
    eps = 1e-12
    return -sum(math.log(max(p if y == 1 else 1 - p, eps)) for p, y in zip(prob_positive, labels)) / len(labels)


def rationale_sets(labels: Sequence[int], selected: Sequence[Sequence[int]]) -> dict[int, set[tuple[int, int]]]:
    """A_c: the (document index, position) pairs selected over the documents of class c."""
    sets: dict[int, set[tuple[int, int]]] = {0: set(), 1: set()}
    for doc, (y, positions) in enumerate(zip(labels, selected)):
        sets[int(y)].update((doc, int(p)) for p in positions)
    return sets


def delta_a(current: dict[int, set], previous: dict[int, set]) -> float:
    """ΔA^k = mean over classes c of |A^k_c \\ A^{k−1}_c| / |A^k_c| (the paper's definition)."""
    shares = [len(current[c] - previous[c]) / len(current[c]) for c in current if current[c]]
    return sum(shares) / len(shares) if shares else 0.0


def score(dev_loss: float, degenerate: bool, iteration: int, delta: float | None, previous_delta: float | None) -> float:
    """The selection score of one candidate (lower is better)."""
    value = dev_loss * (PENALTY if degenerate else 1.0)
    if iteration >= 2 and previous_delta is not None and delta is not None and not delta < previous_delta:
        value *= PENALTY
    return value


def _read(path: Path) -> dict:
    """A candidate's history.json or rationales.json.

    Raises:
        DataError: the file is missing or corrupt (not a JSON object).
    """
    if not path.exists():
        raise DataError(path, None, "file not found", "run the training job of this candidate first")
    try:
        obj = read_json(path)
    except ValueError as exc:  # also UnicodeDecodeError
        raise DataError(path, None, f"corrupt file, not valid JSON ({exc})",
                        rebuild_fix(path, "train")) from exc
    if not isinstance(obj, dict):
        raise DataError(path, None, "corrupt file, not a JSON object", rebuild_fix(path, "train"))
    return obj


def select_candidate(
    iteration: int,
    candidates: Sequence[str | Path],
    train_labels: Sequence[int],
    warm_start: str | Path | None = None,
    previous: dict | None = None,
    dev_labels: Sequence[int] | None = None,
    candidate_loss: str = "augmented_dev",
) -> dict:
    """Pick the candidate of one iteration.

    Args:
        iteration: k.
        candidates: directories written by ``python -m icda train`` (history.json and
            rationales.json), fresh seeds first.
        train_labels: labels of the original training documents (for ΔA).
        warm_start: the warm-started candidate's directory (k >= 1), also scored.
        previous: the previous iteration's selection record (k >= 1), for ΔA.
        dev_labels: labels of the original dev documents: each candidate's loss on them is
            recorded (``original_dev_loss``), and scores it when ``candidate_loss`` is
            ``"original_dev"``.
        candidate_loss: the loss in the score from iteration 1 on: ``"augmented_dev"`` (the
            paper: the dev loss training recorded, on the iteration's augmented dev set) or
            ``"original_dev"`` (a departure: the candidate's loss on the original dev set).

    Returns:
        the selection record: chosen candidate, its dev loss, best epoch, ΔA, and every
        candidate's numbers and score.

    Raises:
        DataError: a candidate's history.json or rationales.json is missing or corrupt.
    """
    if candidate_loss not in CANDIDATE_LOSSES:
        raise ValueError(f"candidate_loss={candidate_loss!r}: use one of {CANDIDATE_LOSSES}")
    if candidate_loss == "original_dev" and dev_labels is None:
        raise ValueError("candidate_loss='original_dev' needs dev_labels")
    prev_sets = None
    if previous is not None:
        prev_rat = _read(Path(previous["candidate_dir"]) / "rationales.json")
        prev_sets = rationale_sets(train_labels, prev_rat["train"]["selected"])
    dirs = [(Path(c), False) for c in candidates] + ([(Path(warm_start), True)] if warm_start else [])
    rows = []
    for directory, is_warm in dirs:
        history = _read(directory / "history.json")
        rationales = _read(directory / "rationales.json")
        delta = None
        if prev_sets is not None:
            delta = delta_a(rationale_sets(train_labels, rationales["train"]["selected"]), prev_sets)
        original = None if dev_labels is None else cross_entropy(rationales["dev"]["prob_positive"], dev_labels)
        loss = original if candidate_loss == "original_dev" and iteration >= 1 else history["dev_loss"]
        rows.append({
            "name": directory.name,
            "candidate_dir": str(directory),
            "warm_start": is_warm,
            "seed": history.get("seed"),
            "dev_loss": history["dev_loss"],
            "original_dev_loss": original,
            "dev_accuracy": history["dev_accuracy"],
            "degenerate": history["degenerate"],
            "best_epoch": history["best_epoch"],
            "delta_A": delta,
            "score": score(loss, history["degenerate"], iteration, delta,
                           None if previous is None else previous.get("delta_A")),
        })
    best = min(rows, key=lambda r: r["score"])
    return {
        "iteration": iteration,
        "selected": best["name"],
        "candidate_dir": best["candidate_dir"],
        "warm_start": best["warm_start"],
        "seed": best["seed"],
        "dev_loss": best["dev_loss"],
        "original_dev_loss": best["original_dev_loss"],
        "candidate_loss": candidate_loss,
        "degenerate": best["degenerate"],
        "best_epoch": best["best_epoch"],
        "delta_A": best["delta_A"],
        "previous_delta_A": None if previous is None else previous.get("delta_A"),
        "candidates": rows,
    }


def convergence(selection: dict, max_iters: int) -> dict:
    """The stop rule: ``{"iteration", "stop", "converged", "reason"}``."""
    k = selection["iteration"]
    converged = bool(selection["warm_start"] and selection["best_epoch"] == -1)
    if converged:
        reason = "the warm start won and training did not improve it (best epoch -1)"
    elif k >= max_iters:
        reason = f"reached max_iters={max_iters} without convergence"
    else:
        reason = ("the warm start won but training improved it" if selection["warm_start"]
                  else f"a fresh model won ({selection['selected']})") + f"; iteration {k + 1} follows"
    return {"iteration": k, "stop": converged or k >= max_iters, "converged": converged, "reason": reason}
