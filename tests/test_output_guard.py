"""No command destroys its own inputs. Every writing command refuses, before
any work, an output that is one of its inputs, a folder that holds them, or a path inside a
prepared data folder or a candidate folder it does not own; the inputs are left byte for byte."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from icda.cli import main
from icda.data.document import Document, write_documents

RAW = "".join(f"{i % 2}\tthe food was {'good' if i % 2 else 'bad'}.[SEP]we came at {i}.[SEP]it rained.\n"
              for i in range(40))


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _refused(argv: list[str], capsys, *protected: Path) -> str:
    """Run the command; it must exit 2 with one error line, leaving ``protected`` as they were."""
    before = [_snapshot(p) if p.is_dir() else p.read_bytes() for p in protected]
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    assert code == 2
    assert [_snapshot(p) if p.is_dir() else p.read_bytes() for p in protected] == before
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err
    return err


@pytest.fixture
def raw(tmp_path):
    folder = tmp_path / "raw"
    folder.mkdir()
    for split in ("train", "dev", "test"):
        (folder / f"{split}.txt").write_text(RAW)
    spec = {"name": "toy", "data_dir": str(folder), "train": "train.txt", "dev": "dev.txt", "test": "test.txt",
            "keywords": ["food"]}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    return folder


def test_prepare_into_the_raw_data_folder_is_refused_and_deletes_nothing(raw, tmp_path, capsys):
    err = _refused(["prepare", "--spec", str(tmp_path / "spec.json"), "--out-dir", str(raw)], capsys, raw)
    assert f"--out-dir {raw}: holds the raw train file {raw / 'train.txt'}" in err and "Fix: give another folder" in err
    # also through a link to it
    (tmp_path / "link").symlink_to(raw)
    _refused(["prepare", "--spec", str(tmp_path / "spec.json"), "--out-dir", str(tmp_path / "link")], capsys, raw)


@pytest.mark.parametrize("target", ["train.txt", "hardlink"])
def test_audit_over_a_raw_file_is_refused(raw, tmp_path, capsys, target):
    out = raw / target
    if target == "hardlink":
        os.link(raw / "dev.txt", out)
    err = _refused(["audit", "--spec", str(tmp_path / "spec.json"), "--out", str(out)], capsys, raw)
    assert f"--out {out}: is the raw " in err and "the audit would replace it" in err


@pytest.fixture(scope="module")
def run(tmp_path_factory, tiny_encoder_settings):
    """A prepared toy dataset, its embeddings, two frozen-mode candidates and their choice."""
    import dataclasses

    from icda.settings import IcdaSettings, ModelSettings, Settings, TrainSettings
    from icda.steps.embed import embed_splits
    from icda.steps.train import train_candidates

    root = tmp_path_factory.mktemp("guard")
    data = root / "data"
    for split, n in (("train", 40), ("dev", 16), ("test", 8)):
        write_documents([Document(f"{split}-{i}", i % 2, (("the food was good." if i % 2 else "the food was bad."),
                                                          f"we came at {i}.", "it rained."),
                                  frozenset({0}) if split == "test" else None) for i in range(n)],
                        data / f"{split}.jsonl")
    settings = Settings(encoder=tiny_encoder_settings, model=ModelSettings(d_model=16, heads=2, dff=32),
                        train=TrainSettings(lr=1e-2, batch_size=16, max_epochs=2, patience=2), device="cpu",
                        icda=IcdaSettings(final_choice="rationale_probe"))
    (root / "settings.json").write_text(json.dumps(settings.to_dict()))
    embed_splits({s: data / f"{s}.jsonl" for s in ("train", "dev", "test")}, settings.encoder,
                 root / "embeddings.pt", progress=False)
    train_candidates(settings, data, root / "embeddings.pt", {"seed1": 1, "seed2": 2}, root / "candidates")
    # the defaults (final_choice: last) do not fit the probe
    train_candidates(dataclasses.replace(settings, icda=IcdaSettings()), data, root / "embeddings.pt", {"seed3": 3},
                     root / "default")
    assert main(["select", "--iteration", "0", "--candidates", str(root / "candidates/seed1"),
                 str(root / "candidates/seed2"), "--data-dir", str(data), "--out", str(root / "choice.json")]) in (0, None)
    return root


def test_training_records_the_rationale_probe_and_select_carries_it(run):
    """Frozen mode under final_choice: rationale_probe: every candidate's history holds its
    rationale probe's dev accuracy, and the choice's candidates carry it; under the defaults
    (final_choice: last) training fits no probe."""
    history = json.loads((run / "candidates/seed1/history.json").read_text())
    assert 0 <= history["rationale_probe"] <= 1
    assert json.loads((run / "default/seed3/history.json").read_text())["rationale_probe"] is None
    choice = json.loads((run / "choice.json").read_text())
    by_name = {c["name"]: c["rationale_probe"] for c in choice["candidates"]}
    assert by_name["seed1"] == history["rationale_probe"]


def test_embed_into_the_prepared_data_folder_is_refused(run, capsys):
    err = _refused(["embed", "--data-dir", str(run / "data"), "--out", str(run / "data/test.jsonl"),
                    "--settings", str(run / "settings.json")], capsys, run / "data")
    assert "lies inside the input folder --data-dir" in err


def test_evaluate_and_select_refuse_their_own_inputs(run, capsys):
    predictions = run / "candidates/seed1/predictions.json"
    err = _refused(["evaluate", "--settings", str(run / "settings.json"), "--data-dir", str(run / "data"),
                    "--predictions", str(predictions), "--out", str(predictions)], capsys, run / "candidates")
    assert "is the input --predictions" in err
    _refused(["select", "--iteration", "0", "--candidates", str(run / "candidates/seed1"), "--data-dir",
              str(run / "data"), "--out", str(run / "candidates/seed1/history.json")], capsys, run / "candidates")


@pytest.mark.parametrize("option, target, problem", [
    ("--out", "data/dev.jsonl", "lies inside the input folder --data-dir"),
    ("--out", "choice.json", "is the input --choices"),
    ("--model-out", "data", "holds the input --augmented"),
    ("--model-out", ".", "holds the input --augmented"),
    ("--model-out", "candidates/seed2", "is, holds or lies inside the candidate folder"),
    ("--model-out", "candidates/seed1", "is, holds or lies inside the candidate folder"),
])
def test_finalize_refuses_outputs_over_its_inputs_and_candidates(run, capsys, option, target, problem):
    out = {"--out": str(run / "final.jsonl"), "--model-out": str(run / "model")} | {option: str(run / target)}
    err = _refused(["finalize", "--augmented", str(run / "data/train.jsonl"), "--choices", str(run / "choice.json"),
                    "--data-dir", str(run / "data"), "--settings", str(run / "settings.json"), "--out", out["--out"],
                    "--model-out", out["--model-out"]], capsys, run / "data", run / "candidates", run / "choice.json")
    assert problem in err


# --------------------------------------------------------------------------- property: random layouts

from hypothesis import given, strategies as st  # noqa: E402

#: a layout: input files and folders under a root, links to them, and the output path to try
_NAMES = st.sampled_from(["a", "b", "data", "run", "x.json"])
_LAYOUT = st.fixed_dictionaries({
    "files": st.lists(st.lists(_NAMES, min_size=1, max_size=3), min_size=1, max_size=4),
    "links": st.lists(st.tuples(st.lists(_NAMES, min_size=1, max_size=2), st.integers(0, 3),
                                st.sampled_from(["symlink", "hardlink", "folder-link"])), max_size=3),
    "out": st.lists(_NAMES, min_size=1, max_size=3),
    "out_is_dir": st.booleans(),
})


@given(layout=_LAYOUT)
def test_the_guard_never_lets_an_output_reach_an_input(tmp_path_factory, layout):
    """Whatever the layout of inputs, symbolic and hard links and the output path, the guard
    either refuses the output (one ConfigError) or the output, written, leaves every input
    byte for byte: for a file output no input is that file; for a folder output no input lies
    in it; nothing is written into a protected folder."""
    import shutil

    from icda.errors import ConfigError
    from icda.io import check_output, check_output_dir

    root = tmp_path_factory.mktemp("layout")
    inputs = []
    for parts in layout["files"]:
        path = root.joinpath(*parts)
        if any(p.is_file() for p in [path, *path.parents] if p != root and p.is_relative_to(root)):
            continue
        if path.is_dir():
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"input {len(inputs)}")
        inputs.append(path)
    if not inputs:
        return
    for parts, target, kind in layout["links"]:
        link, source = root.joinpath("links", *parts), inputs[target % len(inputs)]
        if link.exists() or link.is_symlink():
            continue
        try:
            link.parent.mkdir(parents=True, exist_ok=True)
            if kind == "hardlink":
                os.link(source, link)
            elif kind == "symlink":
                link.symlink_to(source)
            else:
                link.symlink_to(source.parent, target_is_directory=True)
        except OSError:  # a parent of the link is itself a file or a link: no such layout
            continue
    protected = inputs[0].parent
    before = {p: p.read_bytes() for p in inputs}
    candidates = [root.joinpath(*layout["out"]), *(root / "links").rglob("*")] if (root / "links").exists() \
        else [root.joinpath(*layout["out"])]
    for out in candidates:
        try:
            if layout["out_is_dir"]:
                check_output_dir("--out-dir", out, "the output", {f"input {i}": p for i, p in enumerate(inputs)},
                                 {"the protected folder": protected})
            else:
                check_output("--out", out, "the output", {f"input {i}": p for i, p in enumerate(inputs)},
                             {"the protected folder": protected})
        except ConfigError as err:
            assert "\n" not in str(err) and "Fix:" in str(err)
            continue
        # accepted: writing it (a folder: emptied and refilled, as prepare does) destroys no input
        try:
            if layout["out_is_dir"]:
                if out.is_dir():
                    shutil.rmtree(out) if not out.is_symlink() else out.unlink()
                elif out.exists() or out.is_symlink():
                    out.unlink()
                out.mkdir(parents=True)
                (out / "written").write_text("output")
            else:
                if out.is_dir():
                    continue  # refused above as a folder; nothing written
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_text("output")
        except (FileExistsError, NotADirectoryError, IsADirectoryError):
            continue  # the path cannot be made at all: nothing an input was touched
        assert {p: p.read_bytes() for p in inputs} == before, f"{out} reached an input"
        assert not out.resolve().is_relative_to(protected.resolve()), f"{out} was written into the protected folder"


# --------------------------------------------------------------------------- data loss, items 1-7


def _iteration(run, name: str) -> Path:
    """An iteration folder holding a copy of the run's choice.json (and nothing else)."""
    folder = run / "iters" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "choice.json").write_bytes((run / "choice.json").read_bytes())
    return folder


@pytest.mark.parametrize("target", ["choice.json", "settings.json", "data/train.jsonl", "chosen predictions"])
def test_pools_never_writes_over_what_it_reads(run, capsys, target):
    """Item 1: pools --out onto its choice, its settings, a prepared split or the chosen
    candidate's predictions.json (which the choice names) exited 0 and replaced it."""
    chosen = Path(json.loads((run / "choice.json").read_text())["chosen"]["candidate_dir"])
    out = chosen / "predictions.json" if target == "chosen predictions" else run / target
    err = _refused(["pools", "--choice", str(run / "choice.json"), "--settings", str(run / "settings.json"),
                    "--data-dir", str(run / "data"), "--out", str(out)], capsys, run / "data", run / "candidates",
                   run / "choice.json", run / "settings.json")
    assert f"--out {out}" in err and "Fix:" in err


def test_augment_never_writes_into_the_prepared_data_or_another_iteration(run, capsys):
    """Item 2: augment --out-dir <the prepared data folder> replaced the original train and dev
    splits; --out-dir <another iteration>/augmented replaced that iteration's augmented data."""
    err = _refused(["augment", "--pools", str(run / "pools.json"), "--settings", str(run / "settings.json"),
                    "--data-dir", str(run / "data"), "--out-dir", str(run / "data")], capsys, run / "data")
    assert f"--out-dir {run / 'data'}: is the input --data-dir" in err
    one, two = _iteration(run, "iter1"), _iteration(run, "iter2")
    (one / "pools.json").write_text("{}")
    (two / "augmented").mkdir(exist_ok=True)
    (two / "augmented" / "train.jsonl").write_text("iteration 2's augmented data\n")
    err = _refused(["augment", "--pools", str(one / "pools.json"), "--settings", str(run / "settings.json"),
                    "--data-dir", str(run / "data"), "--out-dir", str(two / "augmented")], capsys, run / "iters",
                   run / "data")
    assert "not of the iteration of --pools" in err and f"Fix: --out-dir {one / 'augmented'}" in err


@pytest.mark.parametrize("target", ["--previous", "--choice", "--settings"])
def test_converge_never_writes_over_its_inputs(run, capsys, target):
    """Item 3: converge --out onto its --previous, --choice or --settings."""
    (run / "converge0.json").write_text('{"previous": "kept"}\n')
    inputs = {"--choice": run / "choice.json", "--previous": run / "converge0.json", "--settings": run / "settings.json"}
    argv = ["converge", *(x for k, v in inputs.items() for x in (k, str(v))), "--out", str(inputs[target])]
    err = _refused(argv, capsys, *inputs.values())
    assert f"is the input {target}" in err


@pytest.mark.parametrize("case", ["init model's folder", "init choice's model folder", "prepared data"])
def test_train_never_writes_over_its_warm_start_or_the_data(run, capsys, case):
    """Item 4: train --init X/model.pt --out-dir X replaced the model it starts from; --out-dir
    results/<d>/data put model files among the splits."""
    init, out = {"init model's folder": (run / "candidates/seed1/model.pt", run / "candidates/seed1"),
                 "init choice's model folder": (run / "choice.json", Path(json.loads(
                     (run / "choice.json").read_text())["chosen"]["candidate_dir"])),
                 "prepared data": (run / "candidates/seed1/model.pt", run / "data")}[case]
    err = _refused(["train", "--settings", str(run / "settings.json"), "--data-dir", str(run / "data"),
                    "--embeddings", str(run / "embeddings.pt"), "--seed", "1", "--init", str(init),
                    "--out-dir", str(out)], capsys, run / "candidates", run / "data")
    assert f"--out-dir {out}" in err and ("--init" in err or "--data-dir" in err)


@pytest.mark.parametrize("command, target", [("viewer", "data/test.jsonl"), ("viewer", "eval.json"),
                                             ("baselines", "settings.json")])
def test_report_viewer_and_baselines_never_write_over_their_inputs(run, capsys, command, target):
    """Item 5: report viewer --out onto data/test.jsonl or an eval.json; report baselines --out
    onto settings.json."""
    (run / "eval.json").write_text('{"kept": true}\n')
    (run / "dataset.json").write_text('{"name": "toy"}\n')
    argv = (["report", "viewer", "--dataset", "toy", "--test", str(run / "data/test.jsonl"), "--evals",
             str(run / "eval.json")] if command == "viewer" else
            ["report", "baselines", "--test", str(run / "data/test.jsonl"), "--settings", str(run / "settings.json"),
             "--spec", str(run / "dataset.json")])
    err = _refused([*argv, "--out", str(run / target)], capsys, run / "data", run / "eval.json", run / "settings.json")
    assert f"--out {run / target}: is the input" in err


@pytest.mark.parametrize("case", ["--out the config", "--cache the config", "--out the spec", "--out is --cache"])
def test_generate_never_writes_over_its_config_spec_or_cache(tmp_path, capsys, case):
    """Item 6: generate --out my.yaml replaced the config it reads, --cache my.yaml appended JSON
    lines to it, --out spec.json replaced the spec, --out equal to --cache."""
    config, spec = tmp_path / "my.yaml", tmp_path / "spec.json"
    config.write_text("data_dir: data\ndatasets: {}\n")
    spec.write_text('{"name": "toy"}\n')
    argv = {"--out the config": ["--config", str(config), "--dataset", "toy", "--out", str(config)],
            "--cache the config": ["--config", str(config), "--dataset", "toy", "--cache", str(config)],
            "--out the spec": ["--spec", str(spec), "--out", str(spec)],
            "--out is --cache": ["--spec", str(spec), "--out", str(tmp_path / "r.jsonl"), "--cache",
                                 str(tmp_path / "r.jsonl")]}[case]
    err = _refused(["generate", *argv], capsys, config, spec)
    assert ("is also --out" if case == "--out is --cache" else "is the input --") in err and "Fix:" in err


@pytest.mark.parametrize("case", ["the raw ERASER folder", "the prepared folder, --split dev"])
def test_export_eraser_never_writes_into_the_raw_or_prepared_data(run, tmp_path, capsys, case):
    """Item 7: export-eraser --out-dir <the raw ERASER folder the data was prepared from>
    rewrote the user's test.jsonl (stats.json records the raw paths); --out-dir <the prepared
    folder> --split dev wrote among the prepared splits."""
    import shutil

    raw = tmp_path / "movies"
    (raw / "docs").mkdir(parents=True)
    (raw / "test.jsonl").write_text('{"annotation_id": "a", "query": "the user\'s own"}\n')
    (raw / "docs" / "a").write_text("a document\n")
    data = Path(shutil.copytree(run / "data", tmp_path / "data"))
    (data / "stats.json").write_text(json.dumps({"inputs": {"train": "carved", "test": str(raw / "test.jsonl")}}))
    out, split = (raw, "test") if case == "the raw ERASER folder" else (data, "dev")
    err = _refused(["export-eraser", "--data-dir", str(data), "--out-dir", str(out), "--split", split], capsys,
                   raw, data)
    assert f"--out-dir {out}: " in err and ("holds the input the raw test" in err or "is the input --data-dir" in err)


def test_finalize_pairs_augmented_files_and_choices_run_by_run(run, capsys):
    """Items 12 and 17: --augmented and --choices of different iterations exported a dataset and a
    model of different iterations (exit 0); unequal counts ended in a traceback (ValueError)."""
    one, two = _iteration(run, "pair1"), _iteration(run, "pair2")
    for folder in (one, two):
        (folder / "augmented").mkdir(exist_ok=True)
        (folder / "augmented/train.jsonl").write_bytes((run / "data/train.jsonl").read_bytes())
    common = ["--data-dir", str(run / "data"), "--out", str(run / "final.jsonl")]
    err = _refused(["finalize", "--augmented", str(one / "augmented/train.jsonl"), "--choices", str(two / "choice.json"),
                    *common], capsys, run / "iters")
    assert "are of different iterations" in err and "Fix:" in err
    err = _refused(["finalize", "--augmented", str(one / "augmented/train.jsonl"), str(two / "augmented/train.jsonl"),
                    "--choices", str(one / "choice.json"), *common], capsys, run / "iters")
    assert "--augmented gives 2 files but --choices 1" in err
    assert not (run / "final.jsonl").exists()
    assert main(["finalize", "--augmented", str(one / "augmented/train.jsonl"), "--choices", str(one / "choice.json"),
                 *common]) in (0, None)
    assert (run / "final.jsonl").read_bytes() == (run / "data/train.jsonl").read_bytes()


def test_outputs_are_not_mixed_into_input_folders(run, capsys):
    """Item 20: report tables --out-dir <an iteration folder> (its eval.json among the inputs)
    and embed --cache-dir <the prepared data folder> were accepted."""
    it = _iteration(run, "iter0")
    (it / "eval.json").write_text('{"precision": 0.5, "recall": 0.5, "f1": 0.5, "accuracy": 1.0}\n')
    err = _refused(["report", "tables", "--evals", str(it / "eval.json"), "--out-dir", str(it)], capsys, run / "iters")
    assert f"--out-dir {it}: holds the input --evals" in err
    err = _refused(["embed", "--data-dir", str(run / "data"), "--out", str(run / "emb.pt"), "--settings",
                    str(run / "settings.json"), "--cache-dir", str(run / "data")], capsys, run / "data")
    assert f"--cache-dir {run / 'data'}: is the input --data-dir" in err
    assert not (run / "emb.pt").exists()
