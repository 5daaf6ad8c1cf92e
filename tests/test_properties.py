"""Property-based tests (Hypothesis) of every reader of outside input but ERASER's: the ICDA TSV
formats (``LABEL<TAB>s[SEP]s``, hotel ``IDX IDX<TAB>...``), JSONL datasets, ``predict``'s inputs
(JSONL, plain text) and the config check, fed arbitrary text, control characters, surrogates,
invalid UTF-8, odd numbers (NaN, ±inf, huge, negative) and odd types.

The property: either the input is read as documented, or a DataError/ConfigError names the file
and the line (or the key) — never another exception, and nothing is written outside the output
folder. Examples per test: the profile of tests/conftest.py (``fast`` by default; ``ci`` in CI's
slow stage: HYPOTHESIS_PROFILE=ci).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import tempfile
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, strategies as st  # noqa: E402

from icda.data.readers import read_hotel_test, read_icda, read_jsonl, read_text_lines  # noqa: E402
from icda.errors import ConfigError, DataError  # noqa: E402
from icda.io import atomic_path, stale_writes  # noqa: E402
from icda.steps.predict import read_new_documents  # noqa: E402
from icda.steps.prepare import prepare_dataset  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "workflow/schemas/config.schema.yaml"

# --------------------------------------------------------------------------- strategies

#: any code point, surrogates included (a file cannot hold them as UTF-8: they become invalid bytes)
ANY_CHAR = st.characters(exclude_categories=())
#: the characters that shape the formats, and control characters
SPECIAL = st.sampled_from(["\t", "[SEP]", "[sep]", " ", "\r", "\n", "\r\n", "\x00", "\x0b", "\x0c", "\x1c", "\x85",
                           "\u2028", "\ufeff", "{", "}", '"', "\\", "\ud83d", "\udc00", "😀", "0", "1", "-1", "NaN",
                           "9" * 4400])  # more digits than Python's int() reads
TEXT = st.lists(st.one_of(st.text(ANY_CHAR, max_size=6), SPECIAL, st.sampled_from(["The food was good.", "Cold.",
                                                                                      "We waited. It rained!"])),
                max_size=8).map("".join)
NUMBERS = st.one_of(st.integers(), st.integers(-3, 4), st.floats(), st.sampled_from([math.nan, math.inf, -math.inf,
                                                                                      10**100, -1, 0.5, 1.0]))
SCALARS = st.one_of(st.none(), st.booleans(), NUMBERS, TEXT)
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
                      max_leaves=8)


def write_lines(path: Path, lines: list[str], encoding_errors: str = "surrogatepass") -> None:
    """Each line and a newline, as UTF-8; a surrogate becomes its (invalid) UTF-8 bytes."""
    path.write_bytes("".join(line + "\n" for line in lines).encode("utf-8", encoding_errors))


#: an ICDA TSV line: a label field (mostly a class, sometimes anything), a tab, sentences joined by [SEP]
ICDA_LINE = st.builds(lambda label, tab, sentences, sep: f"{label}{tab}{sep.join(sentences)}",
                      st.one_of(st.sampled_from(["0", "1", " 1 ", "2", "-0", "0.7", "1e3", "nan", ""]), TEXT),
                      st.sampled_from(["\t", "\t", "\t\t", " ", ""]), st.lists(TEXT, max_size=5),
                      st.sampled_from(["[SEP]", "[sep]", " [SEP] ", "[SEP][SEP]"]))
#: a hotel test line: indices (mostly digits), a tab, sentences
HOTEL_LINE = st.builds(lambda indices, tab, sentences: f"{' '.join(indices)}{tab}{'[SEP]'.join(sentences)}",
                       st.lists(st.one_of(st.sampled_from(["0", "1", "2", "7", "00", "-1", "1.5", "٣", "²", "9" * 4400]), TEXT),
                                max_size=4),
                       st.sampled_from(["\t", "\t", " "]), st.lists(TEXT, max_size=5))
#: a JSONL record: mostly the documented keys, with values of the right type or not
RECORD = st.fixed_dictionaries({}, optional={
    "label": st.one_of(st.integers(-1, 3), NUMBERS, VALUES),
    "sentences": st.one_of(st.lists(TEXT, max_size=5), VALUES),
    "text": st.one_of(TEXT, VALUES),
    "rationale": st.one_of(st.lists(st.integers(-1, 6), max_size=3), st.lists(NUMBERS, max_size=2), VALUES),
    "id": st.one_of(TEXT, st.integers(), VALUES),
    "lable": VALUES,
})
JSONL_LINE = st.one_of(
    st.builds(lambda record, ascii: json.dumps(record, ensure_ascii=ascii), RECORD, st.booleans()),
    st.builds(lambda key: f'{{"{key}": {"9" * 4400}, "sentences": ["a"]}}', st.sampled_from(["label", "id", "x"])),
    st.builds(json.dumps, VALUES),
    TEXT,
)


def check_error(err: DataError, path: Path) -> None:
    """A DataError names the file and, where the problem is on one line, the line; it says the fix."""
    assert err.path == str(path) and err.problem and err.fix, err
    assert err.line is None or err.line >= 1
    assert str(err).startswith(str(path)) and "Fix: " in str(err)


def check_documents(docs, classes, labelled: bool) -> None:
    """What the readers promise of every document they return."""
    assert len({doc.id for doc in docs}) == len(docs)
    for doc in docs:
        assert doc.sentences and all(s == s.strip() and s for s in doc.sentences)
        assert all(isinstance(s, str) for s in doc.sentences)
        for s in doc.sentences:
            s.encode("utf-8")  # every sentence can be written back
        if labelled:
            assert doc.label in classes
        else:
            assert doc.label is None or doc.label in classes
        if doc.rationale is not None:
            assert all(0 <= i < len(doc.sentences) for i in doc.rationale)


class Splitter:
    """One spaCy sentencizer for every example (building one takes a second)."""

    splitter = None

    @classmethod
    def get(cls):
        if cls.splitter is None:
            from icda.data.sentences import SentenceSplitter

            cls.splitter = SentenceSplitter()
        return cls.splitter


# --------------------------------------------------------------------------- the readers


@given(lines=st.lists(ICDA_LINE | TEXT, max_size=6), ratings=st.booleans(), classes=st.sampled_from([2, 3]))
def test_icda_tsv_is_read_or_named_by_file_and_line(lines, ratings, classes):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "train.txt"
        write_lines(path, lines)
        try:
            docs = read_icda(path, keywords=["food"], ratings=ratings, classes=range(classes))
        except DataError as err:
            check_error(err, path)
        else:
            check_documents(docs, range(2) if ratings else range(classes), labelled=True)


@given(lines=st.lists(HOTEL_LINE | TEXT, max_size=6))
def test_hotel_test_files_are_read_or_named_by_file_and_line(lines):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "hotel.test.sents"
        write_lines(path, lines)
        try:
            docs = read_hotel_test(path)
        except DataError as err:
            check_error(err, path)
        else:
            check_documents(docs, (), labelled=False)
            assert all(doc.rationale is not None for doc in docs)


@given(lines=st.lists(JSONL_LINE, max_size=5), require_label=st.booleans(), known_keys_only=st.booleans())
def test_jsonl_datasets_are_read_or_named_by_file_and_line(lines, require_label, known_keys_only):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "train.jsonl"
        write_lines(path, lines)
        try:
            docs = read_jsonl(path, splitter=Splitter.get(), keywords=["food"], require_label=require_label,
                              known_keys_only=known_keys_only, classes=range(2))
        except DataError as err:
            check_error(err, path)
        else:
            check_documents(docs, range(2), labelled=require_label)


@given(lines=st.lists(JSONL_LINE | TEXT, max_size=5), fmt=st.sampled_from(["jsonl", "text"]))
def test_predict_inputs_are_read_or_named_by_file_and_line(lines, fmt):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"new.{'jsonl' if fmt == 'jsonl' else 'txt'}"
        write_lines(path, lines)
        try:
            docs = read_new_documents(path, 3, "auto")
        except DataError as err:
            check_error(err, path)
        else:
            check_documents(docs, range(3), labelled=False)


@given(lines=st.lists(TEXT, max_size=5))
def test_plain_text_is_read_or_named_by_file_and_line(lines):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "new.txt"
        write_lines(path, lines)
        try:
            docs = read_text_lines(path, splitter=Splitter.get())
        except DataError as err:
            check_error(err, path)
        else:
            check_documents(docs, (), labelled=False)


def files_under(folder: Path) -> set[str]:
    return {str(Path(root, name).relative_to(folder)) for root, _, names in os.walk(folder) for name in names}


GOOD = ['{"label": %d, "sentences": ["The food %d was %s.", "Room %d.", "We came back.", "It rained.", "Day %d."]}'
        % (i % 2, i, "good" if i % 2 else "bad", i, i) for i in range(12)]


@given(train=st.lists(st.sampled_from(GOOD) | JSONL_LINE, max_size=10), fmt=st.sampled_from(["jsonl", "icda"]),
       icda_lines=st.lists(ICDA_LINE, max_size=8))
def test_prepare_reads_or_names_the_line_and_writes_only_its_output_folder(train, fmt, icda_lines):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        data = tmp / "data"
        data.mkdir()
        write_lines(data / "train.txt", train if fmt == "jsonl" else icda_lines)
        write_lines(data / "dev.jsonl", GOOD)
        write_lines(data / "test.jsonl", GOOD)
        spec = {"train": "train.txt", "dev": "dev.jsonl", "test": "test.jsonl", "format": fmt,
                "test_format": "jsonl", "keywords": ["food"], "min_sentences": 1}
        before = files_under(tmp)
        try:
            stats = prepare_dataset("d", spec, data, tmp / "out")
        except DataError as err:
            assert err.path.startswith(str(data)) and err.fix, err
        else:
            assert stats["splits"]["train"]["documents"] >= 4
        assert {f for f in files_under(tmp) - before if not f.startswith("out/")} == set()


# --------------------------------------------------------------------------- the config check

SECTIONS = {
    "n_runs": NUMBERS, "runs": VALUES, "train_threads": NUMBERS, "device": TEXT, "data_dir": VALUES,
    "comp": st.fixed_dictionaries({}, optional={"lambdas": st.lists(NUMBERS, max_size=3) | VALUES, "seeds": NUMBERS}),
    "encoder": st.fixed_dictionaries({}, optional={k: NUMBERS | VALUES for k in ("max_tokens", "max_sentences",
                                                                                  "batch_size", "pooling", "name")}),
    "model": st.fixed_dictionaries({}, optional={k: NUMBERS | VALUES for k in ("d_model", "heads", "dropout", "k",
                                                                                "comp_lambda", "objective")}),
    "train": st.fixed_dictionaries({}, optional={k: NUMBERS | VALUES for k in ("lr", "encoder_lr", "grad_clip",
                                                                                "batch_size", "weight_decay")}),
    "icda": st.fixed_dictionaries({}, optional={k: NUMBERS | VALUES for k in ("pool_fraction", "max_iters",
                                                                               "counterfactual_classes", "dev_seed")}),
    "theory": st.fixed_dictionaries({}, optional={k: NUMBERS | VALUES for k in ("p1", "p2", "n", "betas", "beta")}),
    "overrides": st.dictionaries(st.sampled_from(["toy", "x"]), VALUES, max_size=2),
    "sweep": VALUES, "report": VALUES, "run_datasets": VALUES,
    "datasets": st.one_of(st.dictionaries(TEXT, VALUES, max_size=2), VALUES,
                          st.builds(lambda extra: {"toy": {"train": "t.txt", "dev": "d.txt", "test": "e.txt"} | extra},
                                    st.dictionaries(st.sampled_from(["classes", "seed", "dev_fraction", "keywords",
                                                                     "min_sentences", "url", "md5", "synthetic"]),
                                                    VALUES, max_size=2))),
}


@given(config=st.fixed_dictionaries({}, optional=SECTIONS) | VALUES)
def test_the_config_check_passes_or_names_the_key(config):
    """Any config: the check passes (then every number in it is finite) or raises a ConfigError
    naming the key; a config that is not a mapping is named as such."""
    from icda.workflow_config.config_check import check_config

    try:
        check_config(config, SCHEMA)
    except ConfigError as err:
        message = str(err)
        assert message and "Fix:" in message, message
    else:
        assert isinstance(config, dict)
        assert all(math.isfinite(v) for v in _floats(config)), config


def _floats(value):
    if isinstance(value, float):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _floats(item)
    elif isinstance(value, list):
        for item in value:
            yield from _floats(item)


# --------------------------------------------------------------------------- dataset specs

SPEC_KEYS = ["source", "train", "dev", "test", "format", "test_format", "keywords", "ratings", "dev_fraction",
             "train_documents", "min_sentences", "balance", "classes", "seed", "url", "allow_file_url", "public",
             "md5", "git_blob", "how_to_get", "spacy_model", "synthetic", "llm", "near_duplicate_threshold",
             "drop_test_overlap"]
LLM = st.fixed_dictionaries({}, optional={
    "prompt": TEXT, "slot": TEXT, "values": VALUES | st.dictionaries(TEXT, st.integers(-1, 3), max_size=3),
    "per_label": NUMBERS, "dev": NUMBERS, "test": NUMBERS, "sampling": VALUES, "backend": VALUES,
    "preamble": VALUES, "filters": VALUES, "leakage_ngram": NUMBERS, "cache": VALUES})


@given(spec=st.dictionaries(st.sampled_from(SPEC_KEYS) | TEXT, VALUES, max_size=4)
       | st.builds(lambda extra, llm: {"source": "llm", "llm": llm} | extra,
                   st.dictionaries(st.sampled_from(SPEC_KEYS[5:]), VALUES, max_size=2), LLM)
       | st.builds(lambda extra: {"source": "synthetic", "synthetic": extra},
                   st.dictionaries(st.sampled_from(["n_train", "n_dev", "n_test", "p_x1", "p_x2", "n_aspects", "seed",
                                                    "verdict", "p_verdict", "min_sentences", "max_sentences"]),
                                   NUMBERS | VALUES, max_size=3)))
def test_a_dataset_spec_is_validated_or_names_the_key(spec):
    """A dataset's spec (``datasets.<name>`` of a config, or prepare's --spec): validated, or a
    ConfigError naming ``datasets.<name>.<key>``."""
    from icda.data.dataset_spec import validate_spec
    from icda.data.llm_spec import parse_llm

    try:
        out = validate_spec("d", spec)
        if out["source"] == "llm":
            parse_llm("d", out["llm"])
    except ConfigError as err:
        assert str(err).startswith("datasets.d") and "Fix:" in str(err), str(err)


VALID_LLM = {"prompt": "write about a restaurant worth $R/10", "slot": "R", "values": {2: 0, 9: 1}, "per_label": 4,
             "dev": 0.2, "test": 0.2, "sampling": {"temperature": 0.7, "top_p": 0.9, "max_tokens": 64},
             "preamble": "My review:", "filters": ["review"], "leakage_ngram": 5,
             "backend": {"type": "openai", "base_url": "http://127.0.0.1:8000/v1", "model": "m", "concurrency": 2,
                         "retries": 1, "backoff": 0.0, "timeout": 10}}
VALID_FILES = {"train": "t.txt", "dev": "d.txt", "test": "e.txt", "keywords": ["food"]}


SECTION_KEYS = {"": SPEC_KEYS + list(VALID_LLM), "sampling": ["temperature", "top_p", "max_tokens"],
                "backend": ["type", "base_url", "model", "concurrency", "retries", "backoff", "timeout",
                            "api_key_env", "device"]}


@given(base=st.sampled_from(["files", "llm"]),
       where_key=st.sampled_from(sorted(SECTION_KEYS)).flatmap(
           lambda where: st.tuples(st.just(where), st.sampled_from(SECTION_KEYS[where]))),
       value=NUMBERS | VALUES)
def test_one_odd_value_in_a_valid_spec_is_named_by_its_key(base, where_key, value):
    """Found by it: ``llm.sampling.temperature: .nan`` and ``llm.backend.timeout: .inf`` were
    accepted (and an integer beyond a float raised OverflowError)."""
    where, key = where_key
    import copy

    from icda.data.dataset_spec import validate_spec
    from icda.data.llm_spec import parse_llm

    spec = copy.deepcopy(VALID_FILES if base == "files" else {"source": "llm", "llm": VALID_LLM})
    target = spec if base == "files" or (not where and key in SPEC_KEYS) else (
        spec["llm"] if not where else spec["llm"][where])
    target[key] = value
    try:
        out = validate_spec("d", spec)
        llm = parse_llm("d", out["llm"]) if out["source"] == "llm" else None
    except ConfigError as err:
        assert str(err).startswith("datasets.d") and "Fix:" in str(err), str(err)
    else:  # accepted: every number in it is finite
        assert all(math.isfinite(v) for v in _floats(out)), out
        if llm is not None:
            assert all(math.isfinite(v) for v in _floats(dataclasses.asdict(llm))), llm


# --------------------------------------------------------------------------- --spec and --config files

import yaml  # noqa: E402

TOP = st.fixed_dictionaries({}, optional={"name": VALUES | TEXT, "data_dir": VALUES | TEXT, "source": VALUES,
                                          "train": VALUES, "datasets": VALUES | st.dictionaries(TEXT, VALUES, max_size=2)})


@given(content=st.one_of(TOP.map(lambda v: json.dumps(v)), TOP.map(lambda v: yaml.safe_dump(v, allow_unicode=True)),
                         VALUES.map(json.dumps), TEXT),
       as_config=st.booleans())
def test_spec_and_config_files_are_read_or_named(content, as_config):
    """``--spec`` (JSON) and ``--config`` (YAML) of prepare and generate: read, or a DataError
    naming the file, or a ConfigError naming the key."""
    from icda.data.dataset_spec_files import load_one_spec

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / ("config.yaml" if as_config else "spec.json")
        path.write_bytes(content.encode("utf-8", "surrogatepass"))
        try:
            name, spec, data_dir = (load_one_spec(None, path, "d", "prepare") if as_config
                                    else load_one_spec(path, None, None, "prepare"))
        except DataError as err:
            check_error(err, path)
        except ConfigError as err:
            assert "Fix:" in str(err), str(err)
        else:
            assert isinstance(name, str) and isinstance(spec, dict) and isinstance(data_dir, Path)


@given(st.text(st.characters(blacklist_characters="/\0", blacklist_categories=("Cs",)), min_size=1, max_size=40)
       .filter(lambda name: name not in (".", "..")))
def test_a_write_in_progress_is_what_the_sweep_finds(tmp_path_factory, name):
    """While :func:`atomic_path` writes any file name, its temporary file is the one stale write
    under the folder (what a kill at that moment leaves), and none is left after it."""
    root = tmp_path_factory.mktemp("w")
    (root / "sub").mkdir()
    with atomic_path(root / "sub" / name) as tmp:
        tmp.write_text("x")
        assert stale_writes(root) == [tmp]
    assert stale_writes(root) == []
