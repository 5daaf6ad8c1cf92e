"""``python -m icda report {tables,plots,viewer,compute,baselines,audit}``: result tables, convergence
plots, the rationale viewer, the compute-cost summary, the chance baselines of the tables and the
data audit table.

Examples::

    python -m icda report tables --evals results/*/run*/*/eval.json --out-dir results/tables \\
        --config config/config.yaml --unavailable results/unavailable.json
    python -m icda report plots --evals results/*/run*/*/eval.json --out-dir results/plots
    python -m icda report viewer --dataset restaurant --test results/restaurant/data/test.jsonl \
        --evals results/restaurant/run*/iter*/eval.json \
        --augmented results/restaurant/icda_dataset.jsonl --out results/restaurant/rationales.html
    python -m icda report compute --summaries results/*/run*/summary.json --out-dir results/tables
    python -m icda report baselines --test results/restaurant/data/test.jsonl \
        --settings results/restaurant/settings.json --spec results/restaurant/dataset.json \
        --out results/restaurant/baselines.json
    python -m icda report audit --audits results/*/data_audit.json --out-dir results/tables

Table groups come from ``--groups`` (JSON: ``{"table1_real": ["appearance", ...], ...}``), or
from the ``report: groups:`` mapping of a workflow config (``--config``), or default to the
schema's ``report.groups`` (:func:`icda.report.inputs.load_groups`).

The step functions this command calls live in :mod:`icda.report`, one module per output:
:func:`icda.report.tables.write_tables`, :func:`icda.report.plots.plot_convergence`,
:func:`icda.report.viewer.write_viewer`, :func:`icda.report.compute.write_compute` and
:func:`icda.report.baselines.write_baselines`, :func:`icda.report.audit.write_audit_table` (each imported when its sub-command runs:
matplotlib and pandas only where they are needed).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from icda.guard import add_input, add_output



def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "report", help="result tables (paper Tables 1/2) and convergence plots of α",
        description="Build the result tables and convergence plots from eval.json files.")
    sub = parser.add_subparsers(dest="report_command", required=True, metavar="WHAT")

    tables = sub.add_parser(
        "tables", help="COMP/MMI/CDA/ICDA × dataset tables as CSV, Markdown and LaTeX",
        description="Write <group>.csv/.md/.tex, all_results.csv and summary.md: mean ± sd "
                    "over runs of the rationale precision (percent) per method and dataset.")
    add_input(tables, "--evals", nargs="+", required=True, metavar="FILE",
                        help="eval.json files (iterations and COMP) of every dataset and run")
    add_output(tables, "--out-dir", kind="owned", required=True, help="e.g. results/tables")
    source = tables.add_mutually_exclusive_group()
    add_input(source, "--groups", metavar="JSON",
                        help='table name → datasets, e.g. {"table2_llm": ["connect", '
                             '"restaurant"]} (default: table1_real, table2_llm, synthetic)')
    add_input(source, "--config", metavar="YAML",
                        help="workflow config; its report: groups: mapping is used")
    add_input(tables, "--unavailable", metavar="JSON",
                        help='dataset → what is missing and how to get it, listed in the tables')
    add_input(tables, "--summaries", nargs="*", metavar="JSON",
                        help="run summary.json files: ICDA is the iteration each names (default: the last)")
    add_input(tables, "--stats", nargs="*", metavar="JSON",
              help="prepared data folders' stats.json files: a dataset prepare warned is small "
                   "gets that warning among the lines under its table and in summary.md")
    add_input(tables, "--eraser", nargs="*", metavar="JSON",
                        help="eraser_scores.json files (python -m icda export-eraser --scores ... --dataset "
                             "... --run ... [--iteration ...]) of MMI, CDA, ICDA and COMP: each group also "
                             "gets <group>_eraser.csv/.md")
    add_input(tables, "--baselines", nargs="*", metavar="JSON",
                        help="baselines.json files (python -m icda report baselines): the precision "
                             "tables get the rows Random and Keyword")
    tables.add_argument("--metric", default="precision",
                        choices=["precision", "recall", "f1", "accuracy"],
                        help="metric tabulated (default: precision, as in the paper; others "
                             "get files <group>_<metric>.*)")
    tables.set_defaults(func=run)

    plots = sub.add_parser(
        "plots", help="α = 1 − precision over iterations, per dataset and combined",
        description="Write alpha_<dataset>.png (one line per run) and alpha_all.png.")
    add_input(plots, "--evals", nargs="+", required=True, metavar="FILE",
                       help="eval.json files (iterations and COMP) of every dataset and run")
    add_output(plots, "--out-dir", kind="owned", required=True, help="e.g. results/plots")
    add_input(plots, "--summaries", nargs="*", metavar="JSON",
                       help="run summary.json files: a star marks the iteration each takes as ICDA (default: the last)")
    plots.add_argument("--no-comp", action="store_true",
                       help="leave out the dashed COMP α line of each run")
    plots.set_defaults(func=run)

    viewer = sub.add_parser(
        "viewer", help="self-contained HTML page of one dataset's test rationales and counterfactuals",
        description="Write rationales.html: the test documents with ground truth, MMI and ICDA "
                    "selections per run (filters: ICDA fixed it / broke it / both wrong), and "
                    "counterfactual examples beside their originals.")
    viewer.add_argument("--dataset", required=True, help="dataset name (page title)")
    add_input(viewer, "--test", required=True, metavar="JSONL",
                        help="prepared test split, e.g. results/<dataset>/data/test.jsonl")
    add_input(viewer, "--evals", nargs="+", required=True, metavar="FILE",
                        help="eval.json of every iteration of every run (COMP files are ignored)")
    add_input(viewer, "--summaries", nargs="*", metavar="JSON",
                        help="run summary.json files: ICDA is the iteration each names (default: the last)")
    add_input(viewer, "--augmented", metavar="JSONL",
                        help="icda_dataset.jsonl, for the counterfactual examples")
    add_input(viewer, "--settings", metavar="JSON",
                        help="the dataset's settings.json: sentences beyond its "
                             "encoder.max_sentences (never seen by the model) are greyed out")
    add_output(viewer, "--out", required=True, help="e.g. results/<dataset>/rationales.html")
    viewer.set_defaults(func=run)

    compute = sub.add_parser(
        "compute", help="compute cost (time, memory) per dataset and method from benchmark files",
        description="Write compute_jobs.csv, compute.csv and compute.md: the embed, train and "
                    "train_comp jobs behind the given run summaries, with the numbers of their "
                    "Snakemake benchmark files (results/benchmarks/...).")
    add_input(compute, "--results", kind="tree", default=Path("results"),
                         help="the results folder (default: results)")
    add_input(compute, "--summaries", nargs="+", required=True, metavar="JSON",
                         help="<results>/<dataset>/run<r>/summary.json of every run")
    add_output(compute, "--out-dir", kind="owned", required=True, help="e.g. results/tables")
    compute.set_defaults(func=run)

    audit = sub.add_parser(
        "audit", help="the data audit table of every dataset (data_audit.csv, data_audit.md)",
        description="Write data_audit.csv and data_audit.md: one row per dataset and split of the "
                    "data_audit.json files `python -m icda audit` writes (icda/report/audit.py).")
    add_input(audit, "--audits", nargs="+", required=True, metavar="JSON",
                       help="results/<dataset>/data_audit.json of every dataset")
    add_output(audit, "--out-dir", kind="owned", required=True, help="e.g. results/tables")
    audit.set_defaults(func=run)

    from icda.report.baselines import DRAWS, SEED

    baselines = sub.add_parser(
        "baselines", help="test precision of a random and a keyword selector (the tables' chance rows)",
        description="Write baselines.json: per draw, the test precision of k random sentences per "
                    "document and, where the spec has keywords, of the keyword rule "
                    "(icda/report/baselines.py).")
    add_input(baselines, "--test", required=True, metavar="JSONL",
                           help="prepared test split, e.g. results/<dataset>/data/test.jsonl")
    add_input(baselines, "--settings", required=True, metavar="JSON",
                           help="the dataset's settings.json (model.k, encoder.max_sentences)")
    add_input(baselines, "--spec", required=True, metavar="JSON",
                           help="the dataset's dataset.json (its name and keywords)")
    add_output(baselines, "--out", required=True, help="e.g. results/<dataset>/baselines.json")
    baselines.add_argument("--draws", type=int, default=DRAWS, help=f"draws of each baseline (default {DRAWS})")
    baselines.add_argument("--seed", type=int, default=SEED, help=f"seed of the draws (default {SEED})")
    baselines.set_defaults(func=run)


def run_tables(args: argparse.Namespace) -> int:
    from icda.report.inputs import load_groups, load_unavailable
    from icda.report.tables import icda_iterations, run_notes, write_tables

    write_tables(args.evals, args.out_dir, load_groups(args.groups, args.config), load_unavailable(args.unavailable),
                 metric=args.metric, icda=icda_iterations(args.summaries), eraser=args.eraser,
                 baselines=args.baselines, run_lines=run_notes(args.summaries, args.stats))
    return 0


def run_plots(args: argparse.Namespace) -> int:
    from icda.report.plots import plot_convergence
    from icda.report.tables import icda_iterations

    plot_convergence(args.evals, args.out_dir, show_comp=not args.no_comp, icda=icda_iterations(args.summaries))
    return 0


def run_viewer(args: argparse.Namespace) -> int:
    from icda.report.viewer import write_viewer

    write_viewer(args.dataset, args.test, args.evals, args.augmented, args.out, settings=args.settings,
                 summaries=args.summaries)
    return 0


def run_compute(args: argparse.Namespace) -> int:
    from icda.report.compute import write_compute

    write_compute(args.results, args.summaries, args.out_dir)
    return 0


def run_baselines(args: argparse.Namespace) -> int:
    from icda.report.baselines import write_baselines

    if args.draws < 1:
        raise SystemExit(f"--draws is {args.draws}: give at least 1 draw")
    write_baselines(args.test, args.settings, args.spec, args.out, args.draws, args.seed)
    return 0


def run_audit(args: argparse.Namespace) -> int:
    from icda.report.audit import write_audit_table

    write_audit_table(args.audits, args.out_dir)
    return 0


def run(args: argparse.Namespace) -> int:
    """Dispatch ``report tables`` / ``plots`` / ``viewer`` / ``compute`` / ``baselines`` / ``audit``."""
    commands = {"tables": run_tables, "plots": run_plots, "viewer": run_viewer,
                "compute": run_compute, "baselines": run_baselines, "audit": run_audit}
    return commands[args.report_command](args)
