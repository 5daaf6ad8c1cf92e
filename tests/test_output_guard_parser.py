"""the output guard, proved from the command lines themselves.

Every sub-command of ``python -m icda`` (walked from :func:`icda.cli.build_parser`, not from a
list), every ``scripts/*.py`` and every ``benchmarks/*.py`` (their ``build_parser()``) is read;
every path argument must be declared an input or an output (:func:`icda.guard.add_input`,
:func:`icda.guard.add_output`). For each (command, output, input) the command is run in-process
with the output pointed at the input, at the folder holding it, through a symbolic link, through
a hard link and through a ``..`` spelling: it must stop with one line (exit 2) before its step
runs, naming the output's option, and leave every input byte for byte. A new command, or a new
output of an old one, is covered without anyone adding a case here.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

import pytest

from icda import cli
from toy_workflow import load_script

from icda.guard import FILE, FOLDER, INPUT, OUTPUT, OWNED, TREE, ArgPath, declared_paths

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = sorted([*REPO.glob("scripts/*.py"), *REPO.glob("benchmarks/*.py")])


def _load(path: Path):
    return load_script(path, f"_guard_{path.parent.name}_{path.stem}")


def _leaves(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()):
    """(the words that name a sub-command, its parser) for every leaf sub-command."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield prefix, parser
        return
    for action in subs:
        for name, sub in action.choices.items():
            yield from _leaves(sub, prefix + (name,))


def _programs():
    """(id, kind, parser builder, argv prefix) of every command line."""
    out = []
    for words, _ in _leaves(cli.build_parser()):
        out.append((" ".join(words), "icda", list(words)))
    for path in SCRIPTS:
        out.append((str(path.relative_to(REPO)), "script", []))
    return out


def _parser(program: str, kind: str) -> argparse.ArgumentParser:
    if kind == "icda":
        parser = cli.build_parser(program.split()[0].replace("-", "_"))
        for words, leaf in _leaves(parser):
            if " ".join(words) == program:
                return leaf
        raise AssertionError(program)
    return _load(REPO / program).build_parser()


PATH_NAME = re.compile(r"(^|[-_])(out|dir|file|path|cache|folder|results|runs|configfile|repo|keep|into|page)($|[-_])")


def _is_path(action: argparse.Action) -> bool:
    """Whether an argument takes a path: typed Path, or named like one (--out, --*-dir, ...)."""
    if isinstance(action, (argparse._HelpAction, argparse._StoreTrueAction, argparse._StoreFalseAction,
                           argparse._StoreConstAction, argparse._SubParsersAction, argparse._VersionAction)):
        return False
    if action.type in (Path, ArgPath):
        return True
    if action.type not in (None, str) or action.choices:
        return False
    names = [o.lstrip("-") for o in action.option_strings] or [action.dest]
    return any(PATH_NAME.search(n) for n in names)


@pytest.mark.parametrize("program, kind", [(p, k) for p, k, _ in _programs()])
def test_every_path_argument_is_declared_an_input_or_an_output(program, kind):
    """A path argument added with a bare add_argument(type=Path) (or named --out, --*-dir, ...)
    bypasses the guard: declare it with icda.guard.add_input or add_output."""
    parser = _parser(program, kind)
    undeclared = [max(a.option_strings, key=len, default=a.dest) for a in parser._actions
                  if _is_path(a) and getattr(a, "icda_role", None) is None]
    assert not undeclared, (f"{program}: {undeclared} take a path but are declared neither input nor output: "
                            "use icda.guard.add_input/add_output")


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_script_main_parses_through_the_guard(path):
    """Each script's and benchmark's main parses with icda.guard.parse_arguments(build_parser(), argv)."""
    source = path.read_text(encoding="utf-8")
    assert "def build_parser(" in source and re.search(r"parse_arguments\((build_parser\(\)|parser)", source), \
        f"{path.name}: main must call icda.guard.parse_arguments(build_parser(), argv)"


# --------------------------------------------------------------------------- the cases


def _mutex(parser: argparse.ArgumentParser) -> dict[argparse.Action, argparse._MutuallyExclusiveGroup]:
    return {a: g for g in parser._mutually_exclusive_groups for a in g._group_actions}


def _flag(action: argparse.Action) -> str | None:
    return max(action.option_strings, key=len) if action.option_strings else None


def _cases():
    cases = []
    for program, kind, _ in _programs():
        parser = _parser(program, kind)
        mutex = _mutex(parser)
        declared = [a for a in parser._actions if getattr(a, "icda_role", None)]
        for out in (a for a in declared if a.icda_role == OUTPUT):
            for inp in declared:
                if inp is out or (out in mutex and mutex.get(inp) is mutex[out]):
                    continue
                if inp.icda_role == OUTPUT and inp.icda_reads_when is None:
                    continue  # outputs against each other: test_two_outputs_that_are_one_file
                cases.append(pytest.param(program, kind, out.dest, inp.dest,
                                          id=f"{program}:{_flag(out) or out.dest}<-{_flag(inp) or inp.dest}"))
    return cases


CASES = _cases()


def _value(action: argparse.Action) -> str:
    if action.choices:
        return str(next(iter(action.choices)))
    if action.type in (int, float):
        return "1"
    if action.metavar == "NAME=SEED":
        return "a=1"
    return "x"


def _make_input(root: Path, action: argparse.Action) -> Path:
    """An existing input for ``action``: a file, or a folder holding one."""
    path = root / f"in_{action.dest}"
    path.mkdir(exist_ok=True)
    (path / "input.json").write_text('{"input": "%s"}\n' % action.dest)
    return path / "input.json" if action.icda_kind == FILE else path


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
            and not p.is_symlink()}


def _argv(parser, program_words, out, inp, out_value, inp_value, root):
    """A command line with every required argument, ``out`` = ``out_value``, ``inp`` = ``inp_value``."""
    mutex = _mutex(parser)
    argv, given = list(program_words), {out, inp}
    for action in parser._actions:
        if action in given or action.option_strings and not action.required:
            if not (action in mutex and mutex[action].required and action is mutex[action]._group_actions[0]
                    and not any(a in given for a in mutex[action]._group_actions)):
                continue
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)) or action in given:
            continue
        if not action.option_strings and action.nargs == "?":
            continue
        if getattr(action, "icda_role", None) == INPUT:
            value = str(_make_input(root, action))
        elif getattr(action, "icda_role", None) == OUTPUT:
            value = str(root / "outs" / f"fresh_{action.dest}")
        else:
            value = _value(action)
        argv += ([_flag(action)] if action.option_strings else []) + [value]
    for action, value in ((inp, inp_value), (out, out_value)):
        argv += ([_flag(action)] if action.option_strings else []) + [value]
    return argv


def _kind(action: argparse.Action) -> str:
    """The kind of ``action`` as an input (an output folder read under ``reads_when`` is searched: a tree)."""
    return TREE if action.icda_role == OUTPUT and action.icda_kind in (FOLDER, OWNED) else action.icda_kind


def _variants(out: argparse.Action, inp: argparse.Action, target: Path, root: Path) -> dict[str, str]:
    """The output's spellings that reach the input ``target``: the path itself (for a file
    output and a folder input: a file inside it), the folder holding it, a symbolic link, a
    hard link and a ``..`` detour."""
    direct = target / "input.json" if out.icda_kind == FILE and _kind(inp) == FOLDER else target
    if out.icda_kind == OWNED and target.is_file():
        direct = target.parent  # an owned folder output holding the input file
    variants = {"direct": str(direct), "holding folder": str(target.parent) + "/",
                "dotdot": str(direct.parent / "sub" / ".." / direct.name)}
    if out.icda_kind == FOLDER and _kind(inp) != TREE:
        # a folder the command writes named files into may hold inputs (each write is checked
        # while it runs: test_a_write_onto_an_input_while_a_command_runs_is_refused)
        variants.pop("holding folder")
    (direct.parent / "sub").mkdir(exist_ok=True)
    link = root / "links" / "symlink"
    link.parent.mkdir(exist_ok=True)
    link.symlink_to(direct)
    variants["symlink"] = str(link)
    if direct.is_file():
        hard = root / "links" / "hardlink"
        os.link(direct, hard)
        variants["hard link"] = str(hard)
    elif _kind(inp) == FOLDER and out.icda_kind == FILE:
        hard = root / "links" / "hardlink"
        os.link(target / "input.json", hard)
        variants["hard link"] = str(hard)
    if _kind(inp) == TREE and out.icda_kind == FILE:
        variants.pop("direct"), variants.pop("dotdot")  # a file inside a searched tree is allowed
        variants["tree itself"] = str(target)
    return variants


def _activate(parser, argv_of):
    """The command line, with the store_true flags that make the two declarations count (``when``)."""
    flags = [a for a in parser._actions if isinstance(a, argparse._StoreTrueAction)]
    for extra in [[]] + [[_flag(f)] for f in flags]:
        yield argv_of(extra)


@pytest.mark.parametrize("program, kind, out_dest, inp_dest", CASES)
def test_an_output_pointed_at_an_input_stops_with_one_line(program, kind, out_dest, inp_dest, tmp_path, monkeypatch,
                                                          capsys):
    parser = _parser(program, kind)
    actions = {a.dest: a for a in parser._actions}
    out, inp = actions[out_dest], actions[inp_dest]
    words = program.split() if kind == "icda" else []
    for name, spelled in _variants(out, inp, _make_input(tmp_path, inp), tmp_path).items():
        before = _snapshot(tmp_path)
        for argv in _activate(parser, lambda extra: _argv(parser, words, out, inp, spelled,
                                                          str(tmp_path / f"in_{inp.dest}" / "input.json")
                                                          if inp.icda_kind == FILE else str(tmp_path / f"in_{inp.dest}"),
                                                          tmp_path) + extra):
            args = parser.parse_args(argv[len(words):])
            roles = {(d.option, d.role) for d in declared_paths(parser, args, derived=False)}
            if {(_flag(out) or out.dest, OUTPUT), (_flag(inp) or inp.dest, INPUT)} <= roles:
                break
        else:
            pytest.skip(f"no command line makes {out_dest} an output and {inp_dest} an input")
        before = _snapshot(tmp_path)
        code, err = _run(kind, program, argv, monkeypatch, capsys)
        assert code == 2, f"{name}: {argv} exited {code}: {err}"
        assert err.count("\n") == 0 and "Traceback" not in err, f"{name}: {err}"
        assert (_flag(out) or out.dest) in err and "Fix:" in err, f"{name}: {err}"
        assert _snapshot(tmp_path) == before, f"{name}: an input changed"


def _run(kind, program, argv, monkeypatch, capsys):
    if kind == "icda":
        build = cli.build_parser

        def guarded_build(only=None):
            parser = build(only)
            for _, leaf in _leaves(parser):
                leaf.set_defaults(func=_must_not_run)
            return parser

        monkeypatch.setattr(cli, "build_parser", guarded_build)
        code = cli.main(argv)
    else:
        from icda.guard import parse_arguments

        try:
            parse_arguments(_load(REPO / program).build_parser(), argv)
            code = 0
        except SystemExit as exc:
            code = exc.code
    return code, capsys.readouterr().err.strip()


def _must_not_run(args):
    raise AssertionError("the command ran: the guard let an output reach an input")


def test_the_case_count_is_large(request):
    """Every command with an output has its cases (the count the closing note reports)."""
    programs = {c.values[0] for c in CASES}
    assert len(CASES) > 100 and {"pools", "augment", "converge", "train", "report viewer", "generate",
                                 "export-eraser", "predict"} <= programs


def test_two_outputs_that_are_one_file(tmp_path, capsys):
    spec = tmp_path / "spec.json"
    spec.write_text("{}")
    assert cli.main(["generate", "--spec", str(spec), "--out", str(tmp_path / "r.jsonl"),
                     "--cache", str(tmp_path / "r.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "--cache" in err and "is also --out" in err


def test_a_write_onto_an_input_while_a_command_runs_is_refused(tmp_path):
    """The second half of the guard: every atomic write checks the running command's inputs."""
    from icda.errors import ConfigError
    from icda.guard import Declared, guarding
    from icda.io import write_json

    data = tmp_path / "data"
    data.mkdir()
    (data / "train.jsonl").write_text("keep\n")
    with guarding([Declared("--data-dir", data, INPUT, FOLDER)]):
        with pytest.raises(ConfigError, match="would write over its input --data-dir"):
            write_json({}, data / "train.jsonl")
        write_json({}, tmp_path / "elsewhere.json")
    assert (data / "train.jsonl").read_text() == "keep\n"
    write_json({}, data / "other.json")  # no command running: no inputs
