"""The files the workflow writes itself, in ``run:`` blocks: a rule's params as JSON and a run's
summary.json."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from icda.io import write_json
from icda.records import Choice, DatasetVerdict, Decision, Evaluation, RunSummary


def _log(path: str, text: str) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(text + "\n", encoding="utf-8")


def write_params(value: Any, out: str, log: str) -> None:
    """Write a rule's params as JSON (settings, dataset spec) and note it in the rule's log."""
    write_json(value, out)
    _log(log, f"wrote {out}")


def write_run_summary(dataset: str, run: int, choices: list[str], decisions: list[str], evaluations: list[str],
                      out: str, log: str, verdict: str | None = None) -> dict:
    """One run's iteration record (:class:`icda.records.RunSummary`): per iteration the candidate
    chosen and why it won (``choice.json``), the stop decision, the test precision (overall and
    per gold class), and the iteration taken as ICDA: the last decision's ``final_iteration``
    and verdict, or, given the dataset's ``verdict`` (verdict.json, ``icda.verdict:
    run_agreement``), the iteration and the verdict it gives the run (its own, where the runs split)."""
    iterations = []
    for k, (choice, decision, evaluation) in enumerate(zip(choices, decisions, evaluations)):
        c, d, e = Choice.read(choice), Decision.read(decision), Evaluation.read(evaluation)
        iterations.append({"iteration": k, "precision": e.precision, "alpha": e.alpha,
                           "precision_by_class": e.precision_by_class, "accuracy": e.accuracy,
                           "chosen": c.chosen.name, "warm_start": c.chosen.warm_start,
                           "chosen_because": c.reason, "reason": d.reason})
    last = Decision.read(decisions[-1])
    if verdict is not None:
        judged = DatasetVerdict.read(verdict)
        reported = judged.reported_iteration(int(run))
        moved = reported != judged.loop_iterations[judged.runs.index(int(run))]
        run_verdict, run_reason = judged.run_verdict(int(run))
        last = dataclasses.replace(
            last, verdict=run_verdict, verdict_reason=run_reason, final_iteration=reported,
            final_reason=f"MMI, as the verdict says (ICDA {run_verdict}: verdict.json)" if moved
            else last.final_reason)
    summary = RunSummary(dataset=dataset, run=int(run), iterations=len(iterations), converged=last.converged,
                         reason=last.reason, per_iteration=iterations, final_iteration=last.final_iteration,
                         final_reason=last.final_reason, blocked=last.blocked, verdict=last.verdict,
                         verdict_reason=last.verdict_reason)
    summary.write(out)
    _log(log, f"{dataset} run {run}: {len(iterations)} iterations; {last.reason}; ICDA is iteration "
              f"{summary.icda_iteration} ({last.final_reason})"
              + ("" if last.verdict is None else f"; verdict: {last.verdict} ({last.verdict_reason})"))
    return summary.to_json()
