"""``python -m icda predict``: a trained selector applied to new documents.

The model folder is a candidate folder (``results/<dataset>/run<r>/iter<k>/candidates/<name>/``)
or a dataset's exported final ICDA selector (``results/<dataset>/icda_model/``): its model.pt
and model.json (the settings it was trained with, checked against the encoder found now). The
input is JSONL (``{"sentences": [...]}`` or ``{"text": "..."}``, split with spaCy; ``label`` and
``id`` optional) or plain text, one document a line, split with spaCy; ``--input -`` reads
standard input. The output is JSONL (standard output, or ``--out``), one line per document in
input order: ``id``, the predicted ``label``, the class ``probabilities``,
the rationale ``positions`` (0-based sentence indices) and the ``rationale`` sentences (and
``given_label`` where the input gave one).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def register(sub) -> None:
    from icda.steps.predict import INPUT_FORMATS

    p = sub.add_parser("predict", help="label new documents and pick their rationale sentences",
                       description=__doc__)
    p.add_argument("--model", type=Path, required=True,
                   help="a model folder (model.pt and model.json): a candidate folder or results/<dataset>/icda_model")
    p.add_argument("--input", type=Path, required=True,
                   help="the documents: *.jsonl, or text (one a line); - reads standard input (with --format)")
    p.add_argument("--out", type=Path,
                   help="the predictions JSONL (default or -: standard output); a FIFO or device is written "
                        "through, a symlink's target replaced, a regular file replaced atomically")
    p.add_argument("--format", choices=INPUT_FORMATS, default="auto",
                   help="input format (default: jsonl for *.jsonl, else text)")
    p.add_argument("--settings", type=Path,
                   help="a settings.json, only for a model folder without model.json (trained before it was written)")
    p.add_argument("--spacy-model", help="spaCy pipeline for sentence splitting (default: the rule-based sentencizer)")
    p.add_argument("--device", default="auto", help="cpu, cuda, ... or auto (default)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    from icda.io import STDOUT_NAMES, open_output
    from icda.steps.predict import check_output, predict_file

    check_output(args.out, args.input, args.model)
    predictions = predict_file(args.model, args.input, args.format, args.settings, args.device, args.spacy_model)
    with open_output(args.out or "-") as fh:
        for prediction in predictions:
            fh.write(json.dumps(prediction.to_json(), ensure_ascii=False) + "\n")
    if args.out is not None and str(args.out) not in STDOUT_NAMES:
        print(f"{len(predictions)} documents -> {args.out}", file=sys.stderr)
