"""scripts/results_page.py and the command lines of scripts/ and benchmarks/ against hostile input:
--collect never destroys or misfiles what it collects (the collected copy as its own
source, ``.``, ``..``), a source that matches no run is an error, the page and provenance.yaml are
written atomically, unpaired markers are refused, every value is escaped (a second run changes
nothing, a property test with random values), a run with an empty cell and malformed CSV files are
refused in one line naming the file and the column; final_selector.py never writes over its input
and refuses a path that matches no run; every script's --help exits 0 without doing anything."""

from __future__ import annotations

import contextlib
import csv
import importlib.util
import io
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
import yaml
from hypothesis import given, strategies as st

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "fixtures" / "results_page"


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


results_page = _load(REPO / "scripts" / "results_page.py", "results_page_guard")

PAGE = "".join(f"## {name}\n\nprose before {name}\n\n<!-- generated: {name} -->\nold\n<!-- /generated -->\n\nprose after\n"
               for name in results_page.BLOCKS)


@pytest.fixture
def inputs(tmp_path) -> Path:
    """A copy of the fixture inputs (offline/, robustness/main, robustness/location, provenance.yaml)
    at tmp/docs, the page at tmp/page.md."""
    shutil.copytree(FIXTURE, tmp_path / "docs")
    (tmp_path / "page.md").write_text(PAGE, encoding="utf-8")
    return tmp_path / "docs"


def _args(docs: Path, *extra: str) -> list[str]:
    """results_page.py's arguments: the inputs under ``docs``, the page beside it."""
    return ["--offline", str(docs / "offline"), "--robustness", str(docs / "robustness" / "main"),
            str(docs / "robustness" / "location"), "--provenance", str(docs / "provenance.yaml"),
            "--page", str(docs.parent / "page.md"), *extra]


def _collect(docs: Path, *sources: str) -> list[str]:
    return ["--collect", *sources, "--into", str(docs), "--provenance", str(docs / "provenance.yaml"),
            "--page", str(docs.parent / "page.md")]


def _files(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (the page included): {path: content}."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _main(argv: list[str]) -> int:
    """results_page.py's exit status: its main's return value, or the status the output guard
    (icda.guard.parse_arguments) or argparse exits with."""
    try:
        return results_page.main(argv)
    except SystemExit as exc:
        return exc.code


def _one_line(err: str, *names) -> str:
    """The error: one line (no traceback) holding each of ``names``."""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    for name in names:
        assert str(name) in lines[0], (name, lines[0])
    return lines[0]


# --------------------------------------------------------------------------- 1: --collect's sources


@pytest.mark.parametrize("spelling", ["plain", "dotdot", "link"])
def test_collect_refuses_the_collected_copy_as_its_offline_source(inputs, tmp_path, capsys, spelling):
    source = {"plain": inputs / "offline", "dotdot": inputs / "offline" / ".." / "offline",
              "link": tmp_path / "tables"}[spelling]
    if spelling == "link":
        source.symlink_to(inputs / "offline")
    before = _files(tmp_path)
    assert _main(_collect(inputs, "--offline", str(source))) == 2
    _one_line(capsys.readouterr().err, f"--offline {source}", inputs / "offline")
    assert _files(tmp_path) == before  # the CSVs, the filled-in provenance and the page as they were


@pytest.mark.parametrize("spelling", [".", ".."])
def test_collect_refuses_a_robustness_folder_without_a_name_of_its_own(inputs, tmp_path, capsys, monkeypatch, spelling):
    bench = tmp_path / "bench" / "main_200"
    shutil.copytree(FIXTURE / "robustness" / "main", bench)
    (bench / "sub").mkdir()
    monkeypatch.chdir(bench if spelling == "." else bench / "sub")
    before = _files(tmp_path)
    assert _main(_collect(inputs, "--robustness", spelling)) == 2
    line = _one_line(capsys.readouterr().err, f"--robustness {spelling}:", inputs / "robustness")
    assert "main_200" in line  # the fix: the folder by its name
    assert _files(tmp_path) == before


@pytest.mark.parametrize("spelling", ["the copy", "a hard link"])
def test_collect_refuses_the_collected_robustness_folder(inputs, tmp_path, capsys, spelling):
    source = inputs / "robustness" / "main"
    if spelling == "a hard link":
        source = tmp_path / "bench" / "main"
        source.mkdir(parents=True)
        os.link(inputs / "robustness" / "main" / "runs.csv", source / "runs.csv")
    before = _files(tmp_path)
    assert _main(_collect(inputs, "--robustness", str(source))) == 2
    _one_line(capsys.readouterr().err, f"--robustness {source}", inputs / "robustness" / "main")
    assert _files(tmp_path) == before


def test_collect_refuses_two_robustness_folders_of_one_name(inputs, tmp_path, capsys):
    for parent in ("a", "b"):
        shutil.copytree(FIXTURE / "robustness" / "main", tmp_path / parent / "main")
    before = _files(tmp_path)
    assert _main(_collect(inputs, "--robustness", str(tmp_path / "a" / "main"), str(tmp_path / "b" / "main"))) == 2
    _one_line(capsys.readouterr().err, tmp_path / "a" / "main", tmp_path / "b" / "main")
    assert _files(tmp_path) == before


def _header_only(path: Path) -> None:
    path.write_text(path.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")


@pytest.mark.parametrize("case", ["collect a folder without runs.csv", "collect a header-only runs.csv",
                                  "collect a header-only all_results.csv", "an --offline folder that is not there",
                                  "a header-only runs.csv"])
def test_a_source_that_matches_no_run_is_an_error(inputs, tmp_path, capsys, case):
    bench = tmp_path / "bench"
    shutil.copytree(FIXTURE, bench)
    if case == "collect a folder without runs.csv":
        (bench / "robustness" / "main" / "runs.csv").unlink()
        source, args = bench / "robustness" / "main", _collect(inputs, "--robustness", str(bench / "robustness" / "main"))
    elif case == "collect a header-only runs.csv":
        _header_only(bench / "robustness" / "main" / "runs.csv")
        source, args = bench / "robustness" / "main", _collect(inputs, "--robustness", str(bench / "robustness" / "main"))
    elif case == "collect a header-only all_results.csv":
        _header_only(bench / "offline" / "all_results.csv")
        source, args = bench / "offline", _collect(inputs, "--offline", str(bench / "offline"))
    elif case == "an --offline folder that is not there":
        source = tmp_path / "nothing"
        args = _args(inputs)
        args[args.index("--offline") + 1] = str(source)
    else:
        _header_only(inputs / "robustness" / "main" / "runs.csv")
        source, args = inputs / "robustness" / "main", _args(inputs)
    before = _files(tmp_path)
    assert _main(args) == 2
    _one_line(capsys.readouterr().err, source)
    assert _files(tmp_path) == before


# --------------------------------------------------------------------------- 3: atomic writes


def _limited(limit: int, args: list[str]) -> subprocess.CompletedProcess:
    """results_page.py run with a file-size limit of ``limit`` bytes (``ulimit -f``)."""
    def set_limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run([sys.executable, "scripts/results_page.py", *args], cwd=REPO, capture_output=True, text=True,
                          env=os.environ | {"PYTHONPATH": "."}, timeout=120, preexec_fn=set_limit)


def test_collect_under_a_file_size_limit_leaves_the_inputs_as_they_were(inputs, tmp_path):
    provenance = yaml.safe_load((inputs / "provenance.yaml").read_text(encoding="utf-8"))
    provenance["timings"][0]["conditions"] = "shared " * 1000  # provenance.yaml: over the limit, the CSVs under it
    (inputs / "provenance.yaml").write_text(yaml.safe_dump(provenance, sort_keys=False), encoding="utf-8")
    tables = tmp_path / "tables"
    shutil.copytree(FIXTURE / "offline", tables)
    (tables / "all_results.csv").write_text((tables / "all_results.csv").read_text().replace("0.55", "0.56"))
    before = _files(tmp_path / "docs")
    done = _limited(4096, _collect(inputs, "--offline", str(tables), "--robustness", str(FIXTURE / "robustness" / "main")))
    assert done.returncode == 2
    _one_line(done.stderr, inputs / "provenance.yaml")
    assert _files(tmp_path / "docs") == before  # no half-written provenance.yaml, the earlier copies kept
    assert [p.name for p in inputs.iterdir() if p.name.startswith(".")] == []  # no temporary file left


def test_the_page_under_a_file_size_limit_is_left_as_it_was(inputs, tmp_path):
    page = tmp_path / "page.md"
    page.write_text(PAGE + "prose " * 2000 + "\n", encoding="utf-8")
    before = page.read_bytes()
    done = _limited(16384, _args(inputs))
    assert done.returncode == 2
    _one_line(done.stderr, page)
    assert page.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs", "page.md"]


# --------------------------------------------------------------------------- 4: the markers


def _line_of(page: str, text: str, nth: int = 0) -> int:
    start = -1
    for _ in range(nth + 1):
        start = page.index(text, start + 1)
    return page.count("\n", 0, start) + 1


OPEN, CLOSE = "<!-- generated: offline-table -->", "<!-- /generated -->"
_STRAY_OPEN = PAGE.replace("prose before offline-table", OPEN + "\nprose before offline-table")
_STRAY_CLOSE = PAGE.replace("prose before eraser", CLOSE + "\nprose before eraser")
_REPEATED = PAGE + "\n<!-- generated: cost -->\nold\n<!-- /generated -->\n"
_UNCLOSED = PAGE[:PAGE.rindex(CLOSE)] + PAGE[PAGE.rindex(CLOSE) + len(CLOSE) + 1:]
MARKER_CASES = {
    "a stray opening before its block": (_STRAY_OPEN, _line_of(_STRAY_OPEN, OPEN), OPEN),
    "a stray closing in the prose": (_STRAY_CLOSE, _line_of(_STRAY_CLOSE, CLOSE, 2), CLOSE),
    "a block repeated": (_REPEATED, _line_of(_REPEATED, "<!-- generated: cost -->", 1), "<!-- generated: cost -->"),
    "an opening never closed": (_UNCLOSED, _line_of(_UNCLOSED, "<!-- generated: cost -->"), "<!-- generated: cost -->"),
}


@pytest.mark.parametrize("case", list(MARKER_CASES))
def test_a_page_with_unpaired_nested_or_repeated_markers_is_refused(inputs, tmp_path, capsys, case):
    text, line, marker = MARKER_CASES[case]
    page = tmp_path / "page.md"
    page.write_text(text, encoding="utf-8")
    assert _main(_args(inputs)) == 2
    _one_line(capsys.readouterr().err, f"{page}:{line}:", marker)
    assert page.read_text(encoding="utf-8") == text  # no prose deleted


# --------------------------------------------------------------------------- 5, 6, 7: the values of the inputs


def _edit(path: Path, change, quoting: int = csv.QUOTE_MINIMAL) -> None:
    """Rewrite the CSV file ``path`` as ``change(table)`` returns it (every value read as text)."""
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    change(df).to_csv(path, index=False, quoting=quoting)


def _set(column: str, value, row=None):
    def change(df):
        if row is None:
            df[column] = value
        else:
            df.loc[row, column] = value
        return df
    return change


def test_values_are_escaped_and_a_second_run_changes_nothing(inputs, tmp_path, capsys):
    _edit(inputs / "robustness" / "main" / "runs.csv", lambda df: df.assign(
        dataset=["<!-- /generated -->", "<!-- /generated -->", "connect"], path=["a|b", "fixed", "fixed"],
        seeds=["42 43 44", "<script>alert(1)</script> 46", "42 43 44"]))  # the lowest ICDA: its seeds are shown
    _edit(inputs / "offline" / "all_results.csv", lambda df: df.assign(dataset=df["dataset"].replace("connect", "x & <y>")))
    provenance = yaml.safe_load((inputs / "provenance.yaml").read_text(encoding="utf-8"))
    provenance["robustness"]["main"] |= {"command": "run `x` <!-- /generated -->", "machine": "<b>big</b> | box",
                                         "conditions": "a\n<!-- /generated -->\nb"}
    (inputs / "provenance.yaml").write_text(yaml.safe_dump(provenance), encoding="utf-8")
    page = tmp_path / "page.md"
    assert _main(_args(inputs)) == 0
    first = page.read_text(encoding="utf-8")
    assert _main(_args(inputs)) == 0 and page.read_text(encoding="utf-8") == first
    assert capsys.readouterr().out.endswith("is up to date\n")
    assert first.count("<!-- /generated -->") == first.count("<!-- generated: ") == len(results_page.BLOCKS)
    assert "<script>" not in first and "&lt;script&gt;alert(1)&lt;/script&gt;" in first
    assert "<b>" not in first and "&lt;b&gt;big&lt;/b&gt; \\| box" in first
    assert "| a\\|b/fixed |" in first and "| x &amp; &lt;y&gt; |" in first
    assert "<code>run `x` &lt;!-- /generated --&gt;</code>" in first
    assert all(first.count(f"prose before {b}") == 1 for b in results_page.BLOCKS)
    assert first.count("prose after") == len(results_page.BLOCKS)


def test_a_run_with_an_empty_icda_cell_is_refused(inputs, capsys):
    """A run that did not finish has no row in runs.csv: a row with an empty ICDA is refused (never
    a row that counts it in "runs" while its ICDA is over one run fewer)."""
    runs = inputs / "robustness" / "main" / "runs.csv"
    _edit(runs, _set("ICDA", "", row=1))
    assert _main(_args(inputs, "--check")) == 2
    _one_line(capsys.readouterr().err, f"{runs}:3:", "ICDA")


def _drop(column):
    return lambda df: df.drop(columns=[column])


def _empty(path: Path) -> None:
    path.write_text("", encoding="utf-8")


MALFORMED = {
    "all_results.csv without precision": ("offline/all_results.csv", _drop("precision"), "precision"),
    "compute.csv without cpu_minutes": ("offline/compute.csv", _drop("cpu_minutes"), "cpu_minutes"),
    "an ERASER table without sentence_r_mean": ("offline/table2_llm_eraser.csv", _drop("sentence_r_mean"), "sentence_r_mean"),
    "a group table without a dataset's sd": ("offline/table2_llm.csv", _drop("connect_sd"), "connect_sd"),
    "runs.csv without MMI": ("robustness/main/runs.csv", _drop("MMI"), "MMI"),
    "an empty all_results.csv": ("offline/all_results.csv", None, "empty"),
    "an empty compute.csv": ("offline/compute.csv", None, "empty"),
    "an empty ERASER table": ("offline/table2_llm_eraser.csv", None, "empty"),
    "an empty runs.csv": ("robustness/main/runs.csv", None, "empty"),
    "all-NA precision": ("offline/all_results.csv", _set("precision", ""), "precision"),
    "all-NA ICDA": ("robustness/main/runs.csv", _set("ICDA", ""), "ICDA"),
    "all-NA seeds": ("robustness/main/runs.csv", _set("seeds", " "), "seeds"),
    "a text precision": ("offline/all_results.csv", _set("precision", "high", row=2), "precision"),
    "a text run": ("offline/all_results.csv", _set("run", "first"), "run"),
    "a text cpu_minutes": ("offline/compute.csv", _set("cpu_minutes", "ten"), "cpu_minutes"),
    "a text ERASER mean": ("offline/table2_llm_eraser.csv", _set("sentence_r_mean", "half"), "sentence_r_mean"),
    "a text group mean": ("offline/table2_llm.csv", _set("connect_mean", "most"), "connect_mean"),
    "a text MMI": ("robustness/main/runs.csv", _set("MMI", "abc"), "MMI"),
    "an infinite ICDA": ("robustness/main/runs.csv", _set("ICDA", "inf", row=0), "ICDA"),
    "a dataset twice in compute.csv": ("offline/compute.csv", lambda df: pd.concat([df, df.iloc[:1]]), "method"),
    # precisions outside 0-100 (1e308 printed 300 digits ± inf), an iteration past the curve
    "an MMI of 1e308": ("robustness/main/runs.csv", _set("MMI", "1e308", row=0), "column MMI: 1e+308 is outside [0, 100]"),
    "a negative ICDA": ("robustness/main/runs.csv", _set("ICDA", "-5", row=0), "column ICDA: -5 is outside"),
    "an icda_iteration beyond the curve": ("robustness/main/runs.csv", _set("icda_iteration", "9", row=0),
                                           "column icda_iteration: 9 is beyond the curve's 3 iterations"),
    "a curve above 100": ("robustness/main/runs.csv", _set("curve", "70 75 188", row=0), "column curve"),
    "a precision above 1": ("offline/all_results.csv", _set("precision", "60", row=1), "column precision: 60 is outside"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_csv_is_refused_in_one_line_naming_the_file_and_the_column(inputs, capsys, case):
    name, change, column = MALFORMED[case]
    path = inputs / name
    if change is None:
        _empty(path)
    else:
        _edit(path, change)
    assert _main(_args(inputs, "--check")) == 2
    _one_line(capsys.readouterr().err, path, column)


def test_a_provenance_value_that_is_no_number_is_refused(inputs, capsys):
    provenance = yaml.safe_load((inputs / "provenance.yaml").read_text(encoding="utf-8"))
    provenance["robustness"]["main"]["wall_min"] = "fifty"
    (inputs / "provenance.yaml").write_text(yaml.safe_dump(provenance), encoding="utf-8")
    assert _main(_args(inputs, "--check")) == 2
    _one_line(capsys.readouterr().err, "robustness: main", "wall_min")


# --------------------------------------------------------------------------- 2, 8: the other command lines

SCRIPTS = sorted(p.relative_to(REPO).as_posix() for p in [*REPO.glob("scripts/*.py"), *REPO.glob("benchmarks/*.py")])
#: runs each script's ``--help`` as its ``__main__`` in one Python process (one import of torch and
#: icda for all of them, not one per script: seconds of the fast suite each), printing
#: {script: [exit status, standard output, standard error]} as JSON after a marker line
_HELPS = """
import contextlib, io, json, os, runpy, sys
out, path = {}, list(sys.path)
for script in sys.argv[1:]:
    stdout, stderr, code = io.StringIO(), io.StringIO(), 0
    sys.argv = [script, "--help"]
    sys.path[:] = [os.path.dirname(os.path.abspath(script))] + path  # as `python SCRIPT` starts
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            runpy.run_path(script, run_name="__main__")
        except SystemExit as exc:
            code = exc.code or 0
        except BaseException as exc:  # reported with the script's name by the test
            code = repr(exc)
    out[script] = [code, stdout.getvalue(), stderr.getvalue()]
print("@@helps@@" + json.dumps(out))
"""


@pytest.fixture(scope="module")
def helps() -> dict[str, list]:
    done = subprocess.run([sys.executable, "-c", _HELPS, *SCRIPTS], cwd=REPO, capture_output=True, text=True,
                          env=os.environ | {"PYTHONPATH": "."}, timeout=300)  # imports torch: slow on busy cores
    assert done.returncode == 0 and "@@helps@@" in done.stdout, done.stderr[-2000:]
    return json.loads(done.stdout.split("@@helps@@", 1)[1])


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_script_has_a_help_that_does_no_work(script, helps):
    code, stdout, stderr = helps[script]
    assert code == 0, stderr[-2000:]
    assert stdout.startswith("usage:") and "--help" in stdout, stdout[:500]


def _run(script: str, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, script, *map(str, args)], cwd=REPO, capture_output=True, text=True,
                          env=os.environ | {"PYTHONPATH": "."}, timeout=120)


@pytest.mark.parametrize("case", ["a path that matches nothing", "--runs-csv inside the results", "--runs-csv holding them"])
def test_final_selector_refuses_no_run_and_never_writes_over_its_input(tmp_path, case):
    results = tmp_path / "bench" / "fixed" / "results"
    (results / "restaurant" / "run1").mkdir(parents=True)
    (results / "restaurant" / "settings.json").write_text("{}", encoding="utf-8")
    source, out = {"a path that matches nothing": (tmp_path / "nothing", tmp_path / "committed"),
                   "--runs-csv inside the results": (results, results / "restaurant"),
                   "--runs-csv holding them": (results, tmp_path / "bench")}[case]
    out.mkdir(exist_ok=True)
    shutil.copy(REPO / "docs" / "results_inputs" / "robustness" / "main_102" / "runs.csv", out / "runs.csv")
    before = _files(tmp_path)
    done = _run("benchmarks/final_selector.py", source, "--runs-csv", out)
    assert done.returncode == 2 and done.stdout == ""
    _one_line(done.stderr, source)
    assert _files(tmp_path) == before  # the runs.csv there as it was


def test_final_selector_names_a_converge_json_without_stop(tmp_path, monkeypatch, capsys):
    final_selector = _load(REPO / "benchmarks" / "final_selector.py", "final_selector_guard")
    folder = tmp_path / "results" / "restaurant"
    (folder / "data").mkdir(parents=True)
    (folder / "settings.json").write_text("{}", encoding="utf-8")
    (folder / "data" / "dev.jsonl").write_text('{"sentences": ["a", "b"], "label": 1, "rationale": [0]}\n', encoding="utf-8")
    (folder / "run1" / "iter0").mkdir(parents=True)
    (folder / "run1" / "iter0" / "converge.json").write_text('{"iteration": 0}', encoding="utf-8")
    monkeypatch.setattr(final_selector, "load_settings", lambda *args: None)  # no workspace to load: the run comes first
    monkeypatch.setattr(final_selector, "open_workspace", lambda *args: SimpleNamespace(split=lambda name: SimpleNamespace(ids=None)))
    assert final_selector.main([str(tmp_path / "results")]) == 2
    _one_line(capsys.readouterr().err, folder / "run1" / "iter0" / "converge.json", '"stop"')


def test_final_selector_failure_modes_known_answer():
    """Each selector is judged on its own curve: a last iteration below MMI, and one more than 3
    points below the curve's best, are counted per selector; the best iteration's mean and lowest
    run (the bound of any rule reporting one iteration) come from the same curve."""
    final_selector = _load(REPO / "benchmarks" / "final_selector.py", "final_selector_modes")
    rows = [{"mmi": 70.0, "curves": {"chosen": [70.0, 80.0, 89.0, 84.0], "candidates": [70.0, 81.0, 88.0, 88.0],
                                     "ensemble": [70.0, 81.0, 85.0, 86.0]}},
            {"mmi": 60.0, "curves": {"chosen": [60.0, 65.0, 59.0], "candidates": [60.0, 64.0, 61.0],
                                     "ensemble": [60.0, 64.0, 62.0]}}]
    lines = final_selector.failure_modes({"restaurant": rows}).splitlines()
    assert lines[2:] == ["| restaurant | chosen | 2 | 71.50 | 59.0 | +6.50 | -1.0 | 1 | 2 | 77.00 | 65.0 |",
                         "| restaurant | candidates | 2 | 74.50 | 61.0 | +9.50 | +1.0 | 0 | 0 | 76.00 | 64.0 |",
                         "| restaurant | ensemble | 2 | 74.00 | 62.0 | +9.00 | +2.0 | 0 | 0 | 75.00 | 64.0 |"]


def test_robustness_table_failure_modes_and_best_iteration_known_answer():
    """The benchmark's summary counts each failure mode from the runs' curves and gives the best
    iteration's mean and lowest run (MMI included in a curve)."""
    robustness = _load(REPO / "benchmarks" / "robustness.py", "robustness_table")
    rows = [{"dataset": "connect", "seeds": [1, 2, 3], "MMI": 61.7, "CDA": 58.9, "ICDA": 43.3,
             "curve": [61.7, 58.9, 38.7, 38.9, 43.3]},
            {"dataset": "connect", "seeds": [4, 5, 6], "MMI": 60.0, "CDA": 77.0, "ICDA": 79.0, "curve": [60.0, 77.0, 80.0, 79.0]}]
    assert robustness.table(rows).splitlines()[2] == (
        "| connect | 2 | 60.9 ± 1.2 | 68.0 ± 12.8 | 61.1 ± 25.2 | 43.3 | -18.4 (43.3 − 61.7, seeds 1–3) "
        "| 1/2 | 1/2 | 1/2 | 70.8 (61.7) |")


def test_robustness_report_of_a_folder_without_runs_names_it_and_writes_nothing(tmp_path, capsys):
    """--report-only on a folder that holds no finished run stops with an error naming it, and
    creates nothing (no folder, no empty runs.csv)."""
    robustness = _load(REPO / "benchmarks" / "robustness.py", "robustness_empty")
    out = tmp_path / "no_such_benchmark"
    assert robustness.main(["--out", str(out), "--report-only"]) == 1
    assert str(out) in capsys.readouterr().err
    assert not out.exists()


def test_noise_floor_known_answer_and_a_folder_without_runs(tmp_path):
    """ΔA is compared with the fresh candidates' disagreement from iteration 2 on; a folder
    without a finished run is refused in one line naming it."""
    noise_floor = _load(REPO / "benchmarks" / "noise_floor.py", "noise_floor_guard")
    from icda.records import Decision

    def decision(converged, signals):
        return Decision(iteration=len(signals) - 1, stop=True, converged=converged, reason="r",
                        signals=[{"iteration": k, "delta_A": a, "original_dev_loss": None, "original_dev_accuracy": None,
                                  "agreement": g} for k, (a, g) in enumerate(signals)])

    runs = [decision(False, [(None, 0.7), (0.3, 0.8), (0.15, 0.8), (0.25, 0.9)]),
            decision(True, [(None, 0.7), (0.3, 0.8), (0.05, 0.9)])]
    assert noise_floor.dataset_row(runs, 0.1) == {
        "runs": 2, "converged": 1, "iterations": 3, "delta_a": 0.15, "disagreement": pytest.approx(0.1),
        "at_floor": 2, "below_threshold": 1, "stop_delta_a": 0.1}
    (tmp_path / "results" / "restaurant" / "run1").mkdir(parents=True)
    (tmp_path / "results" / "restaurant" / "settings.json").write_text("{}", encoding="utf-8")
    done = _run("benchmarks/noise_floor.py", tmp_path / "results")
    assert done.returncode == 2 and done.stdout == ""
    _one_line(done.stderr, tmp_path / "results")


def test_frozen_probe_names_a_missing_folder(tmp_path):
    done = _run("benchmarks/frozen_probe.py", tmp_path / "nothing")
    assert done.returncode != 0
    _one_line(done.stderr, tmp_path / "nothing")


# --------------------------------------------------------------------------- 9: random values (Hypothesis)

#: the page's own markup, Markdown's and HTML's, line ends, values pandas reads as missing
SPECIAL = st.sampled_from(["<!-- /generated -->", "<!-- generated: cost -->", "|", "\\|", "<script>", "&amp;", "`", "\\",
                           "\n", "\r", "\u2028", "**", "[x](y)", " ", "", "nan", "NA", "FILL IN", "restaurant", "location"])
TEXT = st.lists(st.one_of(SPECIAL, st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"),
                                           max_size=6)), max_size=4).map("".join)
#: what pandas reads as missing (pandas.read_csv's na_values): such a value of a required column is refused
NA = {"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>", "N/A", "NA",
      "NULL", "NaN", "None", "n/a", "nan", "null", "FILL IN"}
#: a value of a column that must have one (the tests above refuse an empty one)
CELL = TEXT.filter(lambda v: v.strip() not in NA)
NUMBER = st.one_of(st.floats(-1e6, 1e6), st.integers(-5, 200))
RUN = st.tuples(CELL, CELL, CELL, NUMBER, NUMBER, NUMBER, TEXT)  # dataset, path, seeds, MMI, CDA, ICDA, why
ENTRY = st.fixed_dictionaries({f: CELL for f in ("command", "commit", "machine", "date")}
                              | {"wall_min": st.one_of(st.floats(), st.integers()), "cpu_min": st.none() | st.floats(0, 1e4)},
                              optional={"conditions": TEXT})
NAME = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="/\x00"), min_size=1, max_size=8)


@given(runs=st.lists(RUN, min_size=1, max_size=3), dataset=CELL, offline=ENTRY, measured=ENTRY,
       name=NAME.filter(lambda n: n not in (".", "..") and len(n.encode()) < 200))
def test_random_values_keep_the_prose_and_one_pair_of_markers_per_block(runs, dataset, offline, measured, name):
    with tempfile.TemporaryDirectory() as tmp:
        docs = Path(tmp) / "docs"
        shutil.copytree(FIXTURE, docs)
        folder = docs / "robustness" / name
        folder.mkdir(exist_ok=True)
        with open(folder / "runs.csv", "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            writer.writerow(["dataset", "path", "seeds", "MMI", "CDA", "ICDA", "icda_iteration", "curve", "why"])
            writer.writerows([d, p, s, m, c, i, 2, f"{m} {c} {i}", w] for d, p, s, m, c, i, w in runs)
        for csv_name in ("all_results.csv", "compute.csv"):
            _edit(docs / "offline" / csv_name, lambda df: df.assign(dataset=df["dataset"].replace("connect", dataset)),
                  quoting=csv.QUOTE_ALL)
        provenance = yaml.safe_load((docs / "provenance.yaml").read_text(encoding="utf-8"))
        provenance["offline"] = offline
        provenance["robustness"][name] = measured
        (docs / "provenance.yaml").write_text(yaml.safe_dump(provenance, allow_unicode=True), encoding="utf-8")
        page = Path(tmp) / "page.md"
        page.write_text(PAGE, encoding="utf-8")
        args = _args(docs)
        args[args.index(str(docs / "robustness" / "main"))] = str(folder)
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            rc = _main(args)
        if rc == 2:  # a value the inputs' format does not allow (an empty cell, a text for a number, FILL IN)
            _one_line(err.getvalue())
            assert page.read_text(encoding="utf-8") == PAGE
            return
        assert rc == 0, err.getvalue()
        first = page.read_text(encoding="utf-8")
        markers = [m.group(0) for m in results_page._MARKER.finditer(first)]
        assert markers == [m for b in results_page.BLOCKS for m in (f"<!-- generated: {b} -->", "<!-- /generated -->")]
        assert first.count("<!-- /generated -->") == first.count("<!-- generated: ") == len(results_page.BLOCKS)

        def prose(text):
            return results_page._BLOCK.sub(lambda m: m.group(1) + m.group(4), text)

        assert prose(first) == prose(PAGE)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            assert _main(args) == 0
        assert page.read_text(encoding="utf-8") == first  # a second run is a no-op
