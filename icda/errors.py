"""Errors raised on bad input: each names the file, the line (when there is one) and the fix."""

from __future__ import annotations

from pathlib import Path


class IcdaError(Exception):
    """Base class of the errors icda raises for bad input or bad configuration."""


class DataError(IcdaError):
    """A data file is missing or malformed.

    The message reads ``<path>:<line>: <what is wrong>. Fix: <fix>`` (``:<line>`` only when the
    problem is on one line; lines count from 1).
    """

    def __init__(self, path: str | Path, line: int | None, problem: str, fix: str):
        self.path, self.line, self.problem, self.fix = str(path), line, problem, fix
        where = self.path if line is None else f"{self.path}:{line}"
        super().__init__(f"{where}: {problem}. Fix: {fix}")


class ConfigError(IcdaError):
    """A configuration value is invalid; the message names the key and the fix."""


def rebuild_fix(path: str | Path, command: str) -> str:
    """The fix for a corrupt workflow file at ``path``, written by ``python -m icda <command>``."""
    return (f"delete it and rebuild it with `snakemake --cores 1 --forcerun {path}` (reruns the job "
            f"that writes it and every job after it), or rerun `python -m icda {command}`")
