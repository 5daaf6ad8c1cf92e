"""Ground-truth-free signals of an ICDA run that need its models re-run (never the test split).

Per run and iteration k, of the iteration's chosen selector (``choice.json``), on the original
dev split and the previous iteration's counterfactuals:

- ``comp``, ``suff``: ERASER's comprehensiveness and sufficiency on dev with the predicted class
  (:func:`icda.eraser_metrics.faithfulness` of :func:`icda.steps.eraser.predict_eraser`'s scores, as
  ``export-eraser`` computes them): the mean drop of the predicted class's probability when the
  rationale is removed (higher: the rationale mattered) or kept alone (lower: it suffices);
- ``taken``: the share (%) of iteration k − 1's training counterfactuals
  (``iter<k-1>/augmented/train.jsonl``) whose swapped-in sentence the selector picks (k ≥ 1): a
  model trained on them that picks what was swapped in reads the counterfactual sentence as the
  label's.

``dev`` is the chosen selector's dev precision (%) for reading the signals against; it needs the
split's ground truth and selects nothing.

    PYTHONPATH=. .venv/bin/python benchmarks/model_signals.py RUN_DIR [RUN_DIR ...]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch

from icda.data.document import Document, read_split
from icda.eraser_metrics import faithfulness
from icda.guard import add_input, parse_arguments
from icda.loading import load_settings, open_workspace
from icda.metrics import rationale_metrics
from icda.records import Choice
from icda.steps.eraser import predict_eraser, tokenize
from icda.train import predict


def iteration_signals(run: Path, k: int, workspace, dev_ids) -> dict | None:
    choice_path = run / f"iter{k}" / "choice.json"
    if not choice_path.exists():
        return None
    choice = Choice.read(choice_path)
    model_path = choice.model_path if choice.model_path.is_absolute() else run.parents[2] / choice.model_path
    model = workspace.load_model(model_path)
    dev_docs = dev_ids.documents
    tokens = {d.id: [tokenize(sentence) for sentence in d.sentences] for d in dev_docs}
    lines, positions = predict_eraser(model, dev_ids.ids, dev_docs, tokens, thresholds=())

    def predicted_class(field: str) -> list[float]:
        return [r[field][r["classification"]] for r in lines]

    full = predicted_class("classification_scores")
    row = {"k": k, "chosen": choice.chosen.name,
           "comp": faithfulness(full, predicted_class("comprehensiveness_classification_scores")),
           "suff": faithfulness(full, predicted_class("sufficiency_classification_scores"))}
    precision = rationale_metrics(positions, [d.rationale for d in dev_docs],
                                  [len(d.sentences) for d in dev_docs])["precision"]
    row["dev"] = None if precision is None else 100 * precision
    augmented = run / f"iter{k - 1}" / "augmented" / "train.jsonl"
    if k >= 1 and augmented.exists():
        records = [json.loads(line) for line in augmented.open(encoding="utf-8")]
        counterfactuals = [r for r in records if r.get("counterfactual")]
        docs = [Document.from_json(r) for r in counterfactuals]
        picked = predict(model, workspace.sentence_ids(docs, str(augmented)).ids).positions
        row["taken"] = 100 * np.mean([bool(set(p) & set(r["swapped"])) for p, r in zip(picked, counterfactuals)])
    return row


def run_signals(run: Path) -> list[dict]:
    """Every iteration's signals of one run folder.

    Raises:
        FileNotFoundError: ``run`` holds no ``iter0/choice.json`` (not a run folder, or a run not
            started).
    """
    if not (run / "iter0" / "choice.json").exists():
        raise FileNotFoundError(f"{run}: no iter0/choice.json; pass run folders such as "
                                "<results>/<dataset>/run1 of a run that has finished its first iteration")
    dataset = run.parent
    settings = load_settings(dataset / "settings.json", threads=1)
    workspace = open_workspace(settings, dataset / "data", dataset / "embeddings.pt")
    dev_ids = workspace.sentence_ids(read_split(dataset / "data", "dev"), "dev")
    rows, k = [], 0
    with torch.no_grad():
        while (row := iteration_signals(run, k, workspace, dev_ids)) is not None:
            rows.append(row)
            k += 1
    return rows


def _f(v, digits: int = 1) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def signals_table(runs: list[Path]) -> str:
    lines = ["| run | k | chosen | dev precision | comprehensiveness | sufficiency | swapped-in picked (%) |",
             "|---|---|---|---|---|---|---|"]
    for run in runs:
        for r in run_signals(run):
            lines.append(f"| {run} | {r['k']} | {r['chosen']} | {_f(r['dev'])} | {_f(r['comp'], digits=3)} "
                         f"| {_f(r['suff'], digits=3)} | {_f(r.get('taken'))} |")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    """The command line of :func:`main` (its path arguments declared for the output guard, icda.guard)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_input(parser, "runs", kind="tree", nargs="+", help="run folders (<results>/<dataset>/run<N>)")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = parse_arguments(build_parser(), argv)
    try:
        print(signals_table(args.runs))
    except FileNotFoundError as exc:
        raise SystemExit(f"model_signals: {exc}") from None


if __name__ == "__main__":
    main()
