"""Replay the label-flip check (icda/label_flip.py) on finished runs, beside what ground truth says.

Per run and iteration of a robustness.py folder (``--out``'s ``<path>/results``): the chosen
selector's dev flip rate, its dev and test precision (ground truth, to judge the check; the check
itself never reads it) and its dev accuracy; per run the verdict (icda.model_selection.verdict)
replayed from those flip rates, whatever the run's own settings; per dataset the precision
(``--split``) of MMI, of the loop's ICDA and of what the verdict reports, and how often the
verdict agrees with it (helped ⇔ the loop's ICDA ≥ MMI + 2). The question: does the flip rate,
read without ground truth, say whether the loop helped (docs/experiments/own-data.md)?

    PYTHONPATH=. .venv/bin/python benchmarks/label_flip_replay.py ../bench/own/fixed/results
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

from icda.guard import add_input, parse_arguments
from icda.label_flip import fit_sentence_judge, flip_rate, predicted_classes, sentence_ids
from icda.model_selection import Signals, verdict
from icda.layout import CHOICE_FILE, EVAL_FILE
from icda.loading import load_settings, open_workspace
from icda.model import CachedSentences
from icda.records import Choice, Decision, Evaluation
from icda.metrics import rationale_metrics


def dataset_rows(results: Path, dataset: str) -> list[dict]:
    """One row per (run, iteration) of ``results/<dataset>``."""
    settings = load_settings(results / dataset / "settings.json")
    ws = open_workspace(settings, results / dataset / "data", results / dataset / "embeddings.pt")
    if not isinstance(ws.sentences, CachedSentences):
        raise SystemExit(f"{dataset}: the check needs frozen sentence vectors")
    table = ws.sentences.vectors.numpy()
    train, dev = ws.split("train"), ws.split("dev")
    scores = fit_sentence_judge(table, sentence_ids(train), train.labels.tolist(), settings.model.n_classes)
    dev_ids, dev_labels = sentence_ids(dev), dev.labels.tolist()
    truth = [d.rationale for d in dev.documents]
    rows = []
    for run in sorted((results / dataset).glob("run*"), key=lambda p: int(p.name[3:])):
        k = 0
        while (run / f"iter{k}" / "converge.json").exists():
            it = run / f"iter{k}"
            choice = Choice.read(it / CHOICE_FILE)
            pred = choice.predictions().dev
            predicted = np.asarray(predicted_classes(pred.class_probabilities))
            rate = flip_rate(scores, dev_ids, dev_labels, pred.positions, predicted.tolist())
            top = float(np.mean([int(np.argmax(scores[doc, y])) in set(sel)
                                 for doc, y, sel in zip(dev_ids, dev_labels, pred.positions)]))
            dev_precision = (rationale_metrics(pred.positions, truth, dev.n_sentences.tolist())["precision"]
                             if all(t is not None for t in truth) else None)
            test = Evaluation.read(it / EVAL_FILE).precision if (it / EVAL_FILE).exists() else None
            decision = Decision.read(it / "converge.json")
            rows.append({"dataset": dataset, "run": run.name, "k": k, "flip": rate, "top": top,
                         "dev_precision": dev_precision,
                         "blocked": decision.blocked,
                         "test_precision": test, "dev_accuracy": float((predicted == np.asarray(dev_labels)).mean()),
                         "final": decision.final_iteration if decision.stop else None})
            if decision.stop:
                break
            k += 1
    return rows


def judged(rows: list[dict], split: str = "test") -> dict:
    """One run's rows judged: the loop's ICDA iteration K (its last iteration, or the one before a
    blocked one), the verdict and reported iteration of :func:`icda.model_selection.verdict`
    from the replayed flip rates, and the precision (``split``) of MMI, of K and of what is reported."""
    blocked = rows[-1]["blocked"]
    k = len(rows) - 1 - (1 if blocked and len(rows) > 1 else 0)
    what, reported, _ = verdict([Signals(r["k"], None, None, None, label_flip=r["flip"]) for r in rows[:k + 1]], k)
    key = f"{split}_precision"
    return {"verdict": what, "K": k, "reported": reported, "mmi": rows[0][key], "loop": rows[k][key],
            "icda": rows[reported][key]}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_input(parser, "results", kind="tree", nargs="+", help="a robustness run's <path>/results folder")
    parser.add_argument("--split", choices=["dev", "test"], default="dev",
                        help="the precision the verdict is judged against (dev: where rules are chosen)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(build_parser(), argv)
    for results in args.results:  # a folder that holds no run stops here, before any table is printed
        if not any(results.glob("*/settings.json")):
            print(f"label_flip_replay: {results}: no dataset (no <dataset>/settings.json). Fix: give a "
                  "robustness run's <path>/results folder", file=sys.stderr)
            return 1
    print("| dataset | run | flip rate per iteration | judge's top sentence selected | dev precision | test precision | "
          "dev accuracy | verdict (K → reported) |")
    print("|---|---|---|---|---|---|---|---|")
    summary = {}
    for results in args.results:
        results = results.resolve()
        os.chdir(results.parent)  # candidate folders are named from the workflow's folder
        for dataset in sorted(p.parent.name for p in results.glob("*/settings.json")):
            rows = dataset_rows(results, dataset)
            for run in dict.fromkeys(r["run"] for r in rows):
                rs = [r for r in rows if r["run"] == run]
                j = judged(rs, args.split)
                summary.setdefault(dataset, []).append(j)
                fmt = lambda key, scale=100: " → ".join("–" if r[key] is None else f"{scale * r[key]:.0f}" for r in rs)
                print(f"| {dataset} | {run} | {fmt('flip')} | {fmt('top')} | {fmt('dev_precision')} | "
                      f"{fmt('test_precision')} | {fmt('dev_accuracy')} | {j['verdict']} ({j['K']} → {j['reported']}) |")
    print(f"\n{args.split} precision (%): the loop's ICDA (iteration K) and the reported one (MMI where the "
          "verdict is not \"helped\"); agreement: helped ⇔ the loop's ICDA ≥ MMI + 2")
    print("| dataset | runs | MMI | loop's ICDA | reported | lowest reported | reported < MMI | loop < MMI | "
          "verdicts | agreement |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for dataset, js in summary.items():
        js = [j for j in js if j["mmi"] is not None]
        if not js:
            continue
        mean = lambda key: f"{100 * np.mean([j[key] for j in js]):.1f}"
        agree = sum((j["verdict"] == "helped") == (j["loop"] >= j["mmi"] + 0.02 - 1e-9) for j in js)
        counts = ", ".join(f"{v} {sum(j['verdict'] == v for j in js)}" for v in dict.fromkeys(j["verdict"] for j in js))
        print(f"| {dataset} | {len(js)} | {mean('mmi')} | {mean('loop')} | {mean('icda')} | "
              f"{100 * min(j['icda'] for j in js):.1f} | {sum(j['icda'] < j['mmi'] - 1e-9 for j in js)} | "
              f"{sum(j['loop'] < j['mmi'] - 1e-9 for j in js)} | {counts} | {agree}/{len(js)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
