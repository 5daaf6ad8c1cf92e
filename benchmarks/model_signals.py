"""Ground-truth-free signals of an ICDA run that need its models re-run (never the test split).

Per run and iteration k, of the iteration's chosen selector (``choice.json``), on the original
dev split and the previous iteration's counterfactuals:

- ``comp``, ``suff``: ERASER's comprehensiveness and sufficiency on dev with the predicted class
  (:func:`icda.eraser_metrics.faithfulness`; paper section 4, "Faithfulness"): the mean drop of the
  predicted class's probability when the rationale is removed (higher: the rationale mattered) or
  kept alone (lower: the rationale suffices), as ``export-eraser`` computes them;
- ``taken``: the share (%) of iteration k − 1's training counterfactuals
  (``iter<k-1>/augmented/train.jsonl``) whose swapped-in sentence the selector picks (k ≥ 1): a
  model trained on them that picks what was swapped in reads the counterfactual sentence as the
  label's.

``dev`` is the chosen selector's dev precision (%) for reading the signals against; it needs the
split's ground truth and selects nothing.

    PYTHONPATH=. .venv/bin/python benchmarks/model_signals.py RUN_DIR [RUN_DIR ...]
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch

from icda.data.document import Document, read_split
from icda.eraser_metrics import faithfulness
from icda.loading import load_settings, open_workspace
from icda.metrics import rationale_metrics
from icda.records import PAD, Choice
from icda.train import predict


def _reduced(ids: torch.Tensor, positions: list[list[int]], keep: bool) -> torch.Tensor:
    """ids [D, N] with each row's ``positions`` kept alone (``keep``) or removed, left-packed."""
    rows = torch.full_like(ids, PAD)
    for d, selected in enumerate(positions):
        real = [i for i in range(ids.shape[1]) if ids[d, i] != PAD]
        kept = [i for i in real if (i in selected) == keep]
        rows[d, : len(kept)] = ids[d, kept]
    return rows


def _class_probability(model, ids: torch.Tensor, classes: np.ndarray) -> np.ndarray:
    """P(classes[d]) [D] of each row; a row with no sentence gets the classifier's empty logits."""
    out = np.zeros(len(ids))
    filled = [d for d in range(len(ids)) if (ids[d] != PAD).any()]
    if filled:
        out[filled] = predict(model, ids[filled]).probabilities[np.arange(len(filled)), classes[filled]]
    empty = [d for d in range(len(ids)) if d not in set(filled)]
    if empty:
        with torch.no_grad():
            p = torch.softmax(model.empty_logits().float(), dim=-1)[0].numpy()
        out[empty] = p[classes[empty]]
    return out


def iteration_signals(run: Path, k: int, workspace, dev_ids) -> dict | None:
    choice_path = run / f"iter{k}" / "choice.json"
    if not choice_path.exists():
        return None
    choice = Choice.read(choice_path)
    model_path = choice.model_path if choice.model_path.is_absolute() else run.parents[2] / choice.model_path
    model = workspace.load_model(model_path)
    full = predict(model, dev_ids.ids)
    predicted = full.predicted
    p_full = full.probabilities[np.arange(len(predicted)), predicted]
    dev_docs = dev_ids.documents
    row = {"k": k, "chosen": choice.chosen.name,
           "comp": faithfulness(p_full, _class_probability(model, _reduced(dev_ids.ids, full.positions, False), predicted)),
           "suff": faithfulness(p_full, _class_probability(model, _reduced(dev_ids.ids, full.positions, True), predicted))}
    precision = rationale_metrics(full.positions, [d.rationale for d in dev_docs],
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


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run folders (<results>/<dataset>/run<N>)")
    print(signals_table(parser.parse_args().runs))
