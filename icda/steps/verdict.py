"""``python -m icda verdict``: whether ICDA helped a dataset's runs, read from how far their
rationales agree before and after the loop (``icda.verdict: run_agreement``; no ground truth).

The verdict step: per run, the choice.json of its iteration 0 (MMI) and of the iteration its stop
rule took (ICDA), in run order; the dataset's ``verdict.json`` out
(:class:`icda.records.DatasetVerdict`, :func:`icda.run_agreement.run_agreement_verdict`): the
verdict, why, and the iteration each run reports (its ICDA where the loop helped, else MMI).
The run summaries, tables, viewer and the exported ICDA model follow it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from icda.errors import ConfigError
from icda.guard import add_input, add_output
from icda.records import Choice, DatasetVerdict
from icda.run_agreement import run_agreement_verdict
from icda.steps import command_doc


def verdict(dataset: str, runs: list[int], mmi: list[str | Path], icda: list[str | Path],
            out: str | Path) -> DatasetVerdict:
    """Judge the runs of ``dataset`` and write ``verdict.json`` to ``out``.

    Args:
        dataset: the dataset's name.
        runs: the run numbers, in the order of ``mmi`` and ``icda``.
        mmi: per run, iteration 0's choice.json.
        icda: per run, the choice.json of the iteration its stop rule took as ICDA.

    Raises:
        ConfigError: the three lists differ in length, or an ``mmi`` choice is not iteration 0.
        DataError: a choice.json or the predictions.json it names is missing or malformed.
    """
    if not len(runs) == len(mmi) == len(icda) or not runs:
        raise ConfigError(f"verdict: {len(runs)} runs, {len(mmi)} MMI choices and {len(icda)} ICDA choices. "
                          "Fix: give one of each per run, in the same order")
    before = [Choice.read(path) for path in mmi]
    after = [Choice.read(path) for path in icda]
    for path, choice in zip(mmi, before):
        if choice.iteration != 0:
            raise ConfigError(f"{path} is iteration {choice.iteration}, not MMI's. Fix: give each run's "
                              "iter0/choice.json as --mmi")
    selections = lambda choices: [choice.predictions().dev.positions for choice in choices]
    judged = run_agreement_verdict(selections(before), selections(after))
    loop = [choice.iteration for choice in after]
    record = DatasetVerdict(dataset=dataset, verdict=judged.verdict, reason=judged.reason, runs=list(runs),
                            loop_iterations=loop, reported=[k if judged.reports_icda else 0 for k in loop],
                            mmi_agreement=judged.mmi, icda_agreement=judged.icda)
    record.write(out)
    return record


# --------------------------------------------------------------------------- the command


def register(sub) -> None:
    p = sub.add_parser("verdict", description=command_doc(__doc__),
                       help="whether ICDA helped a dataset's runs, from how far they agree (icda.verdict: run_agreement)")
    p.add_argument("--dataset", required=True, help="the dataset's name")
    p.add_argument("--runs", type=int, nargs="+", required=True, help="the run numbers, in the order of --mmi and --icda")
    add_input(p, "--mmi", nargs="+", required=True, help="per run, iter0/choice.json")
    add_input(p, "--icda", nargs="+", required=True, help="per run, the choice.json of the iteration its stop rule took")
    add_output(p, "--out", required=True, help="verdict.json")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    record = verdict(args.dataset, args.runs, args.mmi, args.icda, args.out)
    print(f"{record.dataset}: {record.verdict} ({record.reason}); reported iterations "
          + ", ".join(f"run {r}: {k}" for r, k in zip(record.runs, record.reported)))
