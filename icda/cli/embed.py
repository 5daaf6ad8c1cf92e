"""``python -m icda embed``: encode a prepared dataset's sentences once (frozen-encoder mode)."""

from __future__ import annotations

import argparse
from pathlib import Path

from icda.data.dataset_spec import SPLITS
from icda.encoder import EncoderSettings, resolve_device
from icda.errors import ConfigError
from icda.io import read_json


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "embed",
        help="encode every sentence of a prepared dataset once (frozen encoder cache)",
        description=(
            "Encode the unique sentences of DATA_DIR/{train,dev,test}.jsonl with a frozen "
            "sentence encoder and write one embedding cache file. Encoder settings come from "
            "--settings (its 'encoder' object) and are overridden by explicit flags."),
    )
    parser.add_argument("--data-dir", required=True, type=Path,
                        help="folder holding train.jsonl, dev.jsonl, test.jsonl (from `prepare`)")
    parser.add_argument("--out", required=True, type=Path, help="embedding cache file to write (.pt)")
    parser.add_argument("--settings", type=Path,
                        help="JSON file whose 'encoder' object holds encoder settings")
    parser.add_argument("--encoder", dest="name",
                        help="'default' (all-MiniLM-L6-v2, offline), a model directory or hub id")
    parser.add_argument("--pooling", choices=("cls", "mean"), help="sentence pooling (default mean)")
    parser.add_argument("--max-tokens", type=int,
                        help="wordpieces per sentence incl. [CLS]/[SEP]; longer keep head+tail (default 32)")
    parser.add_argument("--max-sentences", type=int,
                        help="first N sentences of each document (default 16)")
    parser.add_argument("--batch-size", type=int, help="sentences per forward pass (default 128)")
    parser.add_argument("--cache-dir", type=Path,
                        help="shared cache folder: reuse <key>.pt there, or write it")
    parser.add_argument("--device", default="auto",
                        help="'auto' (cuda if available), 'cpu', 'cuda', 'cuda:1', ...")
    parser.add_argument("--no-progress", dest="progress", action="store_false",
                        help="no progress bar")
    parser.set_defaults(func=run)


def _settings(args: argparse.Namespace) -> EncoderSettings:
    values: dict = {}
    if args.settings is not None:
        if not args.settings.is_file():
            raise ConfigError(f"--settings {args.settings}: file not found. Fix: give an existing JSON file")
        try:
            obj = read_json(args.settings)
        except ValueError as exc:
            raise ConfigError(f"--settings {args.settings}: not valid JSON ({exc}). "
                              "Fix: repair the file") from exc
        if not isinstance(obj, dict) or not isinstance(obj.get("encoder"), dict):
            raise ConfigError(f"--settings {args.settings}: no 'encoder' object. "
                              "Fix: write {\"encoder\": {\"name\": ..., \"pooling\": ...}}")
        values.update(EncoderSettings.from_dict(obj["encoder"], strict=False).to_dict())
    for key in ("name", "pooling", "max_tokens", "max_sentences", "batch_size"):
        if getattr(args, key) is not None:
            values[key] = getattr(args, key)
    return EncoderSettings.from_dict(values)


def run(args: argparse.Namespace) -> int:
    from icda.steps.embed import embed_splits

    settings = _settings(args)
    paths = {split: args.data_dir / f"{split}.jsonl" for split in SPLITS}
    embed_splits(paths, settings, args.out, args.cache_dir,
                 device=resolve_device(args.device), progress=args.progress)
    return 0
