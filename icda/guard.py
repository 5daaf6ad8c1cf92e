"""The one output guard: every path argument of every command is declared an input or an output,
and no output may reach an input.

**The rule for a contributor adding a command** (``python -m icda``, ``scripts/*.py``,
``benchmarks/*.py``): declare each path argument with :func:`add_input` or :func:`add_output`,
never with a bare ``add_argument(..., type=Path)``. ``python -m icda`` (:func:`icda.cli.main`)
and :func:`parse_arguments` (the scripts' and benchmarks' mains) then check every declared
output against every declared input (:func:`check_arguments`) *before* the command runs, and
while it runs every atomic write (:func:`icda.io.atomic_path`: ``write_json``, ``write_jsonl``,
``atomic_write``, ``save_torch``, ``open_output``) is checked against the same inputs
(:func:`check_write`), so a command cannot write over what it reads even through a path it
derives. tests/test_output_guard_parser.py builds its cases from the parsers themselves: a path
argument left undeclared, or an output that reaches an input, fails it without anyone adding a
case.

What is refused (each as one :class:`~icda.errors.ConfigError` line naming both options, both
paths and the fix), with links (symbolic and hard), ``..`` and trailing slashes resolved:

* a file output that is an input file, lies inside an input folder, is a hard link of a file in
  one, is an existing folder, or is spelled as a folder (a trailing ``/``);
* a folder output that is an input file or folder or lies inside an input folder, and an owned
  folder output (one the command empties or writes wholly) that holds an input; an existing file
  given as a folder output;
* two file outputs that are one file.

Kinds: ``file``; ``folder`` (an input: nothing may be written into it; an output: the command
writes named files into it, none of which may replace an input); ``owned`` (an output folder the
command empties or writes wholly: it may not hold an input either); ``tree`` (an input folder the
command searches for named files, e.g. ``results/``: an output may lie inside it, but may not
be it or hold it).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from icda.errors import ConfigError

INPUT, OUTPUT = "input", "output"
FILE, FOLDER, OWNED, TREE = "file", "folder", "owned", "tree"
KINDS = (FILE, FOLDER, OWNED, TREE)
#: the names of standard input/output as a path argument: never checked
STD_NAMES = ("-", "/dev/stdout", "/dev/stdin", "/dev/fd/0", "/dev/fd/1", "/proc/self/fd/0", "/proc/self/fd/1")
#: at most this many files of an input folder are compared by inode with a file output
HARDLINK_SCAN = 5000


class ArgPath(type(Path())):
    """A path argument as given: a :class:`~pathlib.Path` that also keeps its spelling in
    ``given`` (Path drops a trailing ``/``, which says the user means a folder)."""

    def __new__(cls, *args: Any) -> "ArgPath":
        self = super().__new__(cls, *args)
        self.given = str(args[0]) if len(args) == 1 else str(self)
        return self


def _spelled(path: Path) -> str:
    return getattr(path, "given", str(path))


def _declare(container: Any, role: str, flags: Sequence[str], kind: str, when: Callable | None,
             reads_when: Callable | None, kwargs: dict) -> argparse.Action:
    if kind not in KINDS:
        raise ValueError(f"kind {kind!r}: one of {KINDS}")
    if kind == TREE and role == OUTPUT or kind == OWNED and role == INPUT:
        raise ValueError("an output is a file, a folder or an owned folder; an input a file, a folder or a tree")
    kwargs.setdefault("type", ArgPath)
    action = container.add_argument(*flags, **kwargs)
    action.icda_role = role
    action.icda_kind = kind
    action.icda_when = when
    action.icda_reads_when = reads_when
    return action


def add_input(parser: Any, *flags: str, kind: str = FILE, when: Callable[[argparse.Namespace], bool] | None = None,
              **kwargs: Any) -> argparse.Action:
    """``parser.add_argument(*flags, type=Path, **kwargs)``, declared an input of the command.

    Every path argument of a command must be declared with this or :func:`add_output` (the
    output guard, :mod:`icda.guard`, checks each output against each input before the command
    runs; tests/test_output_guard_parser.py fails on an undeclared one).

    Args:
        parser: a parser, an argument group or a mutually exclusive group.
        kind: ``file``, ``folder`` (nothing may be written into it) or ``tree`` (a folder searched
            for named files: outputs may lie inside it, not be it or hold it).
        when: a test of the parsed arguments; the declaration counts only where it holds
            (default: always).

    Returns:
        the argparse action.
    """
    return _declare(parser, INPUT, flags, kind, when, None, kwargs)


def add_output(parser: Any, *flags: str, kind: str = FILE, when: Callable[[argparse.Namespace], bool] | None = None,
               reads_when: Callable[[argparse.Namespace], bool] | None = None, **kwargs: Any) -> argparse.Action:
    """``parser.add_argument(*flags, type=Path, **kwargs)``, declared an output of the command:
    the output guard (:mod:`icda.guard`) refuses it, before the command runs, where it reaches one
    of the command's inputs.

    Args:
        parser: a parser, an argument group or a mutually exclusive group.
        kind: ``file``; ``folder`` (the command writes named files into it: it may hold inputs,
            which no write may replace); or ``owned`` (the command empties it or writes all of it,
            e.g. a prepared data folder or a model folder: it may hold no input either).
        when: a test of the parsed arguments; the declaration counts only where it holds (e.g.
            ``lambda a: a.collect`` for a folder only ``--collect`` writes).
        reads_when: a test of the parsed arguments under which the command reads this path
            instead of writing it (e.g. ``--check``, ``--score-only``): it is then an input.

    Returns:
        the argparse action.
    """
    return _declare(parser, OUTPUT, flags, kind, when, reads_when, kwargs)


def declared_inputs(parser: argparse.ArgumentParser, derive: Callable[[argparse.Namespace], dict]) -> None:
    """Declare the inputs a command derives from its arguments (e.g. the candidate folder a
    choice.json names, the raw files a prepared folder was made from): ``derive(args)`` returns
    {what it is: path or (path, kind)}; the guard checks every output against them too."""
    parser.set_defaults(icda_derived_inputs=derive)


def parsers_of(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[argparse.ArgumentParser]:
    """The parser and the sub-command parsers ``args`` went through (each sub-parsers action needs
    a ``dest``)."""
    chain = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            name = getattr(args, action.dest, None) if action.dest != argparse.SUPPRESS else None
            if name in action.choices:
                chain += parsers_of(action.choices[name], args)
    return chain


@dataclass(frozen=True)
class Declared:
    """One path a command reads or writes: ``option`` (e.g. ``--out``), its ``path``, its role and kind."""
    option: str
    path: Path
    role: str
    kind: str


def _values(value: Any) -> list[Path]:
    if value is None:
        return []
    values = value if isinstance(value, (list, tuple)) else [value]
    return [Path(v) if not isinstance(v, Path) else v for v in values
            if v is not None and str(v) not in STD_NAMES and str(v) != ""]


def declared_paths(parser: argparse.ArgumentParser, args: argparse.Namespace, derived: bool = True) -> list[Declared]:
    """Every declared path of the parsed ``args``: the arguments declared with :func:`add_input`
    and :func:`add_output` of the parsers ``args`` went through, and (``derived``) the inputs the
    command derives from them (:func:`declared_inputs`, which may read an input)."""
    return _declared(parser, args) + (_derived(parser, args) if derived else [])


def _declared(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[Declared]:
    out = []
    for p in parsers_of(parser, args):
        for action in p._actions:
            role = getattr(action, "icda_role", None)
            if role is None:
                continue
            when = action.icda_when
            if when is not None and not when(args):
                continue
            kind = action.icda_kind
            if role == OUTPUT and action.icda_reads_when is not None and action.icda_reads_when(args):
                # read instead of written: an input; a folder is then searched for named files
                role, kind = INPUT, TREE if kind in (FOLDER, OWNED) else kind
            option = max(action.option_strings, key=len) if action.option_strings else action.dest
            for path in _values(getattr(args, action.dest, None)):
                out.append(Declared(option, path, role, kind))
    return out


def _derived(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[Declared]:
    out = []
    derive = getattr(args, "icda_derived_inputs", None)
    if derive is not None:
        for name, value in derive(args).items():
            path, kind = value if isinstance(value, tuple) else (value, FILE)
            for v in _values(path):
                out.append(Declared(name, v, INPUT, kind))
    return out


def _named(d: Declared) -> str:
    """``--option path``, with the path it resolves to where a link or ``..`` makes them differ."""
    real = _real(d.path)
    return f"{d.option} {d.path}" + ("" if Path(os.path.abspath(d.path)) == real else f" (that is {real})")


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _inside(child: Path, root: Path) -> bool:
    return child == root or root in child.parents


def _inode(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _hard_link_in(out: Path, folder: Path) -> Path | None:
    """A file under ``folder`` that is ``out`` through a hard link, or None (``out`` missing or
    with one name only)."""
    try:
        st = os.stat(out)
    except OSError:
        return None
    if st.st_nlink < 2:
        return None
    seen = 0
    for base, _, files in os.walk(folder):
        for name in files:
            seen += 1
            if seen > HARDLINK_SCAN:
                return None
            f = Path(base) / name
            if _inode(f) == (st.st_dev, st.st_ino):
                return f
    return None


def _fix(out: Declared, inp: Declared | None = None) -> str:
    """The fix of a refused output: a path beside the input's folder, not in it."""
    name = out.path.name or "out"
    if inp is None or inp.kind == FILE and out.kind == FILE:
        example = out.path.parent / f"new.{name}"
    else:
        outside = Path(os.path.normpath(inp.path if inp.kind != FILE else inp.path.parent)).parent
        example = outside / f"new.{name}"
    return f"Fix: give {out.option} a path outside every input, e.g. {out.option} {example}"


def check_paths(paths: Sequence[Declared]) -> None:
    """Refuse an output of ``paths`` that reaches one of its inputs (the rules: :mod:`icda.guard`).

    Raises:
        ConfigError: one line naming the output's option and path, the input's, the clash and
            the fix.
    """
    inputs = [p for p in paths if p.role == INPUT]
    outputs = [p for p in paths if p.role == OUTPUT]
    for out in outputs:
        real = _real(out.path)
        spelled_as_folder = _spelled(out.path).endswith(("/", os.sep))
        if out.kind == FILE:
            if spelled_as_folder or out.path.is_dir():
                what = "is a folder" if out.path.is_dir() else "ends in /, so it names a folder"
                raise ConfigError(f"{out.option} {out.path}: {what}, not a file. Fix: give the path of a file, "
                                  f"e.g. {out.option} {Path(out.path) / 'out.json'}")
        elif out.path.exists() and not out.path.is_dir():
            raise ConfigError(f"{out.option} {out.path}: is a file, not a folder. Fix: give a folder (it is created "
                              "when missing), or move the file away")
        for inp in inputs:
            target = _real(inp.path)
            clash = None
            if out.kind == FILE:
                if inp.kind == FILE:
                    if real == target or (_inode(out.path) is not None and _inode(out.path) == _inode(inp.path)):
                        clash = f"is the input {_named(inp)}: it would be replaced"
                elif inp.kind == FOLDER:
                    if _inside(real, target):
                        clash = f"lies inside the input folder {_named(inp)}: its files would be replaced or mixed with"
                    elif target.is_dir() and (link := _hard_link_in(out.path, target)) is not None:
                        clash = f"is {link} of the input folder {_named(inp)} (a hard link): it would be replaced"
                elif real == target:
                    clash = f"is the input folder {_named(inp)}"
            else:
                if real == target:
                    clash = f"is the input {_named(inp)}: writing the folder would replace or mix with it"
                elif _inside(target, real) and (out.kind == OWNED or inp.kind == TREE):
                    clash = (f"holds the input {_named(inp)}: writing the folder would delete, replace or mix "
                             "with it")
                elif inp.kind == FOLDER and _inside(real, target):
                    clash = f"lies inside the input folder {_named(inp)}: its files would be mixed with"
            if clash:
                raise ConfigError(f"{out.option} {out.path}: {clash}. {_fix(out, inp)}")
    files = [o for o in outputs if o.kind == FILE]
    for i, a in enumerate(files):
        for b in files[i + 1:]:
            if _real(a.path) == _real(b.path):
                raise ConfigError(f"{b.option} {b.path}: is also {a.option} {a.path}: one output would replace the "
                                  f"other. Fix: give {b.option} another file")


def check_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[Declared]:
    """:func:`check_paths` of the declared paths of ``args`` (:func:`declared_paths`); returns them."""
    paths = _declared(parser, args)
    check_paths(paths)  # the arguments first: a derived input may need to read an input
    paths += _derived(parser, args)
    check_paths(paths)
    return paths


# --------------------------------------------------------------------------- while the command runs

_ACTIVE: list[list[tuple[Declared, Path, tuple[int, int] | None]]] = []


@contextlib.contextmanager
def guarding(paths: Sequence[Declared]) -> Iterator[None]:
    """While the block runs, :func:`check_write` refuses a write onto one of the input ``paths``."""
    inputs = [(p, _real(p.path), _inode(p.path) if p.kind == FILE else None)
              for p in paths if p.role == INPUT and p.kind != TREE]
    _ACTIVE.append(inputs)
    try:
        yield
    finally:
        _ACTIVE.pop()


def check_write(path: str | Path) -> None:
    """Refuse a write of ``path`` onto an input of the running command (:func:`guarding`): an
    input file (also through a link) or a path inside an input folder. Called by
    :func:`icda.io.atomic_path`, through which every file is written.

    Raises:
        ConfigError: naming the file, the input and the fix.
    """
    if not _ACTIVE or str(path) in STD_NAMES:
        return
    real = _real(Path(path))
    node = _inode(Path(path))
    for inp, target, target_node in _ACTIVE[-1]:
        if (real == target or (node is not None and node == target_node)
                or (inp.kind == FOLDER and _inside(real, target))):
            raise ConfigError(f"{path}: the command would write over its input {_named(inp)}. Fix: give "
                              "its outputs paths outside its inputs")


def parse_arguments(parser: argparse.ArgumentParser, argv: Sequence[str] | None = None,
                    prog: str | None = None) -> argparse.Namespace:
    """``parser.parse_args(argv)``, then the output guard (:func:`check_arguments`): the first call
    of every script's and benchmark's ``main``. A refused output ends the process with one line
    ``<prog>: error: ...`` and exit status 2, before anything is read or written."""
    args = parser.parse_args(argv)
    try:
        check_arguments(parser, args)
    except ConfigError as exc:
        print(f"{prog or parser.prog}: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    return args
