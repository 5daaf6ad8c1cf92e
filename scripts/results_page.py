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

A block whose inputs are absent gets a one-line placeholder saying what to run.
"""

from __future__ import annotations

import argparse
import difflib
import math
import re
import shutil
import sys
from pathlib import Path

import pandas as pd
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from icda.report.paper import CAPTION as PAPER_CAPTION, PAPER_PRECISION, paper_table  # noqa: E402
from icda.report.tables import (ERASER_COLUMNS, METHODS, METRICS, _best, display_name,  # noqa: E402
                                eraser_cell)

INPUTS = REPO / "docs" / "results_inputs"
PAGE = REPO / "docs" / "results.md"
BLOCKS = ("offline-table", "offline-curves", "eraser", "robustness", "hotel", "cost")
_BLOCK = re.compile(r"(<!-- generated: ([\w-]+) -->\n)(.*?)(<!-- /generated -->)", re.S)

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
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise PageError(f"{path}: not a mapping (docs/results_inputs/README.md has the format)")
    return data


def _entry(provenance: dict, where: str, entry: dict | None, *, required=FIELDS) -> dict:
    if not isinstance(entry, dict):
        raise PageError(f"provenance: no entry for {where} (add one: docs/results_inputs/README.md)")
    missing = [f for f in required if entry.get(f, FILL) == FILL or (entry.get(f) is None and f != "cpu_min")]
    if missing:
        raise PageError(f"provenance: fill in {where}'s {', '.join(missing)} (docs/results_inputs/README.md)")
    return entry


def group_tables(offline: Path) -> list[pd.DataFrame]:
    """The group tables (``<group>.csv``: index method, columns ``<dataset>_mean/_sd/_n``), by name."""
    return [pd.read_csv(csv, index_col=0) for csv in sorted(offline.glob("*.csv")) if _is_group(csv)]


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
    path = folder / "runs.csv"
    df = pd.read_csv(path, dtype={"seeds": str, "curve": str})
    missing = {"dataset", "path", "seeds", "MMI", "CDA", "ICDA", "icda_iteration", "curve"} - set(df.columns)
    if missing:
        raise PageError(f"{path}: columns {sorted(missing)} missing (benchmarks/robustness.py writes them)")
    return df.assign(measurement=folder.name)


# -- formatting ---------------------------------------------------------------------------------

def _num(x: float, digits: int = 1) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def _mean_sd(values: pd.Series) -> str:
    sd = values.std(ddof=1) if len(values) > 1 else math.nan
    return f"{values.mean():.1f} ± {_num(sd)}"


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(map(str, r)) + " |" for r in rows])


def _seeds(seeds: str) -> str:
    s = seeds.split()
    return f"{s[0]}–{s[-1]}" if len(s) > 1 else s[0]


def _measured(entry: dict, inputs: str) -> str:
    cpu = "" if entry.get("cpu_min") is None else f", {_num(float(entry['cpu_min']))} CPU min"
    conditions = f" ({entry['conditions']})" if entry.get("conditions") else ""
    return (f"Measured: `{entry['command']}` at commit {entry['commit']}, {entry['machine']}, {entry['date']}: "
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
    text = _table(["method"] + [display_name(ds) for ds, _ in columns],
                  [[m] + [cells.get(m, "–") for _, cells in columns] for m in order])
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
        cells = [f"**{100 * p:.1f}**" if int(i) == k else f"{100 * p:.1f}"
                 for i, p in zip(curve["iteration"], curve["precision"])]
        gain = "–" if k is None else f"{100 * (curve.set_index('iteration').loc[k, 'precision'] - curve['precision'].iloc[0]):+.1f}"
        rows.append([dataset, int(run), " → ".join(cells), gain])
    return _table(["dataset", "run", "test precision % per iteration (0 = MMI, 1 = CDA, ICDA in bold)", "ICDA − MMI"], rows)


def eraser_table(offline: Path) -> str | None:
    parts = [pd.read_csv(p, index_col=[0, 1]) for p in sorted(offline.glob("*_eraser.csv"))]
    parts = [p for p in parts if len(p)]
    if not parts:
        return None
    rows = []
    for df in parts:
        for (ds, method), row in df.iterrows():
            rows.append([display_name(ds), method] + [eraser_cell(c, row[f"{c}_mean"], row[f"{c}_sd"])
                                                      for c in ERASER_COLUMNS])
    return _table(["dataset", "method", *ERASER_COLUMNS.values()], rows)


def summary_rows(runs: pd.DataFrame, label: str) -> list[str]:
    worst = runs.loc[(runs["ICDA"] - runs["MMI"]).idxmin()]
    low = runs.loc[runs["ICDA"].idxmin()]
    paths = "/".join(sorted(set(runs["path"])))
    return [label, str(len(runs)), paths, _mean_sd(runs["MMI"]), _mean_sd(runs["CDA"]), f"**{_mean_sd(runs['ICDA'])}**",
            f"{low['ICDA']:.1f} (seeds {_seeds(low['seeds'])})",
            f"{worst['ICDA'] - worst['MMI']:+.1f} (seeds {_seeds(worst['seeds'])})",
            f"{int((runs['ICDA'] < runs['MMI']).sum())}/{len(runs)}", f"{int((runs['ICDA'] < runs['CDA']).sum())}/{len(runs)}"]


SUMMARY = ["dataset", "runs", "kernel path", "MMI", "CDA", "ICDA", "lowest ICDA", "smallest gain: ICDA − MMI",
           "ICDA < MMI", "ICDA < CDA"]


def robustness_block(runs: list[pd.DataFrame], provenance: dict) -> str:
    """Per dataset (and, with several measurements, per measurement and over all of them) the summary."""
    df = pd.concat(runs, ignore_index=True)
    rows = []
    for dataset, part in df.groupby("dataset", sort=True):
        names = sorted(set(part["measurement"]))
        if len(names) > 1:
            rows += [summary_rows(part[part["measurement"] == n], f"{dataset} (`{n}`)") for n in names]
            rows.append(summary_rows(part, f"{dataset}, all"))
        else:
            rows.append(summary_rows(part, dataset))
    return _runs_table(rows, df, provenance)


def _runs_table(rows: list[list[str]], df: pd.DataFrame, provenance: dict) -> str:
    """The summary table of ``rows``, then how each robustness folder of ``df`` was measured."""
    lines = [_table(SUMMARY, rows), ""]
    for name in sorted(set(df["measurement"])):
        entry = _entry(provenance, f"robustness: {name}", (provenance.get("robustness") or {}).get(name))
        lines.append(f"- `{name}`: " + _measured(entry, f"[results_inputs/robustness/{name}/runs.csv]"
                                                 f"(results_inputs/robustness/{name}/runs.csv)"))
    return "\n".join(lines)


def hotel_block(runs: list[pd.DataFrame], provenance: dict) -> str:
    df = pd.concat(runs, ignore_index=True)
    rows = []
    for dataset, part in df.groupby("dataset", sort=True):
        rows.append(summary_rows(part, f"{dataset}, this project (frozen MiniLM)"))
        paper = PAPER_PRECISION.get(dataset)
        if paper:
            rows.append([f"{dataset}, the paper (fine-tuned BERT)", "3", "GPU"]
                        + [f"{m:.1f} ± {s:.1f}" for m, s in (paper["MMI"], paper["CDA"])]
                        + [f"{paper['ICDA'][0]:.1f} ± {paper['ICDA'][1]:.1f}", "–", "–", "–", "–"])
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
        where = source if source in (None, "this page") else f"[{source}]({source})"
        rows.append([t["date"], t["commit"], t["machine"], f"{_num(float(t['wall_min']))} min",
                     "–" if t.get("cpu_min") is None else f"{_num(float(t['cpu_min']))} min",
                     t.get("conditions") or "–", where or "–"])
    lines = [_table(["date", "commit", "machine", "wall", "CPU", "conditions", "reported in"], rows)]
    compute = offline / "compute.csv"
    if compute.exists():
        df = pd.read_csv(compute)
        shown = df.pivot(index="dataset", columns="method", values="cpu_minutes")
        methods = [m for m in ("embed", "COMP", "MMI", "ICDA") if m in shown.columns]
        lines += ["", "CPU minutes of the offline reproduction's jobs per dataset (`compute.csv`; ICDA: every "
                  "iteration's training job, MMI's included):", "",
                  _table(["dataset", *methods, "all"],
                         [[ds] + [_num(shown.loc[ds, m]) for m in methods]
                          + [_num(sum(shown.loc[ds, m] for m in methods if m != "MMI" and not pd.isna(shown.loc[ds, m])))]
                          for ds in shown.index])]
    return "\n".join(lines)


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
        blocks["offline-table"] = offline_table(groups) + "\n\n" + measured
        blocks["offline-curves"] = offline_curves(pd.read_csv(offline / "all_results.csv")) + "\n\n" + measured
        eraser = eraser_table(offline)
        blocks["eraser"] = placeholder(collect_offline) if eraser is None else eraser + "\n\n" + measured
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


def update(page: str, blocks: dict[str, str]) -> str:
    """``page`` with each generated block's content replaced by ``blocks[name]``."""
    found = set(m.group(2) for m in _BLOCK.finditer(page))
    missing = [b for b in blocks if b not in found]
    if missing:
        raise PageError(f"the page has no block {missing} (<!-- generated: NAME --> ... <!-- /generated -->)")
    unknown = found - set(blocks)
    if unknown:
        raise PageError(f"the page has blocks this script does not write: {sorted(unknown)}")
    return _BLOCK.sub(lambda m: m.group(1) + blocks[m.group(2)].rstrip("\n") + "\n" + m.group(4), page)


# -- collecting the inputs ------------------------------------------------------------------------

def collect(offline: Path | None, robustness: list[Path], into: Path, provenance_path: Path) -> None:
    """Copy the page's inputs into ``into`` and add a provenance entry to fill in for each new one."""
    provenance = load_provenance(provenance_path)
    if offline is not None:
        if not (offline / "all_results.csv").exists():
            raise PageError(f"{offline}: no all_results.csv (give the results/tables folder of the offline reproduction)")
        dest = into / "offline"
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        names = set(OFFLINE_FILES) | {p.name for p in offline.glob("*_eraser.csv")}
        names |= {p.name for p in offline.glob("*.csv") if _is_group(p)}
        for name in sorted(names):
            if (offline / name).exists():
                shutil.copy2(offline / name, dest / name)
        old = provenance.get("offline")
        if isinstance(old, dict) and all(old.get(f, FILL) != FILL for f in ("commit", "date", "machine", "wall_min")):
            # the earlier measurement's time stays in the cost table; its tables are in git's history
            provenance["timings"] = [{k: old.get(k) for k in ("commit", "date", "machine", "wall_min", "cpu_min",
                                                              "conditions")}] + list(provenance.get("timings") or [])
        provenance["offline"] = TEMPLATE | {"command": "snakemake --cores 2 --configfile config/offline.yaml"}
    for folder in robustness:
        read_runs(folder)  # checks the columns
        dest = into / "robustness" / folder.name
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copy2(folder / "runs.csv", dest / "runs.csv")
        provenance["robustness"] = dict(provenance.get("robustness") or {})
        provenance["robustness"][folder.name] = dict(TEMPLATE)  # new runs: their provenance anew
    order = ("offline", "robustness", "timings")
    provenance = {k: provenance[k] for k in order if k in provenance} | {k: v for k, v in provenance.items() if k not in order}
    provenance_path.parent.mkdir(parents=True, exist_ok=True)
    text = provenance_path.read_text(encoding="utf-8") if provenance_path.exists() else ""
    header = "".join(line + "\n" for line in text.splitlines()[: _comment_lines(text)])
    provenance_path.write_text(header + yaml.safe_dump(provenance, sort_keys=False, allow_unicode=True, width=200),
                               encoding="utf-8")



def _comment_lines(text: str) -> int:
    """How many lines the leading comment of a YAML file has (kept when --collect rewrites it)."""
    lines = text.splitlines()
    n = 0
    while n < len(lines) and lines[n].startswith("#"):
        n += 1
    return n


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--offline", type=Path, help="a results/tables folder (default: docs/results_inputs/offline)")
    parser.add_argument("--robustness", type=Path, nargs="*",
                        help="benchmarks/robustness.py --out folders, each with its runs.csv "
                             "(default: the folders under docs/results_inputs/robustness)")
    parser.add_argument("--provenance", type=Path, default=INPUTS / "provenance.yaml")
    parser.add_argument("--page", type=Path, default=PAGE)
    parser.add_argument("--collect", action="store_true",
                        help="copy --offline and --robustness into docs/results_inputs/ first, then "
                             "generate from the copies")
    parser.add_argument("--into", type=Path, default=INPUTS, help="where --collect copies to")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if the page would change")
    args = parser.parse_args(argv)
    try:
        if args.collect:
            collect(args.offline, args.robustness or [], args.into, args.provenance)
            offline, robustness = args.into / "offline", _folders(args.into / "robustness")
        else:
            offline = args.offline or INPUTS / "offline"
            robustness = args.robustness if args.robustness is not None else _folders(INPUTS / "robustness")
        provenance = load_provenance(args.provenance)
        page = args.page.read_text(encoding="utf-8")
        new = update(page, render(offline, robustness, provenance))
    except PageError as exc:
        print(f"results_page: {exc}", file=sys.stderr)
        return 2
    if args.check:
        if new != page:
            sys.stdout.writelines(difflib.unified_diff(page.splitlines(True), new.splitlines(True),
                                                       str(args.page), "regenerated"))
            return 1
        return 0
    if new != page:
        args.page.write_text(new, encoding="utf-8")
        print(f"wrote {args.page}")
    else:
        print(f"{args.page} is up to date")
    return 0


def _folders(root: Path) -> list[Path]:
    return sorted(p.parent for p in root.glob("*/runs.csv"))


if __name__ == "__main__":
    sys.exit(main())
