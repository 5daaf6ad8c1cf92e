"""Small file helpers: atomic writes, so that nothing half-written looks complete."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, TypeVar

T = TypeVar("T")


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` only on success."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; give the usual file mode
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


@contextlib.contextmanager
def atomic_write(path: str | Path, mode: str = "w") -> Iterator[Any]:
    """Open a temporary file for writing; it replaces ``path`` only if the block succeeds."""
    with atomic_path(path) as tmp:
        with open(tmp, mode, encoding=None if "b" in mode else "utf-8") as fh:
            yield fh


def write_json(obj: Any, path: str | Path) -> None:
    """Write ``obj`` as indented JSON, atomically."""
    with atomic_write(path) as fh:
        json.dump(obj, fh, indent=2, ensure_ascii=False)
        fh.write("\n")


def read_json(path: str | Path) -> Any:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def write_jsonl(objs: Iterable[Any], path: str | Path) -> None:
    """Write one JSON value a line, atomically."""
    with atomic_write(path) as fh:
        for obj in objs:
            fh.write(json.dumps(obj, ensure_ascii=False) + "\n")


def read_jsonl(path: str | Path, parse: Callable[[Any], T], what: str, fix: str, strict: bool = True) -> list[T]:
    """``parse`` of every non-blank line's JSON value, in file order.

    A line that is not JSON or that ``parse`` rejects (ValueError, KeyError, TypeError) raises
    :class:`~icda.errors.DataError` naming the file, the line, ``what`` the line should be and
    ``fix``; with ``strict=False`` it is skipped with a warning instead (e.g. the last line of an
    append-only cache cut by a kill).
    """
    import logging

    from icda.errors import DataError

    out = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                out.append(parse(json.loads(line)))
            except (ValueError, KeyError, TypeError) as exc:
                if strict:
                    raise DataError(path, lineno, f"not {what} ({exc})", fix) from exc
                logging.getLogger(__name__).warning("%s:%d: skipping a line that is not %s (%s)",
                                                    path, lineno, what, exc)
    return out


def read_json_file(path: str | Path, missing_fix: str, corrupt_fix: str) -> Any:
    """Parse a JSON file; NaN and Infinity are rejected (JSON has no such numbers).

    Raises:
        DataError: the file does not exist (the fix is ``missing_fix``), is not valid JSON
            (naming the line) or holds NaN/Infinity (the fix is ``corrupt_fix``).
    """
    from icda.errors import DataError

    def reject(name: str) -> float:
        raise ValueError(f"{name} is not a number JSON allows")

    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DataError(path, None, "file not found", missing_fix) from None
    try:
        return json.loads(text, parse_constant=reject)
    except json.JSONDecodeError as exc:
        raise DataError(path, exc.lineno, f"not valid JSON ({exc.msg})", corrupt_fix) from None
    except ValueError as exc:
        raise DataError(path, None, str(exc), corrupt_fix) from None


def read_yaml(path: str | Path, missing_fix: str) -> Any:
    """Parse a YAML file.

    Raises:
        DataError: the file does not exist (the fix is ``missing_fix``) or is not valid YAML
            (naming the line of the syntax error).
    """
    import yaml

    from icda.errors import DataError

    try:
        with open(path, encoding="utf-8") as fh:
            return yaml.safe_load(fh)
    except FileNotFoundError:
        raise DataError(path, None, "file not found", missing_fix) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise DataError(path, None if mark is None else mark.line + 1,
                        f"not valid YAML ({getattr(exc, 'problem', exc)})", "fix the YAML syntax") from None


def save_torch(obj: Any, path: str | Path) -> None:
    """``torch.save`` to ``path``, atomically."""
    import torch

    with atomic_path(path) as tmp:
        torch.save(obj, tmp)
