"""Replay the run-agreement verdict (icda/run_agreement.py) on finished runs, beside what ground
truth says.

Per dataset of one or more robustness.py folders (``--out``'s ``<path>/results``): the mean
agreement of the runs' MMI selectors and of their ICDA selectors on the dev documents (read
without ground truth), the dataset's verdict, each run's own (the per-run step: its rationale
sufficiency under the sentence judge, MMI → ICDA), and per run the precision (``--split``) of
MMI, of the loop's ICDA and of what its verdict reports, and whether the verdict agrees with it
(helped ⇔ the loop's ICDA >= MMI + 2 points). ``--lodo`` adds the leave-one-dataset-out check of
the rule's three thresholds: for each dataset, the grid's thresholds that agree best on the other
datasets, applied to it. docs/experiments/own-data.md, "Runs that agree" and "Each run's own
rationales".

    PYTHONPATH=. .venv/bin/python benchmarks/run_agreement_replay.py ../bench/own/fixed/results --split dev
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

from icda import run_agreement
from icda.guard import add_input, parse_arguments
from icda.label_flip import sentence_ids
from icda.layout import CHOICE_FILE, EVAL_FILE
from icda.loading import load_settings, open_workspace
from icda.metrics import rationale_metrics
from icda.records import REPORTS_ICDA, Choice, Decision, Evaluation, icda_iteration
from icda.steps.train import sentence_judge


def dataset_runs(results: Path, dataset: str, split: str) -> list[dict]:
    """Per finished run of ``results/<dataset>``: the dev selections of its MMI (iteration 0) and
    ICDA (the stop decision's ``final_iteration``) selectors, their rationale sufficiency under the
    sentence judge (None in fine-tuning mode) and their precision on ``split``."""
    settings = load_settings(results / dataset / "settings.json")
    ws = open_workspace(settings, results / dataset / "data", results / dataset / "embeddings.pt")
    dev = ws.split("dev")
    truth = [d.rationale for d in dev.documents]
    scores, ids, labels = sentence_judge(ws, force=True), sentence_ids(dev), dev.labels.tolist()
    sufficiency = (lambda sel: None) if scores is None else (
        lambda sel: run_agreement.rationale_sufficiency(scores, ids, labels, sel))
    runs = []
    for run in sorted((results / dataset).glob("run*"), key=lambda p: int(p.name[3:])):
        k, its = 0, []
        while (run / f"iter{k}" / "converge.json").exists():
            decision = Decision.read(run / f"iter{k}" / "converge.json")
            its.append(run / f"iter{k}")
            if decision.stop:
                break
            k += 1
        if not its or not decision.stop:
            continue  # an unfinished run is left out
        # the loop's ICDA: the stop rule's; a run whose stop decision carries a verdict
        # (icda.verdict: label_flip) took its last iteration, or the one before a blocked one
        final = (icda_iteration(range(len(its)), decision.final_iteration) or 0 if decision.verdict is None
                 else len(its) - 1 - (1 if decision.blocked and len(its) > 1 else 0))

        selections = [[list(p) for p in Choice.read(it / CHOICE_FILE).predictions().dev.positions] for it in its]
        if split == "test":
            curve = [Evaluation.read(it / EVAL_FILE).precision for it in its]
        elif all(t is not None for t in truth):
            curve = [rationale_metrics(sel, truth, dev.n_sentences.tolist())["precision"] for sel in selections]
        else:
            curve = [None] * len(its)
        runs.append({"run": run.name, "K": final, "mmi_sel": selections[0], "icda_sel": selections[final],
                     "mmi": curve[0], "loop": curve[final], "curve": curve,
                     "mmi_suff": sufficiency(selections[0]), "icda_suff": sufficiency(selections[final])})
    return runs


_AGREEMENT: dict = {}


def judge(runs: list[dict], gain: float, agreed: float, delta: float = run_agreement.SUFFICIENCY_GAIN
          ) -> tuple[run_agreement.RunAgreement, list[str], list[bool]]:
    """The dataset's verdict under thresholds (gain, agreed), each run's under ``delta`` (nats) and,
    per run, whether its verdict agrees with precision (helped ⇔ the loop's ICDA ≥ MMI + 2)."""
    key = (id(runs), gain, agreed)
    if key not in _AGREEMENT:  # the agreements are the costly part; --lodo asks again and again
        _AGREEMENT[key] = run_agreement.run_agreement_verdict(
            [r["mmi_sel"] for r in runs], [r["icda_sel"] for r in runs], gain, agreed)
    v = _AGREEMENT[key]
    per_run = [verdict for verdict, _ in run_agreement.run_verdicts(
        v, [r["mmi_suff"] for r in runs], [r["icda_suff"] for r in runs], delta)]
    return v, per_run, [(w in REPORTS_ICDA) == (r["loop"] >= r["mmi"] + 0.02 - 1e-9) for w, r in zip(per_run, runs)]


def _same_runs(seen: list[dict], runs: list[dict]) -> bool:
    """Whether every run of ``runs`` is one of ``seen`` (the same selections before and after the loop)."""
    return all(any((r["mmi_sel"], r["icda_sel"]) == (s["mmi_sel"], s["icda_sel"]) for s in seen) for r in runs)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_input(parser, "results", kind="tree", nargs="+", help="a robustness run's <path>/results folder")
    parser.add_argument("--split", choices=["dev", "test"], default="dev",
                        help="the precision the verdict is judged against (dev: where rules are chosen)")
    parser.add_argument("--lodo", action="store_true", help="add the leave-one-dataset-out table")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(build_parser(), argv)
    data = {}
    for results in args.results:
        results = results.resolve()
        if not any(results.glob("*/settings.json")):
            print(f"run_agreement_replay: {results}: no dataset (no <dataset>/settings.json). Fix: give a "
                  "robustness run's <path>/results folder", file=sys.stderr)
            return 1
        os.chdir(results.parent)  # candidate folders are named from the workflow's folder
        for dataset in sorted(p.parent.name for p in results.glob("*/settings.json")):
            runs = [r for r in dataset_runs(results, dataset, args.split) if r["mmi"] is not None]
            if len(runs) < 2 or any(name.split(" ")[0] == dataset and _same_runs(seen, runs)
                                    for name, seen in data.items()):
                continue  # runs already read from another folder (the same seeds at the same commit) count once
            data[dataset if dataset not in data else f"{dataset} ({results.parent.parent.name})"] = runs
    if not data:
        print("run_agreement_replay: no dataset with two finished runs and precision on --split "
              f"{args.split}. Fix: give robustness folders whose runs have stopped", file=sys.stderr)
        return 1
    pct = lambda x: "–" if x is None else f"{100 * x:.1f}"
    print(f"{args.split} precision (%); agreement: helped ⇔ the loop's ICDA ≥ MMI + 2")
    print("| dataset | runs | A_0 → A_K | verdict | runs helped on their own | MMI | CDA | loop's ICDA | reported | "
          "lowest reported | reported < MMI | loop < MMI | reported > 3 below the run's best | agreement |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    total = [0, 0]
    for name, runs in data.items():
        v, per_run, agree = judge(runs, run_agreement.HELPED_GAIN, run_agreement.AGREED)
        reported = [r["loop"] if w in REPORTS_ICDA else r["mmi"] for w, r in zip(per_run, runs)]
        own = "–" if v.reports_icda else f"{sum(w == 'helped' for w in per_run)}"
        total[0] += sum(agree)
        total[1] += len(agree)
        cda = [r["curve"][1] for r in runs if len(r["curve"]) > 1]  # iteration 1 (runs that reached it)
        print(f"| {name} | {len(runs)} | {v.mmi:.2f} → {v.icda:.2f} | {v.verdict} | {own} | "
              f"{pct(np.mean([r['mmi'] for r in runs]))} | {pct(np.mean(cda)) if cda else '–'} | "
              f"{pct(np.mean([r['loop'] for r in runs]))} | {pct(np.mean(reported))} | {pct(min(reported))} | "
              f"{sum(x < r['mmi'] - 1e-9 for x, r in zip(reported, runs))} | "
              f"{sum(r['loop'] < r['mmi'] - 1e-9 for r in runs)} | "
              f"{sum(x < max(r['curve']) - 0.03 - 1e-9 for x, r in zip(reported, runs))} | {sum(agree)}/{len(agree)} |")
    print(f"\nall datasets: the verdict agrees with {args.split} precision in {total[0]} of {total[1]} runs")
    print("\nEvery run's curve (precision per iteration, K: the loop's ICDA), its sufficiency MMI → ICDA (nats) "
          "and its verdict:")
    nats = lambda x: "–" if x is None else f"{x:.3f}"
    for name, runs in data.items():
        for r, w in zip(runs, judge(runs, run_agreement.HELPED_GAIN, run_agreement.AGREED)[1]):
            print(f"- {name} {r['run']} (K={r['K']}): " + " → ".join(pct(p) for p in r["curve"])
                  + f"; S {nats(r['mmi_suff'])} → {nats(r['icda_suff'])}; {w}")
    if args.lodo:
        grid = [(g, a, d) for g in (0.0, 0.01, 0.03, 0.05, 0.1) for a in (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9)
                for d in (0.01, 0.02, 0.03, 0.05, 0.08, float("inf"))]
        print("\nLeave one dataset out: the thresholds (gain, agreed, delta) that agree best on the other datasets "
              "(ties: the first of the grid; delta inf: no per-run step), applied to the one left out")
        print("| left out | thresholds | agreement on the others | agreement on it |")
        print("|---|---|---|---|")
        held = [0, 0]
        for name in data:
            score = lambda gad: sum(sum(judge(runs, *gad)[2]) for n, runs in data.items() if n != name)
            best = max(grid, key=score)
            others = sum(len(runs) for n, runs in data.items() if n != name)
            mine = judge(data[name], *best)[2]
            held[0] += sum(mine)
            held[1] += len(mine)
            print(f"| {name} | {best} | {score(best)}/{others} | {sum(mine)}/{len(mine)} |")
        print(f"\nleft out in turn: {held[0]} of {held[1]} runs agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
