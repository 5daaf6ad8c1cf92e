"""Result tables and convergence plots (icda.report, ``python -m icda report``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from icda.cli import main
from icda.errors import DataError
from icda.report.plots import convergence_figure, convergence_grid, plot_convergence
from icda.report.tables import load_evaluations, method_stats, method_table, write_tables

REPO = Path(__file__).resolve().parents[1]

# restaurant: 3 runs stopping at iterations 3, 1 and 2; precision per iteration, and COMP
RESTAURANT = {1: [0.50, 0.70, 0.85, 0.90], 2: [0.60, 0.55], 3: [0.64, 0.66, 0.80]}
RESTAURANT_COMP = {1: 0.40, 2: 0.45, 3: 0.35}
# connect: a single run, no COMP
CONNECT = {1: [0.50, 0.60]}

# hand-computed (percent; sample sd, ddof=1):
# COMP  40, 45, 35  -> mean 40.0,  sd sqrt((0+25+25)/2)        = 5.0
# MMI   50, 60, 64  -> mean 58.0,  sd sqrt((64+4+36)/2)        = 7.211
# CDA   70, 55, 66  -> mean 63.67, sd sqrt((6.33²+8.67²+2.33²)/2) = 7.767
# ICDA  90 (it 3), 55 (it 1), 80 (it 2) -> mean 75.0, sd sqrt((225+400+25)/2) = 18.028
EXPECTED_RESTAURANT = {"COMP": "40.0 ± 5.0", "MMI": "58.0 ± 7.2", "CDA": "63.7 ± 7.8",
                       "ICDA": "75.0 ± 18.0"}


def _write(path: Path, dataset: str, run: int, iteration: int | None, precision: float,
           accuracy: float | None = 0.9) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({
        "dataset": dataset, "run": run, "iteration": iteration, "precision": precision,
        "recall": precision / 2, "f1": precision / 3, "accuracy": accuracy, "n_docs": 50,
        "position_histogram": [5] * 10,
        "precision_by_class": {"0": min(1.0, 2 * precision), "1": max(0.0, 2 * precision - 1)}}))
    return path


@pytest.fixture
def evals(tmp_path: Path) -> list[Path]:
    paths = []
    for run, precisions in RESTAURANT.items():
        for k, p in enumerate(precisions):
            paths.append(_write(tmp_path / f"restaurant/run{run}/iter{k}/eval.json",
                                "restaurant", run, k, p, accuracy=None))
        paths.append(_write(tmp_path / f"restaurant/run{run}/comp/eval.json", "restaurant", run,
                            None, RESTAURANT_COMP[run], accuracy=None))
    for run, precisions in CONNECT.items():
        for k, p in enumerate(precisions):
            paths.append(_write(tmp_path / f"connect/run{run}/iter{k}/eval.json",
                                "connect", run, k, p))
    return paths[::-1]  # order of the files must not matter


def test_method_assignment(evals):
    df = load_evaluations(evals)
    rest = df[df["dataset"] == "restaurant"]
    icda = rest[rest["method"] == "ICDA"].set_index("run")
    assert icda["iteration"].to_dict() == {1: 3, 2: 1, 3: 2}
    assert icda["precision"].to_dict() == {1: 0.90, 2: 0.55, 3: 0.80}
    assert set(rest.loc[rest["method"] == "MMI", "iteration"]) == {0}
    assert set(rest.loc[rest["method"] == "CDA", "iteration"]) == {1}
    comp = rest[rest["method"] == "COMP"]
    assert comp["iteration"].isna().all() and sorted(comp["run"]) == [1, 2, 3]
    # run 2 stopped at iteration 1: that file is both CDA and ICDA
    run2_it1 = rest[(rest["run"] == 2) & (rest["iteration"] == 1)]
    assert sorted(run2_it1["method"]) == ["CDA", "ICDA"]
    # run 1 iteration 2 is an intermediate iteration: no method
    assert rest[(rest["run"] == 1) & (rest["iteration"] == 2)]["method"].isna().all()
    assert rest["accuracy"].isna().all()  # null in the files


def test_icda_is_the_iteration_each_run_summary_takes(evals, tmp_path):
    """With the runs' summary.json, ICDA is the iteration each names (here run 1 takes iteration
    2 of 3, not its last); runs without a summary keep their last iteration; the convergence
    plot marks the taken iterations with stars."""
    from icda.records import RunSummary
    from icda.report.tables import icda_iterations

    summary = tmp_path / "restaurant/run1/summary.json"
    RunSummary(dataset="restaurant", run=1, iterations=4, converged=True, reason="r", per_iteration=[],
               final_iteration=2, final_reason="the smallest ΔA").write(summary)
    taken = icda_iterations([summary])
    assert taken == {("restaurant", 1): 2}
    df = load_evaluations(evals, taken)
    icda = df[(df["dataset"] == "restaurant") & (df["method"] == "ICDA")].set_index("run")
    assert icda["iteration"].to_dict() == {1: 2, 2: 1, 3: 2}
    assert icda["precision"].to_dict() == {1: 0.85, 2: 0.55, 3: 0.80}
    ax = convergence_figure(df, "restaurant").axes[0]
    stars, = ax.collections
    assert [tuple(p) for p in stars.get_offsets()] == [(2, pytest.approx(0.15)), (1, pytest.approx(0.45)),
                                                       (2, pytest.approx(0.20))]


def test_a_run_that_reports_mmi_or_did_not_converge_says_so_under_its_table(evals, tmp_path):
    """When the final choice (the guard, icda.final_choice: rationale_probe) takes an
    iteration other than the last, the table of its dataset and summary.md name the run, the
    iteration and the reason; a run that stopped at max_iters without converging is named with
    its stop reason; a converged run that reports its last iteration is not listed; the ICDA row
    of a run that took MMI is MMI's number."""
    from icda.records import RunSummary
    from icda.report.tables import icda_iterations, run_notes

    paths = []
    for run, k, why, converged in ((1, 0, "the highest rationale probe of iterations 0-3 (0.9100)", True),
                                   (2, 1, "the last iteration", True), (3, 1, "the last iteration", False)):
        paths.append(tmp_path / f"restaurant/run{run}/summary.json")
        RunSummary(dataset="restaurant", run=run, iterations=4 if run == 1 else 2, converged=converged,
                   reason="r" if converged else "reached max_iters=1 without convergence",
                   per_iteration=[], final_iteration=k, final_reason=why).write(paths[-1])
    notes = run_notes(paths)
    line = ("restaurant run 1: ICDA is MMI, iteration 0, not the last (3): "
            "the highest rationale probe of iterations 0-3 (0.9100)")
    unconverged = ("restaurant run 3: did not converge (reached max_iters=1 without convergence): "
                   "its ICDA is where the loop stopped, not a fixed point")
    assert notes == {"restaurant": [line, unconverged]}
    taken = icda_iterations(paths)
    assert taken[("restaurant", 1)] == 0
    df = load_evaluations(evals, taken)
    rows = df[(df["dataset"] == "restaurant") & (df["run"] == 1)].set_index("method")
    assert rows.loc["ICDA", "precision"] == rows.loc["MMI", "precision"]
    write_tables(df, tmp_path / "t", {"table2_llm": ["restaurant", "connect"]}, run_lines=notes)
    for name in ("table2_llm.md", "summary.md"):
        text = (tmp_path / "t" / name).read_text()
        assert f"- {line}" in text and f"- {unconverged}" in text and "restaurant run 2" not in text


def test_method_table_matches_hand_computed(evals):
    df = load_evaluations(evals)
    table = method_table(df, ["connect", "restaurant", "appearance"])
    assert list(table.index) == ["COMP", "MMI", "CDA", "ICDA"]
    assert list(table.columns) == ["connect", "restaurant", "appearance"]
    assert table["restaurant"].to_dict() == EXPECTED_RESTAURANT
    # single run: value with "± –"; no COMP for connect; no results for appearance
    assert table["connect"].to_dict() == {"COMP": "–", "MMI": "50.0 ± –", "CDA": "60.0 ± –",
                                          "ICDA": "60.0 ± –"}
    assert set(table["appearance"]) == {"–"}

    stats = method_stats(df, ["restaurant"])
    assert stats.loc["ICDA", ("restaurant", "sd")] == pytest.approx(np.sqrt(325.0))
    assert stats.loc["CDA", ("restaurant", "mean")] == pytest.approx(191.0 / 3)
    assert stats[("restaurant", "n")].tolist() == [3, 3, 3, 3]
    # accuracy is null in every restaurant file: no number, not 0
    assert set(method_table(df, ["restaurant"], metric="accuracy")["restaurant"]) == {"–"}


def test_write_tables(evals, tmp_path):
    df = load_evaluations(evals)
    out = tmp_path / "tables"
    groups = {"table2_llm": ["connect", "restaurant"], "table1_real": ["appearance", "smell"]}
    reason = "RateBeer is not public; put the files under data/beer (see README)"
    written = write_tables(df, out, groups, {"appearance": reason})
    names = {p.name for p in written}
    assert names == {"table2_llm.csv", "table2_llm.md", "table2_llm.tex", "table1_real.csv",
                     "table1_real.md", "table1_real.tex", "all_results.csv", "summary.md"}
    assert not list(out.glob(".*.tmp"))

    csv = pd.read_csv(out / "table2_llm.csv", index_col="method")
    assert list(csv.index) == ["COMP", "MMI", "CDA", "ICDA"]
    assert csv.loc["ICDA", "restaurant_mean"] == pytest.approx(75.0)
    assert csv.loc["ICDA", "restaurant_sd"] == pytest.approx(18.027756, abs=1e-6)
    assert csv.loc["MMI", "restaurant_sd"] == pytest.approx(7.211103, abs=1e-6)
    assert csv.loc["ICDA", "connect_n"] == 1 and np.isnan(csv.loc["ICDA", "connect_sd"])

    md = (out / "table2_llm.md").read_text()
    for cell in ["40.0 ± 5.0", "58.0 ± 7.2", "63.7 ± 7.8", "**75.0 ± 18.0**", "Connectivity",
                 "Restaurant"]:
        assert cell in md
    # the paper's figures beside ours (Table 2: ICDA 63.2 ± 5.2 and 57.4 ± 17.2), in the Markdown only
    ours, paper = md.split("The paper's figures")
    assert "63.2 ± 5.2" not in ours and "| ICDA | 63.2 ± 5.2     | 57.4 ± 17.2  |" in paper
    assert "54.6 ± 5.0" in paper and "**" not in paper
    tex = (out / "table2_llm.tex").read_text()
    assert r"\toprule" in tex and r"\bottomrule" in tex
    assert r"\textbf{75.0} \tiny{$\pm$ 18.0}" in tex
    assert r"63.7 \tiny{$\pm$ 7.8}" in tex and r"50.0 \tiny{$\pm$ --}" in tex
    assert r"\caption{Rationale precision on the test set on LLM generated data" in tex

    # no dataset of table1_real has results: files still exist and say why
    real_md = (out / "table1_real.md").read_text()
    assert "No results" in real_md and reason in real_md
    assert "smell: not run (not in `run_datasets`)" in real_md
    assert reason in (out / "table1_real.tex").read_text()
    assert list(pd.read_csv(out / "table1_real.csv")["method"]) == ["COMP", "MMI", "CDA", "ICDA"]

    summary = (out / "summary.md").read_text()
    assert "75.0 ± 18.0" in summary and f"- appearance: {reason}" in summary
    assert summary.count(reason) == 1 and "Not available" not in summary  # listed once, at the end
    # only the tables of what ran: table1_real (no results) has no section, not even its caption
    assert "### table2_llm" in summary and "table1_real" not in summary and "No results" not in summary
    # asked for and missing: unavailable; in a table but not asked for: one line naming them
    unavailable_part, not_run_part = summary.split("## Unavailable datasets")[1].split("Not run")
    assert "appearance" in unavailable_part and "smell" not in unavailable_part
    assert not_run_part == " (not in `run_datasets`): smell.\n"
    long = pd.read_csv(out / "all_results.csv")
    # 14 files; run 2's and connect's iteration 1 are both CDA and ICDA
    assert len(long) == len(df) == 16
    assert long[(long["method"] == "ICDA") & (long["dataset"] == "restaurant")]["iteration"] \
        .tolist() == [3, 1, 2]
    # the per-class precision of each file, next to its precision
    icda = long[(long["method"] == "ICDA") & (long["dataset"] == "restaurant")]
    assert icda["precision_class0"].tolist() == [1.0, 1.0, 1.0]
    assert icda["precision_class1"].tolist() == pytest.approx([0.8, 0.1, 0.6])


def test_dataset_in_no_group_gets_its_own_table(evals, tmp_path):
    df = load_evaluations(evals)
    written = write_tables(df, tmp_path, {"table2_llm": ["connect"]})
    assert tmp_path / "your_datasets.md" in written
    assert "75.0 ± 18.0" in (tmp_path / "your_datasets.md").read_text()


def test_a_run_of_only_your_datasets_is_summarised_by_their_table_alone(evals, tmp_path):
    """A run of one own dataset with the default groups (the paper's, none of which ran):
    its numbers are in your_datasets.md, and summary.md holds that table and one line naming
    the paper's datasets not asked for: no empty paper-table caption, no "not run" list, no
    empty "Unavailable datasets" section."""
    from icda.schema import section_defaults

    df = load_evaluations(evals)
    df = df[df["dataset"] == "restaurant"].assign(dataset="reviews")
    groups = section_defaults("report")["groups"]
    write_tables(df, tmp_path, groups)
    assert "75.0 ± 18.0" in (tmp_path / "your_datasets.md").read_text()
    assert not (tmp_path / "other.md").exists()
    summary = (tmp_path / "summary.md").read_text()
    assert "### your_datasets" in summary and "Reviews" in summary and "75.0 ± 18.0" in summary
    assert "on the test set on your datasets (those in no report.groups table)" in summary
    for absent in ("table1_real", "table2_llm", "### synthetic", "Unavailable datasets", "No results", "- smell"):
        assert absent not in summary, absent
    line, = [row for row in summary.splitlines() if row.startswith("Not run")]
    assert line == ("Not run (not in `run_datasets`): appearance, smell, palate, location, service, "
                    "cleanliness, connect, restaurant, synthetic, synthetic_small.")


def test_tables_of_groups_no_longer_configured_are_removed(evals, tmp_path):
    df = load_evaluations(evals)
    out = tmp_path / "tables"
    write_tables(df, out, {"old": ["connect"], "table2_llm": ["restaurant"]})
    write_tables(df, out, {"table2_llm": ["restaurant"]}, metric="recall")  # another metric's tables
    for name in ("old_eraser.csv", "old_eraser.md", "compute.csv", "compute.md", "mine.md", "notes.tex.bak"):
        (out / name).write_text("x")
    written = write_tables(df, out, {"table2_llm": ["connect", "restaurant"]})
    left = {p.name for p in out.iterdir()}
    assert not {"old.csv", "old.md", "old.tex", "old_eraser.csv", "old_eraser.md"} & left
    assert {"compute.csv", "compute.md", "mine.md", "notes.tex.bak"} <= left  # not written by write_tables
    assert {"table2_llm_recall.csv", "table2_llm_recall.md", "table2_llm_recall.tex"} <= left
    assert {p.name for p in written} <= left and "75.0 ± 18.0" in (out / "table2_llm.md").read_text()

    write_tables(df, out, {"fresh": ["connect", "restaurant"]}, metric="recall")
    left = {p.name for p in out.iterdir()}
    assert not {"table2_llm_recall.csv", "table2_llm_recall.md", "table2_llm_recall.tex"} & left
    assert {"table2_llm.csv", "table2_llm.md", "table2_llm.tex", "fresh_recall.tex"} <= left


def test_plots_of_datasets_no_longer_run_are_removed(evals, tmp_path):
    df = load_evaluations(evals)
    out = tmp_path / "plots"
    plot_convergence(df, out)
    (out / "mine.png").write_bytes(b"x")
    written = plot_convergence(df[df["dataset"] == "restaurant"], out)
    assert sorted(p.name for p in out.iterdir()) == ["alpha_all.png", "alpha_restaurant.png", "mine.png"]
    assert [p.name for p in written] == ["alpha_restaurant.png", "alpha_all.png"]


def test_convergence_plot_data_is_alpha(evals, tmp_path):
    df = load_evaluations(evals)
    ax = convergence_figure(df, "restaurant").axes[0]
    runs = [line for line in ax.lines if line.get_label().startswith("run")]
    assert [line.get_label() for line in runs] == ["run 1", "run 2", "run 3"]
    for line, (run, precisions) in zip(runs, RESTAURANT.items()):
        assert list(line.get_xdata()) == list(range(len(precisions)))
        np.testing.assert_allclose(line.get_ydata(), 1.0 - np.array(precisions))
    comp = [line for line in ax.lines if line.get_label().startswith("COMP")]
    np.testing.assert_allclose([line.get_ydata()[0] for line in comp],
                               [1.0 - RESTAURANT_COMP[r] for r in (1, 2, 3)])
    assert ax.get_ylim() == (-0.04, 1.04)  # α in [0, 1], a point at 0 drawn whole

    grid = convergence_grid(df)
    assert [a.get_title() for a in grid.axes if a.get_visible()] == ["Connectivity", "Restaurant"]

    written = plot_convergence(df, tmp_path / "plots")
    assert [p.name for p in written] == ["alpha_connect.png", "alpha_restaurant.png",
                                         "alpha_all.png"]
    for path in written:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 5000


@pytest.mark.parametrize("content, message", [
    ('{"dataset": "x", "run": 1,\n "iteration": 0, "precision": }', ":2: not valid JSON"),
    ('{"dataset": "x", "run": 1, "iteration": 0, "recall": null, "f1": null, '
     '"accuracy": null}', "'precision' is a required property"),
    ('{"dataset": "x", "run": 1, "iteration": 0, "precision": 54.6, "recall": null, '
     '"f1": null, "accuracy": null}', "field 'precision': 54.6 is greater than the maximum"),
    ('{"dataset": "x", "run": 1, "iteration": 0, "precision": NaN, "recall": null, '
     '"f1": null, "accuracy": null}', "NaN"),
    ('[0.5]', "not an evaluation record"),
])
def test_malformed_eval_names_the_file(tmp_path, content, message):
    bad = tmp_path / "run1" / "iter0" / "eval.json"
    bad.parent.mkdir(parents=True)
    bad.write_text(content)
    with pytest.raises(DataError, match="Fix:") as exc:
        load_evaluations([bad])
    assert str(bad) in str(exc.value) and message in str(exc.value)


def test_duplicate_and_gap_are_errors(evals, tmp_path):
    with pytest.raises(DataError, match="restaurant run 1 iteration 0 is also in"):
        load_evaluations(evals + [_write(tmp_path / "copy.json", "restaurant", 1, 0, 0.5)])
    no_iter2 = [p for p in evals if "restaurant/run1/iter2" not in str(p)]
    with pytest.raises(DataError, match=r"iteration\(s\) \[2\] missing") as exc:
        load_evaluations(no_iter2)
    assert "restaurant/run1/iter3/eval.json" in str(exc.value)


def test_cli(evals, tmp_path, capsys):
    groups = tmp_path / "groups.json"
    groups.write_text(json.dumps({"llm": ["connect", "restaurant"]}))
    unavailable = tmp_path / "unavailable.json"
    unavailable.write_text(json.dumps({"smell": "beer data not public"}))
    files = [str(p) for p in evals]
    assert main(["report", "tables", "--evals", *files, "--out-dir", str(tmp_path / "t"),
                 "--groups", str(groups), "--unavailable", str(unavailable)]) == 0
    assert "75.0 ± 18.0" in (tmp_path / "t" / "llm.md").read_text()
    assert "- smell: beer data not public" in (tmp_path / "t" / "summary.md").read_text()

    config = tmp_path / "config.yaml"
    config.write_text("report:\n  groups:\n    only_connect: [connect]\n")
    assert main(["report", "tables", "--evals", *files, "--out-dir", str(tmp_path / "c"),
                 "--config", str(config), "--metric", "accuracy"]) == 0
    assert "90.0 ± –" in (tmp_path / "c" / "only_connect_accuracy.md").read_text()

    assert main(["report", "plots", "--evals", *files, "--out-dir", str(tmp_path / "p")]) == 0
    assert (tmp_path / "p" / "alpha_all.png").stat().st_size > 0

    config.write_text("report:\n  groups: [connect]\n")
    assert main(["report", "tables", "--evals", *files, "--out-dir", str(tmp_path / "x"),
                 "--config", str(config)]) == 2
    assert "report.groups" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_a_run_with_only_iteration_0_has_no_icda_and_the_tables_say_so(tmp_path):
    """Iteration 0 is MMI; a run that has not reached iteration 1 (interrupted, or tables made
    early) has no CDA or ICDA: the cells are "–", not MMI's number under another name."""
    paths = [_write(tmp_path / "toy/run1/iter0/eval.json", "toy", 1, 0, 0.6),
             _write(tmp_path / "toy/run2/iter0/eval.json", "toy", 2, 0, 0.7),
             _write(tmp_path / "toy/run2/iter1/eval.json", "toy", 2, 1, 0.9)]
    df = load_evaluations(paths)
    assert df.loc[df["run"] == 1, "method"].tolist() == ["MMI"]
    table = method_table(df, ["toy"])
    assert table.loc["MMI", "toy"] == "65.0 ± 7.1" and table.loc["ICDA", "toy"] == "90.0 ± –"
    write_tables(paths[:1], tmp_path / "t", {"g": ["toy"]}, {})
    md = (tmp_path / "t/g.md").read_text()
    assert "| ICDA     | –  " in md and "- toy: run 1 has only iteration 0 (MMI): no CDA or ICDA yet" in md
    assert "% unfinished: toy: run 1 has only iteration 0" in (tmp_path / "t/g.tex").read_text()


def test_out_dir_that_is_a_file_is_refused_with_the_fix(evals, tmp_path, capsys):
    (tmp_path / "taken").write_text("not a folder")
    assert main(["report", "tables", "--evals", *map(str, evals), "--out-dir", str(tmp_path / "taken")]) == 2
    assert f"--out-dir {tmp_path / 'taken'}: is a file, not a folder. Fix: give a folder" in capsys.readouterr().err
    assert (tmp_path / "taken").read_text() == "not a folder"


def test_report_captions_are_valid_rst():
    """Snakemake renders each caption with Jinja2, then docutils (errors stop the report)."""
    from docutils.core import publish_parts
    from jinja2 import Environment

    root = Path(__file__).resolve().parents[1] / "workflow" / "report"
    rendered = [Environment().from_string((root / f"{name}.rst").read_text()).render()
                for name in ["tables", "convergence", "theory"]]
    rendered += [_render_workflow_rst(), _render_workflow_rst("config/paper.yaml")]  # reads the config
    for text in rendered:
        publish_parts(text, writer="html",
                      settings_overrides={"halt_level": 2, "report_level": 5})
        assert "α" in text
    for name in ["tables", "workflow"]:
        text = (root / f"{name}.rst").read_text()
        assert all(m in text for m in ["COMP", "MMI", "CDA", "ICDA", "precision"])


def _render_workflow_rst(*configfiles: str) -> str:
    """workflow/report/workflow.rst as `snakemake --report` renders it (Jinja2 with
    ``snakemake.config``) for config/config.yaml and ``configfiles`` merged over it."""
    import jinja2
    import yaml
    from snakemake.utils import update_config, validate

    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    for name in configfiles:
        update_config(config, yaml.safe_load((REPO / name).read_text()))
    validate(config, str(REPO / "workflow/schemas/config.schema.yaml"))
    snakemake = type("Snakemake", (), {"config": config})
    template = jinja2.Environment(undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True).from_string(  # as Snakemake
        (REPO / "workflow/report/workflow.rst").read_text())
    return template.render(snakemake=snakemake)


def _workflow_description(*configfiles: str) -> str:
    """:func:`_render_workflow_rst` with its whitespace folded (phrases can be matched)."""
    return " ".join(_render_workflow_rst(*configfiles).split())


def test_the_report_describes_the_configured_run():
    default = _workflow_description()
    assert "Train fresh models only (a departure" in default  # icda.warm_start: false
    assert "agree most with the other fresh candidates' (a departure" in default  # candidate_choice: agreement
    assert "confident 10 % of the kept originals of each class" in default
    assert "fewer than 10.0 % of the training rationales change" in default and "after iteration 6" in default
    paper = _workflow_description("config/paper.yaml")
    assert "the augmented dev set (the paper)" in paper and "confident 10 % of each class (the paper)" in paper
    assert "fresh models and one model warm-started from iteration k−1" in paper
    assert "whose rationale-set change ΔA decreases" in paper  # the paper's gate
    assert "the loop stops when the warm-started model is kept" in paper and "after iteration 10" in paper


def test_a_summary_of_a_run_with_only_iteration_0_names_no_icda(tmp_path):
    """The summary's rule is the tables' (icda.records.icda_iteration): iteration 0 is never
    ICDA, with or without the run's summary."""
    from icda.records import RunSummary
    from icda.report.tables import icda_iterations

    summary = tmp_path / "toy/run1/summary.json"
    RunSummary(dataset="toy", run=1, iterations=1, converged=False, reason="r", per_iteration=[]).write(summary)
    assert icda_iterations([summary]) == {}
    paths = [_write(tmp_path / "toy/run1/iter0/eval.json", "toy", 1, 0, 0.6)]
    df = load_evaluations(paths, icda_iterations([summary]))
    assert df["method"].tolist() == ["MMI"]
    assert load_evaluations(paths, {("toy", 1): 0})["method"].tolist() == ["MMI"]


def test_eraser_cells_round_like_the_paper_and_never_show_minus_zero():
    from icda.report.tables import eraser_cell

    assert eraser_cell("token_f1", 0.5464, 0.05) == "54.6 ± 5.0"
    assert eraser_cell("comprehensiveness", 0.12345, 0.0104) == "0.123 ± 0.010"
    assert eraser_cell("sufficiency", -1e-10, 0.0) == "0.000 ± 0.000"  # a float's noise, not a sign
    assert eraser_cell("sufficiency", -0.0123, float("nan")) == "-0.012 ± –"
    assert eraser_cell("iou_f1", float("nan"), float("nan")) == "–"
