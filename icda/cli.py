"""``python -m icda <command>``: one command for each workflow step.

This module only lists the commands: :data:`COMMANDS` maps each to the one module that holds
it: its step function, its sub-command's arguments (``register(subparsers)``, which adds the
sub-command and sets ``func``, called with the parsed arguments and returning an exit code or
None) and the glue between the two (:mod:`icda.steps` lists them).

Every path argument of a command is declared an input or an output
(:func:`icda.guard.add_input`, :func:`icda.guard.add_output`, never a bare
``add_argument(..., type=Path)``): :func:`main` refuses an output that reaches an input before
the command runs (:mod:`icda.guard`); tests/test_output_guard_parser.py checks every command
this parser holds.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from icda.errors import IcdaError, redact, redact_logs
from icda.guard import check_arguments, guarding

#: command → the module that holds it, in the order ``--help`` lists them (a key's ``_`` is the
#: command's ``-``: ``config_reference`` is the command ``config-reference``)
COMMANDS = {
    "generate": "icda.generate.run",
    "prepare": "icda.steps.prepare",
    "audit": "icda.steps.audit",
    "download": "icda.steps.download",
    "embed": "icda.steps.embed",
    "train": "icda.steps.train",
    "evaluate": "icda.steps.evaluate",
    "select": "icda.steps.select",
    "pools": "icda.steps.pools",
    "augment": "icda.steps.augment",
    "converge": "icda.steps.converge",
    "verdict": "icda.steps.verdict",
    "finalize": "icda.steps.finalize",
    "predict": "icda.steps.predict",
    "export_eraser": "icda.steps.eraser",
    "report": "icda.steps.report",
    "theory": "icda.steps.theory",
    "prune_models": "icda.steps.prune",
    "sweep": "icda.sweep",
    "config_reference": "icda.config_reference",
}


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
            module = importlib.import_module(COMMANDS[name])
        except ModuleNotFoundError as exc:
            if exc.name != COMMANDS[name]:
                raise
            continue
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    command = next((a for a in argv if not a.startswith("-")), "").replace("-", "_")
    parser = build_parser(command if command in COMMANDS else None)
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        datefmt="%H:%M:%S",
    )
    redact_logs()  # no URL's user-info (http://user:password@host/) in any log line
    try:
        # the output guard (icda/guard.py): every declared output against every declared input,
        # before the command runs; and every write while it runs
        paths = check_arguments(parser, args)
        with guarding(paths):
            return args.func(args) or 0
    except IcdaError as exc:
        print(f"error: {redact(str(exc))}", file=sys.stderr)
        return 2
    except OSError as exc:  # the system's answer (a full disk, a read-only file system, ...): one line
        where = exc.filename2 or exc.filename
        reason = exc.strerror or str(exc)
        print(redact(f"error: {where}: {reason}" if where is not None else f"error: {reason}"), file=sys.stderr)
        return 1
