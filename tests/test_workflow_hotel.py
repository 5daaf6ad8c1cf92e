"""A test set in the hotel format (annotated sentences, no class label) through every rule of the
workflow, the ERASER exports included, to its tables: benchmarks/location.yaml (train on the
location dev file with dev_fraction, test on location.test.sents) on a tiny copy of the data."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
import yaml

from icda.loading import load_settings, open_workspace
from icda.model import SelectorEnsemble
from icda.records import Choice, RunSummary
from icda.steps.evaluate import evaluate_model
from test_workflow import DATA, REPO, snakemake


def _location_data(data: Path) -> None:
    """40 labelled documents as the location dev file (ICDA format) and the fixture's lines of
    location.test.sents (hotel format: the annotated sentence indices, no label)."""
    (data / "location").mkdir(parents=True)
    lines = [f"{i % 2}\tThe location {i} was {'great' if i % 2 else 'awful'}.[SEP]A{i}.[SEP]B{i}.[SEP]C{i}."
             f"[SEP]D{i}.\n" for i in range(40)]
    (data / "location/dev.ratform.binmySENTS4").write_text("".join(lines), encoding="utf-8")
    test = (DATA / "location/location.test.sents").read_text(encoding="utf-8")
    (data / "location/location.test.sents").write_text(test, encoding="utf-8")


@pytest.mark.slow
def test_hotel_test_set_without_labels_runs_through_every_rule_to_its_tables(tmp_path):
    data = tmp_path / "data"
    _location_data(data)
    n_test = sum(1 for line in (data / "location/location.test.sents").open() if line.strip())
    extra = tmp_path / "extra.yaml"
    extra.write_text(yaml.safe_dump({"data_dir": str(data), "run_datasets": ["location"]}))
    targets = ["results/tables/summary.md", "results/location/eraser/icda_scores.json",
               "results/location/icda_model/model.json",
               "results/location/rationales.html", "results/location/icda_dataset.jsonl"]
    snakemake("--cores", "2", "-s", str(REPO / "Snakefile"), "--directory", str(tmp_path), "--configfile",
              str(REPO / "config/config.yaml"), str(REPO / "tests/fixtures/tiny_workflow.yaml"),
              str(REPO / "benchmarks/location.yaml"), str(extra), "--", *targets)
    results = tmp_path / "results"
    assert all(json.loads(line)["label"] is None for line in (results / "location/data/test.jsonl").open())

    # the ERASER export of the final selector: every annotated test document, classification null
    annotations = [json.loads(line) for line in (results / "location/eraser/test.jsonl").open()]
    assert len(annotations) == n_test and {a["classification"] for a in annotations} == {None}
    scores = json.loads((results / "location/eraser/icda_scores.json").read_text())
    assert scores["classification_scores"]["accuracy"] is None
    assert scores["classification_scores"]["gold_labels"] == 0
    assert isinstance(scores["classification_scores"]["comprehensiveness"], float)
    for path in results.glob("location/run1/*/eraser_scores.json"):  # MMI, CDA, ICDA and COMP
        assert json.loads(path.read_text())["paper"]["n_docs"] == n_test

    # the tables: precision and ERASER's metrics of each method, the accuracy said to be n/a
    with open(results / "tables/table1_real.csv") as fh:
        rows = {r[0]: dict(zip(header, r)) for header in [next(csv.reader(fh))] for r in csv.reader(fh)}
    for method in ("COMP", "MMI", "CDA", "ICDA"):
        assert 0.0 <= float(rows[method]["location_mean"]) <= 100.0, rows
    eraser = (results / "tables/table1_real_eraser.md").read_text()
    for method in ("COMP", "MMI", "CDA", "ICDA"):  # a number in every column
        row = next(line for line in eraser.splitlines() if re.match(rf"\| Location +\| {method} ", line))
        assert len(re.findall(r"-?\d+\.\d+ ± –", row)) == 12, row
    assert "Location: no gold labels in the test set: ERASER's classification accuracy is n/a (no gold labels)" in eraser
    assert "Location" in (results / "tables/summary.md").read_text()

    # the hotel aspects report the ensemble of the last three augmented iterations' candidates
    # (departure 28): the ICDA iteration's choice names them, and the exported icda_model, which
    # the ERASER export above read, is that ensemble: it scores the test split as eval.json does
    k = RunSummary.read(results / "location/run1/summary.json").icda_iteration
    assert k >= 1
    choice = Choice.read(results / f"location/run1/iter{k}/choice.json")
    assert [len(group) for group in choice.ensemble][-1] >= 1 and len(choice.ensemble) == min(k, 3)
    assert all(f"/iter{i}/" in folder for i, group in zip(range(max(1, k - 2), k + 1), choice.ensemble)
               for folder in group)
    assert json.loads((results / "location/icda_model/model.json").read_text())["source"].endswith(
        str(choice.candidate_path))
    settings = load_settings(results / "location/settings.json")
    exported = evaluate_model(settings, results / "location/data", results / "location/embeddings.pt",
                              model=results / "location/icda_model/model.pt")
    recorded = json.loads((results / f"location/run1/iter{k}/eval.json").read_text())
    assert exported.documents["positions"] == recorded["documents"]["positions"]
    assert exported.precision == recorded["precision"]
    ws = open_workspace(settings, results / "location/data", results / "location/embeddings.pt")
    assert isinstance(ws.load_model(results / "location/icda_model/model.pt"), SelectorEnsemble)
