"""``python -m icda prepare``: read, prepare and write one dataset as JSONL (workflow rule ``prepare``).

Writes ``OUT_DIR/{train,dev,test}.jsonl`` and, last, ``OUT_DIR/stats.json``
(:func:`icda.steps.prepare.prepare_dataset`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from icda.steps.prepare import prepare_dataset
from icda.data.dataset_spec_files import load_specs
from icda.errors import ConfigError


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "prepare",
        help="read a dataset, deduplicate/filter/balance train and dev, write JSONL + stats",
        description=(
            "Read one dataset's train/dev/test files (or generate the synthetic one), deduplicate "
            "train and dev, drop documents with fewer than min_sentences sentences, balance the "
            "classes, carve dev out of train when dev is null, and write "
            "OUT_DIR/{train,dev,test}.jsonl and OUT_DIR/stats.json (paper appendix 'Data Details'). "
            "The dataset comes from --spec (JSON {name, data_dir, ...spec}, as the workflow writes "
            "it) or from --config and --dataset (a YAML config with data_dir and datasets)."
        ),
    )
    p.add_argument("--spec", type=Path, help="JSON spec: {\"name\": ..., \"data_dir\": ..., **spec}")
    p.add_argument("--config", type=Path, help="YAML config with data_dir and datasets (instead of --spec)")
    p.add_argument("--dataset", help="dataset name under `datasets` in --config")
    p.add_argument("--responses", type=Path,
                   help="source: llm only: the responses file (default where `generate` writes it)")
    p.add_argument("--out-dir", type=Path, required=True,
                   help="folder for train/dev/test.jsonl and stats.json")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.config is not None and args.dataset is None:
        raise ConfigError("--config needs --dataset NAME. Fix: name the dataset to prepare")
    [(name, spec, data_dir)] = load_specs(args.spec, args.config, [args.dataset] if args.config else None)
    stats = prepare_dataset(name, spec, data_dir, args.out_dir, responses=args.responses)
    print(summary(stats, args.out_dir))
    return 0


def summary(stats: dict, out_dir: Path) -> str:
    """A few lines: documents, labels and sentences per document of each split, ground truth."""
    lines = [f"{stats['dataset']}: prepared into {out_dir}"]
    for split, s in stats["splits"].items():
        labels = ", ".join(f"{k}: {v}" for k, v in s["labels"].items())
        dropped = stats["dropped"].get(split)
        steps = [f"{k} {v}" for k, v in (dropped or {}).items() if k != "read" and v]
        drop = "; dropped " + ", ".join(steps) if steps else ""
        lines.append(f"  {split:5s} {s['documents']:6d} docs (labels {labels}), "
                     f"{s['sentences_mean']:.2f} ± {s['sentences_sd']:.2f} sentences{drop}")
    gt = stats["test_ground_truth"]
    lines.append(f"  test ground truth: {gt['with_rationale']} of {stats['splits']['test']['documents']} "
                 f"documents have a rationale sentence ({gt['coverage']:.1%})")
    lines += [f"  warning: {w}" for w in stats["warnings"]]
    return "\n".join(lines)
