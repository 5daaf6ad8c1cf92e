"""``python -m icda train``: train one rationale model (one seed, one candidate)."""

from __future__ import annotations

import argparse
import dataclasses
import logging
from pathlib import Path

import numpy as np

from icda.cli.common import add_workspace_arguments, open_from_args

log = logging.getLogger("icda.train")


def register(sub) -> None:
    p = sub.add_parser("train", help="train one rationale model (MMI, COMP, or on augmented data)",
                       description=__doc__)
    add_workspace_arguments(p)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--out-dir", type=Path, required=True,
                   help="writes model.pt, history.json, rationales.json")
    p.add_argument("--augmented", type=Path,
                   help="an iteration folder of the ICDA loop (pools.json, augmented/dev.jsonl): train on "
                        "its kept originals plus counterfactuals re-drawn every epoch")
    p.add_argument("--init", type=Path,
                   help="warm start (fresh optimizer): a model.pt, or a selected.json whose model is used")
    p.add_argument("--objective", choices=["mmi", "comp"], help="override model.objective")
    p.add_argument("--comp-lambda", type=float, help="override model.comp_lambda (COMP)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    from icda.data.document import read_documents
    from icda.io import read_json, write_json
    from icda.splits import AugmentationPlan, augmented_tensors
    from icda.train import predict, train_model
    from icda.workspace import load_weights, save_model

    ws = open_from_args(args)
    overrides = {k: v for k, v in (("objective", args.objective), ("comp_lambda", args.comp_lambda)) if v is not None}
    if overrides:
        ws.settings = dataclasses.replace(ws.settings, model=dataclasses.replace(ws.settings.model, **overrides))
    model = ws.network(args.seed)
    if args.init:
        init = args.init
        if init.suffix == ".json":
            init = Path(read_json(init)["candidate_dir"]) / "model.pt"
        load_weights(model, init)
    train, dev = ws.split("train"), ws.split("dev")
    if args.augmented:
        plan = AugmentationPlan.from_json(read_json(args.augmented / "pools.json")["train"]["plan"])
        aug_dev = ws.encode(read_documents(args.augmented / "augmented" / "dev.jsonl"),
                            str(args.augmented / "augmented" / "dev.jsonl"))
        dev_ids, dev_labels = aug_dev.ids, aug_dev.labels
        dev_rationale = None

        def train_data(epoch: int):
            return augmented_tensors(train, plan, np.random.default_rng([args.seed, epoch]))
    else:
        dev_ids, dev_labels = dev.ids, dev.labels
        dev_rationale = [d.rationale for d in dev.documents]
        if all(r is None for r in dev_rationale):
            dev_rationale = None

        def train_data(epoch: int):
            return train.ids, train.labels

    log.info("training seed %d on %d documents/epoch (%s), dev %d, device %s",
             args.seed, 2 * len(plan.kept) if args.augmented else len(train),
             "augmented" if args.augmented else "original", len(dev_ids), ws.device)
    result = train_model(model, train_data, dev_ids, dev_labels, ws.settings.train, args.seed, ws.device,
                         dev_rationale)
    model.load_state_dict(result.state_dict)
    rationales = {}
    for name, split in (("train", train), ("dev", dev)):
        pred = predict(model, split.ids, device=ws.device)
        rationales[name] = {"prob_positive": pred.prob_positive.round(6).tolist(), "selected": pred.selected}
    history = result.to_json() | {
        "seed": args.seed,
        "init": None if args.init is None else str(args.init),
        "augmented": None if args.augmented is None else str(args.augmented),
        "objective": ws.settings.model.objective,
        "comp_lambda": ws.settings.model.comp_lambda,
    }
    save_model(model, args.out_dir / "model.pt", result.state_dict)
    write_json(rationales, args.out_dir / "rationales.json")
    write_json(history, args.out_dir / "history.json")  # last: its presence means complete
    log.info("best epoch %d, dev loss %.4f, dev accuracy %.3f%s", result.best_epoch, result.dev_loss,
             result.dev_accuracy, " (DEGENERATE)" if result.degenerate else "")
