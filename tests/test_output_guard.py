"""Issue 55, section 1: no command destroys its own inputs. Every writing command refuses, before
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
    ("--model-out", "data", "is or holds the input --augmented"),
    ("--model-out", ".", "is or holds the input --augmented"),
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
