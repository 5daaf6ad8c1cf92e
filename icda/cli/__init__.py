"""``python -m icda <command>``: one command for each workflow step.

Each module in :mod:`icda.cli` defines ``register(subparsers)``, which adds its sub-command and
sets ``func`` (called with the parsed arguments; returns an exit code or None).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from icda.errors import IcdaError

#: sub-command modules, in the order ``--help`` lists them (``config_reference`` is the command
#: ``config-reference``)
COMMANDS = [
    "generate", "prepare", "download", "embed", "train", "evaluate",
    "select", "pools", "augment", "converge", "finalize", "predict", "export_eraser", "report", "theory", "sweep",
    "config_reference",
]


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser with every sub-command, or with just ``only`` (each command module imports
    what it needs at registration, so a workflow job pays only for its own command)."""
    parser = argparse.ArgumentParser(
        prog="python -m icda",
        description="Iterative Counterfactual Data Augmentation (ICDA): workflow steps.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in [only] if only else COMMANDS:
        try:
            module = importlib.import_module(f"icda.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"icda.cli.{name}":
                raise
            continue
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    command = next((a for a in argv if not a.startswith("-")), "").replace("-", "_")
    args = build_parser(command if command in COMMANDS else None).parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        datefmt="%H:%M:%S",
    )
    out_dir = getattr(args, "out_dir", None)
    if out_dir is not None and out_dir.exists() and not out_dir.is_dir():
        print(f"error: --out-dir {out_dir}: is a file, not a folder. Fix: give a folder (it is created "
              "when missing), or move the file away", file=sys.stderr)
        return 2
    try:
        return args.func(args) or 0
    except IcdaError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
