"""The tables' chance rows (icda.report.baselines, ``python -m icda report baselines``) and the
ERASER tables (icda.report.tables with eraser_scores.json records)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from icda.cli import main
from icda.data.document import Document, write_documents
from icda.errors import DataError
from icda.records import Baselines, EraserScores
from icda.report.baselines import baseline_precisions, random_positions
from icda.report.tables import load_eraser, load_evaluations, write_tables

FILLER = "we came for dinner."


def _split(n_docs: int, n: int) -> list[Document]:
    """Documents of ``n`` sentences with one ground-truth sentence each (at d mod n)."""
    return [Document(f"test-{d}", d % 2, tuple(f"sentence {i} of {d}." for i in range(n)), frozenset({d % n}))
            for d in range(n_docs)]


def test_random_baseline_precision_is_one_in_n():
    """n sentences, one of them ground truth, k = 1: a draw's precision is a mean of Bernoulli(1/n)
    over the documents, so the draws' mean is 1/n; the draws are seeded (the values pinned)."""
    docs = _split(200, 4)
    random, keyword = baseline_precisions(docs, k=1, max_sentences=16, draws=100, seed=0)
    assert keyword is None and len(random) == 100
    assert np.mean(random) == pytest.approx(0.25, abs=0.01)
    assert np.std(random, ddof=1) == pytest.approx(np.sqrt(0.25 * 0.75 / 200), rel=0.25)
    assert np.mean(random) == pytest.approx(0.24725) and random[:3] == pytest.approx([0.285, 0.24, 0.275])
    assert baseline_precisions(docs, 1, 16, draws=100, seed=0)[0] == random  # seeded
    assert baseline_precisions(docs, 1, 16, draws=100, seed=1)[0] != random
    # only the sentences the model sees are drawn from: 2 of 4 seen, the truth at 0 … 3
    seen = baseline_precisions(docs, k=1, max_sentences=2, draws=100, seed=0)[0]
    assert np.mean(seen) == pytest.approx(0.25, abs=0.02)  # half the documents hit with 1/2
    # k = 2 of 4: half the selected sentences of a draw ... and every truth sentence is hit with 1/2
    assert np.mean(baseline_precisions(docs, k=2, max_sentences=16, draws=50, seed=0)[0]) == \
        pytest.approx(0.25, abs=0.01)


def test_random_positions_take_k_distinct_seen_sentences():
    rng = np.random.default_rng(0)
    rows = random_positions([5, 2, 1, 0], 2, rng)
    assert [len(r) for r in rows] == [2, 2, 1, 0] and all(len(set(r)) == len(r) for r in rows)
    assert all(0 <= p < n for r, n in zip(rows, [5, 2, 1, 0]) for p in r)
    assert random_positions([4, 3], 2, rng, first=[[3], []])[0][-1] == 3  # the keyword sentence first


def test_keyword_baseline_picks_the_first_keyword_sentence():
    """The first sentence containing a keyword (case-insensitive, as a substring), else a random
    one: here the keyword sentence is ground truth in half the documents and a decoy before it in
    the other half; a document without a keyword sentence gets a random one."""
    docs = [Document("a", 0, (FILLER, "The FOOD was cold.", FILLER, FILLER), frozenset({1})),
            Document("b", 1, ("Seafood nearby.", FILLER, "the food was great.", FILLER), frozenset({2})),
            Document("c", 1, (FILLER, FILLER, FILLER, "staff was rude."), frozenset({3}))]
    _, keyword = baseline_precisions(docs, k=1, max_sentences=16, keywords=["food"], draws=400, seed=0)
    # a: hit; b: "seafood" matches first, a miss; c: random, 1 in 4
    assert np.mean(keyword) == pytest.approx((1 + 0 + 0.25) / 3, abs=0.02)
    assert set(keyword) <= {1 / 3, 2 / 3}
    _, only_a = baseline_precisions(docs[:1], 1, 16, ["food"], draws=5)
    assert only_a == [1.0] * 5


def _baselines_files(tmp_path: Path) -> tuple[Path, Path, Path]:
    test = tmp_path / "data/test.jsonl"
    write_documents(_split(40, 4), test)
    from icda.settings import EncoderSettings, Settings

    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps(Settings(encoder=EncoderSettings()).to_dict()))
    spec = tmp_path / "dataset.json"
    spec.write_text(json.dumps({"name": "restaurant", "data_dir": str(tmp_path), "keywords": ["sentence 0 "]}))
    return test, settings, spec


def test_baselines_command_writes_the_record(tmp_path):
    test, settings, spec = _baselines_files(tmp_path)
    out = tmp_path / "baselines.json"
    assert main(["report", "baselines", "--test", str(test), "--settings", str(settings), "--spec", str(spec),
                 "--out", str(out), "--draws", "20"]) == 0
    record = Baselines.read(out)
    assert (record.dataset, record.k, record.draws, record.seed, record.n_docs) == ("restaurant", 1, 20, 0, 40)
    assert record.keywords == ["sentence 0 "]
    # the keyword sentence is sentence 0, ground truth in every 4th document; the others random
    assert np.mean(record.keyword) == pytest.approx(0.25, abs=0.05)
    bad = json.loads(out.read_text()) | {"random": [0.5]}
    out.write_text(json.dumps(bad))
    with pytest.raises(DataError, match="1 precisions, not one per draw") as exc:
        Baselines.read(out)
    assert "Fix:" in str(exc.value) and "report baselines" in str(exc.value)


# --------------------------------------------------------------------------- the tables


def _eval(path: Path, dataset: str, run: int, iteration: int | None, precision: float) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"dataset": dataset, "run": run, "iteration": iteration, "precision": precision,
                                "recall": precision, "f1": precision, "accuracy": 0.9, "n_docs": 10}))
    return path


def _scores(path: Path, dataset: str, run: int, iteration: int | None, p: float, comp: float | None) -> Path:
    """An eraser_scores.json whose sentence P is ``p``, token F1 p/2, comprehensiveness ``comp``."""
    prf = {"instance_micro": {"p": p, "r": p, "f1": p}, "instance_macro": {"p": p, "r": p, "f1": p}}
    record = EraserScores(
        iou_scores=[{"threshold": 0.5, "micro": {"p": p, "r": p, "f1": p}, "macro": {"p": p, "r": p, "f1": p}}],
        rationale_prf=prf, token_prf={"instance_micro": prf["instance_micro"],
                                      "instance_macro": {"p": p, "r": p, "f1": p / 2}},
        sentence_prf=prf, token_soft_metrics={"auprc": p}, sentence_soft_metrics={"auprc": p},
        classification_scores={"accuracy": 0.9, "comprehensiveness": comp, "sufficiency": -0.1,
                               "comprehensiveness_aopc": comp, "sufficiency_aopc": 0.05},
        dataset=dataset, run=run, iteration=iteration)
    record.write(path)
    return path


@pytest.fixture
def workflow_files(tmp_path: Path) -> dict[str, list[Path]]:
    """restaurant: runs 1 (iterations 0–3, ICDA = 3) and 2 (0–1, ICDA = 1) with COMP; ERASER
    scores of the tabled iterations only; baselines of restaurant (with keywords)."""
    evals, eraser = [], []
    precisions = {1: [0.5, 0.7, 0.8, 0.9], 2: [0.6, 0.5]}
    for run, ps in precisions.items():
        for k, p in enumerate(ps):
            evals.append(_eval(tmp_path / f"r/run{run}/iter{k}/eval.json", "restaurant", run, k, p))
            if k in (0, 1, len(ps) - 1):
                eraser.append(_scores(tmp_path / f"r/run{run}/iter{k}/eraser_scores.json", "restaurant", run, k, p,
                                      0.1 * run))
        evals.append(_eval(tmp_path / f"r/run{run}/comp/eval.json", "restaurant", run, None, 0.3))
        eraser.append(_scores(tmp_path / f"r/run{run}/comp/eraser_scores.json", "restaurant", run, None, 0.3, None))
    baselines = tmp_path / "restaurant_baselines.json"
    Baselines(dataset="restaurant", k=1, draws=4, seed=0, n_docs=10, random=[0.2, 0.3, 0.2, 0.3],
              keyword=[1.0] * 4, keywords=["food"]).write(baselines)
    other = tmp_path / "connect_baselines.json"
    Baselines(dataset="connect", k=1, draws=4, seed=0, n_docs=10, random=[0.1] * 4).write(other)
    return {"evals": evals, "eraser": eraser, "baselines": [baselines, other]}


def test_tables_hold_the_eraser_metrics_and_the_chance_rows(workflow_files, tmp_path):
    out = tmp_path / "tables"
    written = write_tables(workflow_files["evals"], out, {"llm": ["connect", "restaurant"]},
                           eraser=workflow_files["eraser"], baselines=workflow_files["baselines"])
    assert {"llm.csv", "llm.md", "llm.tex", "llm_eraser.csv", "llm_eraser.md"} <= {p.name for p in written}

    table = pd.read_csv(out / "llm.csv", index_col="method")
    assert list(table.index) == ["COMP", "MMI", "CDA", "ICDA", "Random", "Keyword"]
    assert table.loc["Random", "restaurant_mean"] == pytest.approx(25.0)
    assert table.loc["Random", "restaurant_sd"] == pytest.approx(np.std([20, 30, 20, 30], ddof=1))
    assert table.loc["Random", "restaurant_n"] == 4 and table.loc["Keyword", "restaurant_mean"] == 100.0
    md = (out / "llm.md").read_text()
    rows = {line.split("|")[1].strip(): line for line in md.splitlines() if line.startswith("|")}
    assert "25.0 ± 5.8" in rows["Random"] and "100.0 ± 0.0" in rows["Keyword"]
    assert "**70.0 ± 28.3**" in md  # ICDA (90, 50) is the best method; Keyword's 100 is not bold
    assert "Random: k random sentences per document, mean and sd over 4 draws" in md
    assert r"100.0 \tiny{$\pm$ 0.0}" in (out / "llm.tex").read_text()

    eraser = pd.read_csv(out / "llm_eraser.csv", index_col=["dataset", "method"])
    assert list(eraser.index) == [("restaurant", m) for m in ("COMP", "MMI", "CDA", "ICDA")]
    assert eraser.loc[("restaurant", "ICDA"), "sentence_p_mean"] == pytest.approx(0.7)  # runs: 0.9 (it 3), 0.5 (it 1)
    assert eraser.loc[("restaurant", "ICDA"), "token_f1_mean"] == pytest.approx(0.35)
    assert eraser.loc[("restaurant", "CDA"), "sentence_p_sd"] == pytest.approx(np.std([0.7, 0.5], ddof=1))
    assert eraser.loc[("restaurant", "MMI"), "comprehensiveness_mean"] == pytest.approx(0.15)
    assert np.isnan(eraser.loc[("restaurant", "COMP"), "comprehensiveness_mean"])
    assert eraser["n"].tolist() == [2, 2, 2, 2]
    md = (out / "llm_eraser.md").read_text()
    assert "| Restaurant | ICDA     | 70.0 ± 28.3" in md and "0.150 ± 0.071" in md
    assert "connect: not run" in md
    assert "### llm_eraser" in (out / "summary.md").read_text()


def test_eraser_scores_take_the_method_of_their_evaluation(workflow_files, tmp_path):
    df = load_evaluations(workflow_files["evals"])
    long = load_eraser(workflow_files["eraser"], df)
    run2 = long[(long["run"] == 2) & (long["iteration"] == 1)]
    assert sorted(run2["method"]) == ["CDA", "ICDA"]  # one file, two roles
    extra = _scores(tmp_path / "x/run1/iter2/eraser_scores.json", "restaurant", 1, 2, 0.8, 0.1)
    assert len(load_eraser([*workflow_files["eraser"], extra], df)) == len(long)  # an intermediate iteration
    stray = _scores(tmp_path / "x/run3/iter0/eraser_scores.json", "restaurant", 3, 0, 0.8, 0.1)
    with pytest.raises(DataError, match="no evaluation .eval.json. of restaurant run 3 iteration 0") as exc:
        load_eraser([stray], df)
    assert str(stray) in str(exc.value) and "Fix:" in str(exc.value)
    unlabelled = tmp_path / "icda_scores.json"
    unlabelled.write_text(json.dumps(json.loads(stray.read_text()) | {"dataset": None}))
    with pytest.raises(DataError, match="field 'dataset' is missing") as exc:
        load_eraser([unlabelled], df)
    assert "--dataset NAME --run R" in str(exc.value)


def test_malformed_eraser_scores_name_the_field(tmp_path):
    path = _scores(tmp_path / "eraser_scores.json", "restaurant", 1, 0, 0.5, 0.1)
    obj = json.loads(path.read_text())
    obj["sentence_prf"]["instance_micro"]["p"] = 1.5
    path.write_text(json.dumps(obj))
    with pytest.raises(DataError, match=r"sentence_prf.instance_micro.p' is 1.5, not a number in \[0, 1\]") as exc:
        EraserScores.read(path)
    assert "export-eraser" in str(exc.value)
    obj["sentence_prf"]["instance_micro"]["p"] = 0.5
    del obj["classification_scores"]["sufficiency_aopc"]
    path.write_text(json.dumps(obj))
    with pytest.raises(DataError, match="classification_scores.sufficiency_aopc' is missing"):
        EraserScores.read(path)


def test_tables_command_reads_eraser_and_baselines(workflow_files, tmp_path):
    assert main(["report", "tables", "--evals", *map(str, workflow_files["evals"]), "--out-dir", str(tmp_path / "t"),
                 "--eraser", *map(str, workflow_files["eraser"]),
                 "--baselines", *map(str, workflow_files["baselines"])]) == 0
    assert "Random" in (tmp_path / "t/table2_llm.md").read_text()
    assert (tmp_path / "t/table2_llm_eraser.csv").exists()


def test_a_group_named_as_another_groups_eraser_tables_is_refused():
    from icda.errors import ConfigError
    from icda.report.inputs import check_group_names

    check_group_names({"llm": [], "eraser": []}, "report.groups")
    with pytest.raises(ConfigError, match="ERASER tables of group 'llm' are llm_eraser.csv and .md.*Fix: rename"):
        check_group_names({"LLM_eraser": [], "llm": []}, "report.groups")


def test_eraser_table_says_a_test_set_without_gold_labels_has_no_accuracy(workflow_files, tmp_path):
    """A hotel-format dataset (no class labels in its test file): every ERASER column has its
    number, and the table says in words that the accuracy is n/a (no gold labels)."""
    evals, eraser = list(workflow_files["evals"]), list(workflow_files["eraser"])
    for k, p in enumerate([0.4, 0.6]):
        evals.append(_eval(tmp_path / f"l/run1/iter{k}/eval.json", "location", 1, k, p))
        path = _scores(tmp_path / f"l/run1/iter{k}/eraser_scores.json", "location", 1, k, p, 0.2)
        obj = json.loads(path.read_text())
        obj["classification_scores"] |= {"accuracy": None, "gold_labels": 0}
        path.write_text(json.dumps(obj))
        eraser.append(path)
    out = tmp_path / "tables"
    write_tables(evals, out, {"table1_real": ["location", "restaurant"]}, eraser=eraser)
    md = (out / "table1_real_eraser.md").read_text()
    assert "| Location   | ICDA     | 60.0 ± –" in md and "0.200 ± –" in md  # every column has its number
    assert ("Location: no gold labels in the test set: ERASER's classification accuracy is n/a (no gold labels); "
            "every column above needs none") in md
    assert "Restaurant: no gold labels" not in md
