"""``python -m icda embed``: encode a prepared dataset's sentences once (frozen-encoder mode).

The ``embed`` step: a prepared dataset's split files in, one embedding cache file out
(:mod:`icda.embed` builds and checks the cache). Encoder settings come from ``--settings`` (its
``encoder`` object) and are overridden by explicit flags.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import Mapping

from icda.data.document import Document, read_documents
from icda.embed import EmbeddingCache, cache_key, embed_documents, unique_sentences
from icda.encoder import EncoderSettings, encoder_fingerprint, resolve_device, resolve_encoder_path
from icda.errors import ConfigError, DataError
from icda.guard import add_input, add_output
from icda.io import check_output, read_json
from icda.layout import SPLITS, split_path
from icda.steps import device_name

log = logging.getLogger(__name__)


def embed_splits(doc_paths: Mapping[str, str | Path], settings: EncoderSettings,
                 out_path: str | Path, cache_dir: str | Path | None = None, *,
                 device: str = "cpu", progress: bool = True) -> EmbeddingCache:
    """One cache file for several splits of a dataset (e.g. train/dev/test JSONL files).

    The union of the splits' sentences (in the order of ``doc_paths``) is embedded with
    :func:`embed_documents` and saved to ``out_path``. An ``out_path`` already built under the
    same key is kept as it is. A split with documents longer than ``settings.max_sentences`` is
    logged as a warning (:func:`cut_warning`).

    Raises:
        DataError: a split file is missing or malformed (see ``read_documents``).
        ConfigError: see :func:`embed_documents`.
    """
    by_split = {split: read_documents(path) for split, path in doc_paths.items()}
    docs = [doc for split_docs in by_split.values() for doc in split_docs]
    for split, split_docs in by_split.items():
        if (warning := cut_warning(split_docs, settings.max_sentences, str(doc_paths[split]))) is not None:
            log.warning(warning)
    out_path = Path(out_path)
    if out_path.exists():
        sentences = unique_sentences(docs, settings.max_sentences)
        key = cache_key(settings, sentences,
                        encoder_fingerprint(resolve_encoder_path(settings.name)))
        try:
            cache = EmbeddingCache.load(out_path, expected_key=key)
            log.info("%s is up to date (%d sentences)", out_path, len(cache.index))
            return cache
        except DataError as exc:
            log.info("rebuilding %s: %s", out_path, exc)
    cache = embed_documents(docs, settings, cache_dir=cache_dir, device=device, progress=progress)
    cache.save(out_path)
    log.info("wrote %s: %d sentences × %d", out_path, *cache.vectors.shape)
    return cache


def cut_warning(docs: list[Document], max_sentences: int, where: str) -> str | None:
    """The warning for the documents of one split that have more sentences than the model sees
    (``encoder.max_sentences``): their later sentences are never encoded, so a rationale there can
    never be selected. None when no document is cut."""
    cut = [len(doc.sentences) for doc in docs if len(doc.sentences) > max_sentences]
    if not cut:
        return None
    return (f"{where}: {len(cut)} of {len(docs)} documents have more than encoder.max_sentences = "
            f"{max_sentences} sentences (up to {max(cut)}); the model never sees the rest, so no "
            f"rationale there can be selected. Fix: set encoder.max_sentences to {max(cut)} or more")


def embed_dataset(data_dir: str | Path, settings: EncoderSettings, out_path: str | Path,
                  cache_dir: str | Path | None = None, *, device: str = "cpu", progress: bool = True) -> EmbeddingCache:
    """:func:`embed_splits` of a prepared dataset's train, dev and test splits
    (:func:`icda.layout.split_path`)."""
    return embed_splits({split: split_path(data_dir, split) for split in SPLITS}, settings, out_path, cache_dir,
                        device=device, progress=progress)


# --------------------------------------------------------------------------- the command


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "embed",
        help="encode every sentence of a prepared dataset once (frozen encoder cache)",
        description=(
            "Encode the unique sentences of DATA_DIR/{train,dev,test}.jsonl with a frozen "
            "sentence encoder and write one embedding cache file. Encoder settings come from "
            "--settings (its 'encoder' object) and are overridden by explicit flags."),
    )
    add_input(parser, "--data-dir", kind="folder", required=True,
                        help="folder holding train.jsonl, dev.jsonl, test.jsonl (from `prepare`)")
    add_output(parser, "--out", required=True, help="embedding cache file to write (.pt)")
    add_input(parser, "--settings",
                        help="JSON file whose 'encoder' object holds encoder settings")
    parser.add_argument("--encoder", dest="name",
                        help="'default' (all-MiniLM-L6-v2, offline), a model directory or hub id")
    parser.add_argument("--pooling", choices=("cls", "mean"), help="sentence pooling (default mean)")
    parser.add_argument("--max-tokens", type=int,
                        help="wordpieces per sentence incl. [CLS]/[SEP]; longer keep head+tail (default 32)")
    parser.add_argument("--max-sentences", type=int,
                        help=f"first N sentences of each document (default {EncoderSettings.max_sentences})")
    parser.add_argument("--batch-size", type=int, help="sentences per forward pass (default 128)")
    add_output(parser, "--cache-dir", kind="folder",
                        help="shared cache folder: reuse <key>.pt there, or write it")
    parser.add_argument("--device", default="auto", type=device_name,
                        help="'auto' (cuda if available), 'cpu', 'cuda', 'cuda:1', ...")
    parser.add_argument("--no-progress", dest="progress", action="store_false",
                        help="no progress bar")
    parser.set_defaults(func=run)


def _settings(args: argparse.Namespace) -> EncoderSettings:
    """The encoder settings of ``--settings`` (its ``encoder`` object), overridden by the flags given."""
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
    check_output("--out", args.out, "the embedding cache", {"the settings": args.settings},
                 {"the prepared data folder": args.data_dir})
    embed_dataset(args.data_dir, _settings(args), args.out, args.cache_dir,
                  device=resolve_device(args.device), progress=args.progress)
    return 0
