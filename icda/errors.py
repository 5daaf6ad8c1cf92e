"""Errors raised on bad input: each names the file, the line (when there is one) and the fix;
and the secrets (API keys, URL passwords) kept out of messages, log lines and files (:func:`redact`)."""

from __future__ import annotations

import base64
import logging
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit


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


def import_extra(module: str, extra: str, purpose: str):
    """Import ``module``, a package of the optional extra ``extra`` of pyproject.toml (``llm``,
    ``slurm``), that ``purpose`` needs; the module.

    Raises:
        ConfigError: ``module`` is not installed; the message names the extra to install
            (``pip install 'icda[<extra>]'``, or ``scripts/install.sh``, which installs every extra
            the tests use).
    """
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ConfigError(f"{purpose} needs the Python package {module!r}, which is not installed ({exc}). "
                          f"Fix: pip install 'icda[{extra}]' (or `pip install -e '.[{extra}]'` in a clone; "
                          "scripts/install.sh installs it)") from None


def load_failure(exc: BaseException) -> str:
    """Why ``torch.load(..., weights_only=True)`` refused a file, in our words: torch's own message
    for an object it will not unpickle advises loading with ``weights_only=False``, which would run
    the file's code; that advice is not passed on."""
    text = str(exc)
    if "weights_only" in text or "Weights only load failed" in text or "Unsupported global" in text:
        return ("it holds Python objects beyond tensors and plain values, which icda never unpickles "
                "(unpickling can run code the file brings)")
    return (text.splitlines() or [type(exc).__name__])[0]


# --------------------------------------------------------------------------- secrets

#: what a secret is replaced with in log lines, error messages and recorded files
REDACTED = "***"
#: the secrets met so far (API keys, the user-info of URLs and the forms clients send them in)
_SECRETS: set[str] = set()
#: the user-info of a URL: ``scheme://user:password@`` (kept: the scheme and the ``@``)
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/?#@\s]+@")
#: secrets shorter than this are not replaced on their own (``a`` would garble every line); a URL's
#: user-info is replaced whatever its length
MIN_SECRET = 4


def add_secret(value: str | None) -> None:
    """Redact ``value`` (an API key) from what :func:`redact` and :class:`RedactingFilter` see."""
    if value and len(value) >= MIN_SECRET:
        _SECRETS.add(value)


def add_url_secrets(url: str | None) -> None:
    """Redact the user-info of ``url`` (``http://user:password@host/``): as written, decoded
    (``%40`` → ``@``), the password alone, and base64 of ``user:password`` as HTTP basic
    authentication sends it."""
    if not url:
        return
    netloc = urlsplit(url).netloc
    if "@" not in netloc:
        return
    userinfo = netloc.rpartition("@")[0]
    user, _, password = userinfo.partition(":")
    plain = f"{unquote(user)}:{unquote(password)}"
    for secret in (userinfo, unquote(userinfo), password, unquote(password), plain,
                   base64.b64encode(plain.encode("utf-8")).decode("ascii")):
        add_secret(secret)


def redact(text: str) -> str:
    """``text`` with every secret of :func:`add_secret` and :func:`add_url_secrets`, and the
    user-info of every URL, replaced by :data:`REDACTED`."""
    for secret in sorted(_SECRETS, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return _USERINFO.sub(rf"\g<1>{REDACTED}@", text)


class RedactingFilter(logging.Filter):
    """A logging filter that :func:`redact` s each record's message (and traceback)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # arguments that do not fit the format: the handler reports it, as without a filter
            return True
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        return True


_FILTER = RedactingFilter()


def redact_logs(*names: str) -> None:
    """Redact the records of the loggers ``names`` and their children (those that exist now), and
    of every handler of the root logger (idempotent)."""
    loggers = [logging.getLogger(name) for name in names]
    loggers += [logger for key, logger in list(logging.root.manager.loggerDict.items())
                if isinstance(logger, logging.Logger) and key.split(".")[0] in names]
    for target in [*loggers, *logging.getLogger().handlers]:
        target.addFilter(_FILTER)
