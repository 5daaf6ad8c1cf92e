"""``python -m icda evaluate``: rationale precision, recall, F1 and accuracy on the test set.

The metrics JSON also holds, under ``documents``, each document's id, selected sentence indices
and predicted class (split order), so the selections behind the numbers can be inspected.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from icda.cli.common import add_workspace_arguments, open_from_args


def register(sub) -> None:
    p = sub.add_parser("evaluate", help="test-set rationale precision (paper metric) of a model",
                       description=__doc__)
    add_workspace_arguments(p)
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--model", type=Path, help="a model.pt")
    src.add_argument("--selected", type=Path, help="a selected.json of `python -m icda select`")
    p.add_argument("--split", default="test", choices=["train", "dev", "test"])
    p.add_argument("--out", type=Path, required=True, help="metrics JSON")
    p.add_argument("--label", action="append", default=[], metavar="KEY=VALUE",
                   help="extra fields for the JSON (e.g. dataset=restaurant run=1 iteration=0)")
    p.set_defaults(func=run)


def _value(text: str):
    if text.lstrip("-").isdigit():
        return int(text)
    return None if text in ("null", "none") else text


def run(args: argparse.Namespace) -> None:
    from icda.io import read_json, write_json
    from icda.metrics import rationale_metrics
    from icda.train import predict
    ws = open_from_args(args)
    model_path = args.model or Path(read_json(args.selected)["candidate_dir"]) / "model.pt"
    model = ws.load_model(model_path)
    split = ws.split(args.split)
    pred = predict(model, split.ids, device=ws.device)
    docs = split.documents
    metrics = rationale_metrics(
        pred.selected, [d.rationale for d in docs], split.n_sentences.tolist(),
        [d.label for d in docs], pred.predicted.tolist(),
    )
    labels = dict(item.split("=", 1) for item in args.label)
    out = {k: _value(v) for k, v in labels.items()} | metrics | {"model": str(model_path), "split": args.split}
    # per document, in split order: what the rationale viewer (icda/report/viewer.py) highlights
    out["documents"] = {"ids": [d.id for d in docs], "selected": pred.selected,
                        "predicted": pred.predicted.tolist()}
    write_json(out, args.out)
    shown = {k: out[k] for k in ("precision", "recall", "f1", "accuracy")}
    print(" ".join(f"{k}={'-' if v is None else f'{v:.4f}'}" for k, v in shown.items()))
