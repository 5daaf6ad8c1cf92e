"""``python -m icda verdict``: whether ICDA helped a dataset's runs, read from how far their
rationales agree before and after the loop, then, where they split, from each run's own
rationales (``icda.verdict: run_agreement``; no rationale annotation read).

The verdict step: per run, the choice.json of its iteration 0 (MMI) and of the iteration its stop
rule took (ICDA), in run order, and in frozen mode the dataset's settings, prepared data and
sentence vectors (the sentence judge of the per-run step); the dataset's ``verdict.json`` out
(:class:`icda.records.DatasetVerdict`, :func:`icda.run_agreement.run_agreement_verdict`,
:func:`icda.run_agreement.run_verdicts`): the verdict, why, and per run its verdict and the
iteration it reports (its ICDA where the loop helped, else MMI). The run summaries, tables,
viewer and the exported ICDA model follow it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from icda.errors import ConfigError
from icda.guard import add_input, add_output
from icda.records import REPORTS_ICDA, Choice, DatasetVerdict
from icda.run_agreement import rationale_sufficiency, run_agreement_verdict, run_verdicts
from icda.steps import command_doc


def verdict(dataset: str, runs: list[int], mmi: list[str | Path], icda: list[str | Path],
            out: str | Path, settings: str | Path | None = None, data_dir: str | Path | None = None,
            embeddings: str | Path | None = None) -> DatasetVerdict:
    """Judge the runs of ``dataset`` and write ``verdict.json`` to ``out``.

    Args:
        dataset: the dataset's name.
        runs: the run numbers, in the order of ``mmi`` and ``icda``.
        mmi: per run, iteration 0's choice.json.
        icda: per run, the choice.json of the iteration its stop rule took as ICDA.
        settings, data_dir, embeddings: the dataset's settings.json, prepared folder and sentence
            vectors (frozen mode): the per-run step's sentence judge; without ``embeddings`` the
            step is skipped and every run takes the dataset's verdict.

    Raises:
        ConfigError: the three lists differ in length, an ``mmi`` choice is not iteration 0, or
            ``embeddings`` comes without ``settings`` and ``data_dir``.
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
    mmi_dev, icda_dev = ([choice.predictions().dev.positions for choice in choices] for choices in (before, after))
    judged = run_agreement_verdict(mmi_dev, icda_dev)
    sufficiency = _sufficiency(settings, data_dir, embeddings, mmi_dev, icda_dev)
    per_run = run_verdicts(judged, *sufficiency)
    loop = [choice.iteration for choice in after]
    record = DatasetVerdict(dataset=dataset, verdict=judged.verdict, reason=judged.reason, runs=list(runs),
                            loop_iterations=loop,
                            reported=[k if v in REPORTS_ICDA else 0 for k, (v, _) in zip(loop, per_run)],
                            mmi_agreement=judged.mmi, icda_agreement=judged.icda,
                            run_verdicts=[v for v, _ in per_run], run_reasons=[r for _, r in per_run],
                            mmi_sufficiency=sufficiency[0], icda_sufficiency=sufficiency[1])
    record.write(out)
    return record


def _sufficiency(settings, data_dir, embeddings, before: list, after: list) -> tuple[list, list]:
    """Per run, the rationale sufficiency of its MMI and ICDA selectors on the dev documents
    (:func:`icda.run_agreement.rationale_sufficiency`, rounded to 6 places), under a sentence judge
    fitted on the training split; None for every run without ``embeddings``."""
    if embeddings is None:
        return [None] * len(before), [None] * len(after)
    if settings is None or data_dir is None:
        raise ConfigError("verdict: --embeddings needs --settings and --data-dir (the judge is fitted on the "
                          "training split). Fix: pass all three, or none")
    from icda.label_flip import sentence_ids
    from icda.loading import open_workspace  # torch: only where the judge is fitted
    from icda.settings import Settings
    from icda.steps.train import sentence_judge

    ws = open_workspace(Settings.load(settings), data_dir, embeddings)
    judge, dev = sentence_judge(ws, force=True), ws.split("dev")
    if judge is None:  # fine-tuning mode: no fixed sentence vectors
        return [None] * len(before), [None] * len(after)
    ids, labels = sentence_ids(dev), dev.labels.tolist()
    value = lambda positions: round(rationale_sufficiency(judge, ids, labels, positions), 6)
    return [value(p) for p in before], [value(p) for p in after]


# --------------------------------------------------------------------------- the command


def register(sub) -> None:
    p = sub.add_parser("verdict", description=command_doc(__doc__),
                       help="whether ICDA helped a dataset's runs, from how far they agree (icda.verdict: run_agreement)")
    p.add_argument("--dataset", required=True, help="the dataset's name")
    p.add_argument("--runs", type=int, nargs="+", required=True, help="the run numbers, in the order of --mmi and --icda")
    add_input(p, "--mmi", nargs="+", required=True, help="per run, iter0/choice.json")
    add_input(p, "--icda", nargs="+", required=True, help="per run, the choice.json of the iteration its stop rule took")
    add_input(p, "--settings", help="the dataset's settings.json (with --data-dir and --embeddings: the per-run step)")
    add_input(p, "--data-dir", kind="folder", help="the prepared dataset folder")
    add_input(p, "--embeddings", help="the dataset's sentence vectors (frozen mode; without them every run takes the dataset's verdict)")
    add_output(p, "--out", required=True, help="verdict.json")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    record = verdict(args.dataset, args.runs, args.mmi, args.icda, args.out, args.settings, args.data_dir,
                     args.embeddings)
    print(f"{record.dataset}: {record.verdict} ({record.reason})")
    for run, k in zip(record.runs, record.reported):
        verdict_of_run, why = record.run_verdict(run)
        print(f"  run {run}: {verdict_of_run}, reports iteration {k} ({why})")
