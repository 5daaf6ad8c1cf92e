"""Result tables: the paper's Tables 1 and 2 (rationale precision of COMP, MMI, CDA and ICDA).

Inputs are the ``eval.json`` files the ``evaluate`` step writes, one per (dataset, run,
iteration) and one per (dataset, run) for the COMP baseline (``"iteration": null``).
Method assignment follows the paper (section "Experiments"): iteration 0 is MMI, iteration 1 is
CDA and ICDA is the iteration the run's stop rule took (its ``summary.json``'s
``final_iteration``; without summaries, the run's last iteration; never iteration 0:
:func:`icda.records.icda_iteration`). One model can play two roles
(a run that takes iteration 1 has CDA = ICDA); the long form then holds that file once per role.

Numbers in the tables are percentages (precision × 100), mean ± sample standard deviation
(``ddof=1``) over the runs, one decimal, as in the paper. A cell with a single run reads
``"54.6 ± –"`` (no spread can be estimated from one run); a method with no result reads ``"–"``.

Beside them, with the ``baselines.json`` of the datasets (:mod:`icda.report.baselines`), the
precision tables get the rows ``Random`` (k random sentences per document) and, where a dataset
of the table has ``keywords``, ``Keyword``: mean ± sd over the baseline's draws, never bold.
With the ``eraser_scores.json`` of each run's MMI, CDA, ICDA and COMP selector
(:class:`icda.records.EraserScores`, ``python -m icda export-eraser``), each group also gets
``<group>_eraser.csv``/``.md``: ERASER's metrics (:data:`ERASER_COLUMNS`) per dataset and
method, mean ± sd over the runs.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Iterable

import pandas as pd

from icda.data.document import read_small_data
from icda.errors import DataError, rebuild_fix
from icda.io import atomic_path, atomic_write
from icda.report.inputs import ERASER_SUFFIX
from icda.report.paper import CAPTION as PAPER_CAPTION, paper_table
from icda.records import Baselines, EraserScores, Evaluation, RunSummary, icda_iteration

log = logging.getLogger(__name__)

#: table rows, in the paper's order
METHODS = ["COMP", "MMI", "CDA", "ICDA"]

#: columns of :func:`load_evaluations`' long form
CLASS_COLUMNS = ["precision_class0", "precision_class1"]  #: from eval.json's precision_by_class (C > 2: more)
COLUMNS = ["dataset", "run", "iteration", "method", "precision", "recall", "f1", "accuracy",
           "n_docs", *CLASS_COLUMNS]

#: metrics a table can be made of (all fractions in [0, 1] in eval.json)
METRICS = ("precision", "recall", "f1", "accuracy")

#: column headers of the Markdown and LaTeX tables (the paper's names); others are title-cased
DISPLAY_NAMES = {"palate": "Palatability", "connect": "Connectivity"}

#: what each group's data is, for the caption
GROUP_DATA = {
    "table1_real": "real data (beer and hotel reviews, human-annotated rationales)",
    "table2_llm": "LLM generated data",
    "synthetic": "synthetic data (generated reviews with a spurious aspect)",
    "synthetic_multiclass": "synthetic data with more than two classes (generated reviews with a spurious aspect)",
    "your_datasets": "your datasets (those in no report.groups table)",  # OWN_GROUP
}

METRIC_NAMES = {"precision": "Rationale precision", "recall": "Rationale recall",
                "f1": "Rationale F1", "accuracy": "Classification accuracy"}

DASH = "–"  # en dash: a missing value

#: the chance rows of the precision tables (:mod:`icda.report.baselines`), after :data:`METHODS`
BASELINE_ROWS = {"Random": "random", "Keyword": "keyword"}

#: the columns of the ERASER tables (:attr:`icda.records.EraserScores.SUMMARY`) with their headers;
#: the P/R/F1, IOU and AUPRC columns in percent (one decimal), the others as they are (three decimals)
ERASER_COLUMNS = {"sentence_p": "Sent. P", "sentence_r": "Sent. R", "sentence_f1": "Sent. F1",
                  "token_p": "Token P", "token_r": "Token R", "token_f1": "Token F1", "iou_f1": "IOU F1",
                  "sentence_auprc": "Sent. AUPRC", "comprehensiveness": "Comp.", "sufficiency": "Suff.",
                  "comprehensiveness_aopc": "Comp. AOPC", "sufficiency_aopc": "Suff. AOPC"}

def read_evaluation(path: str | Path) -> Evaluation:
    """Read one ``eval.json`` (:class:`icda.records.Evaluation`) as a table row's source: it must
    name its dataset and run, and have a precision.

    Raises:
        DataError: the file is missing, is not JSON (line given), or a field is missing, of the
            wrong type or out of range (NaN/Infinity included).
    """
    evaluation = Evaluation.read(path)
    for name in ("dataset", "run", "precision"):
        if getattr(evaluation, name) is None:
            raise DataError(path, None, f"not an evaluation record of the workflow: field '{name}' is missing or null",
                            rebuild_fix(path, "evaluate"))
    return evaluation


def icda_iterations(summaries: Iterable[str | Path] | None) -> dict[tuple[str, int], int]:
    """{(dataset, run): the iteration taken as ICDA} from run ``summary.json`` files (none: {}),
    by :func:`icda.records.icda_iteration` (a run with only iteration 0 is left out: no ICDA).

    Raises:
        DataError: a file is missing or malformed.
    """
    out = {}
    for path in summaries or []:
        summary = RunSummary.read(path)
        if summary.icda_iteration is not None:
            out[summary.dataset, summary.run] = summary.icda_iteration
    return out


def verdict_lines(summaries: Iterable[str | Path] | None) -> dict[tuple[str, int], str]:
    """{(dataset, run): :func:`verdict_line`} of the runs with a verdict, from ``summary.json`` files.

    Raises:
        DataError: a file is missing or malformed.
    """
    summaries = [RunSummary.read(path) for path in summaries or []]
    return {(s.dataset, s.run): verdict_line(s) for s in summaries if s.verdict is not None}


def verdict_line(summary: RunSummary) -> str:
    """A run's verdict in the words a researcher reads: "ICDA helped (…)", "ICDA did not apply (…)",
    "ICDA went the wrong way (…)" or "ICDA's effect was not measured (…)"."""
    words = {"helped": "ICDA helped", "did not apply": "ICDA did not apply", "wrong way": "ICDA went the wrong way",
             "not measured": "ICDA's effect was not measured"}
    return f"{words[summary.verdict]} ({summary.verdict_reason})"


def run_notes(summaries: Iterable[str | Path] | None,
              stats: Iterable[str | Path] | None = None) -> dict[str, list[str]]:
    """{dataset: the lines a reader needs beside the numbers}: first, from a prepared data
    folder's ``stats.json`` (``stats``), ``prepare``'s warning that the training split is smaller
    than the size at which the loop was measured to be reliable; then, from each run's
    ``summary.json``: every run's verdict (:func:`verdict_line`: whether ICDA helped, did not
    apply or went the wrong way, measured without ground truth); a run whose ICDA is not its last iteration (which
    iteration it reports, and why: its final choice, e.g. ``icda.final_choice: rationale_probe``
    when the loop made the rationales worse; departure 29), and a run that did not converge (it
    stopped at ``icda.max_iters``, so its ICDA is where the loop stopped; on restaurant, connect and
    location most runs do: ΔA stays at the fresh candidates' disagreement, above
    ``icda.stop_delta_a``, docs/experiments/loop-guard.md). Other runs are left out.

    Raises:
        DataError: a file is missing or malformed.
    """
    out: dict[str, list[str]] = {}
    for path in stats or []:
        dataset, small = read_small_data(path)
        if small is not None:
            out.setdefault(dataset, []).append(small)
    for path in summaries or []:
        summary = RunSummary.read(path)
        k, last = summary.icda_iteration, summary.iterations - 1
        lines = out.setdefault(summary.dataset, [])
        if summary.verdict is not None:
            lines.append(f"{summary.dataset} run {summary.run}: {verdict_line(summary)}")
        if k is not None and k != last and not (k == 0 and summary.verdict in ("did not apply", "wrong way")):
            what = "MMI, iteration 0" if k == 0 else f"iteration {k}"
            lines.append(f"{summary.dataset} run {summary.run}: ICDA is {what}, not the last ({last}): {summary.final_reason}")
        if summary.blocked:
            lines.append(f"{summary.dataset} run {summary.run}: stopped at iteration {last}: {summary.reason}")
        elif not summary.converged and last >= 1:
            lines.append(f"{summary.dataset} run {summary.run}: did not converge ({summary.reason}): its ICDA is "
                         "where the loop stopped, not a fixed point")
    return {dataset: lines for dataset, lines in out.items() if lines}


def load_baselines(paths: Iterable[str | Path] | None) -> dict[str, Baselines]:
    """{dataset: its :class:`icda.records.Baselines`} from ``baselines.json`` files (none: {}).

    Raises:
        DataError: a file is missing or malformed, or two files are of the same dataset.
    """
    out, origin = {}, {}
    for path in paths or []:
        record = Baselines.read(path)
        if record.dataset in out:
            raise DataError(path, None, f"the baselines of {record.dataset} are also in {origin[record.dataset]}",
                            "pass each dataset's baselines.json once")
        out[record.dataset], origin[record.dataset] = record, path
    return out


def load_eraser(paths: Iterable[str | Path], evaluations: pd.DataFrame) -> pd.DataFrame:
    """Read ``eraser_scores.json`` files into a long form, one row per (file, method role).

    The roles are those of the evaluation of the same (dataset, run, iteration) in
    ``evaluations`` (:func:`load_evaluations`): iteration 0 is MMI, 1 CDA, the taken one ICDA,
    no iteration COMP; a file of an intermediate iteration gets no row.

    Returns:
        DataFrame with columns dataset, run, iteration (Int64, <NA> for COMP), method, one
        float column per :data:`ERASER_COLUMNS` (NaN where ERASER has no number) and
        ``gold_labels`` (False where the test set had no gold label: ERASER's classification
        accuracy is n/a; no column of the tables needs one).

    Raises:
        DataError: a file is malformed (:class:`icda.records.EraserScores`), lacks its dataset or
            run, has no evaluation among ``evaluations``, or repeats another's (dataset, run,
            iteration).
    """
    roles: dict[tuple, list[str]] = {}
    for row in evaluations.itertuples(index=False):
        key = (row.dataset, int(row.run), None if pd.isna(row.iteration) else int(row.iteration))
        roles.setdefault(key, [])
        if not pd.isna(row.method):
            roles[key].append(row.method)
    rows, origin = [], {}
    for path in paths:
        record = EraserScores.read(path)
        for name in ("dataset", "run"):
            if getattr(record, name) is None:
                raise DataError(path, None, f"not ERASER scores of the workflow: field '{name}' is missing or null",
                                "write it with `python -m icda export-eraser ... --scores FILE --dataset NAME "
                                "--run R [--iteration K]` (no --iteration for COMP)")
        key = (record.dataset, record.run, record.iteration)
        what = "COMP" if key[2] is None else f"iteration {key[2]}"
        if key in origin:
            raise DataError(path, None, f"{key[0]} run {key[1]} {what} is also in {origin[key]}",
                            "pass each ERASER scores file once")
        origin[key] = Path(path)
        if key not in roles:
            raise DataError(path, None, f"no evaluation (eval.json) of {key[0]} run {key[1]} {what} was given, so "
                            "its method (MMI, CDA, ICDA, COMP) is not known",
                            "pass the eval.json files of every iteration of the run and of its COMP")
        values = record.summary()
        gold = record.classification_scores.get("gold_labels")  # absent in files written before it
        for method in roles[key]:
            rows.append({"dataset": key[0], "run": key[1], "iteration": key[2], "method": method}
                        | {c: values[c] for c in ERASER_COLUMNS} | {"gold_labels": gold != 0})
    df = pd.DataFrame(rows, columns=["dataset", "run", "iteration", "method", *ERASER_COLUMNS, "gold_labels"])
    return df.astype({"dataset": "string", "run": "int64", "iteration": "Int64", "method": "string",
                      "gold_labels": "bool"} | dict.fromkeys(ERASER_COLUMNS, "float64"))


def load_evaluations(paths: Iterable[str | Path], icda: dict[tuple[str, int], int] | None = None) -> pd.DataFrame:
    """Read ``eval.json`` files into the long form, one row per (file, method role).

    Returns:
        DataFrame with columns :data:`COLUMNS`: dataset (str), run (int), iteration (nullable
        Int64; <NA> for COMP), method ("COMP", "MMI", "CDA", "ICDA", or <NA> for an
        intermediate iteration 2 … last−1), precision/recall/f1/accuracy (float fractions, NaN
        where the file has null), n_docs (nullable Int64), precision_class0/precision_class1
        (the precision over each gold class's documents; NaN where not recorded), and
        precision_class2 … for every further class an evaluation records (C > 2 classes). Per (dataset,
        run): iteration 0 → MMI, 1 → CDA, ``icda[(dataset, run)]`` (:func:`icda_iterations`;
        for a run not in it, the highest iteration present: :func:`icda.records.icda_iteration`)
        → ICDA (paper section "Experiments"), never iteration 0: a run with only iteration 0
        has no CDA and no ICDA yet (:func:`unfinished_runs`); a file with two roles appears once per role. Sorted by
        dataset, run, iteration.

    Raises:
        DataError: a file is malformed (see :func:`read_evaluation`); two files claim the same
            (dataset, run, iteration) or the same COMP run; a run's iterations have a gap
            (e.g. 0, 1, 3: iteration 2 missing, so the last present may not be ICDA).
    """
    records, origin = [], {}
    for path in paths:
        evaluation = read_evaluation(path)
        key = (evaluation.dataset, evaluation.run, evaluation.iteration)
        if key in origin:
            what = "COMP" if key[2] is None else f"iteration {key[2]}"
            raise DataError(path, None,
                            f"{key[0]} run {key[1]} {what} is also in {origin[key]}",
                            "pass each evaluation file once")
        origin[key] = Path(path)
        records.append({c: getattr(evaluation, c) for c in COLUMNS if c not in ("method", *CLASS_COLUMNS)}
                       | {f"precision_class{c}": p for c, p in (evaluation.precision_by_class or {}).items()})
    classes = sorted({0, 1} | {int(c[len("precision_class"):]) for rec in records for c in rec
                               if c.startswith("precision_class")})
    class_columns = [f"precision_class{c}" for c in classes]

    rows = []
    iterations: dict[tuple[str, int], list[int]] = {}
    for rec in records:
        if rec["iteration"] is not None:
            iterations.setdefault((rec["dataset"], rec["run"]), []).append(rec["iteration"])
    for (dataset, run), its in iterations.items():
        its.sort()
        if its != list(range(its[-1] + 1)):
            missing = sorted(set(range(its[-1] + 1)) - set(its))
            raise DataError(origin[(dataset, run, its[-1])], None,
                            f"{dataset} run {run} has iterations {its}: iteration(s) "
                            f"{missing} missing, so MMI/CDA/ICDA cannot be assigned (ICDA is "
                            "the run's last iteration)",
                            "pass the evaluation files of every iteration of the run")
    for rec in records:
        k = rec["iteration"]
        if k is None:
            roles = ["COMP"]
        else:
            key = (rec["dataset"], rec["run"])
            taken = icda_iteration(iterations[key], (icda or {}).get(key))
            roles = [m for m, hit in (("MMI", k == 0), ("CDA", k == 1), ("ICDA", k == taken)) if hit]
        for role in roles or [None]:
            rows.append({**rec, "method": role})

    df = pd.DataFrame(rows, columns=[c for c in COLUMNS if c not in CLASS_COLUMNS] + class_columns)
    df = df.astype({"dataset": "string", "run": "int64", "iteration": "Int64", "method": "string",
                    "precision": "float64", "recall": "float64", "f1": "float64",
                    "accuracy": "float64", "n_docs": "Int64"} | dict.fromkeys(class_columns, "float64"))
    order = df["method"].map({m: i for i, m in enumerate(METHODS)})
    return (df.assign(_order=order)
              .sort_values(["dataset", "run", "iteration", "_order"], na_position="first")
              .drop(columns="_order").reset_index(drop=True))


def unfinished_runs(df: pd.DataFrame, datasets: list[str]) -> list[str]:
    """One line per dataset of ``datasets`` with runs that have only iteration 0 (MMI) so far
    (``df``: :func:`load_evaluations`), e.g. ``"restaurant: run 2 has only iteration 0 (MMI): no
    CDA or ICDA yet"``; the tables show CDA and ICDA over the other runs, or "–"."""
    runs = df.dropna(subset=["iteration"]).groupby(["dataset", "run"])["iteration"].max()
    lines = []
    for dataset in datasets:
        only_mmi = [int(run) for (ds, run), last in runs.items() if ds == dataset and last == 0]
        if only_mmi:
            which = f"run {only_mmi[0]} has" if len(only_mmi) == 1 else f"runs {', '.join(map(str, only_mmi))} have"
            lines.append(f"{dataset}: {which} only iteration 0 (MMI): no CDA or ICDA yet")
    return lines


def method_stats(df: pd.DataFrame, datasets: list[str], metric: str = "precision") -> pd.DataFrame:
    """Mean, sample sd (ddof=1) and number of runs of ``metric`` in percent, per method and dataset.

    Args:
        df: long form from :func:`load_evaluations`.
        datasets: column order; datasets absent from ``df`` get all-NaN columns (n = 0).
        metric: one of :data:`METRICS`.

    Returns:
        DataFrame indexed by :data:`METHODS` with MultiIndex columns (dataset, stat), stat in
        ("mean", "sd", "n"); mean and sd in percent; sd is NaN with fewer than two runs.
        Runs whose metric is null (e.g. accuracy on unlabelled test files) do not count.
    """
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, not {metric!r}")
    values = df.dropna(subset=["method", metric])
    grouped = (values.assign(value=values[metric] * 100.0)
               .groupby(["method", "dataset"])["value"]
               .agg(mean="mean", sd=lambda s: s.std(ddof=1), n="count"))
    columns = pd.MultiIndex.from_product([datasets, ["mean", "sd", "n"]],
                                         names=["dataset", "stat"])
    out = pd.DataFrame(index=pd.Index(METHODS, name="method"), columns=columns, dtype="float64")
    for (method, dataset), row in grouped.iterrows():
        if dataset in datasets:
            for stat in ("mean", "sd", "n"):
                out.loc[method, (dataset, stat)] = row[stat]
    for dataset in datasets:
        out[(dataset, "n")] = out[(dataset, "n")].fillna(0).astype("int64")
    return out


def baseline_stats(baselines: dict[str, Baselines], datasets: list[str]) -> pd.DataFrame:
    """Mean, sample sd (ddof=1) and number of draws of each baseline's precision in percent, in
    :func:`method_stats`' layout, indexed by the rows of :data:`BASELINE_ROWS` that some dataset
    of ``datasets`` has (``Keyword``: only with ``keywords``; none without baselines)."""
    rows = [row for row, field in BASELINE_ROWS.items()
            if any(getattr(baselines[ds], field) is not None for ds in datasets if ds in baselines)]
    columns = pd.MultiIndex.from_product([datasets, ["mean", "sd", "n"]], names=["dataset", "stat"])
    out = pd.DataFrame(index=pd.Index(rows, name="method"), columns=columns, dtype="float64")
    for row in rows:
        for ds in datasets:
            draws = getattr(baselines[ds], BASELINE_ROWS[row]) if ds in baselines else None
            values = pd.Series([v for v in draws or [] if v is not None], dtype="float64") * 100.0
            out.loc[row, (ds, "mean")] = values.mean() if len(values) else math.nan
            out.loc[row, (ds, "sd")] = values.std(ddof=1) if len(values) > 1 else math.nan
            out.loc[row, (ds, "n")] = len(values)
    for ds in datasets:
        out[(ds, "n")] = out[(ds, "n")].fillna(0).astype("int64")
    return out


def eraser_stats(df: pd.DataFrame, datasets: list[str]) -> pd.DataFrame:
    """Mean and sample sd (ddof=1) over runs of each :data:`ERASER_COLUMNS` per dataset and method.

    Args:
        df: long form from :func:`load_eraser`.
        datasets: row order; only those with scores get rows.

    Returns:
        DataFrame indexed by (dataset, method) (methods in :data:`METHODS` order, those with
        scores), columns ``<metric>_mean``, ``<metric>_sd`` (the file's units: fractions) and ``n``
        (runs); sd NaN with fewer than two runs.
    """
    index, records = [], []
    for ds in datasets:
        for method in METHODS:
            part = df[(df["dataset"] == ds) & (df["method"] == method)]
            if part.empty:
                continue
            index.append((ds, method))
            rec = {"n": len(part)}
            for c in ERASER_COLUMNS:
                rec[f"{c}_mean"] = part[c].mean()
                rec[f"{c}_sd"] = part[c].std(ddof=1) if part[c].count() > 1 else math.nan
            records.append(rec)
    columns = [f"{c}_{stat}" for c in ERASER_COLUMNS for stat in ("mean", "sd")] + ["n"]
    return pd.DataFrame(records, columns=columns,
                        index=pd.MultiIndex.from_tuples(index, names=["dataset", "method"]) if index
                        else pd.MultiIndex.from_arrays([[], []], names=["dataset", "method"]))


def eraser_cell(column: str, mean: float, sd: float) -> str:
    """An ERASER table's cell: P/R/F1, IOU and AUPRC in percent with one decimal
    (``"54.6 ± 5.0"``), comprehensiveness, sufficiency and AOPC as they are with three
    (``"0.123 ± 0.010"``); ``"± –"`` for one run, ``"–"`` without a number."""
    if math.isnan(mean):
        return DASH
    _, (low, _) = EraserScores.SUMMARY[column]
    scale, digits = (100.0, 1) if low == 0 else (1.0, 3)
    spread = DASH if math.isnan(sd) else f"{sd * scale:.{digits}f}"
    shown = round(mean * scale, digits) + 0.0  # + 0.0: a mean of -1e-10 shows as 0.000, not -0.000
    return f"{shown:.{digits}f} ± {spread}"


def _cell(mean: float, sd: float) -> str:
    if math.isnan(mean):
        return DASH
    return f"{mean:.1f} ± {DASH if math.isnan(sd) else f'{sd:.1f}'}"


def method_table(df: pd.DataFrame, datasets: list[str], metric: str = "precision") -> pd.DataFrame:
    """The paper's Table 1/2 layout as strings.

    Returns:
        DataFrame with rows COMP, MMI, CDA, ICDA (index name "method"), one column per dataset
        in ``datasets`` order, cells ``"54.6 ± 5.0"`` (percent, one decimal, sample sd over
        runs), ``"54.6 ± –"`` for a single run and ``"–"`` where the method has no result.
    """
    stats = method_stats(df, datasets, metric)
    table = pd.DataFrame(
        {ds: [_cell(stats.loc[m, (ds, "mean")], stats.loc[m, (ds, "sd")]) for m in METHODS]
         for ds in datasets},
        index=pd.Index(METHODS, name="method"), columns=datasets)
    return table


def display_name(dataset: str) -> str:
    """Column header for a dataset: the paper's name (``palate`` → ``Palatability``)."""
    return DISPLAY_NAMES.get(dataset, dataset.replace("_", " ").title())


def _best(stats: pd.DataFrame, dataset: str) -> set[str]:
    """Methods whose mean, shown to one decimal, is the column's highest (bold in the paper)."""
    means = stats[(dataset, "mean")].round(1)
    if means.isna().all():
        return set()
    return set(means.index[means == means.max()])


def _latex_cell(mean: float, sd: float, bold: bool) -> str:
    if math.isnan(mean):
        return "--"
    value = rf"\textbf{{{mean:.1f}}}" if bold else f"{mean:.1f}"
    spread = "--" if math.isnan(sd) else f"{sd:.1f}"
    return rf"{value} \tiny{{$\pm$ {spread}}}"


def _runs_phrase(stats: pd.DataFrame, datasets: list[str]) -> str:
    ns = sorted({int(stats.loc[m, (ds, "n")]) for m in METHODS for ds in datasets} - {0})
    if not ns:
        return "runs"
    if len(ns) == 1:
        return f"{ns[0]} run" + ("s" if ns[0] != 1 else "")
    return f"{ns[0]}–{ns[-1]} runs (per cell: see the CSV's _n columns)"


def _caption(name: str, metric: str, stats: pd.DataFrame, datasets: list[str],
             chance: pd.DataFrame | None = None) -> str:
    data = GROUP_DATA.get(name, f"the {name} datasets")
    text = (f"{METRIC_NAMES[metric]} on the test set on {data}, in percent. "
            f"Mean and sample standard deviation over {_runs_phrase(stats, datasets)}. "
            "MMI: iteration 0; CDA: iteration 1; ICDA: the iteration each run's stop rule took; "
            "COMP: complement control. A test document annotated with no rationale sentence (restaurant, "
            "connect: none holds a keyword) counts as a miss here; the ERASER table leaves it out, so its "
            "Sent. P is higher (docs/outputs.md).")
    if chance is not None and len(chance.index):
        draws = sorted({int(chance.loc[r, (ds, "n")]) for r in chance.index for ds in datasets} - {0})
        text += (f" Random: k random sentences per document, mean and sd over "
                 f"{'/'.join(map(str, draws)) or 'the'} draws.")
        if "Keyword" in chance.index:
            text += " Keyword: the first sentence containing one of the dataset's keywords, else a random one."
    return text


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                  "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                  "^": r"\textasciicircum{}"}


def _latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


#: why a dataset of a table group has no results when it is not among the unavailable ones
NOT_RUN = "not run (not in `run_datasets`)"


def _missing_lines(missing: list[str], unavailable: dict[str, str]) -> list[str]:
    return [f"{ds}: {unavailable.get(ds, NOT_RUN)}" for ds in missing]


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _write_group(df: pd.DataFrame, name: str, group: list[str], out_dir: Path, metric: str,
                 unavailable: dict[str, str], baselines: dict[str, Baselines] | None = None,
                 run_lines: dict[str, list[str]] | None = None) -> tuple[list[Path], str]:
    """Write ``<name>.csv/.md/.tex`` for one group; return the paths and the Markdown section
    of summary.md (the table without the group's "Not available" list). With ``baselines``, a
    precision table gets the rows of :func:`baseline_stats` after the methods; ``run_lines``
    (:func:`run_notes`): the runs of its datasets whose ICDA is not a fixed point of the loop."""
    have = set(df["dataset"])
    present = [ds for ds in group if ds in have]
    missing = [ds for ds in group if ds not in have]
    stem = name if metric == "precision" else f"{name}_{metric}"
    paths = [out_dir / f"{stem}.{ext}" for ext in ("csv", "md", "tex")]
    stats = method_stats(df, present, metric)
    chance = baseline_stats(baselines, present) if baselines and metric == "precision" else None
    rows = METHODS + ([] if chance is None else list(chance.index))
    caption = _caption(name, metric, stats, present, chance)
    notes = _missing_lines(missing, unavailable)

    full = stats if chance is None else pd.concat([stats, chance])
    flat = full.copy()
    flat.columns = [f"{ds}_{stat}" for ds, stat in stats.columns]
    with atomic_path(paths[0]) as tmp:
        flat.to_csv(tmp, index_label="method")

    md_parts = [f"### {stem}", "", caption, ""]
    if present:
        shown = method_table(df, present, metric)
        for ds in present:
            for m in _best(stats, ds):
                shown.loc[m, ds] = f"**{shown.loc[m, ds]}**"
        if chance is not None:
            shown = pd.concat([shown, pd.DataFrame(
                {ds: [_cell(chance.loc[r, (ds, "mean")], chance.loc[r, (ds, "sd")]) for r in chance.index]
                 for ds in present}, index=chance.index)])
        shown.columns = [display_name(ds) for ds in present]
        md_parts += [shown.to_markdown(), ""]
        paper = paper_table(present, METHODS) if metric == "precision" else None
        if paper is not None:
            paper.columns = [display_name(ds) for ds in paper.columns]
            md_parts += [PAPER_CAPTION, "", paper.to_markdown(), ""]
    else:
        md_parts += [f"No results for any dataset of this table ({', '.join(group)}).", ""]
    unfinished = unfinished_runs(df, present)
    if unfinished:
        md_parts += ["Unfinished:", ""] + [f"- {line}" for line in unfinished] + [""]
    noted = [line for ds in present for line in (run_lines or {}).get(ds, [])]
    if noted:
        md_parts += ["What the runs say (stats.json: a training split too small for the loop; summary.json: verdicts, runs that stopped early, report an earlier iteration or did not converge):", ""] + [f"- {line}" for line in noted] + [""]
    section = "\n".join(md_parts)  # summary.md lists the unavailable datasets once, at its end
    if notes:
        md_parts += ["Not available:", ""] + [f"- {_one_line(n)}" for n in notes] + [""]
    with atomic_write(paths[1]) as fh:
        fh.write("\n".join(md_parts))

    with atomic_write(paths[2]) as fh:
        if present:
            cells = pd.DataFrame(
                {display_name(ds): [_latex_cell(full.loc[m, (ds, "mean")],
                                                full.loc[m, (ds, "sd")], m in _best(stats, ds))
                                    for m in rows] for ds in present},
                index=rows)
            fh.write(cells.to_latex(escape=False, column_format="l" + "c" * len(present),
                                    caption=_latex_escape(caption), label=f"tbl:{stem}",
                                    position="t"))
        else:
            fh.write(f"% {stem}: no results for any dataset of this table "
                     f"({', '.join(group)}).\n")
        for n in notes:
            fh.write(f"% not available: {_one_line(n)}\n")
        for line in unfinished:
            fh.write(f"% unfinished: {line}\n")
    return paths, section


#: what the ERASER tables say of a dataset whose test set has no class label (the hotel files)
NO_GOLD_LABELS = "no gold labels"


def _write_eraser_group(df: pd.DataFrame, name: str, group: list[str], out_dir: Path,
                        unavailable: dict[str, str]) -> tuple[list[Path], str]:
    """Write ``<name>_eraser.csv/.md`` for one group (:func:`eraser_stats`); return the paths and
    the Markdown section of summary.md."""
    present = [ds for ds in group if ds in set(df["dataset"])]
    stem = f"{name}{ERASER_SUFFIX}"
    paths = [out_dir / f"{stem}.{ext}" for ext in ("csv", "md")]
    stats = eraser_stats(df, present)
    with atomic_path(paths[0]) as tmp:
        stats.to_csv(tmp)
    runs = sorted(set(stats["n"].astype(int))) if len(stats) else []
    caption = (f"ERASER's metrics (DeYoung et al. 2020) on the test set on "
               f"{GROUP_DATA.get(name, f'the {name} datasets')}: sentence P/R/F1 (micro: Sent. P is the "
               "precision of the method's table), token P/R/F1 and IOU F1 at 0.5 (macro, as ERASER reports "
               "them), sentence AUPRC, in percent; comprehensiveness, sufficiency and their AOPC (bins 1, 5, "
               "10, 20, 50 % of the tokens), differences of the predicted class's probability. Documents "
               "with a rationale sentence only (docs/outputs.md, ERASER format): the method's table counts "
               "the others' selections as misses, so its precision is lower than Sent. P here. Mean and sample standard deviation "
               f"over {'/'.join(map(str, runs)) or 'the'} runs.")
    md_parts = [f"### {stem}", "", caption, ""]
    if len(stats):
        shown = pd.DataFrame(
            [[display_name(ds), method] + [eraser_cell(c, row[f"{c}_mean"], row[f"{c}_sd"]) for c in ERASER_COLUMNS]
             for (ds, method), row in stats.iterrows()],
            columns=["Dataset", "Method", *ERASER_COLUMNS.values()])
        md_parts += [shown.to_markdown(index=False), ""]
    else:
        md_parts += [f"No ERASER scores for any dataset of this table ({', '.join(group)}).", ""]
    unlabelled = [ds for ds in present if "gold_labels" in df and not df.loc[df["dataset"] == ds, "gold_labels"].any()]
    if unlabelled:
        md_parts += [f"{', '.join(display_name(ds) for ds in unlabelled)}: {NO_GOLD_LABELS} in the test set: "
                     "ERASER's classification accuracy is n/a (no gold labels); every column above needs none "
                     "(the rationale metrics compare with the annotated sentences, comprehensiveness, sufficiency "
                     "and AOPC use the model's predicted class).", ""]
    section = "\n".join(md_parts)
    missing = [ds for ds in group if ds not in present]
    if missing:
        md_parts += ["Not available:", ""] + [f"- {_one_line(n)}" for n in _missing_lines(missing, unavailable)] + [""]
    with atomic_write(paths[1]) as fh:
        fh.write("\n".join(md_parts))
    return paths, section


#: the table of the datasets in no group (a user's own datasets, with the default groups)
OWN_GROUP = "your_datasets"


def table_groups(groups: dict[str, list[str]], datasets: Iterable[str]) -> dict[str, list[str]]:
    """The tables :func:`write_tables` writes: ``groups``, plus :data:`OWN_GROUP`
    (``your_datasets``) holding the ``datasets`` that are in no group (when there are such)."""
    grouped = {ds for members in groups.values() for ds in members}
    other = sorted(set(datasets) - grouped)
    return dict(groups) | ({OWN_GROUP: other} if other else {})


def write_tables(df: pd.DataFrame | Iterable[str | Path], out_dir: str | Path, groups: dict[str, list[str]],
                 unavailable: dict[str, str] | None = None,
                 metric: str = "precision", icda: dict[tuple[str, int], int] | None = None,
                 eraser: pd.DataFrame | Iterable[str | Path] | None = None,
                 baselines: dict[str, Baselines] | Iterable[str | Path] | None = None,
                 run_lines: dict[str, list[str]] | None = None) -> list[Path]:
    """Write the result tables (paper Tables 1 and 2) and the long-form results.

    For each group ``name`` → datasets: ``<name>.csv`` (numeric: per dataset ``<ds>_mean``,
    ``<ds>_sd`` in percent and ``<ds>_n`` runs; rows COMP, MMI, CDA, ICDA), ``<name>.md``
    (Markdown, best mean in bold) and ``<name>.tex`` (booktabs ``table`` with the paper's
    caption; a ``%`` comment only when no dataset of the group has results). Only datasets with
    results become columns; the others are listed with their reason from ``unavailable`` (or
    :data:`NOT_RUN`: a dataset that was not asked for). Datasets with results but in no group go to an extra group
    :data:`OWN_GROUP` (``your_datasets``). For a metric other than precision the files are ``<name>_<metric>.*``.
    Also ``all_results.csv`` (the long form) and ``summary.md`` (the Markdown tables of the groups
    with results, then each unavailable dataset with its reason, listed once, where there are
    such, then one line naming the groups' datasets that were not asked for). Every file
    is written atomically. The tables of groups no longer in ``groups`` are then removed
    (:func:`remove_stale_tables`), so ``out_dir`` holds only the configured groups' tables.

    Args:
        df: long form from :func:`load_evaluations`, or the ``eval.json`` paths to load.
        out_dir: directory, created if needed.
        groups: group name → dataset ids (the workflow's ``report.groups``; the paper's Table 1
            real data, Table 2 LLM data, and synthetic by default, :mod:`icda.schema`).
        unavailable: dataset id → what is missing and how to get it (the datasets that were asked
            for and are missing; a group's other datasets without results were not run).
        metric: one of :data:`METRICS`.
        icda: {(dataset, run): the iteration taken as ICDA} (:func:`icda_iterations`), used when
            ``df`` is paths.
        eraser: long form from :func:`load_eraser`, or the ``eraser_scores.json`` paths to load
            (their methods: those of the evaluations); given, each group also gets
            ``<name>_eraser.csv`` (rows (dataset, method), columns ``<metric>_mean``,
            ``<metric>_sd`` as fractions and ``n`` runs) and ``<name>_eraser.md``
            (:func:`eraser_cell`), whatever ``metric``.
        baselines: {dataset: :class:`icda.records.Baselines`} (:func:`load_baselines`), or the
            ``baselines.json`` paths: the precision tables get their rows (:func:`baseline_stats`).
        run_lines: {dataset: lines} of the runs whose ICDA is not their last iteration or that did
            not converge (:func:`run_notes`), listed under their group's table with the reason.

    Returns:
        The paths written.

    Raises:
        DataError: an evaluation file is malformed (:func:`load_evaluations`).
    """
    if not isinstance(df, pd.DataFrame):
        df = load_evaluations(df, icda)
    if eraser is not None and not isinstance(eraser, pd.DataFrame):
        eraser = load_eraser(eraser, df)
    if baselines is not None and not isinstance(baselines, dict):
        baselines = load_baselines(baselines)
    out_dir = Path(out_dir)
    groups = table_groups(groups, set(df["dataset"]))
    unavailable = dict(unavailable or {})
    if OWN_GROUP in groups:
        log.info("datasets in no table group, written to %s.md: %s", OWN_GROUP, ", ".join(groups[OWN_GROUP]))

    written, sections = [], []
    have = set(df["dataset"])
    for name, members in groups.items():
        ran = any(ds in have for ds in members)  # summary.md shows only the tables of what ran
        paths, markdown = _write_group(df, name, list(members), out_dir, metric, unavailable, baselines, run_lines)
        written += paths
        sections += [markdown] if ran else []
        if eraser is not None:
            paths, markdown = _write_eraser_group(eraser, name, list(members), out_dir, unavailable)
            written += paths
            sections += [markdown] if ran else []

    all_path = out_dir / "all_results.csv"
    with atomic_path(all_path) as tmp:
        df.to_csv(tmp, index=False)
    written.append(all_path)

    absent = {ds: reason for ds, reason in unavailable.items() if ds not in have}
    not_run = [ds for ds in dict.fromkeys(d for m in groups.values() for d in m)
               if ds not in have and ds not in unavailable]
    summary = [f"# ICDA results: {METRIC_NAMES[metric].lower()}", ""] + sections
    if not sections:
        summary += ["No dataset has results yet.", ""]
    if absent:
        summary += ["## Unavailable datasets", ""]
        summary += [f"- {ds}: {_one_line(reason)}" for ds, reason in absent.items()] + [""]
    if not_run:
        summary += [f"Not run (not in `run_datasets`): {', '.join(not_run)}."]
    summary_path = out_dir / "summary.md"
    with atomic_write(summary_path) as fh:
        fh.write("\n".join(summary) + "\n")
    written.append(summary_path)
    log.info("wrote %d table files to %s", len(written), out_dir)
    remove_stale_tables(out_dir, groups, metric)
    return written


def remove_stale_tables(out_dir: str | Path, groups: Iterable[str], metric: str = "precision") -> list[Path]:
    """Remove from ``out_dir`` the tables of ``metric`` that :func:`write_tables` wrote for a group
    not among ``groups`` (one dropped from ``report.groups``, or ``other`` once every dataset
    has a group): ``<group>.csv/.md/.tex`` (``<group>_<metric>.*`` for a metric other than
    precision) and, with precision, ``<group>_eraser.csv/.md``. A group is recognised by its
    ``.tex`` file, which only :func:`write_tables` writes; every other file is left alone.

    Returns:
        The paths removed.
    """
    out_dir = Path(out_dir)
    groups = set(groups)
    others = tuple(f"_{m}" for m in METRICS if m != "precision")
    removed = []
    for tex in sorted(out_dir.glob("*.tex")):
        stem = tex.stem
        if metric == "precision":
            if stem.endswith(others):  # another metric's table
                continue
            name = stem
        elif stem.endswith(f"_{metric}"):
            name = stem.removesuffix(f"_{metric}")
        else:
            continue
        if name in groups:
            continue
        stale = [out_dir / f"{stem}.{ext}" for ext in ("csv", "md", "tex")]
        if metric == "precision":
            stale += [out_dir / f"{name}{ERASER_SUFFIX}.{ext}" for ext in ("csv", "md")]
        for path in stale:
            if path.is_file():
                path.unlink()
                removed.append(path)
    if removed:
        log.info("removed the tables of groups no longer configured: %s", ", ".join(p.name for p in removed))
    return removed
