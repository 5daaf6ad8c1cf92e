"""What a hostile probe of the commands found: a model folder, a prepared split, an input file name, an
LLM backend and an ERASER folder are outside input; whatever they hold, a command ends in one line
naming the file (and the line or key) and the fix, exit code 2, never a traceback, never invalid
JSON, never a secret."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import shutil
import tempfile
from pathlib import Path

import pytest
import torch
from hypothesis import given, strategies as st

from icda.cli import main
from icda.errors import ConfigError, DataError
from icda.layout import MODEL_CARD_FILE, MODEL_FILE
from icda.loading import MAX_MEMBERS, Workspace, read_saved_model, save_ensemble, save_model
from icda.model import CachedSentences, RationaleNetwork
from icda.settings import PREDICTION_ENCODER_KEYS, ModelSettings, Settings, prediction_encoder_settings

DOCUMENT = {"sentences": ["the food was bland.", "we came for dinner.", "the room was quiet."]}


@pytest.fixture(scope="module")
def model_folder(tmp_path_factory, tiny_encoder_settings):
    """A model folder of an untrained frozen-mode network (k = 1) over the tiny BERT: model.pt with
    its settings fingerprint, and model.json."""
    from icda.steps.predict import write_model_card

    folder = tmp_path_factory.mktemp("model") / "model"
    folder.mkdir()
    settings = Settings(encoder=tiny_encoder_settings, model=ModelSettings(d_model=16, heads=2, dff=32), device="cpu")
    torch.manual_seed(0)
    network = RationaleNetwork(CachedSentences(torch.zeros(1, 32)), settings.model, settings.encoder.max_sentences)
    save_model(network, folder / MODEL_FILE, encoder=settings.encoder)
    write_model_card(folder, settings)
    return folder


def _copy(model_folder: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(model_folder, tmp_path / "model"))


def _saved(folder: Path) -> dict:
    return torch.load(folder / MODEL_FILE, map_location="cpu", weights_only=True)


def _input(tmp_path: Path) -> Path:
    path = tmp_path / "new.jsonl"
    path.write_text(json.dumps(DOCUMENT) + "\n")
    return path


def _one_error_line(capsys) -> str:
    """The one line a command wrote to standard error for bad input (exit code 2)."""
    text = capsys.readouterr().err
    err = [line for line in text.splitlines() if line.startswith("error: ")]
    assert len(err) == 1 and "Fix: " in err[0] and "Traceback" not in text, text
    return err[0]


# ----------------------------------------------------------------------------- 1: weights that are not finite


@pytest.mark.parametrize("kind", ["single", "ensemble"])
def test_nan_weights_are_refused_on_reading_not_predicted_as_nan(model_folder, tmp_path, capsys, kind):
    """Before: exit 0, ``"probabilities": [NaN, NaN]`` (not JSON), label 0 and no position."""
    folder = _copy(model_folder, tmp_path)
    saved = _saved(folder)
    nan = {key: torch.full_like(value, math.nan) for key, value in saved["state_dict"].items()}
    if kind == "single":
        torch.save(saved | {"state_dict": nan}, folder / MODEL_FILE)
    else:
        (tmp_path / "a.pt").write_bytes((folder / MODEL_FILE).read_bytes())
        torch.save(saved | {"state_dict": nan}, tmp_path / "b.pt")
        settings = Settings.from_dict(json.loads((folder / MODEL_CARD_FILE).read_text())["settings"])
        torch.save(saved | {"members": [saved["state_dict"], nan]}, folder / MODEL_FILE)
        with pytest.raises(DataError, match="hold NaN or infinite values"):  # nor is such an ensemble written
            save_ensemble([tmp_path / "a.pt", tmp_path / "b.pt"], tmp_path / "e.pt", settings.encoder)
    assert main(["predict", "--model", str(folder), "--input", str(_input(tmp_path))]) == 2
    line = _one_error_line(capsys)
    where = "state_dict" if kind == "single" else "members[1]"
    assert line.startswith(f"error: {folder / MODEL_FILE}: the weights {where}['") and "NaN or infinite" in line


@pytest.mark.filterwarnings("ignore:overflow encountered")
def test_weights_whose_outputs_overflow_write_no_invalid_json(model_folder, tmp_path, capsys):
    """Finite weights whose class probabilities come out NaN (logits overflow): one line, no output."""
    folder = _copy(model_folder, tmp_path)
    saved = _saved(folder)
    huge = {key: torch.full_like(value, 3e38) for key, value in saved["state_dict"].items()}
    torch.save(saved | {"state_dict": huge}, folder / MODEL_FILE)
    assert main(["predict", "--model", str(folder), "--input", str(_input(tmp_path)),
                 "--out", str(tmp_path / "out.jsonl")]) == 2
    assert "class probabilities for document 'new.jsonl-1' are not finite" in _one_error_line(capsys)
    assert not (tmp_path / "out.jsonl").exists()


# ----------------------------------------------------------------------------- 2: the card against old weights


def test_a_setting_the_old_weights_do_not_record_must_agree_with_the_card(model_folder, tmp_path, capsys):
    """model.pt saved before the settings fingerprint and without ``model.k`` is built with k = 1;
    model.json says k = 2. Before: one sentence predicted, a warning about the encoder settings."""
    folder = _copy(model_folder, tmp_path)
    saved = _saved(folder)
    torch.save({"state_dict": saved["state_dict"], "model": {k: v for k, v in saved["model"].items() if k != "k"}},
               folder / MODEL_FILE)
    card = json.loads((folder / MODEL_CARD_FILE).read_text())
    card["settings"]["model"]["k"] = 2
    (folder / MODEL_CARD_FILE).write_text(json.dumps(card))
    assert main(["predict", "--model", str(folder), "--input", str(_input(tmp_path))]) == 2
    line = _one_error_line(capsys)
    assert line.startswith(f"error: {folder / MODEL_CARD_FILE}: ")
    assert "model.k = 2 here, 1 in model.pt (not recorded there: its default)" in line
    # the same card with k = 1: the settings agree, and the old file predicts (one position)
    card["settings"]["model"]["k"] = 1
    (folder / MODEL_CARD_FILE).write_text(json.dumps(card))
    assert main(["predict", "--model", str(folder), "--input", str(_input(tmp_path))]) == 0
    assert len(json.loads(capsys.readouterr().out)["positions"]) == 1


# ----------------------------------------------------------------------------- 3, 4, 9: crafted model files


def test_an_empty_model_file_is_one_line(model_folder, tmp_path, capsys):
    folder = _copy(model_folder, tmp_path)
    (folder / MODEL_FILE).write_bytes(b"")
    assert main(["predict", "--model", str(folder), "--input", str(_input(tmp_path))]) == 2
    assert _one_error_line(capsys).startswith(f"error: {folder / MODEL_FILE}: corrupt model file (an empty file)")


@pytest.mark.parametrize("change, problem", [
    ({"model": "mmi"}, "'model' is str, not the mapping of model settings"),
    ({"model": [16]}, "'model' is list, not the mapping of model settings"),
    ({"encoder": "mean"}, "'encoder' is not a mapping of encoder settings"),
    ({"encoder": ["mean"]}, "'encoder' is not a mapping of encoder settings"),
    ({"model__d_model": 16.0}, "model.d_model is 16.0, not a value of type int"),
    ({"model__d_model": 2**70}, "model.d_model is an integer of 71 bits, not a value of type int"),
    ({"model__k": True}, "model.k is True, not a value of type int"),
    ({"model__heads": 0}, "model.heads must be positive"),
    ({"model__shape\n": 3}, "'model' has the key 'shape\\n', not a model setting"),
    ({"member_key": 3}, "members[0] has the key 3, not a parameter name"),
    ({"members": [{}] * (MAX_MEMBERS + 1)}, f"'members' holds 65 state dicts, more than the {MAX_MEMBERS}"),
])
def test_crafted_model_file_values_are_one_line_naming_the_key(model_folder, tmp_path, capsys, change, problem):
    """Before: AttributeError ('model' or 'encoder' a string or list, an integer key in a member),
    TypeError in torch (d_model 16.0, k True), ZeroDivisionError (heads 0), or no bound on the
    members (10,000 of them: 43 s and 1.2 GB)."""
    folder = _copy(model_folder, tmp_path)
    saved = _saved(folder)
    for name, value in change.items():
        if name.startswith("model__"):
            saved["model"] = saved["model"] | {name.removeprefix("model__"): value}
        elif name == "member_key":
            saved["members"] = [saved["state_dict"] | {value: torch.zeros(1)}]
        else:
            saved[name] = value
    torch.save(saved, folder / MODEL_FILE)
    assert main(["predict", "--model", str(folder), "--input", str(_input(tmp_path))]) == 2
    line = _one_error_line(capsys)
    assert line.startswith(f"error: {folder / MODEL_FILE}: corrupt model file ({problem}") and "Traceback" not in line


# ----------------------------------------------------------------------------- 5: a prepared split not UTF-8


def test_a_prepared_split_that_is_not_utf8_is_named_by_line(tmp_path):
    from icda.data.document import read_split

    good = json.dumps({"id": "test-0", "label": 0, "sentences": ["a.", "b."]})
    bad = b'{"id": "test-1", "label": 1, "sentences": ["caf\xe9."]}'
    (tmp_path / "test.jsonl").write_bytes(good.encode() + b"\n" + bad + b"\n")
    with pytest.raises(DataError) as err:
        read_split(tmp_path, "test")
    assert str(err.value).startswith(f"{tmp_path / 'test.jsonl'}:2: not UTF-8 text (byte 0xe9 at column 48: "
                                     "invalid continuation byte). Fix: convert the file to UTF-8")


# ----------------------------------------------------------------------------- 6: an input name not UTF-8


@pytest.mark.parametrize("out", ["stdout", "file"])
def test_an_input_file_name_that_is_not_utf8_gives_valid_utf8_ids(model_folder, tmp_path, capsys, out):
    """Before: --out raised UnicodeEncodeError after the work and wrote nothing; standard output
    carried the name's bytes (not UTF-8) in "id"."""
    name = os.path.join(os.fsencode(tmp_path), b"in_\xff\xfe.txt")
    with open(name, "wb") as fh:
        fh.write(b"the food was bland. we came for dinner.\n")
    args = ["predict", "--model", str(model_folder), "--input", os.fsdecode(name)]
    if out == "file":
        args += ["--out", str(tmp_path / "out.jsonl")]
    assert main(args) == 0
    text = (tmp_path / "out.jsonl").read_bytes().decode("utf-8") if out == "file" else capsys.readouterr().out
    row = json.loads(text)
    assert row["id"] == "in_\ufffd\ufffd.txt-1"
    row["id"].encode("utf-8")  # no lone surrogate


# ----------------------------------------------------------------------------- 7: secrets in generate's settings

SECRET = "hunter2-secret-Sk9"


def _generate(tmp_path: Path, base_url: str) -> int:
    spec = {"name": "d", "source": "llm", "seed": 3, "llm": {
        "prompt": "write about $R", "slot": "R", "values": {"a": 0, "b": 1}, "per_label": 1, "dev": 0.2, "test": 0.2,
        "backend": {"type": "openai", "base_url": base_url, "model": "m", "retries": 0, "backoff": 0,
                    "api_key_env": "ICDA_PROBE_KEY"}}}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    return main(["generate", "--spec", str(tmp_path / "spec.json"), "--out", str(tmp_path / "r.jsonl"),
                 "--cache", str(tmp_path / "c.jsonl")])


@pytest.mark.parametrize("key, base_url, problem", [
    (f"{SECRET}\u00e9", "http://127.0.0.1:9/v1", "llm.backend.api_key_env: the value of ICDA_PROBE_KEY holds a "
                                                 "character that is not printable ASCII (character 19;"),
    ("sk-plain-key", f"http://user:{SECRET}@[::1/v1", "llm.backend.base_url: not a valid URL"),
    ("sk-plain-key", f"http://user:{SECRET}@127.0.0.1:port/v1", "llm.backend.base_url: not a valid URL"),
    ("sk-plain-key", f"http://127.0.0.1:9/v1?api-key={SECRET}", "llm.backend.base_url: has a query string"),
    ("sk-plain-key", f"https://h.example/v1#{SECRET}", "llm.backend.base_url: has a query string or a fragment"),
    ("sk-plain-key", f"user:{SECRET}@h.example/v1", "llm.backend.base_url: not an http(s) URL"),
])
def test_generate_refuses_odd_keys_and_urls_in_one_line_without_the_secret(tmp_path, monkeypatch, capsys, caplog,
                                                                            key, base_url, problem):
    """Before: a key with a non-ASCII character raised a UnicodeEncodeError (48 lines, from the
    HTTP client), an unclosed IPv6 bracket a ValueError; a query string was accepted and logged."""
    from icda import errors

    monkeypatch.setattr(errors, "_SECRETS", set())  # none redacted because an earlier test met it
    monkeypatch.setenv("ICDA_PROBE_KEY", key)
    assert _generate(tmp_path, base_url) == 2
    captured = capsys.readouterr()
    err = [line for line in captured.err.splitlines() if line.startswith("error: ")]
    assert len(err) == 1 and problem in err[0] and "Fix: " in err[0], captured.err
    assert "Traceback" not in captured.err
    for text in (captured.out, captured.err, caplog.text):
        assert SECRET not in text


def test_a_base_url_with_a_query_string_is_refused_when_the_spec_is_read():
    from icda.data.llm_spec import parse_llm

    llm = {"prompt": "write about $R", "slot": "R", "values": {"a": 0, "b": 1}, "per_label": 1,
           "backend": {"type": "openai", "base_url": f"https://h.example/v1?api-version=1&key={SECRET}", "model": "m"}}
    with pytest.raises(ConfigError) as err:
        parse_llm("d", llm)
    assert str(err.value).startswith("datasets.d.llm.backend.base_url: has a query string")
    assert SECRET not in str(err.value)
    llm["backend"]["base_url"] = "https://h.example:8443/v1"
    assert parse_llm("d", llm).backend.base_url == "https://h.example:8443/v1"


# ----------------------------------------------------------------------------- 8: an ERASER docs/ linked out


def test_an_eraser_docs_folder_linked_out_of_the_data_folder_is_refused(tmp_path):
    """Only each docid's own link was checked: docs/ itself a link to another folder was followed."""
    from icda.data.dataset_spec import validate_spec
    from icda.steps.prepare import read_splits

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "r1").write_text("a\nb\n")
    root = tmp_path / "data"
    (root / "eraser").mkdir(parents=True)
    (root / "eraser/docs").symlink_to(elsewhere)
    for name in ("train.txt", "dev.txt"):
        (root / name).write_text("0\tthe food was bad.[SEP]we came.\n1\tthe food was good.[SEP]we came.\n" * 3)
    ev = {"docid": "r1", "start_token": 1, "end_token": 2, "start_sentence": 1, "end_sentence": 2, "text": "b"}
    (root / "eraser/test.jsonl").write_text(json.dumps({"annotation_id": "r1", "classification": "1",
                                                        "query": "?", "evidences": [[ev]]}) + "\n")
    spec = validate_spec("mine", {"train": "train.txt", "dev": "dev.txt", "test": "eraser/test.jsonl",
                                  "test_format": "eraser"})
    from icda.errors import ConfigError

    with pytest.raises(ConfigError) as err:  # the data files resolved against data_dir
        read_splits("mine", spec, root)
    assert str(err.value).startswith(f"datasets.mine.test: {root / 'eraser/docs'} resolves to {elsewhere}, outside "
                                     f"data_dir {root} (a symbolic link leads out)")
    # a docs/ link out of its split's folder but inside data_dir: the reader's own check
    (root / "eraser/docs").unlink()
    (root / "other").mkdir()
    (root / "other/r1").write_text("a\nb\n")
    (root / "eraser/docs").symlink_to(root / "other")
    with pytest.raises(DataError) as err:
        read_splits("mine", spec, root)
    assert str(err.value).startswith(f"{root / 'eraser/test.jsonl'}:1: annotation r1: the folder "
                                     f"{root / 'eraser/docs'} leads outside {root / 'eraser'} (a link)")
    # a docs/ link that stays inside the data folder is read
    (root / "eraser/docs").unlink()
    shutil.copytree(elsewhere, root / "eraser/real-docs")
    (root / "eraser/docs").symlink_to("real-docs")
    assert read_splits("mine", spec, root)["test"][0].rationale == frozenset({1})


# ----------------------------------------------------------------------------- 10: any model file


VECTORS = torch.randn(12, 8, generator=torch.Generator().manual_seed(0))
SETTINGS = Settings.from_dict({"model": {"d_model": 8, "layers": 1, "heads": 2, "dff": 8, "dropout": 0.0},
                               "encoder": {"max_sentences": 4}})
FIELDS = [f.name for f in dataclasses.fields(ModelSettings)]


def _workspace() -> Workspace:
    return Workspace(SETTINGS, None, {}, None, CachedSentences(VECTORS), "cpu")


def _real_state() -> dict:
    torch.manual_seed(0)
    return _workspace().network(0).state_dict()


SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 40), st.integers(), st.just(2**70), st.floats(),
                    st.text(max_size=6))
TENSORS = st.builds(lambda shape, fill, dtype: (torch.ones(shape) * fill).to(dtype),
                    st.lists(st.integers(0, 3), max_size=2).map(tuple), st.floats(width=32),
                    st.sampled_from([torch.float32, torch.float16, torch.int64, torch.bool]))


def _junk(leaves):
    return st.recursive(leaves, lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(
        st.one_of(st.text(max_size=6), st.integers()), inner, max_size=3)), max_leaves=8)


def _edited(real: dict, keys: list[str], values) -> st.SearchStrategy:
    """``real`` as it is, with one key's value changed or dropped, or with keys of ``keys`` of
    any value."""
    return st.one_of(
        st.just(real), st.tuples(st.sampled_from(keys + ["extra"]), values).map(lambda kv: real | {kv[0]: kv[1]}),
        st.sampled_from(sorted(real)).map(lambda key: {k: v for k, v in real.items() if k != key}),
        st.dictionaries(st.sampled_from(keys + ["extra"]), values, max_size=6))


JUNK = _junk(st.one_of(SCALARS, TENSORS))
JSON_JUNK = _junk(SCALARS)
#: model settings: the real ones, one changed or left out, known keys of any value, or junk
SETTING_VALUES = st.one_of(SCALARS, st.sampled_from(["mmi", "comp", "learned", "none", "contextual", "exclude",
                                                     "zero", "centred", "linear"]))
SETTING_DICTS = _edited(dataclasses.asdict(SETTINGS.model), FIELDS, SETTING_VALUES)
ENCODER_DICTS = _edited(prediction_encoder_settings(SETTINGS.encoder), list(PREDICTION_ENCODER_KEYS), SCALARS)
#: state dicts: the real one, the real one with a value or a key changed, or junk
STATE = st.one_of(
    st.just("real"), st.tuples(st.sampled_from(sorted(_real_state()) + ["extra"]), st.one_of(TENSORS, JUNK)),
    st.dictionaries(st.one_of(st.text(max_size=6), st.integers()), st.one_of(TENSORS, JUNK), max_size=3), JUNK)
SAVED = st.one_of(JUNK, st.fixed_dictionaries(
    {"state_dict": STATE, "model": st.one_of(SETTING_DICTS, JUNK)},
    optional={"members": st.one_of(st.lists(STATE, min_size=1, max_size=3), JUNK),
              "encoder": st.one_of(ENCODER_DICTS, JUNK),
              "settings_fingerprint": st.one_of(st.text(max_size=4), JUNK)}))
CARD = st.one_of(JSON_JUNK, st.builds(lambda model: {"settings": SETTINGS.to_dict() | {"model": model},
                                                     "encoder_fingerprint": "0" * 64, "source": None},
                                      st.one_of(SETTING_DICTS, JSON_JUNK)))


def _state(drawn):
    if isinstance(drawn, str) and drawn == "real":
        return _real_state()
    if isinstance(drawn, tuple):  # a parameter of the real state dict replaced
        return _real_state() | {drawn[0]: drawn[1]}
    return drawn


@given(saved=SAVED, card=CARD)
def test_any_model_file_reads_as_a_model_or_one_data_error(saved, card):
    """Whatever model.pt (torch.save of dicts, lists, strings, numbers, tensors) and model.json
    hold: read_saved_model, read_model_card and load_model give a model or one DataError naming
    the file, never another exception."""
    from icda.steps.predict import read_model_card

    if isinstance(saved, dict) and "state_dict" in saved:
        saved = saved | {"state_dict": _state(saved["state_dict"])}
        if isinstance(saved.get("members"), list):
            saved["members"] = [_state(m) for m in saved["members"]]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        torch.save(saved, folder / MODEL_FILE)
        (folder / MODEL_CARD_FILE).write_text(json.dumps(card))
        for read in (read_saved_model, lambda path: _workspace().load_model(path),
                     lambda path: read_model_card(path.parent)):
            try:
                read(folder / MODEL_FILE)
            except DataError as err:
                assert str(err).startswith(str(folder)) and "\n" not in str(err)
