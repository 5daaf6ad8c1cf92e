"""``python -m icda audit``: what one dataset holds, and what its test split shares with train and
dev (workflow rule ``audit``; the table of every dataset: ``python -m icda report audit``).

Reads the dataset's splits as ``prepare`` reads them, before preparation
(:func:`icda.steps.prepare.read_raw`), and writes ``results/<dataset>/data_audit.json``
(:class:`icda.records.DataAudit`): per split the documents, the class balance, the annotated
documents, the exact duplicates (case and whitespace normalised), sentences per document (median,
99th percentile, documents cut by ``encoder.max_sentences``) and the sentences the encoder cuts
(over ``encoder.max_tokens`` wordpieces of its tokenizer); and, per pair of splits, the documents
of one that share their text with the other, exactly or as near-duplicates found by MinHash at
the dataset's ``near_duplicate_threshold`` (:mod:`icda.data.overlap`). Text processing only: the
encoder's tokenizer is loaded, its weights are not.
"""

from __future__ import annotations

import argparse
import statistics

import numpy
from collections import Counter
from pathlib import Path
from typing import Callable, Sequence

from icda.data.dataset_spec import SPLITS, validate_spec
from icda.data.dataset_spec_files import load_one_spec
from icda.data.document import Document
from icda.data.overlap import exact_duplicates, overlap
from icda.guard import add_input, add_output
from icda.records import DataAudit
from icda.settings import EncoderSettings, Settings
from icda.io import check_output
from icda.steps.prepare import raw_inputs, read_raw


def wordpiece_counter(settings: EncoderSettings) -> Callable[[list[str]], list[int]]:
    """A function giving the wordpieces of each sentence, [CLS] and [SEP] included, with the
    tokenizer the embed step uses (:func:`icda.encoder.load_tokenizer`)."""
    from icda.encoder import load_tokenizer

    tokenizer = load_tokenizer(settings)

    def count(sentences: list[str]) -> list[int]:
        if not sentences:
            return []
        encoded = tokenizer(sentences, add_special_tokens=True, return_attention_mask=False,
                            return_token_type_ids=False, verbose=False)
        return [len(ids) for ids in encoded["input_ids"]]

    return count


def split_counts(docs: list[Document], max_sentences: int, lengths: dict[str, int], max_tokens: int) -> dict:
    """The counts of one split (:class:`icda.records.DataAudit`); ``lengths``: wordpieces of
    every sentence the encoder sees."""
    sizes = [len(doc.sentences) for doc in docs]
    seen = [sentence for doc in docs for sentence in doc.sentences[:max_sentences]]
    labels = Counter("null" if doc.label is None else str(doc.label) for doc in docs)
    return {
        "documents": len(docs),
        "labels": dict(sorted(labels.items())),
        "annotated": sum(doc.rationale is not None for doc in docs),
        "duplicates": exact_duplicates(docs),
        "sentences_median": float(statistics.median(sizes)) if sizes else 0.0,
        "sentences_p99": float(numpy.percentile(sizes, 99)) if sizes else 0.0,
        "cut_by_max_sentences": sum(n > max_sentences for n in sizes),
        "sentences_seen": len(seen),
        "over_max_tokens": sum(lengths[sentence] > max_tokens for sentence in seen),
    }


def audit_splits(name: str, raw: dict[str, list[Document] | None], *, max_sentences: int, max_tokens: int,
                 threshold: float, wordpieces: Callable[[list[str]], list[int]], encoder: str) -> DataAudit:
    """The audit of a dataset's splits as read (a split that is None, a dev carved out of train,
    is left out); ``wordpieces`` counts each sentence's wordpieces (:func:`wordpiece_counter`)."""
    splits = {split: docs for split, docs in raw.items() if docs is not None}
    unique = list(dict.fromkeys(sentence for docs in splits.values() for doc in docs
                                for sentence in doc.sentences[:max_sentences]))
    lengths = dict(zip(unique, wordpieces(unique)))
    shared = {}
    for split in ("train", "dev"):
        if split in splits and "test" in splits:
            found = overlap(splits[split], splits["test"], threshold)  # both ways, each document hashed once
            for pair, one in zip((f"{split}_test", f"test_{split}"), found):
                shared[pair] = {"exact": len(one.exact), "near": len(one.near)}
    return DataAudit(
        dataset=name, encoder=encoder, max_sentences=max_sentences, max_tokens=max_tokens,
        near_duplicate_threshold=threshold,
        splits={split: split_counts(docs, max_sentences, lengths, max_tokens) for split, docs in splits.items()},
        shared=shared)


def audit_dataset(name: str, spec: dict, data_dir: str | Path, settings: EncoderSettings,
                  responses: str | Path | None = None) -> DataAudit:
    """Read a dataset's splits as ``prepare`` does (:func:`icda.steps.prepare.read_raw`) and
    audit them (:func:`audit_splits`) under the encoder ``settings``.

    Raises:
        ConfigError: the spec is invalid.
        DataError: a file is missing or malformed.
    """
    spec = validate_spec(name, spec)
    raw, _, _ = read_raw(name, spec, data_dir, responses)
    return audit_splits(name, raw, max_sentences=settings.max_sentences, max_tokens=settings.max_tokens,
                        threshold=spec["near_duplicate_threshold"], wordpieces=wordpiece_counter(settings),
                        encoder=settings.name)


def summary(audit: DataAudit) -> str:
    """A few lines: per split its documents and duplicates, and what test shares with the others."""
    lines = [f"{audit.dataset}: audited (near-duplicates: Jaccard >= {audit.near_duplicate_threshold})"]
    for split in SPLITS:
        if split in audit.splits:
            s = audit.splits[split]
            lines.append(f"  {split:5s} {s['documents']:6d} docs, {s['duplicates']} exact duplicates, "
                         f"{s['cut_by_max_sentences']} cut by max_sentences, {s['over_max_tokens']} of "
                         f"{s['sentences_seen']} sentences over max_tokens")
    for pair, n in audit.shared.items():
        a, b = pair.split("_")
        lines.append(f"  {a} documents also in {b}: {n['exact']} exact, {n['near']} near-duplicates")
    return "\n".join(lines)


# --------------------------------------------------------------------------- the command


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "audit",
        help="what a dataset's splits hold and what test shares with train and dev (data_audit.json)",
        description=(
            "Read one dataset's splits as `prepare` reads them (before preparation) and write "
            "data_audit.json: per split documents, class balance, annotated documents, exact "
            "duplicates, sentences per document (median, 99th percentile, documents cut by "
            "encoder.max_sentences), sentences over encoder.max_tokens wordpieces; and the "
            "documents test shares with train and dev, exactly (case and whitespace normalised) "
            "or as MinHash near-duplicates at the dataset's near_duplicate_threshold."),
    )
    add_input(p, "--spec", help="JSON spec: {\"name\": ..., \"data_dir\": ..., **spec}")
    add_input(p, "--config", help="YAML config with data_dir and datasets (instead of --spec)")
    p.add_argument("--dataset", help="dataset name under `datasets` in --config")
    add_input(p, "--responses",
                   help="source: llm only: the responses file (default where `generate` writes it)")
    add_input(p, "--settings",
                   help="the dataset's settings.json: its encoder (tokenizer, max_tokens, max_sentences); "
                        "default: the encoder defaults")
    add_output(p, "--out", required=True, help="e.g. results/<dataset>/data_audit.json")
    p.set_defaults(func=run)


def _encoder_settings(path: Path | None) -> EncoderSettings:
    return EncoderSettings() if path is None else Settings.load(path).encoder


def run(args: argparse.Namespace) -> int:
    name, spec, data_dir = load_one_spec(args.spec, args.config, args.dataset, "audit")
    inputs = raw_inputs(name, validate_spec(name, spec), data_dir, args.responses)
    check_output("--out", args.out, "the audit", inputs | {"the settings": args.settings, "the spec": args.spec,
                                                            "the config": args.config})
    audit = audit_dataset(name, spec, data_dir, _encoder_settings(args.settings), responses=args.responses)
    audit.write(args.out)
    print(summary(audit))
    return 0
