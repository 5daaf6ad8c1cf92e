"""Small file helpers: atomic writes, so that nothing half-written looks complete."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import stat
import sys
import tempfile
from pathlib import Path
from typing import IO, Any, Callable, Iterable, Iterator, Mapping, TypeVar

from icda.errors import ConfigError, DataError
from icda.guard import check_write

T = TypeVar("T")

#: the suffix of :func:`atomic_path`'s temporary file ``.<name>.<8 random characters>.tmp``
#: beside the file it writes
TMP_SUFFIX = ".tmp"
#: that temporary file's name (tempfile's random names are 8 of ``a-z0-9_``)
TMP_NAME = re.compile(r"\..+\.[a-z0-9_]{8}" + re.escape(TMP_SUFFIX), re.DOTALL)
#: the suffix of the folder a command writes whole before renaming it to its output folder
#: (``<out_dir>.partial``, :func:`icda.steps.train.train_candidates`)
PARTIAL_SUFFIX = ".partial"


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` only on success.

    Raises:
        OSError: the file cannot be written (a full disk, a file-size limit, a read-only file
            system, ...); one raised without a file name, by a write to the temporary file, gets
            ``path`` as its ``filename``, so that the command line can name the file.
        ConfigError: ``path`` is one of the running command's inputs or lies in an input folder
            (the output guard, :func:`icda.guard.check_write`).
    """
    check_write(path)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TMP_SUFFIX, dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; give the usual file mode
        os.replace(tmp, path)
    except OSError as exc:
        if exc.errno in WRITE_ERRORS and exc.filename in (None, tmp):
            raise OSError(exc.errno, exc.strerror, str(path)) from exc
        raise
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def stale_writes(root: str | Path) -> list[Path]:
    """What killed writers left under ``root``: :func:`atomic_path`'s temporary files
    (``.<name>.XXXXXXXX.tmp``) and ``<folder>.partial`` folders (:data:`PARTIAL_SUFFIX`), sorted;
    nothing else (a name that only ends in ``.tmp`` or ``.partial`` is not one of them unless it
    has that form and kind). Empty if ``root`` does not exist. Only meaningful while no command
    writes under ``root``: a running command's files have the same names."""
    found = []
    for parent, dirs, files in os.walk(root):
        found += [Path(parent, name) for name in files if TMP_NAME.fullmatch(name)]
        partial = [name for name in dirs if name.endswith(PARTIAL_SUFFIX) and len(name) > len(PARTIAL_SUFFIX)]
        found += [Path(parent, name) for name in partial]
        dirs[:] = [name for name in dirs if name not in partial]  # (removed whole, not walked)
    return sorted(found)


@contextlib.contextmanager
def atomic_write(path: str | Path, mode: str = "w") -> Iterator[Any]:
    """Open a temporary file for writing; it replaces ``path`` only if the block succeeds."""
    with atomic_path(path) as tmp:
        with open(tmp, mode, encoding=None if "b" in mode else "utf-8") as fh:
            yield fh


#: the names of this process's standard output as an output path
STDOUT_NAMES = ("-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1")


def _streamed(path: Path) -> bool:
    """Whether writing ``path`` must go through it rather than through a temporary file and a
    rename: a special file (a FIFO, a character device such as a terminal, a socket), or a path
    under /dev or /proc (a descriptor such as /dev/fd/3, whose file a rename would not reach)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:  # absent (or a dangling link): a new file
        return False
    return not stat.S_ISREG(mode) or Path(os.path.abspath(path)).parts[1:2] in (("dev",), ("proc",))


@contextlib.contextmanager
def open_output(path: str | Path) -> Iterator[IO[str]]:
    """A text stream to write a command's output file ``path`` (UTF-8):

    * ``-`` or /dev/stdout (:data:`STDOUT_NAMES`): standard output;
    * a FIFO, a character device, or a descriptor under /dev or /proc: opened and written
      through, appending (a rename would put a regular file in its place);
    * a symlink: its target, as below (the link stays);
    * any other path: written atomically (:func:`atomic_write`), replacing it only if the block
      succeeds.
    """
    if str(path) in STDOUT_NAMES:
        yield sys.stdout
        sys.stdout.flush()
        return
    path = Path(path)
    if _streamed(path):
        check_write(path)
        try:
            with open(path, "a", encoding="utf-8") as fh:
                yield fh
        except OSError as exc:  # e.g. /dev/full: the write fails on flushing, with no file name
            if exc.filename is None and exc.errno is not None:
                raise OSError(exc.errno, exc.strerror, str(path)) from exc
            raise
        return
    with atomic_write(os.path.realpath(path)) as fh:
        yield fh


def same_file(a: str | Path, b: str | Path) -> bool:
    """Whether ``a`` and ``b`` name one file: the same path once links and ``..`` are resolved,
    or two names (hard links) of one existing file."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist
        return False


def check_output(option: str, out: str | Path | None, what: str, inputs: Mapping[str, str | Path | None] = {},
                 folders: Mapping[str, str | Path | None] = {}) -> None:
    """The one guard of every command that writes a file: refuse, before anything is read or
    written, an output ``out`` (given as ``option``, holding ``what``, e.g. "the predictions")
    that would destroy what the command reads.

    Args:
        out: the output path; None or ``-`` (standard output) passes.
        inputs: {what it is (e.g. "the input file"): its path} (None entries and ``-`` skipped).
        folders: {what it is (e.g. "the model folder"): a folder nothing may be written into}.

    Raises:
        ConfigError: ``out`` is a folder; it is one of ``inputs`` (also through a link, a hard
            link or another spelling such as ``a/../b``: it would replace that file); or it lies
            inside one of ``folders`` (also as a hard link of a file in it), naming the option, the
            path, the clash and the fix.
    """
    if out is None or str(out) in STDOUT_NAMES:
        return
    out = Path(out)
    if out.is_dir():
        raise ConfigError(f"{option} {out}: is a folder, not a file. Fix: give the path of the file for {what}, "
                          f"e.g. {option} {out / 'out.json'}")
    for name, path in inputs.items():
        if path is not None and str(path) != "-" and same_file(out, path):
            raise ConfigError(f"{option} {out}: is {name} {path}: {what} would replace it. Fix: write {what} to "
                              f"another file, e.g. {option} {Path(path).with_name(Path(path).stem + '.out' + Path(path).suffix)}")
    real = Path(os.path.realpath(out))
    for name, folder in folders.items():
        if folder is None:
            continue
        root = Path(os.path.realpath(folder))
        inside = real == root or root in real.parents
        if not inside and root.is_dir():
            inside = any(same_file(out, f) for f in root.iterdir() if f.is_file())
        if inside:
            raise ConfigError(f"{option} {out}: lies inside {name} {folder}: {what} would replace or mix with "
                              f"its files. Fix: write {what} outside it, e.g. {option} "
                              f"{Path(folder).name}.{out.name}")


def check_output_dir(option: str, out_dir: str | Path | None, what: str,
                     inputs: Mapping[str, str | Path | None] = {}, folders: Mapping[str, str | Path | None] = {}) -> None:
    """:func:`check_output` for a command that writes (and first empties) a folder: refuse, before
    anything is read or written, an output folder ``out_dir`` that is or holds one of ``inputs``
    (files or folders, also through links: it would delete or mix with them), or that is, holds
    or lies inside one of ``folders`` (e.g. the prepared data folder, a candidate's folder).

    Raises:
        ConfigError: naming the option, both paths and the fix.
    """
    if out_dir is None:
        return
    real = Path(os.path.realpath(out_dir))
    for name, path in inputs.items():
        if path is None or str(path) == "-":
            continue
        target = Path(os.path.realpath(path))
        if target == real or real in target.parents:
            raise ConfigError(f"{option} {out_dir}: holds {name} {path}: writing {what} there would delete or "
                              f"replace it. Fix: give another folder, e.g. {option} {Path(out_dir).name}.out")
    for name, folder in folders.items():
        if folder is None:
            continue
        root = Path(os.path.realpath(folder))
        if root == real or root in real.parents or real in root.parents:
            raise ConfigError(f"{option} {out_dir}: is, holds or lies inside {name} {folder}: writing {what} "
                              f"there would replace or mix with its files. Fix: give a folder outside it, e.g. "
                              f"{option} {Path(folder).name}.{Path(out_dir).name}")


#: the errors of writing a file that say nothing about the data (:func:`atomic_path`)
WRITE_ERRORS = frozenset({errno.ENOSPC, errno.EFBIG, errno.EROFS, errno.EDQUOT, errno.EIO, errno.EACCES,
                          errno.EPERM})


def check_writable(option: str, out: str | Path | None) -> None:
    """Check, before a command does its work, that its output file ``out`` (given as ``option``)
    can be written: its folder, or the nearest one above it that exists (created on writing),
    is a folder in which a file can be created now. None, ``-`` and the special files
    :func:`open_output` writes through pass. A full disk or a file-size limit can still stop the
    write itself (the command line then names the file: ``error: <path>: <reason>``).

    Raises:
        ConfigError: a path above ``out`` is a file, not a folder; or no file can be created in
            its folder (a read-only file system, no permission), naming the option, the folder,
            the reason and the fix.
    """
    if out is None or str(out) in STDOUT_NAMES or _streamed(Path(out)):
        return
    out = Path(out)
    folder = Path(os.path.abspath(out)).parent
    while not folder.exists() and not folder.is_symlink():
        folder = folder.parent
    if not folder.is_dir():
        raise ConfigError(f"{option} {out}: {folder} is a file, not a folder, so nothing can be written below it. "
                          "Fix: give a path in a folder")
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise ConfigError(f"{option} {out}: cannot write in {folder} ({exc.strerror}). Fix: give a path in a "
                          "folder you can write to") from None


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
        DataError: the file does not exist (the fix is ``missing_fix``), is not UTF-8, is not
            valid JSON (naming the line) or holds NaN/Infinity (the fix is ``corrupt_fix``).
    """
    def reject(name: str) -> float:
        raise ValueError(f"{name} is not a number JSON allows")

    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DataError(path, None, "file not found", missing_fix) from None
    except UnicodeDecodeError as exc:
        raise DataError(path, None, f"not UTF-8 text (byte {exc.start})", corrupt_fix) from None
    try:
        return json.loads(text, parse_constant=reject)
    except json.JSONDecodeError as exc:
        raise DataError(path, exc.lineno, f"not valid JSON ({exc.msg})", corrupt_fix) from None
    except ValueError as exc:
        raise DataError(path, None, str(exc), corrupt_fix) from None


#: the most values a YAML file may expand to through its aliases: a config has a few thousand;
#: nested aliases (``&a [x, x]``, ``&b [*a, *a]``, ...) grow exponentially ("billion laughs")
MAX_YAML_VALUES = 100_000
#: the fix of a YAML file that expands to more than :data:`MAX_YAML_VALUES`
ALIAS_FIX = ("write the repeated values out, or nest fewer aliases (*name): a config needs a few "
             "thousand values at most")


def expanded_size(obj: Any, limit: int = MAX_YAML_VALUES) -> int:
    """The number of values (containers and scalars) of a loaded YAML/JSON value once every alias
    is expanded, i.e. a list or mapping counted at each place it appears, or ``limit + 1`` once it
    exceeds ``limit`` (also for a structure that contains itself).

    A YAML loader shares one object among the places an alias names it, so loading costs nothing;
    walking the value (validating, copying, writing it) costs the expanded size. This counts it
    in time proportional to the distinct objects (each is counted once and remembered).
    """
    known: dict[int, int] = {}
    open_: set[int] = set()

    def size(value: Any) -> int:
        if not isinstance(value, (dict, list)):
            return 1
        key = id(value)
        if key in known:
            return known[key]
        if key in open_:  # contains itself: infinite once expanded
            return limit + 1
        open_.add(key)
        total = 1
        for item in value.values() if isinstance(value, dict) else value:
            total += size(item)
            if total > limit:
                break
        open_.discard(key)
        known[key] = min(total, limit + 1)
        return known[key]

    return size(obj)


def _long_number_line(path: str | Path) -> int | None:
    """The line of ``path`` holding the first run of digits longer than Python reads, or None."""
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    found = re.search(rf"\d{{{sys.get_int_max_str_digits() + 1},}}", text)
    return None if found is None else text.count("\n", 0, found.start()) + 1


def read_yaml(path: str | Path, missing_fix: str) -> Any:
    """Parse a YAML file (safe loader), refusing one whose aliases expand it beyond
    :data:`MAX_YAML_VALUES` values (:func:`expanded_size`).

    Raises:
        DataError: the file does not exist (the fix is ``missing_fix``), is not valid YAML
            (naming the line of the syntax error), is not UTF-8, holds an integer of more digits
            than Python reads (4,300, naming its line), or expands to too many values.
    """
    import yaml

    try:
        with open(path, encoding="utf-8") as fh:
            data = yaml.safe_load(fh)
    except FileNotFoundError:
        raise DataError(path, None, "file not found", missing_fix) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise DataError(path, None if mark is None else mark.line + 1,
                        f"not valid YAML ({getattr(exc, 'problem', exc)})", "fix the YAML syntax") from None
    except UnicodeDecodeError as exc:
        raise DataError(path, None, f"not UTF-8 text ({exc.reason} at byte {exc.start})",
                        "convert the file to UTF-8") from None
    except ValueError:  # an integer beyond Python's 4,300 digits (the YAML loader's int())
        raise DataError(path, _long_number_line(path), f"a number has more than {sys.get_int_max_str_digits():,} "
                        "digits, more than Python reads", "write it with fewer digits") from None
    if expanded_size(data) > MAX_YAML_VALUES:
        raise DataError(path, None, f"its YAML aliases expand it to more than {MAX_YAML_VALUES:,} values",
                        ALIAS_FIX)
    return data


def save_torch(obj: Any, path: str | Path) -> None:
    """``torch.save`` to ``path``, atomically."""
    import torch

    with atomic_path(path) as tmp:
        torch.save(obj, tmp)
