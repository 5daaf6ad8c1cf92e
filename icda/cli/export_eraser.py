"""``python -m icda export-eraser``: a prepared split, and a trained selector's predictions on it,
in the ERASER benchmark's format (DeYoung et al. 2020), with ERASER's metrics beside the paper's
precision.

``--out-dir`` becomes an ERASER data directory: ``docs/<docid>`` (one sentence a line, tokens =
whitespace split) and ``test.jsonl`` (``val.jsonl`` for ``--split dev``) with one annotation per
labelled document with ground truth. With ``--model`` (a model folder) or ``--choice`` (a
choice.json) the selector's predictions are written to ``--predictions`` as ERASER's results
JSONL (hard and soft rationales, class scores, comprehensiveness, sufficiency and the AOPC bins),
and ``--scores`` gets ERASER's metrics on them with the paper's precision. ``--score-only``
scores an existing ``--predictions`` against ``--out-dir`` instead. ERASER's own scorer reads the
same files: ``python rationale_benchmark/metrics.py --data_dir <out-dir> --split test --results
<predictions> --strict``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def register(sub) -> None:
    p = sub.add_parser("export-eraser", help="ERASER-format export of a split and a selector's rationales, "
                       "with ERASER's metrics", description=__doc__)
    p.add_argument("--data-dir", type=Path, help="prepared dataset folder holding train/dev/test.jsonl")
    p.add_argument("--out-dir", type=Path, required=True, help="the ERASER data directory to write (or read, "
                   "with --score-only)")
    p.add_argument("--split", default="test", choices=["train", "dev", "test"])
    src = p.add_mutually_exclusive_group()
    src.add_argument("--model", type=Path, help="a model folder (model.pt and model.json): a candidate folder "
                     "or results/<dataset>/icda_model")
    src.add_argument("--choice", type=Path, help="a choice.json of `python -m icda select` (its chosen candidate)")
    p.add_argument("--settings", type=Path,
                   help="a settings.json, only for a model folder without model.json (trained before it was written)")
    p.add_argument("--embeddings", type=Path, help="embedding cache from `python -m icda embed` (frozen mode)")
    p.add_argument("--predictions", type=Path, help="the predictions JSONL (written with --model/--choice, "
                   "read with --score-only)")
    p.add_argument("--scores", type=Path, help="JSON of ERASER's metrics on the predictions")
    p.add_argument("--aopc-thresholds", type=float, nargs="+", default=None,
                   help="AOPC bins, fractions of a document's tokens (default: ERASER's 0.01 0.05 0.1 0.2 0.5)")
    p.add_argument("--score-only", action="store_true", help="score --predictions against --out-dir; write nothing "
                   "but --scores")
    p.add_argument("--keep-empty-rationale", action="store_true",
                   help="also export documents annotated with no rationale sentence (evidences: []): ERASER's "
                   "precision then equals eval.json's, its soft-score AUPRC is not to be trusted")
    p.add_argument("--device", default="auto", help="cpu, cuda, ... or auto (default)")
    p.add_argument("--dataset", help="dataset name recorded in --scores (as eval.json records it)")
    p.add_argument("--run", type=int, help="run recorded in --scores")
    p.add_argument("--iteration", type=int, help="ICDA iteration recorded in --scores (left out: COMP or none)")
    p.set_defaults(func=run, parser=p)


def run(args: argparse.Namespace) -> None:
    from icda.eraser_metrics import AOPC_THRESHOLDS
    from icda.records import EraserScores

    thresholds = tuple(args.aopc_thresholds or AOPC_THRESHOLDS)
    if args.score_only:
        if args.predictions is None:
            args.parser.error("--score-only needs --predictions")
        from icda.steps.eraser import score_eraser

        from icda.steps.eraser import finite

        scores = score_eraser(args.out_dir, args.predictions, args.split, aopc_thresholds=thresholds)
        scores |= {k: v for k in ("dataset", "run", "iteration") if (v := getattr(args, k)) is not None}
        if args.scores is not None:
            EraserScores.from_json(finite(scores)).write(args.scores)
    else:
        if args.data_dir is None:
            args.parser.error("--data-dir is required (but for --score-only)")
        if (args.model or args.choice) and args.predictions is None:
            args.parser.error("--model/--choice need --predictions (the predictions JSONL to write)")
        from icda.steps.eraser import export_eraser

        out = export_eraser(args.data_dir, args.out_dir, args.split, model=args.model, choice=args.choice,
                            settings_path=args.settings, embeddings=args.embeddings, predictions=args.predictions,
                            scores=args.scores, device=args.device, thresholds=thresholds,
                            keep_empty=args.keep_empty_rationale,
                            labels={"dataset": args.dataset, "run": args.run, "iteration": args.iteration})
        print(f"{len(out.documents)} documents -> {args.out_dir} (left out: {len(out.unlabelled)} without a label, "
              f"{len(out.unannotated)} without ground truth)", file=sys.stderr)
        scores = out.scores
    if scores is not None:
        summary = {"sentence_precision": scores["sentence_prf"]["instance_micro"]["p"],
                   "iou_f1": scores["iou_scores"][0]["macro"]["f1"],
                   "token_f1": scores["token_prf"]["instance_macro"]["f1"],
                   "auprc": scores["token_soft_metrics"]["auprc"],
                   "comprehensiveness": scores["classification_scores"]["comprehensiveness"],
                   "sufficiency": scores["classification_scores"]["sufficiency"]}
        if "paper" in scores:
            summary["paper_precision"] = scores["paper"]["precision"]
        print(json.dumps(summary))
