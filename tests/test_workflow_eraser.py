"""A dataset written the way ERASER distributes its data (DeYoung et al. 2020; the movie reviews)
through the workflow to its tables: class names NEG/POS instead of indices, test
evidences given by token offsets only (sentence indices −1), an empty evidence span, and
documents longer than ``encoder.max_sentences``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from test_workflow import REPO, snakemake

FILLER = ["we saw it on a friday .", "the theatre was full .", "it runs two hours .", "popcorn was extra .",
          "my friend came along .", "the trailer was long .", "it opened last week .", "we sat in row five ."]


def _movies(root: Path, n_sentences: int = 15) -> int:
    """train/val/test JSONL and docs/ as ERASER ships movies; returns the number of test documents."""
    (root / "docs").mkdir(parents=True)
    splits = {"train": 40, "val": 16, "test": 10}
    for split, n in splits.items():
        lines = []
        for i in range(n):
            docid, label = f"{split}_{i}", ("POS", "NEG")[i % 2]
            verdict = f"the acting was {('great', 'awful')[i % 2]} ."
            where = (i * 3) % n_sentences
            sentences = [FILLER[(i + s) % len(FILLER)] for s in range(n_sentences - 1)]
            sentences.insert(where, verdict)
            (root / "docs" / docid).write_text("".join(s + "\n" for s in sentences))
            start = sum(len(s.split()) for s in sentences[:where])
            evidence = {"docid": docid, "text": verdict, "start_token": start, "end_token": start + len(verdict.split()),
                        "start_sentence": where, "end_sentence": where + 1}
            if split == "test":  # ERASER's movies test split: token offsets only
                evidence |= {"start_sentence": -1, "end_sentence": -1}
            evidences = [[evidence]]
            if split == "test" and i == 0:  # as in ERASER's own files: an empty span
                evidences.append([{"docid": docid, "text": "", "start_token": 3, "end_token": 3,
                                   "start_sentence": -1, "end_sentence": -1}])
            lines.append(json.dumps({"annotation_id": docid, "classification": label, "docids": None,
                                     "evidences": evidences, "query": "What is the sentiment of this review?",
                                     "query_type": None}))
        (root / f"{split}.jsonl").write_text("\n".join(lines) + "\n")
    return splits["test"]


@pytest.mark.slow
def test_eraser_data_as_distributed_runs_through_the_workflow_to_its_tables(tmp_path):
    data = tmp_path / "data"
    n_test = _movies(data / "movies")
    extra = tmp_path / "extra.yaml"
    extra.write_text(yaml.safe_dump({"data_dir": str(data), "run_datasets": ["movies"], "datasets": {"movies": {
        "train": "movies/train.jsonl", "dev": "movies/val.jsonl", "test": "movies/test.jsonl",
        "format": "eraser", "test_format": "eraser"}}}))
    targets = ["results/tables/summary.md", "results/movies/eraser/icda_scores.json"]
    snakemake("--cores", "2", "-s", str(REPO / "Snakefile"), "--directory", str(tmp_path), "--configfile",
              str(REPO / "config/config.yaml"), str(REPO / "tests/fixtures/tiny_workflow.yaml"), str(extra),
              "--", *targets)
    results = tmp_path / "results"
    stats = json.loads((results / "movies/data/stats.json").read_text())
    assert stats["eraser"] == {"class_names": ["NEG", "POS"], "empty_evidences": 1}  # sorted: NEG = 0, POS = 1
    test = [json.loads(line) for line in (results / "movies/data/test.jsonl").open()]
    assert len(test) == n_test
    assert [d["label"] for d in test] == [1, 0] * (n_test // 2)  # POS, NEG, ...
    assert [d["rationale"] for d in test] == [[(i * 3) % 15] for i in range(n_test)]  # the token span's sentence
    # the model sees the first max_sentences (12 in the tiny config) of the 15 sentences
    assert max(len(d["sentences"]) for d in test) == 15
    # the export writes the class names back, as ERASER's scorer reads them
    annotations = [json.loads(line) for line in (results / "movies/eraser/test.jsonl").open()]
    assert {a["classification"] for a in annotations} == {"NEG", "POS"}
    scores = json.loads((results / "movies/eraser/icda_scores.json").read_text())
    assert 0 <= scores["classification_scores"]["accuracy"] <= 1
    assert "ICDA" in (results / "tables/summary.md").read_text()
