"""the benchmarks read the runs' files through icda.records (NaN,
strings, out-of-range values, truncated files refused in one line naming the file), and their
command lines refuse what they cannot use instead of ending in a traceback."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from toy_workflow import load_script

REPO = Path(__file__).resolve().parents[1]


def _load(name: str):
    return load_script(REPO / "benchmarks" / f"{name}.py", f"_bench_{name}")


robustness = _load("robustness")

PRECISIONS = (0.6, 0.7, 0.8)


def _signals(k: int) -> dict:
    return {"iteration": k, "delta_A": None if k == 0 else 0.05, "original_dev_loss": 0.5,
            "original_dev_accuracy": 0.8, "agreement": 0.5, "rationale_probe": None}


def _bench(root: Path) -> Path:
    """A robustness --out folder: one fixed-path run of dataset toy, three iterations, ICDA = 2."""
    work = root / "fixed"
    run = work / "results" / "toy" / "run1"
    (work).mkdir(parents=True)
    (work / "benchmark.yaml").write_text("run_datasets: [toy]\nruns: [[42, 43, 44]]\nn_runs: 1\n")
    for k, precision in enumerate(PRECISIONS):
        it = run / f"iter{k}"
        it.mkdir(parents=True)
        stop = k == len(PRECISIONS) - 1
        (it / "converge.json").write_text(json.dumps({
            "iteration": k, "stop": stop, "converged": stop, "reason": "settled" if stop else "going on",
            "signals": [_signals(i) for i in range(k + 1)], "final_iteration": k if stop else None,
            "final_reason": "the last" if stop else None}))
        (it / "eval.json").write_text(json.dumps({"precision": precision, "recall": 0.5, "f1": 0.5, "accuracy": 0.9}))
    return root


def _run(argv: list[str], capsys) -> tuple[int, str]:
    try:
        code = robustness.main(argv)
    except SystemExit as exc:
        code = exc.code
    return code, capsys.readouterr().err.strip()


def test_report_only_known_answer(tmp_path, capsys):
    out = _bench(tmp_path / "bench")
    assert _run(["--out", str(out), "--report-only"], capsys)[0] == 0
    rows = (out / "runs.csv").read_text().splitlines()
    assert rows[1].split(",")[:7] == ["toy", "fixed", "42 43 44", "60.00", "70.00", "80.00", "2"]


def _edit_eval(out: Path, k: int, text: str) -> Path:
    path = out / "fixed/results/toy/run1" / f"iter{k}" / "eval.json"
    path.write_text(text)
    return path


@pytest.mark.parametrize("case, text, problem", [
    ("NaN precision", '{"precision": NaN, "recall": 0.5, "f1": 0.5, "accuracy": 0.9}', "NaN"),
    ("string precision", '{"precision": "0.7", "recall": 0.5, "f1": 0.5, "accuracy": 0.9}', "precision"),
    ("missing precision", '{"recall": 0.5, "f1": 0.5, "accuracy": 0.9}', "precision"),
    ("precision above 1", '{"precision": 7, "recall": 0.5, "f1": 0.5, "accuracy": 0.9}', "precision"),
    ("truncated", '{"precision": 0.7, "rec', "not valid JSON"),
])
def test_a_bad_eval_json_is_one_line_and_writes_nothing(tmp_path, capsys, case, text, problem):
    """Item 11: a NaN precision went into runs.csv and the table (exit 0); item 16: a string or
    missing precision ended in a traceback."""
    out = _bench(tmp_path / "bench")
    path = _edit_eval(out, 1, text)
    code, err = _run(["--out", str(out), "--report-only"], capsys)
    assert code == 2 and err.count("\n") == 0 and "Traceback" not in err
    assert str(path) in err and problem in err
    assert not (out / "runs.csv").exists()


@pytest.mark.parametrize("case", ["empty converge.json", "malformed benchmark.yaml", "benchmark.yaml without runs",
                                  "an extra run folder", "final_iteration beyond the run", "a string signal"])
def test_bad_run_files_are_one_line(tmp_path, capsys, case):
    """Item 16: these ended in a traceback (or a KeyError, an IndexError)."""
    out = _bench(tmp_path / "bench")
    run = out / "fixed/results/toy/run1"
    if case == "empty converge.json":
        (run / "iter1/converge.json").write_text("")
    elif case == "malformed benchmark.yaml":
        (out / "fixed/benchmark.yaml").write_text("runs: [[42, 43\n")
    elif case == "benchmark.yaml without runs":
        (out / "fixed/benchmark.yaml").write_text("n_runs: 1\n")
    elif case == "an extra run folder":
        import shutil

        shutil.copytree(run, run.parent / "run2")
    elif case == "final_iteration beyond the run":
        path = run / "iter2/converge.json"
        path.write_text(json.dumps(json.loads(path.read_text()) | {"final_iteration": 7}))
    else:
        path = run / "iter2/converge.json"
        obj = json.loads(path.read_text())
        obj["signals"][1]["delta_A"] = "0.05"
        path.write_text(json.dumps(obj))
    code, err = _run(["--out", str(out), "--report-only", *(["--stop-delta-a", "0.1"] if "signal" in case else [])],
                     capsys)
    assert code == 2 and err.count("\n") == 0 and "Traceback" not in err and "Fix:" in err, err
    assert not (out / "runs.csv").exists()


def test_a_copy_of_a_run_folder_is_not_a_run(tmp_path, capsys):
    """Item 16: a run1.bak beside run1 ended in int('1.bak'); it is no run: the report is the same."""
    import shutil

    out = _bench(tmp_path / "bench")
    shutil.copytree(out / "fixed/results/toy/run1", out / "fixed/results/toy/run1.bak")
    assert _run(["--out", str(out), "--report-only"], capsys)[0] == 0
    assert len((out / "runs.csv").read_text().splitlines()) == 2


@pytest.mark.parametrize("argv, problem", [(["--max-iters", "-1"], "--max-iters -1"),
                                           (["--stop-delta-a", "nan"], "--stop-delta-a nan")])
def test_replay_values_out_of_range_are_refused(tmp_path, capsys, argv, problem):
    out = _bench(tmp_path / "bench")
    code, err = _run(["--out", str(out), "--report-only", *argv], capsys)
    assert code == 2 and problem in err


def test_out_an_existing_file_is_refused(tmp_path, capsys):
    (tmp_path / "file").write_text("keep")
    code, err = _run(["--out", str(tmp_path / "file"), "--report-only"], capsys)
    assert code == 2 and "is a file, not a folder" in err and (tmp_path / "file").read_text() == "keep"



# --------------------------------------------------------------------------- lodo, loop_diagnostics, final_selector


def _results(root: Path) -> Path:
    """A results/ folder: dataset toy (settings, prepared train/dev), run1 with iteration 0's files."""
    folder = root / "results" / "toy"
    (folder / "data").mkdir(parents=True)
    (folder / "settings.json").write_text("{}")
    for split in ("train", "dev"):
        (folder / "data" / f"{split}.jsonl").write_text(
            "".join(json.dumps({"id": f"{split}-{i}", "label": i % 2, "sentences": ["a.", "b."], "rationale": [0]}) + "\n"
                    for i in range(4)))
    it = folder / "run1" / "iter0"
    it.mkdir(parents=True)
    (it / "converge.json").write_text(json.dumps({"iteration": 0, "stop": True, "converged": True, "reason": "r",
                                                  "signals": [_signals(0)], "final_iteration": 0, "final_reason": "r"}))
    (it / "choice.json").write_text('{"iteration": 0, "chosen": {"na')  # truncated
    return root / "results"


def _status(module, argv, capsys) -> tuple[int, str]:
    try:
        code = module.main(argv)
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err.strip()
    if isinstance(code, str):  # SystemExit("message")
        code, err = 1, code
    return code, err


@pytest.mark.parametrize("name", ["lodo", "loop_diagnostics", "final_selector"])
@pytest.mark.parametrize("damage", ["truncated choice.json", "empty converge.json", "missing choice.json"])
def test_bad_run_files_are_one_line_naming_the_file(tmp_path, capsys, monkeypatch, name, damage):
    """Item 16: lodo.py, loop_diagnostics.py and final_selector.py on missing, empty or truncated
    JSON ended in a traceback (JSONDecodeError, KeyError, FileNotFoundError)."""
    results = _results(tmp_path)
    run = results / "toy" / "run1"
    bad = run / "iter0" / ("converge.json" if "converge" in damage else "choice.json")
    if damage == "empty converge.json":
        bad.write_text("")
    elif damage == "missing choice.json":
        bad.unlink()
    module = _load(name)
    if name == "final_selector":  # no workspace to load: the run's files come first
        from types import SimpleNamespace

        monkeypatch.setattr(module, "load_settings", lambda *args: None)
        monkeypatch.setattr(module, "open_workspace",
                            lambda *args: SimpleNamespace(split=lambda name: SimpleNamespace(ids=None)))
    argv = [str(run)] if name == "loop_diagnostics" else [str(results)]
    code, err = _status(module, argv, capsys)
    if name == "loop_diagnostics" and damage == "empty converge.json":
        return  # it reads no converge.json
    assert code != 0 and err.count("\n") == 0 and "Traceback" not in err, err
    assert str(bad) in err and "Fix:" in err, err


def test_loop_diagnostics_given_a_results_folder_names_it(tmp_path, capsys):
    """Item 16: loop_diagnostics.py results/ (not a run folder) ended in an IndexError."""
    results = _results(tmp_path)
    code, err = _status(_load("loop_diagnostics"), [str(results)], capsys)
    assert code != 0 and f"{results}: is not a run folder" in err and "Fix: give run folders" in err


def test_final_selector_refuses_a_runs_csv_file_before_the_replay(tmp_path, capsys, monkeypatch):
    """Item 19: --runs-csv <an existing file> failed only after the whole replay; its --help named
    robustness.py folders, which it refuses."""
    module = _load("final_selector")
    monkeypatch.setattr(module, "replay", lambda *a, **k: pytest.fail("replayed"))
    results = _results(tmp_path)
    (tmp_path / "taken").write_text("keep")
    code, err = _status(module, [str(results), "--runs-csv", str(tmp_path / "taken")], capsys)
    assert code == 2 and f"--runs-csv {tmp_path / 'taken'}: is a file, not a folder" in err
    assert (tmp_path / "taken").read_text() == "keep"
    help_text = " ".join(module.build_parser().format_help().split())
    assert "robustness.py folders or" not in help_text and "not the robustness.py --out folder itself" in help_text


@pytest.mark.parametrize("name", ["label_flip_replay", "run_agreement_replay"])
def test_a_replay_refuses_a_folder_that_holds_no_run(tmp_path, capsys, name):
    """A folder with no <dataset>/settings.json is one line on stderr and exit 1, no empty table."""
    replay = _load(name)
    assert replay.main([str(tmp_path)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "no dataset (no <dataset>/settings.json)" in err


def test_loop_diagnostics_replays_a_selector_that_gets_a_class_wrong_as_no_pool():
    """A candidate that gets every document of a class wrong can build no counterfactual pool;
    its what-if pools are "-" in the dev diagnostics, not a NoCounterfactual that ended
    robustness.py --split dev after a whole run (seen on 100 own-style reviews)."""
    from icda.counterfactual import NoCounterfactual

    module = _load("loop_diagnostics")
    labels = [0, 0, 0, 1, 1, 1]
    split = module.Split([frozenset([0])] * 6, [2] * 6)
    good = {"probabilities": [[0.9, 0.1]] * 3 + [[0.2, 0.8]] * 3, "positions": [[0]] * 6}
    wrong = {"probabilities": [[0.9, 0.1]] * 6, "positions": [[1]] * 6}  # class 1 never right
    preds = {"good": {"train": good}, "wrong": {"train": wrong}}
    icda = {"pool_fraction": 0.5, "pool_base": "class", "pool_source": "chosen"}
    with pytest.raises(NoCounterfactual):
        module.pools_if_chosen(preds, "wrong", ["good", "wrong"], split, icda, labels)
    assert module._unless_blocked(lambda: module.pools_if_chosen(preds, "wrong", ["good", "wrong"], split,
                                                                   icda, labels)) is None
    assert module._unless_blocked(lambda: module.pools_if_chosen(preds, "good", ["good", "wrong"], split,
                                                                   icda, labels)) == [100.0, 100.0]
    # the replay builds its pools as the run did, pool_min included
    floor = module._plan(preds, "good", ["good"], {**icda, "pool_fraction": 0.1, "pool_min": 3}, labels, vote=False)
    assert {c: len(refs) for c, refs in floor.pools.items()} == {0: 3, 1: 3}


def test_counterfactual_evidence_counts_kept_old_label_evidence(tmp_path, capsys):
    """A counterfactual whose source keeps an evidence sentence of its old label is counted as such;
    a training split without annotations is one line on stderr and exit 1."""
    from icda.data.document import Document, write_split
    from icda.io import write_jsonl

    module = _load("counterfactual_evidence")
    dataset = tmp_path / "movies"
    docs = [Document("a", 0, ("a0", "a1", "a2"), frozenset({0, 1})), Document("b", 1, ("b0", "b1"), frozenset({1}))]
    write_split(docs, dataset / "data", "train")
    cf = lambda src, swapped, donor: {"id": f"{src}-cf", "label": 1, "sentences": ["x"], "counterfactual": True,
                                      "source": src, "swapped": swapped, "inserted_from": donor}
    (dataset / "run1/iter0/augmented").mkdir(parents=True)
    write_jsonl([docs[0].to_json() | {"counterfactual": False}, cf("a", [0], [["b", 1]]), cf("b", [1], [["a", 2]])],
                dataset / "run1/iter0/augmented/train.jsonl")
    assert module.main([str(dataset)]) == 0
    row = capsys.readouterr().out.splitlines()[-1]
    # a: swapped its evidence 0, kept evidence 1; b: swapped its only evidence sentence, got a non-evidence one
    assert row == "| run1 | 0 | 2 | 100% | 50% | 50% | 1.5 |"
    write_split([Document("c", 0, ("c0",), frozenset({0}))], dataset / "data", "train")
    with pytest.raises(SystemExit, match=r"documents \['a', 'b'\] are not in the training split"):
        module.main([str(dataset)])
    write_split([Document("a", 0, ("a0",), None)], dataset / "data", "train")
    assert module.main([str(dataset)]) == 1
    assert "without a rationale annotation" in capsys.readouterr().err
    write_split(docs, dataset / "data", "train")
    write_jsonl([docs[0].to_json() | {"counterfactual": False}], dataset / "run1/iter0/augmented/train.jsonl")
    assert module.main([str(dataset)]) == 1  # no counterfactual anywhere: an error, not an empty table
    out, err = capsys.readouterr()
    assert out == "" and "holds a counterfactual" in err
