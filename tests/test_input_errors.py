"""Outside input that used to end in a traceback ends in one DataError naming the file, the line
and the fix: a lone surrogate escape in JSONL, a text longer than spaCy splits, a
training set too small for any counterfactual."""

from __future__ import annotations

import json

import pytest

from icda.data.readers import read_jsonl, read_text_lines
from icda.errors import DataError
from icda.steps.predict import read_new_documents
from icda.steps.prepare import prepare_dataset

SURROGATE = r'{"label": 1, "sentences": ["The food was good \ud83d.", "We sat outside."]}'
OK = '{"label": 0, "sentences": ["The food was cold.", "We sat inside."]}'


def jsonl_dataset(folder, train_lines, n_test=4):
    """A JSONL dataset (train, dev, test) under ``folder``: the spec."""
    folder.mkdir(parents=True, exist_ok=True)
    doc = lambda y, i: json.dumps({"label": y, "sentences": [f"The food {i} was {'good' if y else 'bad'}.",
                                                              f"Room {i}.", "We came back.", "It rained.",
                                                              f"Day {i}."]})
    (folder / "train.jsonl").write_text("\n".join(train_lines) + "\n")
    (folder / "dev.jsonl").write_text("\n".join(doc(i % 2, 100 + i) for i in range(8)) + "\n")
    (folder / "test.jsonl").write_text("\n".join(doc(i % 2, 200 + i) for i in range(n_test)) + "\n")
    return {"train": "d/train.jsonl", "dev": "d/dev.jsonl", "test": "d/test.jsonl", "keywords": ["food"],
            "min_sentences": 1}


def test_a_lone_surrogate_stops_prepare_naming_the_line(tmp_path):
    spec = jsonl_dataset(tmp_path / "data/d", [OK, SURROGATE])
    with pytest.raises(DataError) as err:
        prepare_dataset("d", spec, tmp_path / "data", tmp_path / "out")
    assert str(err.value) == (
        f"{tmp_path / 'data/d/train.jsonl'}:2: a string holds the escape \\ud83d, half of a UTF-16 surrogate "
        "pair without its other half: no character, and no UTF-8 file can hold it. Fix: write the character "
        "itself, or both halves of its pair (e.g. \\ud83d\\ude00), or remove the escape")
    assert not (tmp_path / "out/train.jsonl").exists()


@pytest.mark.parametrize("record", [
    {"label": 1, "text": "Good food \ud83d."}, {"label": 1, "sentences": ["a"], "id": "x\udc00"},
    {"label": 1, "sentences": ["a"], "\ud800": 1}])
def test_a_lone_surrogate_stops_predict_naming_the_line(tmp_path, record):
    path = tmp_path / "new.jsonl"
    path.write_text(OK + "\n" + json.dumps(record) + "\n")  # json.dumps writes the escape: ASCII
    with pytest.raises(DataError, match=r"new\.jsonl:2: a string holds the escape \\u(d83d|dc00|d800), half"):
        read_new_documents(path, 2)


def test_a_surrogate_pair_is_one_character(tmp_path):
    path = tmp_path / "new.jsonl"
    path.write_text('{"label": 1, "sentences": ["Good \\ud83d\\ude00."]}\n')
    assert read_jsonl(path)[0].sentences == ("Good \U0001F600.",)


def test_a_text_longer_than_spacy_splits_is_named_by_file_and_line(tmp_path):
    long = "word " * 200_001  # 1,000,005 characters
    path = tmp_path / "new.txt"
    path.write_text("A short one.\n" + long + "\n")
    with pytest.raises(DataError) as err:
        read_text_lines(path)
    assert str(err.value) == (
        f"{path}:2: the text has 1,000,005 characters, more than the 1,000,000 spaCy splits into sentences "
        "at once (nlp.max_length). Fix: split the line into several documents, one a line, or give the "
        'document as JSONL split already: {"sentences": [...]} (not read by spaCy)')
    jsonl = tmp_path / "train.jsonl"
    jsonl.write_text(OK + "\n" + json.dumps({"label": 1, "text": long}) + "\n")
    with pytest.raises(DataError, match=r"train\.jsonl:2: the text has 1,000,005 characters, more than the "
                                        r"1,000,000 .*Fix: split the document into several records"):
        read_jsonl(jsonl)
    # split already, the document is read: spaCy does not see it
    jsonl.write_text(json.dumps({"label": 1, "sentences": [long]}) + "\n")
    assert len(read_jsonl(jsonl)[0].sentences[0]) == 1_000_004


def test_a_train_split_too_small_for_a_counterfactual_stops_prepare(tmp_path):
    """One document per class: prepare used to pass and the pools step failed after training,
    with advice about the model; ICDA keeps n // (2·C) = 2 // 4 = 0 originals per class."""
    train = [json.dumps({"label": y, "sentences": [f"The food was {w}.", "We sat.", "It rained.", "A", "B"]})
             for y, w in ((0, "bad"), (1, "good"))]
    spec = jsonl_dataset(tmp_path / "data/d", train)
    with pytest.raises(DataError) as err:
        prepare_dataset("d", spec, tmp_path / "data", tmp_path / "out")
    assert str(err.value) == (
        f"{tmp_path / 'data/d/train.jsonl'}: the train split has 2 documents after preparation: ICDA keeps "
        "n // (2·C) = 2 // 4 = 0 originals of each of the 2 classes to turn into counterfactuals, so no "
        "counterfactual could be made. Fix: give the train split at least 2·C = 4 documents (2 of each class) "
        f"after preparation: add documents to {tmp_path / 'data/d/train.jsonl'}")
    spec = jsonl_dataset(tmp_path / "data/d", train * 2 + [json.dumps({"label": 0, "sentences": ["x", "y"]}),
                                                           json.dumps({"label": 1, "sentences": ["z", "w"]})])
    assert prepare_dataset("d", spec, tmp_path / "data", tmp_path / "out")["splits"]["train"]["documents"] == 4


@pytest.mark.parametrize("index", ["²", "٣", "1.5", "-1"])
def test_a_hotel_index_that_is_not_ascii_digits_is_named_by_file_and_line(tmp_path, index):
    """Found by Hypothesis (tests/test_properties.py): "²" passed str.isdigit and int() raised a
    ValueError with a traceback."""
    from icda.data.readers import read_hotel_test

    path = tmp_path / "hotel.test.sents"
    path.write_text(f"0\tA room.[SEP]A bed.\n{index}\tA room.[SEP]A bed.\n", encoding="utf-8")
    with pytest.raises(DataError) as err:
        read_hotel_test(path)
    assert str(err.value) == (f"{path}:2: annotated sentence index {index!r} is not a non-negative integer. Fix: "
                              "write each document on one line as IDX IDX ...<TAB>sentence[SEP]sentence...")


@pytest.mark.parametrize("section, key, value, message", [
    ("sampling", "temperature", float("nan"), "datasets.d.llm.sampling.temperature: nan is not a finite number >= 0.0"),
    ("sampling", "top_p", float("nan"), "datasets.d.llm.sampling.top_p: nan is not a finite number >= 0.0"),
    ("backend", "timeout", float("inf"), "datasets.d.llm.backend.timeout: inf is not a finite number >= 0.001"),
    ("backend", "backoff", 10**400, "datasets.d.llm.backend.backoff: 1000"),
    (None, "per_label", 10**7, "datasets.d.llm.per_label: 10000000 is more than 1,000,000. Fix: give at most 1,000,000"),
])
def test_an_llm_number_that_is_not_finite_or_too_large_names_its_key(section, key, value, message):
    """Found by Hypothesis (tests/test_properties.py): NaN and infinite sampling and backend
    numbers were accepted, an integer beyond a float raised OverflowError."""
    from icda.data.llm_spec import parse_llm

    llm = {"prompt": "write about $R", "slot": "R", "values": {"a": 0, "b": 1}, "per_label": 4,
           "sampling": {"temperature": 0.7}, "backend": {"type": "openai", "base_url": "http://h/v1", "model": "m"}}
    (llm if section is None else llm[section])[key] = value
    from icda.errors import ConfigError

    with pytest.raises(ConfigError) as err:
        parse_llm("d", llm)
    assert str(err.value).startswith(message), str(err.value)


def test_a_server_answer_with_half_a_surrogate_pair_is_recorded_with_a_replacement_character(tmp_path):
    """A server's JSON can carry "\\ud83d" alone: the cache append raised UnicodeEncodeError
    (a traceback in generate); the answer is recorded with U+FFFD in its place."""
    from icda.generate.records import ResponseCache, read_responses
    from icda.generate.run import generate

    class HalfPair:
        model, concurrency = "fake", 1

        def complete(self, request, sampling):
            return "My review: The food \ud83d was good. We sat. It rained. Cold. Warm."

    spec = {"source": "llm", "seed": 3, "llm": {
        "prompt": "write about $R", "slot": "R", "values": {"a": 0, "b": 1}, "per_label": 1, "dev": 0.2, "test": 0.2,
        "backend": {"type": "openai", "base_url": "http://h/v1", "model": "m", "retries": 0, "backoff": 0}}}
    generate("d", spec, tmp_path / "r.jsonl", backend=HalfPair(), cache=tmp_path / "c.jsonl")
    texts = [r.text for r in read_responses(tmp_path / "r.jsonl")]
    assert texts == ["My review: The food \ufffd was good. We sat. It rained. Cold. Warm."] * 2
    assert [r.text for r in ResponseCache(tmp_path / "c.jsonl").read()] == texts


def test_an_integer_beyond_pythons_digit_limit_is_named_by_file_and_line(tmp_path):
    """Python reads at most 4,300 digits of an integer: json.loads and the YAML loader raised a
    bare ValueError (a traceback in prepare, predict and every --config)."""
    from icda.io import read_yaml

    digits = "9" * 4400
    path = tmp_path / "train.jsonl"
    path.write_text(OK + "\n" + '{"label": ' + digits + ', "sentences": ["a"]}\n')
    with pytest.raises(DataError) as err:
        read_jsonl(path)
    assert str(err.value).startswith(f"{path}:2: a number has more than 4,300 digits, more than Python reads. "
                                     "Fix: write it with fewer digits")
    config = tmp_path / "config.yaml"
    config.write_text(f"data_dir: .\ndatasets:\n  s: {{source: synthetic, synthetic: {{n_train: {digits}}}}}\n")
    with pytest.raises(DataError) as err:
        read_yaml(config, "give a config")
    assert str(err.value) == (f"{config}:3: a number has more than 4,300 digits, more than Python reads. "
                              "Fix: write it with fewer digits")


def test_a_hotel_index_of_thousands_of_digits_is_named_by_file_and_line(tmp_path):
    from icda.data.readers import read_hotel_test

    path = tmp_path / "hotel.test.sents"
    path.write_text("9" * 4400 + "\tA room.[SEP]A bed.\n")
    with pytest.raises(DataError) as err:
        read_hotel_test(path)
    assert str(err.value) == (f"{path}:1: annotated sentence index 999999999999… (4,400 digits) is past the last "
                              "sentence. Fix: use 0-based indices of the document's sentences")


def test_a_synthetic_dev_split_too_small_for_a_counterfactual_says_which_key_to_raise(tmp_path):
    spec = {"source": "synthetic", "synthetic": {"n_train": 40, "n_dev": 3, "n_test": 10}, "min_sentences": 1}
    with pytest.raises(DataError) as err:
        prepare_dataset("s", spec, tmp_path, tmp_path / "out")
    assert err.value.problem.startswith("the dev split has 2 documents after preparation: ICDA keeps n // (2·C) = "
                                        "2 // 4 = 0 originals"), err.value.problem
    assert err.value.fix.endswith("after preparation: raise datasets.s.synthetic.n_dev")


@pytest.mark.parametrize("name, content, message", [
    ("config.yaml", b"data_dir: true\ndatasets: {s: {source: synthetic}}\n",
     "config.yaml: `data_dir` is True, not a path. Fix: give the folder of the data files as a string"),
    ("config.yaml", b"data_dir: \xed\xa0\x80\ndatasets: {}\n", "config.yaml: not UTF-8 text (invalid continuation byte "
                                                             "at byte 10). Fix: convert the file to UTF-8"),
    ("config.yaml", b"datasets: {s: {seed: " + b"9" * 4400 + b"}}\n",
     "config.yaml: a number has more than 4,300 digits, more than Python reads. Fix: write it with fewer digits"),
    ("spec.json", b'{"name": "s", "data_dir": true}', 'spec.json: "data_dir" is True, not a path. Fix: give the '
                                                      "folder of the data files as a string"),
])
def test_odd_spec_and_config_files_are_one_config_error(tmp_path, name, content, message):
    """Found by Hypothesis (tests/test_properties.py): ``data_dir: true`` raised TypeError, a
    config that is not UTF-8 UnicodeDecodeError, a 4,400-digit integer ValueError."""
    from icda.data.dataset_spec_files import load_one_spec
    from icda.errors import ConfigError

    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(ConfigError) as err:
        load_one_spec(path, None, None, "prepare") if name == "spec.json" else load_one_spec(None, path, "s", "prepare")
    assert str(err.value) == f"{tmp_path}/{message}"


def test_read_yaml_names_a_file_that_is_not_utf8(tmp_path):
    from icda.io import read_yaml

    path = tmp_path / "c.yaml"
    path.write_bytes(b"a: \xff\n")
    with pytest.raises(DataError) as err:
        read_yaml(path, "give a config")
    assert str(err.value) == f"{path}: not UTF-8 text (invalid start byte at byte 3). Fix: convert the file to UTF-8"


def test_jsonl_labels_by_class_name_and_the_names_recorded_in_stats(tmp_path):
    """class_names on a JSONL dataset: records may give their label by name (or index), the
    prepared documents hold the index, stats.json records the names; an unknown name is named
    with its line and the fix; without class_names a name is refused with the option's name."""
    sentences = lambda i: [f"The food {i} was fine.", f"Room {i}.", "We came back.", "It rained."]
    train = [json.dumps({"label": ("neg", "pos")[i % 2] if i % 3 else i % 2, "sentences": sentences(i)})
             for i in range(12)]
    spec = jsonl_dataset(tmp_path / "data/d", train) | {"class_names": ["neg", "pos"], "min_sentences": 2}
    stats = prepare_dataset("d", spec, tmp_path / "data", tmp_path / "out")
    assert stats["class_names"] == ["neg", "pos"]
    assert json.loads((tmp_path / "out/stats.json").read_text())["class_names"] == ["neg", "pos"]
    prepared = [json.loads(line) for line in (tmp_path / "out/train.jsonl").read_text().splitlines()]
    assert {(doc["sentences"][0], doc["label"]) for doc in prepared} <= {
        (f"The food {i} was fine.", i % 2) for i in range(12)}

    (tmp_path / "data/d/train.jsonl").write_text("\n".join(train + [json.dumps(
        {"label": "neutral", "sentences": sentences(99)})]) + "\n")
    with pytest.raises(DataError) as err:
        prepare_dataset("d", spec, tmp_path / "data", tmp_path / "out")
    assert (err.value.line, err.value.problem) == (13, "label 'neutral' is not one of the class names ['neg', 'pos']")
    assert "correct the dataset's class_names" in err.value.fix
    with pytest.raises(DataError) as err:
        prepare_dataset("d", spec | {"class_names": None}, tmp_path / "data", tmp_path / "out")
    assert err.value.problem == "label 'pos' is not an integer" and "class_names" in err.value.fix


@pytest.mark.parametrize("command", [
    ["predict", "--model", "m", "--input", "docs.txt"],
    ["export-eraser", "--data-dir", "d", "--out-dir", "e"],
    ["embed", "--data-dir", "d", "--out", "e.pt"],
])
def test_a_bogus_device_is_a_usage_error(tmp_path, capsys, monkeypatch, command):
    """--device bogus ended in torch's traceback."""
    from icda.cli import main

    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exc:
        main([*command, "--device", "bogus"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--device 'bogus': not a device. Fix: give auto (CUDA when present), cpu, cuda or cuda:<index>" in err
    assert "Traceback" not in err


def test_resolve_device_refuses_a_name_that_is_no_device():
    from icda.encoder import resolve_device
    from icda.errors import ConfigError

    assert resolve_device("cpu") == "cpu"
    with pytest.raises(ConfigError, match="not a device"):
        resolve_device("bogus")
