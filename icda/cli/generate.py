"""``python -m icda generate``: ask a language model for the documents of a ``source: llm``
dataset (workflow rule ``generate``).

Writes the responses file (default ``results/<dataset>/generated/responses.jsonl``) once every
request has an answer; every attempt is appended to the dataset's cache first, so a killed run
resumes with the same command and asks only for what is missing
(:func:`icda.generate.run.generate`). ``python -m icda prepare`` then makes train/dev/test.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from icda.data.dataset_spec_files import load_specs


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "generate",
        help="generate an LLM dataset's raw responses (resumable, cached)",
        description=(
            "Ask the model in the dataset's llm.backend (an OpenAI-compatible server, or a local "
            "transformers model) for per_label responses per label to the llm.prompt, with "
            "retries and backoff; every attempt is cached, so a rerun asks only for what is "
            "missing. The API key, if any, is read from the environment variable named in "
            "llm.backend.api_key_env. The dataset comes from --spec (JSON {name, ...spec}, as the "
            "workflow writes it) or from --config and --dataset."
        ),
    )
    p.add_argument("--spec", type=Path, help="JSON spec: {\"name\": ..., **spec}")
    p.add_argument("--config", type=Path, help="YAML config with data_dir and datasets (instead of --spec)")
    p.add_argument("--dataset", help="dataset name under `datasets` in --config")
    p.add_argument("--out", type=Path, help="responses file (default results/<dataset>/generated/responses.jsonl)")
    p.add_argument("--cache", type=Path, help="cache file (default llm.cache or results/cache/llm/<dataset>.jsonl)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from icda.errors import ConfigError
    from icda.generate.run import generate

    if args.config is not None and args.dataset is None:
        raise ConfigError("--config needs --dataset NAME. Fix: name the dataset to generate")
    [(name, spec, _)] = load_specs(args.spec, args.config, [args.dataset] if args.config else None)
    report = generate(name, spec, args.out, cache=args.cache)
    print(summary(report))
    return 0


def summary(report: dict) -> str:
    """The counts per label, and the report as JSON."""
    lines = [f"{report['dataset']}: {report['model']}, {report['attempts']} attempts "
             f"({report['failed_attempts']} failed); cache {report['cache']}"]
    for label, c in report["labels"].items():
        lines.append(f"  label {label}: {c['requested']} requested, {c['cached']} from the cache, "
                     f"{c['generated']} generated, {c['failed']} failed")
    return "\n".join(lines + [json.dumps(report)])
