"""Write the generated tables of docs/results.md from the result files of the runs.

docs/results.md is hand-written prose around generated blocks::

    <!-- generated: offline-table -->
    ... written by this script ...
    <!-- /generated -->

This script rewrites only what lies between the markers, from

- ``--offline DIR``: the offline reproduction's ``results/tables/`` (``all_results.csv``, the
  group tables ``<group>.csv``, ``<group>_eraser.csv``, ``compute.csv``; icda/report/tables.py
  and icda/report/compute.py write them);
- ``--robustness DIR ...``: folders holding a ``runs.csv`` of ``benchmarks/robustness.py``
  (``dataset, path, seeds, MMI, CDA, ICDA, icda_iteration, curve, why``); the runs of a hotel
  aspect (location, service, cleanliness) go to the held-out table beside the paper's row;
- ``--provenance FILE``: how each was measured (command, commit, machine, date, wall and CPU
  minutes), filled in by whoever ran it (docs/results_inputs/README.md has the format).

By default all three are the committed copies under ``docs/results_inputs/``, so the page can be
regenerated, and checked (``--check``, tests/test_results_page.py), from the repository alone.
``--collect`` first copies the given result folders' files there (and adds a provenance entry to
fill in for each new input)::

    PYTHONPATH=. .venv/bin/python scripts/results_page.py --collect --offline results/tables \\
        --robustness ../bench/main ../bench/location
    # fill in docs/results_inputs/provenance.yaml, then
    PYTHONPATH=. .venv/bin/python scripts/results_page.py

A block whose inputs are absent gets a one-line placeholder saying what to run. Every value read from
an input goes into the page escaped (:func:`_md`), so that none makes a marker, a tag or a table cell;
the markers are lines of their own, one pair per block (:func:`check_markers`). Files are written
atomically (icda.io), and --collect replaces its copies and provenance.yaml together or not at all.
Every error is one line naming the file (and the line, column or key) and the fix.
"""

from __future__ import annotations

import argparse
import difflib
import html
import math
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

import pandas as pd
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from icda.errors import ConfigError, IcdaError  # noqa: E402
from icda.io import atomic_write, check_output_dir, same_file  # noqa: E402
from icda.report.paper import CAPTION as PAPER_CAPTION, PAPER_PRECISION, paper_table  # noqa: E402
from icda.report.tables import (ERASER_COLUMNS, METHODS, METRICS, _best, display_name,  # noqa: E402
                                eraser_cell)
from icda.guard import add_input, add_output, parse_arguments  # noqa: E402

INPUTS = REPO / "docs" / "results_inputs"
PAGE = REPO / "docs" / "results.md"
BLOCKS = ("offline-table", "offline-curves", "eraser", "robustness", "hotel", "cost")
#: a generated block: its markers are lines of their own (check_markers: one pair per block)
_BLOCK = re.compile(r"^(<!-- generated: ([\w-]+) -->\n)(.*?)^(<!-- /generated -->)$", re.S | re.M)
_MARKER = re.compile(r"^<!-- (?:generated: ([\w-]+)|/generated) -->$", re.M)

#: the files of an offline results/tables/ folder that the page is made from (--collect copies them)
OFFLINE_FILES = ("all_results.csv", "compute.csv")
#: datasets whose runs go to the held-out table
HOTEL = ("location", "service", "cleanliness")
#: the fields every provenance entry must have (cpu_min may be null; conditions and source are optional)
FIELDS = ("command", "commit", "machine", "date", "wall_min", "cpu_min")
FILL = "FILL IN"
#: a new input's provenance entry, to be filled in (conditions: optional, e.g. "fresh clone, nothing else running")
TEMPLATE = {f: FILL for f in FIELDS} | {"conditions": ""}
RUN = "PYTHONPATH=. .venv/bin/python scripts/results_page.py"


class PageError(Exception):
    """An input is missing or malformed, or the page lacks a block."""


# -- inputs ---------------------------------------------------------------------------------------

def load_provenance(path: Path) -> dict:
    if not path.exists():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise PageError(f"{path}{'' if mark is None else f':{mark.line + 1}'}: not valid YAML "
                        f"({getattr(exc, 'problem', None) or 'syntax'}). Fix: docs/results_inputs/README.md has the format") from None
    if not isinstance(data, dict):
        raise PageError(f"{path}: not a mapping (docs/results_inputs/README.md has the format)")
    for key, kind in (("robustness", dict), ("timings", list)):
        if data.get(key) is not None and not isinstance(data[key], kind):
            raise PageError(f"{path}: {key}: not a {'mapping' if kind is dict else 'list'} "
                            "(docs/results_inputs/README.md has the format)")
    return data


def _entry(provenance: dict, where: str, entry: dict | None, *, required=FIELDS) -> dict:
    if not isinstance(entry, dict):
        raise PageError(f"provenance: no entry for {where} (add one: docs/results_inputs/README.md)")
    missing = [f for f in required if entry.get(f, FILL) == FILL or (entry.get(f) is None and f != "cpu_min")]
    if missing:
        raise PageError(f"provenance: fill in {where}'s {', '.join(missing)} (docs/results_inputs/README.md)")
    for f in ("wall_min", "cpu_min"):
        if entry.get(f) is not None and (isinstance(entry[f], bool) or not isinstance(entry[f], (int, float))):
            raise PageError(f"provenance: {where}'s {f} is {entry[f]!r}, not a number of minutes "
                            "(docs/results_inputs/README.md)")
    return entry


def read_csv(path: Path, fix: str, *, required=(), numbers=(), complete=(), text=(), bounds=None) -> pd.DataFrame:
    """The table of the CSV file ``path``; refused (:class:`PageError`, one line naming the file, the
    column and, for a value, its line, then ``fix``) where it cannot be read or is empty, lacks a
    column of ``required``, ``numbers``, ``complete`` or ``text``, has an empty cell in a column of
    ``complete``, a value that is not a finite number in one of ``numbers`` (which come back as
    numbers) or one outside its column's ``bounds`` ({column: (lowest, highest)}). ``text``
    columns are read as text."""
    try:
        df = pd.read_csv(path, dtype={c: str for c in text})
    except pd.errors.EmptyDataError:
        raise PageError(f"{path}: an empty file, not a table. Fix: {fix}") from None
    except (ValueError, OSError) as exc:  # ParserError and UnicodeDecodeError are ValueErrors
        reason = getattr(exc, "strerror", None) or (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise PageError(f"{path}: not a CSV table ({reason}). Fix: {fix}") from None
    missing = [c for c in dict.fromkeys([*required, *numbers, *complete, *text]) if c not in df.columns]
    if missing:
        raise PageError(f"{path}: no column {', '.join(missing)}. Fix: {fix}")
    for c in complete:
        empty = df[c].isna() | (df[c].astype(str).str.strip() == "")
        if empty.any():
            raise PageError(f"{path}:{_line(empty)}: column {c} is empty. Fix: {fix}")
    for c in numbers:
        values = pd.to_numeric(df[c], errors="coerce").astype(float)
        bad = df[c].notna() & ~(values.abs() < math.inf)  # text, inf, nan
        if bad.any():
            value = df[c][bad].iloc[0]
            raise PageError(f"{path}:{_line(bad)}: column {c}: {value!r} is not a finite number. Fix: {fix}")
        df[c] = values
    for c, (low, high) in (bounds or {}).items():
        out = df[c].notna() & ((df[c] < low) | (df[c] > high))
        if out.any():
            raise PageError(f"{path}:{_line(out)}: column {c}: {float(df[c][out].iloc[0]):g} is outside [{low}, {high}]. "
                            f"Fix: {fix}")
    return df


def _line(rows: pd.Series) -> int:
    """The file line of the first true row (line 1 is the header)."""
    return int(rows.to_numpy().argmax()) + 2


#: the fixes of the inputs' files
TABLES_FIX = "rewrite it with `python -m icda report tables` (docs/results_inputs/README.md has its columns)"
COMPUTE_FIX = "rewrite it with `python -m icda report compute` (docs/results_inputs/README.md has its columns)"
RUNS_FIX = "give the runs.csv that benchmarks/robustness.py writes (docs/results_inputs/README.md has its columns)"


def read_all_results(offline: Path) -> pd.DataFrame:
    """``all_results.csv`` of an offline results/tables/ folder; refused where it holds no run."""
    path = offline / "all_results.csv"
    df = read_csv(path, TABLES_FIX, required=("iteration",), numbers=("run", "iteration", "precision"),
                  complete=("dataset", "run", "precision"), text=("dataset", "method"),
                  bounds={"precision": (0, 1), "run": (1, math.inf), "iteration": (0, math.inf)})
    if not len(df):
        raise PageError(f"{path}: no run (only the header). Fix: {TABLES_FIX}")
    return df


def group_tables(offline: Path) -> list[pd.DataFrame]:
    """The group tables (``<group>.csv``: index method, columns ``<dataset>_mean/_sd/_n``), by name."""
    tables = []
    for csv in sorted(offline.glob("*.csv")):
        if _is_group(csv):
            columns = [c for c in pd.read_csv(csv, nrows=0).columns if c != "method"]
            tables.append(read_csv(csv, TABLES_FIX, numbers=columns, complete=("method",), text=("method",),
                                   required=[f"{c[:-5]}_sd" for c in columns if c.endswith("_mean")])
                          .set_index("method"))
    return tables


def _is_group(path: Path) -> bool:
    """A precision table of a group (not another metric's, ``<group>_<metric>.csv``)."""
    if path.stem.endswith(tuple(f"_{m}" for m in METRICS if m != "precision")):
        return False
    try:
        df = pd.read_csv(path, index_col=0, nrows=1)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError):
        return False
    return bool(df.index.name == "method" and len(df.columns)
                and all(re.search(r"_(mean|sd|n)$", c) for c in df.columns))


def read_runs(folder: Path) -> pd.DataFrame:
    """A robustness folder's ``runs.csv``: one row per finished run; refused where it holds no run or
    a run misses a value (an empty MMI, CDA or ICDA: a run that did not finish is no row of it)."""
    path = folder / "runs.csv"
    if not path.is_file():
        raise PageError(f"{folder}: no runs.csv, so no run. Fix: give a benchmarks/robustness.py --out folder "
                        "(or a final_selector.py --runs-csv folder)")
    df = read_csv(path, RUNS_FIX, required=("icda_iteration",), numbers=("MMI", "CDA", "ICDA", "icda_iteration"),
                  complete=("dataset", "path", "seeds", "MMI", "CDA", "ICDA"), text=("dataset", "path", "seeds", "curve"),
                  bounds={"MMI": (0, 100), "CDA": (0, 100), "ICDA": (0, 100), "icda_iteration": (0, math.inf)})
    if not len(df):
        raise PageError(f"{path}: no run (only the header). Fix: {RUNS_FIX}")
    for i, (k, curve) in enumerate(zip(df["icda_iteration"], df["curve"])):
        if pd.notna(k) and k != int(k):
            raise PageError(f"{path}:{i + 2}: column icda_iteration: {k!r} is not an iteration. Fix: {RUNS_FIX}")
        if pd.isna(curve) or not str(curve).strip():
            continue
        try:
            values = [float(v) for v in str(curve).split()]
        except ValueError:
            values = [math.nan]
        if not all(0 <= v <= 100 for v in values):
            raise PageError(f"{path}:{i + 2}: column curve: {curve!r} is not precisions in [0, 100]. Fix: {RUNS_FIX}")
        if pd.notna(k) and k >= len(values):
            raise PageError(f"{path}:{i + 2}: column icda_iteration: {int(k)} is beyond the curve's {len(values)} "
                            f"iterations. Fix: {RUNS_FIX}")
    return df.assign(measurement=folder.name)


# -- formatting ---------------------------------------------------------------------------------

def _num(x: float, digits: int = 1) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def _mean_sd(values: pd.Series) -> str:
    sd = values.std(ddof=1) if len(values) > 1 else math.nan
    return f"{values.mean():.1f} ± {_num(sd)}"


def _md(value) -> str:
    """A value of an input as Markdown text, in a table cell or in prose: on one line, ``\\`` and
    ``|`` escaped, ``<``, ``>`` and ``&`` as HTML entities, so that no value makes markup (a marker
    of this page, a tag, a table cell)."""
    text = re.sub(r"[\r\n]+", " ", str(value)).replace("\\", "\\\\")
    return html.escape(text, quote=False).replace("|", "\\|")


def _code(value) -> str:
    """A value of an input as inline code (shown as written); one that a code span cannot hold as
    written (a backtick, ``|`` that would split a table's cell, ``<!--``, nothing) as escaped text
    in ``<code>``."""
    text = re.sub(r"[\r\n]+", " ", str(value))
    if not text.strip() or any(c in text for c in ("`", "|", "<!--")):
        return f"<code>{_md(text)}</code>"
    return f"`{text}`"


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(map(str, r)) + " |" for r in rows])


def _seeds(seeds: str) -> str:
    s = seeds.split()
    return _md(f"{s[0]}–{s[-1]}" if len(s) > 1 else s[0])


def _measured(entry: dict, inputs: str) -> str:
    cpu = "" if entry.get("cpu_min") is None else f", {_num(float(entry['cpu_min']))} CPU min"
    conditions = f" ({_md(entry['conditions'])})" if entry.get("conditions") else ""
    return (f"Measured: {_code(entry['command'])} at commit {_md(entry['commit'])}, {_md(entry['machine'])}, "
            f"{_md(entry['date'])}: "
            f"{_num(float(entry['wall_min']))} min wall{cpu}{conditions}. Inputs: {inputs}.")


def placeholder(what: str) -> str:
    return f"*Not yet generated: run `{what}` (see the top of this page).*"


# -- the blocks -----------------------------------------------------------------------------------

def offline_table(groups: list[pd.DataFrame]) -> str:
    """One table of every group's datasets: the methods, then the chance rows (best mean bold)."""
    columns, rows = [], []
    for df in groups:
        datasets = [c[:-5] for c in df.columns if c.endswith("_mean")]
        stats = pd.DataFrame({(ds, s): df[f"{ds}_{s}"] for ds in datasets for s in ("mean", "sd", "n")})
        for ds in datasets:
            best = _best(stats.loc[[m for m in METHODS if m in stats.index]], ds)
            columns.append((ds, {m: (f"**{_cell(stats, m, ds)}**" if m in best else _cell(stats, m, ds))
                                 for m in stats.index}))
            rows += [m for m in stats.index if m not in rows]
    order = [m for m in METHODS if m in rows] + [m for m in rows if m not in METHODS]
    text = _table(["method"] + [_md(display_name(ds)) for ds, _ in columns],
                  [[_md(m)] + [cells.get(m, "–") for _, cells in columns] for m in order])
    paper = paper_table([ds for ds, _ in columns], METHODS)
    if paper is not None:
        text += "\n\n" + PAPER_CAPTION + "\n\n" + _table(
            ["method"] + [display_name(ds) for ds in paper.columns],
            [[m] + list(paper.loc[m]) for m in paper.index])
    return text


def _cell(stats: pd.DataFrame, method: str, ds: str) -> str:
    mean, sd = stats.loc[method, (ds, "mean")], stats.loc[method, (ds, "sd")]
    return "–" if pd.isna(mean) else f"{mean:.1f} ± {_num(sd)}"


def offline_curves(all_results: pd.DataFrame) -> str:
    """Per dataset and run: the test precision of every iteration, ICDA's in bold, and ICDA − MMI."""
    df = all_results.dropna(subset=["iteration"])
    rows = []
    for (dataset, run), part in df.groupby(["dataset", "run"], sort=True):
        curve = part.drop_duplicates("iteration").sort_values("iteration")
        taken = part.loc[part["method"] == "ICDA", "iteration"]
        k = int(taken.iloc[0]) if len(taken) else None
        cells = [f"**{_num(100 * p)}**" if int(i) == k else _num(100 * p)
                 for i, p in zip(curve["iteration"], curve["precision"])]
        gain = "–" if k is None else f"{100 * (curve.set_index('iteration').loc[k, 'precision'] - curve['precision'].iloc[0]):+.1f}"
        rows.append([_md(dataset), int(run), " → ".join(cells), gain])
    return _table(["dataset", "run", "test precision % per iteration (0 = MMI, 1 = CDA, ICDA in bold)", "ICDA − MMI"], rows)


def eraser_table(offline: Path) -> str | None:
    columns = [f"{c}_{s}" for c in ERASER_COLUMNS for s in ("mean", "sd")]
    parts = [read_csv(p, TABLES_FIX, numbers=columns, complete=("dataset", "method"), text=("dataset", "method"))
             .set_index(["dataset", "method"]) for p in sorted(offline.glob("*_eraser.csv"))]
    parts = [p for p in parts if len(p)]
    if not parts:
        return None
    rows = []
    for df in parts:
        for (ds, method), row in df.iterrows():
            rows.append([_md(display_name(ds)), _md(method)] + [eraser_cell(c, row[f"{c}_mean"], row[f"{c}_sd"])
                                                      for c in ERASER_COLUMNS])
    return _table(["dataset", "method", *ERASER_COLUMNS.values()], rows)


def summary_rows(runs: pd.DataFrame, label: str) -> list[str]:
    worst = runs.loc[(runs["ICDA"] - runs["MMI"]).idxmin()]
    low = runs.loc[runs["ICDA"].idxmin()]
    paths = _md("/".join(sorted(set(runs["path"]))))
    return [label, str(len(runs)), paths, _mean_sd(runs["MMI"]), _mean_sd(runs["CDA"]), f"**{_mean_sd(runs['ICDA'])}**",
            f"{low['ICDA']:.1f} (seeds {_seeds(low['seeds'])})",
            f"{worst['ICDA'] - worst['MMI']:+.1f} (seeds {_seeds(worst['seeds'])})",
            f"{int((runs['ICDA'] < runs['MMI']).sum())}/{len(runs)}", f"{int((runs['ICDA'] < runs['CDA']).sum())}/{len(runs)}",
            f"{sum(_below_best(r) for _, r in runs.iterrows())}/{len(runs)}", _verdicts(runs)]


def _verdicts(runs: pd.DataFrame) -> str:
    """How many runs got each verdict (helped, did not apply, wrong way: docs/judging-a-run.md), from
    the ``verdict`` column runs.csv has since the verdict exists; "–" for runs without one."""
    if "verdict" not in runs.columns:
        return "–"
    counts = runs["verdict"].dropna().astype(str).value_counts()
    return ", ".join(f"{_md(v)} {n}" for v, n in sorted(counts.items())) or "–"


def _below_best(run: pd.Series) -> bool:
    """Whether the run's reported ICDA is more than 3 points below its best iteration (its
    ``curve``: test precision per iteration; a run without one counts as not)."""
    curve = [float(v) for v in str(run.get("curve") or "").split()] if pd.notna(run.get("curve")) else []
    return bool(curve) and max(curve) - run["ICDA"] > 3


SUMMARY = ["dataset", "runs", "kernel path", "MMI", "CDA", "ICDA", "lowest ICDA", "smallest gain: ICDA − MMI",
           "ICDA < MMI", "ICDA < CDA", "ICDA > 3 below its best iteration", "verdicts"]


def robustness_block(runs: list[pd.DataFrame], provenance: dict) -> str:
    """Per dataset (and, with several measurements, per measurement and over all of them) the summary."""
    df = pd.concat(runs, ignore_index=True)
    rows = []
    for dataset, part in df.groupby("dataset", sort=True):
        names = sorted(set(part["measurement"]))
        if len(names) > 1:
            rows += [summary_rows(part[part["measurement"] == n], f"{_md(dataset)} ({_code(n)})") for n in names]
            rows.append(summary_rows(part, f"{_md(dataset)}, all"))
        else:
            rows.append(summary_rows(part, _md(dataset)))
    return _runs_table(rows, df, provenance)


def _runs_table(rows: list[list[str]], df: pd.DataFrame, provenance: dict) -> str:
    """The summary table of ``rows``, then how each robustness folder of ``df`` was measured."""
    lines = [_table(SUMMARY, rows), ""]
    for name in sorted(set(df["measurement"])):
        entry = _entry(provenance, f"robustness: {name}", (provenance.get("robustness") or {}).get(name))
        link = f"results_inputs/robustness/{_md(name)}/runs.csv"
        lines.append(f"- {_code(name)}: " + _measured(entry, f"[{link}]({link})"))
    return "\n".join(lines)


def hotel_block(runs: list[pd.DataFrame], provenance: dict) -> str:
    df = pd.concat(runs, ignore_index=True)
    rows = []
    for dataset, part in df.groupby("dataset", sort=True):
        rows.append(summary_rows(part, f"{_md(dataset)}, this project (frozen MiniLM)"))
        paper = PAPER_PRECISION.get(dataset)
        if paper:
            rows.append([f"{_md(dataset)}, the paper (fine-tuned BERT)", "3", "GPU"]
                        + [f"{m:.1f} ± {s:.1f}" for m, s in (paper["MMI"], paper["CDA"])]
                        + [f"{paper['ICDA'][0]:.1f} ± {paper['ICDA'][1]:.1f}", "–", "–", "–", "–", "–", "–"])
    return _runs_table(rows, df, provenance)


def cost_block(provenance: dict, offline: Path) -> str | None:
    timings = []
    if isinstance(provenance.get("offline"), dict) and (offline / "all_results.csv").exists():
        timings.append(_entry(provenance, "offline", provenance["offline"]) | {"source": "this page"})
    timings += [_entry(provenance, f"timings[{i}]", t, required=("commit", "date", "machine", "wall_min"))
                for i, t in enumerate(provenance.get("timings") or [])]
    if not timings:
        return None
    rows = []
    for t in timings:
        source = t.get("source")
        where = source if source in (None, "this page") else f"[{_md(source)}]({_md(source)})"
        rows.append([_md(t["date"]), _md(t["commit"]), _md(t["machine"]), f"{_num(float(t['wall_min']))} min",
                     "–" if t.get("cpu_min") is None else f"{_num(float(t['cpu_min']))} min",
                     _md(t.get("conditions") or "–"), where or "–"])
    lines = [_table(["date", "commit", "machine", "wall", "CPU", "conditions", "reported in"], rows)]
    compute = offline / "compute.csv"
    if compute.exists():
        df = read_csv(compute, COMPUTE_FIX, numbers=("cpu_minutes",), complete=("dataset", "method"),
                      text=("dataset", "method"))
        twice = df.duplicated(["dataset", "method"])
        if twice.any():
            raise PageError(f"{compute}:{_line(twice)}: a second row of dataset {df['dataset'][twice].iloc[0]!r}, "
                            f"method {df['method'][twice].iloc[0]!r}. Fix: {COMPUTE_FIX}")
        shown = df.pivot(index="dataset", columns="method", values="cpu_minutes")
        methods = [m for m in ("embed", "COMP", "MMI", "ICDA") if m in shown.columns]
        lines += ["", "CPU minutes of the offline reproduction's jobs per dataset (`compute.csv`; ICDA: every "
                  "iteration's training job, MMI's included):", "",
                  _table(["dataset", *methods, "all"],
                         [[_md(ds)] + [_num(shown.loc[ds, m]) for m in methods] + [_total(shown.loc[ds], methods)]
                          for ds in shown.index])]
    return "\n".join(lines)


def _total(cpu: pd.Series, methods: list[str]) -> str:
    """The CPU minutes of a dataset's jobs (MMI's are in ICDA's), "–" where none was measured."""
    values = [cpu[m] for m in methods if m != "MMI" and not pd.isna(cpu[m])]
    return _num(sum(values)) if values else "–"


def render(offline: Path, robustness: list[Path], provenance: dict) -> dict[str, str]:
    """{block name: its Markdown} from the given inputs; a placeholder where an input is absent."""
    blocks = {}
    collect_offline = f"{RUN} --collect --offline results/tables"
    if (offline / "all_results.csv").exists():
        entry = _entry(provenance, "offline", provenance.get("offline"))
        measured = _measured(entry, f"[results_inputs/offline/](results_inputs/offline/all_results.csv)")
        groups = group_tables(offline)
        if not groups:
            raise PageError(f"{offline}: no group table (<group>.csv: method, <dataset>_mean/_sd/_n)")
        again = "The same runs as the offline reproduction's table above (its measurement: [above](#the-offline-reproduction))."
        blocks["offline-table"] = offline_table(groups) + "\n\n" + measured
        blocks["offline-curves"] = offline_curves(read_all_results(offline)) + "\n\n" + again
        eraser = eraser_table(offline)
        blocks["eraser"] = placeholder(collect_offline) if eraser is None else eraser + "\n\n" + again
    else:
        blocks["offline-table"] = blocks["offline-curves"] = blocks["eraser"] = placeholder(collect_offline)
    runs = [read_runs(f) for f in robustness]
    main = [r[~r["dataset"].isin(HOTEL)] for r in runs]
    hotel = [r[r["dataset"].isin(HOTEL)] for r in runs]
    main, hotel = [r for r in main if len(r)], [r for r in hotel if len(r)]
    blocks["robustness"] = (robustness_block(main, provenance) if main else
                            placeholder(f"{RUN} --collect --robustness <benchmarks/robustness.py --out folder>"))
    blocks["hotel"] = (hotel_block(hotel, provenance) if hotel else
                       placeholder(f"{RUN} --collect --robustness <the --out folder of benchmarks/location.yaml's runs>"))
    cost = cost_block(provenance, offline)
    blocks["cost"] = cost if cost is not None else placeholder(f"fill in docs/results_inputs/provenance.yaml, then {RUN}")
    return blocks


def check_markers(page: str, where: str | Path = "the page") -> None:
    """Refuse a page whose markers (lines of their own) are unpaired, nested or repeated: the
    rewrite would take the prose between two of them for a block's content."""
    opened, seen = None, {}
    for m in _MARKER.finditer(page):
        line, marker, name = page.count("\n", 0, m.start()) + 1, m.group(0), m.group(1)
        if name is None and opened is None:
            raise PageError(f"{where}:{line}: {marker} closes no block. Fix: delete it, or put "
                            "<!-- generated: NAME --> on a line of its own above its block")
        if name is not None and opened is not None:
            raise PageError(f"{where}:{opened[0]}: {opened[1]} is not closed before the {marker} of line {line} "
                            "(markers unpaired or nested). Fix: delete the stray marker, or close the block with "
                            "<!-- /generated --> on a line of its own")
        if name is not None and name in seen:
            raise PageError(f"{where}:{line}: {marker} repeats the block of line {seen[name]}. Fix: keep one of them")
        if name is not None:
            seen[name] = line
            if not page.startswith("\n", m.end()):
                raise PageError(f"{where}:{line}: {marker} ends the page. Fix: add the block's "
                                "<!-- /generated --> on a line of its own below it")
        opened = None if name is None else (line, marker)
    if opened is not None:
        raise PageError(f"{where}:{opened[0]}: {opened[1]} is never closed. Fix: add <!-- /generated --> on a "
                        "line of its own after its block, or delete the stray marker")


def update(page: str, blocks: dict[str, str], where: str | Path = "the page") -> str:
    """``page`` with each generated block's content replaced by ``blocks[name]``."""
    check_markers(page, where)
    found = set(m.group(2) for m in _BLOCK.finditer(page))
    missing = [b for b in blocks if b not in found]
    if missing:
        raise PageError(f"{where}: the page has no block {missing} (<!-- generated: NAME --> ... <!-- /generated -->)")
    unknown = found - set(blocks)
    if unknown:
        raise PageError(f"{where}: the page has blocks this script does not write: {sorted(unknown)}")
    return _BLOCK.sub(lambda m: m.group(1) + blocks[m.group(2)].rstrip("\n") + "\n" + m.group(4), page)


# -- collecting the inputs ------------------------------------------------------------------------

def collect(offline: Path | None, robustness: list[Path], into: Path, provenance_path: Path) -> None:
    """Copy the page's inputs into ``into`` and add a provenance entry to fill in for each new one.

    The sources are checked first (:func:`check_sources`, then their files); the copies are made
    beside their places and replace the earlier ones together with provenance.yaml, so that a
    failed write (a full disk, a file-size limit) leaves the earlier inputs as they were."""
    check_sources(offline, robustness, into)
    if offline is not None:
        if not (offline / "all_results.csv").exists():
            raise PageError(f"{offline}: no all_results.csv (give the results/tables folder of the offline reproduction)")
        read_all_results(offline)
    for folder in robustness:
        read_runs(folder)  # checks the columns and the values
    provenance = load_provenance(provenance_path)
    staged: dict[Path, Path] = {}  # a copy's folder: the folder its files are copied into first
    try:
        if offline is not None:
            names = set(OFFLINE_FILES) | {p.name for p in offline.glob("*_eraser.csv")}
            names |= {p.name for p in offline.glob("*.csv") if _is_group(p)}
            staged[into / "offline"] = _stage(offline, [n for n in sorted(names) if (offline / n).exists()],
                                              into / "offline")
            old = provenance.get("offline")
            if isinstance(old, dict) and all(old.get(f, FILL) != FILL for f in ("commit", "date", "machine", "wall_min")):
                # the earlier measurement's time stays in the cost table; its tables are in git's history
                provenance["timings"] = [{k: old.get(k) for k in ("commit", "date", "machine", "wall_min", "cpu_min",
                                                                  "conditions")}] + list(provenance.get("timings") or [])
            provenance["offline"] = TEMPLATE | {"command": "snakemake --cores 2 --configfile config/offline.yaml"}
        for folder in robustness:
            staged[into / "robustness" / folder.name] = _stage(folder, ["runs.csv"], into / "robustness" / folder.name)
            provenance["robustness"] = dict(provenance.get("robustness") or {})
            provenance["robustness"][folder.name] = dict(TEMPLATE)  # new runs: their provenance anew
        order = ("offline", "robustness", "timings")
        provenance = {k: provenance[k] for k in order if k in provenance} | {k: v for k, v in provenance.items() if k not in order}
        text = provenance_path.read_text(encoding="utf-8") if provenance_path.exists() else ""
        header = "".join(line + "\n" for line in text.splitlines()[: _comment_lines(text)])
        with atomic_write(os.path.realpath(provenance_path)) as fh:
            fh.write(header + yaml.safe_dump(provenance, sort_keys=False, allow_unicode=True, width=200))
            fh.flush()
            for dest, tmp in staged.items():
                _replace(dest, tmp)
    finally:
        for tmp in staged.values():
            if tmp.exists():
                shutil.rmtree(tmp)


def check_sources(offline: Path | None, robustness: list[Path], into: Path) -> None:
    """Refuse, before anything is read or written, a source that --collect would destroy or could
    not file: the collected copy itself (or a folder holding it or inside it: --collect replaces
    the copy), a robustness folder without a name of its own (``.``, ``..``), two of one name."""
    if offline is None and not robustness:
        raise PageError("--collect: nothing to collect. Fix: give --offline <results>/tables and/or --robustness <folder>")
    if offline is not None:
        _not_the_copy("--offline", offline, into / "offline")
    names: dict[str, Path] = {}
    for folder in robustness:
        if folder.name in ("", ".", ".."):
            raise PageError(f"--robustness {folder}: has no name of its own to file its runs under "
                            f"({into / 'robustness'}/<name>). Fix: give the folder by its name, e.g. --robustness "
                            f"{Path('..') / Path(os.path.realpath(folder)).name}")
        if folder.name in names:
            raise PageError(f"--robustness {names[folder.name]} and {folder}: both would be collected as "
                            f"{into / 'robustness' / folder.name}. Fix: rename one of the folders")
        names[folder.name] = folder
        dest = into / "robustness" / folder.name
        _not_the_copy("--robustness", folder, dest)
        if same_file(folder / "runs.csv", dest / "runs.csv"):
            raise PageError(f"--robustness {folder}: its runs.csv is the collected copy {dest / 'runs.csv'}. "
                            "Fix: give the folder benchmarks/robustness.py wrote (the copy needs no --collect)")


def _not_the_copy(option: str, source: Path, dest: Path) -> None:
    try:
        check_output_dir("--into", dest, "the collected copy", folders={option: source})
    except ConfigError:
        raise PageError(f"{option} {source}: is, holds or lies inside the collected copy {dest}, which --collect "
                        "replaces. Fix: give the folder the run wrote (the collected copy needs no --collect: "
                        "run without it)") from None


def _stage(source: Path, names: list[str], dest: Path) -> Path:
    """A new folder beside ``dest`` holding copies of ``source``'s files ``names``."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent))
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o777 & ~umask)  # mkdtemp makes 0700; give the usual folder mode
    try:
        for name in names:
            try:
                shutil.copy2(source / name, tmp / name)
            except OSError as exc:
                raise OSError(exc.errno, exc.strerror, str(dest / name)) from exc
    except BaseException:
        shutil.rmtree(tmp)
        raise
    return tmp


def _replace(dest: Path, tmp: Path) -> None:
    """Put the folder ``tmp`` in the place of ``dest`` (the earlier copy, if any, is deleted)."""
    old = None
    if dest.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".old", dir=dest.parent))
        os.replace(dest, old / dest.name)
    os.replace(tmp, dest)
    if old is not None:
        shutil.rmtree(old)


def _comment_lines(text: str) -> int:
    """How many lines the leading comment of a YAML file has (kept when --collect rewrites it)."""
    lines = text.splitlines()
    n = 0
    while n < len(lines) and lines[n].startswith("#"):
        n += 1
    return n


def build_parser() -> argparse.ArgumentParser:
    """The command line of :func:`main` (its path arguments declared for the output guard, icda.guard)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_input(parser, "--offline", kind="tree", help="a results/tables folder (default: docs/results_inputs/offline)")
    add_input(parser, "--robustness", kind="tree", nargs="*",
                        help="benchmarks/robustness.py --out folders, each with its runs.csv "
                             "(default: the folders under docs/results_inputs/robustness)")
    add_output(parser, "--provenance", reads_when=lambda a: not a.collect, default=INPUTS / "provenance.yaml")
    add_output(parser, "--page", reads_when=lambda a: a.check, default=PAGE)
    parser.add_argument("--collect", action="store_true",
                        help="copy --offline and --robustness into docs/results_inputs/ first, then "
                             "generate from the copies")
    add_output(parser, "--into", kind="folder", when=lambda a: a.collect, default=INPUTS, help="where --collect copies to")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if the page would change")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(build_parser(), argv)
    try:
        if args.collect:
            collect(args.offline, args.robustness or [], args.into, args.provenance)
            offline, robustness = args.into / "offline", _folders(args.into / "robustness")
        else:
            if args.offline is not None and not (args.offline / "all_results.csv").is_file():
                raise PageError(f"--offline {args.offline}: no all_results.csv, so no run. Fix: give the results/tables "
                                "folder of the offline reproduction")
            offline = args.offline or INPUTS / "offline"
            robustness = args.robustness if args.robustness is not None else _folders(INPUTS / "robustness")
        provenance = load_provenance(args.provenance)
        page = args.page.read_text(encoding="utf-8")
        new = update(page, render(offline, robustness, provenance), args.page)
        if args.check:
            if new != page:
                sys.stdout.writelines(difflib.unified_diff(page.splitlines(True), new.splitlines(True),
                                                           str(args.page), "regenerated"))
                return 1
            return 0
        if new != page:
            with atomic_write(os.path.realpath(args.page)) as fh:
                fh.write(new)
            print(f"wrote {args.page}")
        else:
            print(f"{args.page} is up to date")
    except (PageError, IcdaError) as exc:
        print(_one_line(f"results_page: {exc}"), file=sys.stderr)
        return 2
    except OSError as exc:  # a full disk, a file-size limit, a file that cannot be read
        print(_one_line(f"results_page: {exc.filename or 'error'}: {exc.strerror or exc}"), file=sys.stderr)
        return 2
    return 0


def _one_line(message: str) -> str:
    """``message`` on one line: a line break in it (a file's name may hold one) written as an escape."""
    return "".join(c.encode("unicode_escape").decode("ascii") if len(f"a{c}b".splitlines()) > 1 else c
                   for c in message)


def _folders(root: Path) -> list[Path]:
    """The robustness folders under ``root`` (not the hidden ones --collect copies into first)."""
    return sorted(p.parent for p in root.glob("*/runs.csv") if not p.parent.name.startswith("."))


if __name__ == "__main__":
    sys.exit(main())
