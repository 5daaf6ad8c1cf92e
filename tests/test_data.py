"""The data layer: readers, preparation, synthetic generator, dataset specs, prepare/download CLI."""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import socket
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from icda.cli import main
from icda.steps.prepare import prepare_dataset
from icda.steps.download import download
from icda.data.dataset_spec import describe_missing, missing_files, validate_spec
from icda.data.document import Document, read_documents
from icda.data.cleaning import balance_classes, binarize_rating, deduplicate, drop_short, split_dev, subsample
from icda.data.readers import keyword_rationale, read_hotel_test, read_icda, read_jsonl
from icda.data.sentences import SentenceSplitter
from icda.data.synthetic import ASPECTS, SENTENCE_BANK, generate_synthetic
from icda.errors import ConfigError, DataError

FIXTURES = Path(__file__).parent / "fixtures" / "data"
#: a few lines of each upstream data file, in the upstream layout (fixtures/icda-data/README.md)
UPSTREAM_CUT = Path(__file__).parent / "fixtures" / "icda-data"
#: the full upstream data files (the layout of fixtures/icda-data), for the slow checks of every
#: line; unset or absent: those checks are skipped
FULL_DATA = os.environ.get("ICDA_FULL_DATA")
RESTAURANT_KEYWORDS = ["food", "dish", "flavor", "delicious", "bland", "cook", "ingredients"]
CONNECT_KEYWORDS = ["connect", "cuts out", "dropout"]


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def doc(i: int, label: int | None, n: int = 5, text: str = "s") -> Document:
    return Document(f"d{i}", label, tuple(f"{text}{i}-{k}." for k in range(n)))


# ------------------------------------------------------------------------------------ readers


def test_keyword_rationale_case_insensitive_substring():
    sentences = ["The FOOD was great.", "Seafood too.", "Service was slow.", "It cuts out a lot."]
    assert keyword_rationale(sentences, ["food", "cuts out"]) == frozenset({0, 1, 3})
    assert keyword_rationale(sentences, ["Dropout"]) == frozenset()


def test_read_icda_strips_sentences_and_sets_keyword_ground_truth():
    docs = read_icda(FIXTURES / "tiny.icda", keywords=RESTAURANT_KEYWORDS, id_prefix="test")
    assert [d.id for d in docs] == ["test-1", "test-2"]
    assert [d.label for d in docs] == [0, 1]
    # stray spaces stripped, the empty sentence between [SEP]s dropped, trailing blank line skipped
    assert docs[0].sentences == ("The food was bland.", "The service was quick.", "We sat outside.")
    assert docs[0].rationale == frozenset({0})
    assert docs[1].rationale == frozenset({0})  # "DISH" matches "dish"
    assert read_icda(FIXTURES / "tiny.icda")[0].rationale is None


@pytest.mark.parametrize(
    "line, problem",
    [
        ("1 the tab is missing[SEP]x.", "no tab"),
        ("pos\tA sentence.[SEP]Another.", "label 'pos' is not an integer"),
        ("2\tA sentence.[SEP]Another.", "label 2 is outside the classes [0, 1]"),
        ("1\t  [SEP] [SEP]", "empty document"),
        ("0\t", "empty document"),
    ],
)
def test_read_icda_errors_name_file_line_and_fix(tmp_path, line, problem):
    path = write(tmp_path, "bad.txt", f"0\tFine.[SEP]Fine too.\n\n{line}\n")
    with pytest.raises(DataError) as err:
        read_icda(path)
    message = str(err.value)
    assert message.startswith(f"{path}:3: ")
    assert problem in message
    assert "Fix: " in message
    assert err.value.line == 3


def test_read_icda_missing_file(tmp_path):
    with pytest.raises(DataError, match="file not found") as err:
        read_icda(tmp_path / "absent.txt")
    assert str(tmp_path / "absent.txt") in str(err.value)


def test_read_icda_not_utf8(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes("0\tCaf\u00e9 au lait.[SEP]Fine.\n".encode("latin-1"))
    with pytest.raises(DataError, match="not UTF-8 text.*Fix: convert the file to UTF-8"):
        read_icda(path)


def test_read_icda_ratings_binarised_and_between_dropped(tmp_path):
    path = write(tmp_path, "beer.txt", "0.8\tA.[SEP]B.\n0.6\tC.\n0.5\tD.\n0.4\tE.\n0.1\tF.\n")
    docs = read_icda(path, ratings=True)
    assert [(d.id, d.label) for d in docs] == [
        ("beer.txt-1", 1), ("beer.txt-2", 1), ("beer.txt-4", 0), ("beer.txt-5", 0)]
    with pytest.raises(DataError, match=r"bad.txt:1: rating '1.5' is not a number in \[0, 1\]"):
        read_icda(write(tmp_path, "bad.txt", "1.5\tA.\n"), ratings=True)


def test_binarize_rating_thresholds():
    assert [binarize_rating(x) for x in (0.0, 0.4, 0.41, 0.59, 0.6, 1.0)] == [0, 0, None, None, 1, 1]


def test_read_hotel_test_fixture_merges_duplicates_and_renumbers():
    docs = read_hotel_test(FIXTURES / "hotel.test.sents", id_prefix="test")
    assert len(docs) == 3
    assert all(d.label is None for d in docs)
    assert docs[0].rationale == frozenset({1, 3})  # "1 1 3"
    assert docs[0].sentences[1] == "the staff were rude."
    assert docs[1].rationale == frozenset()  # empty index field: annotated, no rationale sentence
    # "0 2" over "clean room.[SEP] [SEP]great bed.": the empty sentence is dropped, 2 becomes 1
    assert docs[2].sentences == ("clean room.", "great bed.")
    assert docs[2].rationale == frozenset({0, 1})


@pytest.mark.parametrize(
    "line, problem",
    [
        ("3\tone.[SEP]two.[SEP]three.", "rationale index 3 is past the last sentence"),
        ("1\tone.[SEP] [SEP]three.", "rationale index 1 points at an empty sentence"),
        ("x 1\tone.[SEP]two.", "annotated sentence index 'x' is not a non-negative integer"),
        ("-1\tone.[SEP]two.", "annotated sentence index '-1'"),
        ("0 one.[SEP]two.", "no tab"),
        ("0\t[SEP]", "empty document"),
    ],
)
def test_read_hotel_test_errors(tmp_path, line, problem):
    path = write(tmp_path, "h.test.sents", f"0\tok.\n{line}\n")
    with pytest.raises(DataError) as err:
        read_hotel_test(path)
    assert str(err.value).startswith(f"{path}:2: ")
    assert problem in str(err.value)


def test_read_jsonl_sentences_text_rationale_keywords(tmp_path):
    path = write(tmp_path, "d.jsonl", "\n".join(json.dumps(o) for o in [
        {"label": 1, "sentences": [" The food was great. ", "", "Nice staff."], "rationale": [2]},
        {"label": 0, "text": "The dish was cold. We left early. Never again!", "id": "x7"},
        {"label": 0, "sentences": ["Bland food.", "Slow service."]},
    ]) + "\n")
    docs = read_jsonl(path, keywords=["food", "dish"], id_prefix="train")
    assert docs[0] == Document("train-1", 1, ("The food was great.", "Nice staff."), frozenset({1}))
    assert docs[1].id == "x7"
    assert docs[1].sentences == ("The dish was cold.", "We left early.", "Never again!")
    assert docs[1].rationale == frozenset({0})  # no explicit rationale: keyword rule
    assert docs[2].rationale == frozenset({0})
    assert read_jsonl(path)[2].rationale is None


@pytest.mark.parametrize(
    "record, problem",
    [
        ('{"label": 1, "sentences": ["a."]', "not valid JSON"),
        ('[1, ["a."]]', "not a JSON object"),
        ('{"label": 3, "sentences": ["a."]}', "label 3 is outside the classes [0, 1]"),
        ('{"label": "1", "sentences": ["a."]}', "is not an integer"),
        ('{"sentences": ["a."]}', 'no "label"'),
        ('{"label": 1}', 'neither "sentences" nor "text"'),
        ('{"label": 1, "sentences": "a. b."}', '"sentences" is not a list of strings'),
        ('{"label": 1, "sentences": ["", " "]}', "empty document"),
        ('{"label": 1, "sentences": ["a."], "rationale": [1]}', "rationale index 1 is past the last"),
        ('{"label": 1, "sentences": ["a."], "id": "first"}', "id 'first' already used on line 1"),
    ],
)
def test_read_jsonl_errors(tmp_path, record, problem):
    path = write(tmp_path, "d.jsonl", '{"label": 0, "sentences": ["ok."], "id": "first"}\n' + record + "\n")
    with pytest.raises(DataError) as err:
        read_jsonl(path)
    assert str(err.value).startswith(f"{path}:2: ")
    assert problem in str(err.value)


def test_read_jsonl_unlabelled_allowed_for_test(tmp_path):
    path = write(tmp_path, "t.jsonl", '{"label": null, "sentences": ["a.", "b."], "rationale": [0]}\n')
    assert read_jsonl(path, require_label=False)[0].label is None


def test_sentence_splitter_rule_based_and_missing_model():
    splitter = SentenceSplitter()
    assert splitter.split("Great food. Slow service!  Would I return? Maybe.") == [
        "Great food.", "Slow service!", "Would I return?", "Maybe."]
    assert splitter.split_many(["One. Two.", "", "Three"]) == [["One.", "Two."], [], ["Three"]]
    with pytest.raises(ConfigError, match="python -m spacy download no_such_pipeline_xx"):
        SentenceSplitter("no_such_pipeline_xx")


# --------------------------------------------------------------------------- upstream data files


def _check_icda_files(root: Path, expected: dict[str, int], restaurant_test: tuple[dict, int], connect_rationales: int):
    for rel, n in expected.items():
        docs = read_icda(root / rel)
        assert len(docs) == n, rel
        assert all(s and s == s.strip() for d in docs for s in d.sentences)
    test = read_icda(root / "restaurant/test.sents.fix.5s", keywords=RESTAURANT_KEYWORDS)
    assert Counter(d.label for d in test) == restaurant_test[0]
    assert sum(bool(d.rationale) for d in test) == restaurant_test[1]
    connect = read_icda(root / "connect/test.SENTS.fix", keywords=CONNECT_KEYWORDS)
    assert sum(bool(d.rationale) for d in connect) == connect_rationales


def _check_hotel_files(root: Path, service_docs: int, clean_docs: int):
    service = read_hotel_test(root / "service/service.test.sents")
    assert len(service) == service_docs
    clean = read_hotel_test(root / "clean/clean.test.sents")
    assert len(clean) == clean_docs
    for docs in (service, clean):
        assert all(d.label is None and d.rationale for d in docs)
        assert all(max(d.rationale) < len(d.sentences) for d in docs)
        assert any(len(d.sentences) < 5 for d in docs)  # README: some have fewer than 5 sentences


def test_upstream_restaurant_and_connect_lines():
    """Lines cut from the upstream files, the last without a trailing newline (as upstream)."""
    expected = {"restaurant/train.sents.fix.5s": 9, "restaurant/dev.sents.fix.5s": 9,
                "restaurant/test.sents.fix.5s": 11, "connect/dev.SENTS.fix": 9, "connect/test.SENTS.fix": 11}
    _check_icda_files(UPSTREAM_CUT, expected, ({0: 6, 1: 5}, 9), 5)


def test_upstream_hotel_test_lines():
    _check_hotel_files(UPSTREAM_CUT, 8, 8)


needs_full_data = pytest.mark.skipif(
    not (FULL_DATA and Path(FULL_DATA).is_dir()),
    reason="set ICDA_FULL_DATA to a folder of the full upstream data files (layout of tests/fixtures/icda-data)")


@pytest.mark.slow
@needs_full_data
def test_full_restaurant_and_connect_files():
    # line counts from the offline copy's README (+1 line without a trailing newline)
    expected = {"restaurant/train.sents.fix.5s": 4574, "restaurant/dev.sents.fix.5s": 626,
                "restaurant/test.sents.fix.5s": 582, "connect/dev.SENTS.fix": 1200,
                "connect/test.SENTS.fix": 1200}
    _check_icda_files(Path(FULL_DATA), expected, ({0: 291, 1: 291}, 556), 967)


@pytest.mark.slow
@needs_full_data
def test_full_hotel_test_files():
    _check_hotel_files(Path(FULL_DATA), 199, 196)


# ------------------------------------------------------------------------------------ prepare


def test_deduplicate_keeps_first_of_same_label_and_sentences():
    a, b = doc(1, 1), doc(2, 0)
    same_as_a = Document("other", 1, a.sentences)
    other_label = Document("flip", 0, a.sentences)
    assert deduplicate([a, b, same_as_a, other_label]) == [a, b, other_label]


def test_drop_short():
    docs = [doc(1, 0, n=4), doc(2, 1, n=5), doc(3, 1, n=9)]
    assert [d.id for d in drop_short(docs)] == ["d2", "d3"]
    assert [d.id for d in drop_short(docs, min_sentences=6)] == ["d3"]


def test_an_emptied_split_logs_what_emptied_it_and_balance_does_not_read_as_class_0(caplog):
    """All documents shorter than min_sentences: drop_short names the setting and a value that
    keeps them; balance_classes then says no document is left (it used to log "only 0 class
    present", read as "class 0")."""
    docs = [doc(1, 0, n=4), doc(2, 1, n=4), doc(3, 1, n=3)]
    with caplog.at_level(logging.WARNING, logger="icda.data.cleaning"):
        kept = drop_short(docs, min_sentences=5)
        assert balance_classes(kept, seed=0) == []
    assert ("drop_short: all 3 documents have fewer than 5 sentences (the longest has 4), so none is left. "
            "Fix: set the dataset's min_sentences (datasets.<name>.min_sentences) to at most 4") in caplog.text
    assert "balance_classes: no document left to balance" in caplog.text and "0 class" not in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="icda.data.cleaning"):
        assert len(balance_classes(docs[1:], seed=0)) == 2
    assert "balance_classes: only one class (label 1) present in 2 documents; nothing to balance" in caplog.text


def test_balance_classes_counts_order_and_seed():
    docs = [doc(i, 1 if i % 4 else 0) for i in range(40)]  # 10 of class 0, 30 of class 1
    out = balance_classes(docs, seed=3)
    assert Counter(d.label for d in out) == {0: 10, 1: 10}
    positions = [docs.index(d) for d in out]
    assert positions == sorted(positions)  # original order kept
    assert out == balance_classes(docs, seed=3)
    assert out != balance_classes(docs, seed=4)
    assert balance_classes(out, seed=0) == out  # already balanced: unchanged
    with pytest.raises(ValueError):
        balance_classes([doc(1, None)], seed=0)


def test_split_dev_stratified_disjoint_seeded():
    docs = [doc(i, 0 if i < 60 else 1) for i in range(100)]  # 60 / 40
    train, dev = split_dev(docs, 0.25, seed=1)
    assert Counter(d.label for d in dev) == {0: 15, 1: 10}
    assert Counter(d.label for d in train) == {0: 45, 1: 30}
    assert {d.id for d in train}.isdisjoint(d.id for d in dev)
    assert len(train) + len(dev) == len(docs)
    assert [docs.index(d) for d in dev] == sorted(docs.index(d) for d in dev)
    assert (train, dev) == split_dev(docs, 0.25, seed=1)
    assert dev != split_dev(docs, 0.25, seed=2)[1]
    with pytest.raises(ValueError):
        split_dev(docs, 1.0, seed=0)


# ---------------------------------------------------------------------------------- synthetic


def _aspect_of() -> dict[str, tuple[str, int]]:
    return {s: key for key, sentences in SENTENCE_BANK.items() for s in sentences}


def test_sentence_bank_sentences_are_unique_and_varied():
    lookup = _aspect_of()
    assert len(lookup) == sum(len(v) for v in SENTENCE_BANK.values())  # no sentence in two banks
    assert all(len(v) >= 100 for v in SENTENCE_BANK.values())


def test_synthetic_deterministic_balanced_with_ground_truth():
    a = generate_synthetic(50, 20, 30, seed=7)
    assert a == generate_synthetic(50, 20, 30, seed=7)
    assert a["train"] != generate_synthetic(50, 20, 30, seed=8)["train"]
    assert a["test"] == generate_synthetic(10, 0, 30, seed=7)["test"]  # splits drawn independently
    lookup = _aspect_of()
    for split, n in (("train", 50), ("dev", 20), ("test", 30)):
        docs = a[split]
        assert len(docs) == n and len({d.id for d in docs}) == n
        assert Counter(d.label for d in docs) == {0: n // 2, 1: n - n // 2}
        for d in docs:
            assert 5 <= len(d.sentences) <= 9
            assert len(d.rationale) == 1
            (i,) = d.rationale
            assert lookup[d.sentences[i]][0] == "food"
            aspects = [lookup[s][0] for s in d.sentences if s in lookup]
            assert sorted(aspects) == sorted(list(ASPECTS)[:5])
    positions = Counter(next(iter(d.rationale)) for d in a["train"])
    assert len(positions) >= 4  # the target's position varies


@pytest.mark.parametrize("kwargs, digest", [
    (dict(n_train=240, n_dev=80, n_test=81, seed=0),
     "eb7a2fd5aee3c1b411989be8ad904f8fa929f294c74bb905f67f3f87cdfe8293"),
    (dict(n_train=51, n_dev=10, n_test=10, seed=3, verdict="either", n_aspects=8, p_x1=0.7, p_x2=0.6,
          min_sentences=4, max_sentences=12),
     "8942263c445e6662516f728b4677ace9b5843fdff7abe680099e8dd9f67b8c3e"),
])
def test_synthetic_binary_documents_are_those_of_the_binary_generator(kwargs, digest):
    """Two classes give exactly the documents of the generator before it had more classes (the
    digests were computed at commit bef4f15), so binary results stay comparable."""
    splits = generate_synthetic(**kwargs)
    blob = json.dumps({s: [d.to_json() for d in docs] for s, docs in splits.items()}, sort_keys=True)
    assert hashlib.sha256(blob.encode()).hexdigest() == digest


def test_synthetic_agreement_rates():
    docs = generate_synthetic(4000, 0, 0, p_x1=0.9, p_x2=0.7, seed=0)["train"]
    lookup = _aspect_of()
    agree = Counter()
    for d in docs:
        for s in d.sentences:
            if s in lookup:
                aspect, polarity = lookup[s]
                agree[aspect] += polarity == d.label
    n = len(docs)
    se = math.sqrt(0.25 / n)
    assert abs(agree["food"] / n - 0.9) < 4 * se
    assert abs(agree["service"] / n - 0.7) < 4 * se
    assert abs(agree["price"] / n - 0.5) < 4 * se  # other aspects: random sentiment


def test_synthetic_bad_arguments():
    with pytest.raises(ValueError, match="n_aspects"):
        generate_synthetic(1, 1, 1, n_aspects=1)
    with pytest.raises(ValueError, match="p_x2"):
        generate_synthetic(1, 1, 1, p_x2=1.5)
    with pytest.raises(ValueError, match="verdict must be one of"):
        generate_synthetic(1, 1, 1, verdict="middle")
    with pytest.raises(ValueError, match="min_sentences <= max_sentences"):
        generate_synthetic(1, 1, 1, min_sentences=8, max_sentences=6)


@pytest.mark.parametrize("where", ["start", "end", "either"])
def test_synthetic_verdict_sits_at_the_edge_and_agrees_at_its_rate(where):
    from icda.data.synthetic import VERDICTS

    docs = generate_synthetic(3000, 0, 0, p_verdict=0.8, verdict=where, min_sentences=3,
                              max_sentences=11, seed=1)["train"]
    polarity = {s: p for p, bank in VERDICTS.items() for s in bank}
    positions, agree = Counter(), 0
    for d in docs:
        (at,) = [i for i, s in enumerate(d.sentences) if s in polarity]
        positions["start" if at == 0 else "end" if at == len(d.sentences) - 1 else "middle"] += 1
        agree += polarity[d.sentences[at]] == d.label
        assert at not in d.rationale
        assert 5 + 1 <= len(d.sentences) <= 11 + 1  # 5 aspects at least, plus the verdict
    assert abs(agree / len(docs) - 0.8) < 4 * math.sqrt(0.16 / len(docs))
    assert positions["middle"] == 0
    if where == "either":
        assert min(positions["start"], positions["end"]) > 0.4 * len(docs)
    else:
        assert positions[where] == len(docs)
    lengths = Counter(len(d.sentences) for d in docs)
    assert min(lengths) == 6 and max(lengths) == 12  # the configured range is used


# ----------------------------------------------------------------------------------- datasets


def _files_spec(**over) -> dict:
    spec = {"train": "toy/train.txt", "dev": "toy/dev.txt", "test": "toy/test.txt",
            "keywords": ["food"], "url": "https://example.invalid/data/", "min_sentences": 5}
    spec.update(over)
    return spec


def _toy_data(data_dir: Path) -> None:
    (data_dir / "toy").mkdir(parents=True)
    pos = [f"1\tThe food was great {i}.[SEP]A.[SEP]B.[SEP]C.[SEP]D." for i in range(12)]
    neg = [f"0\tThe food was awful {i}.[SEP]A.[SEP]B.[SEP]C.[SEP]D." for i in range(6)]
    train = pos + neg + [pos[0], "0\tToo short.[SEP]Only two."]  # a duplicate and a short document
    (data_dir / "toy/train.txt").write_text("\n".join(train) + "\n", encoding="utf-8")
    (data_dir / "toy/dev.txt").write_text("\n".join(pos[:3] + neg[:2]) + "\n", encoding="utf-8")
    (data_dir / "toy/test.txt").write_text(
        "1\tThe food was fine.[SEP]Service ok.\n0\tNo keyword here.[SEP]None.[SEP]x.\n", encoding="utf-8")


def test_prepare_dataset_writes_splits_and_stats(tmp_path):
    _toy_data(tmp_path / "data")
    stats = prepare_dataset("toy", _files_spec(), tmp_path / "data", tmp_path / "out")
    train = read_documents(tmp_path / "out/train.jsonl")
    dev = read_documents(tmp_path / "out/dev.jsonl")
    test = read_documents(tmp_path / "out/test.jsonl")
    assert Counter(d.label for d in train) == {0: 6, 1: 6}
    assert Counter(d.label for d in dev) == {0: 2, 1: 2}
    assert len(test) == 2 and len(test[0].sentences) == 2  # test kept as read (short doc stays)
    assert test[0].rationale == frozenset({0}) and test[1].rationale == frozenset()
    assert stats == json.loads((tmp_path / "out/stats.json").read_text())
    assert stats["dropped"]["train"] == {"read": 20, "duplicates": 1, "short": 1, "balance": 6}
    assert stats["splits"]["train"]["sentences_mean"] == 5.0
    assert stats["splits"]["test"]["labels"] == {"0": 1, "1": 1}
    assert stats["test_ground_truth"]["coverage"] == 0.5
    # same spec, same output
    prepare_dataset("toy", _files_spec(), tmp_path / "data", tmp_path / "again")
    assert (tmp_path / "again/train.jsonl").read_bytes() == (tmp_path / "out/train.jsonl").read_bytes()


def test_prepare_dataset_carves_dev_when_dev_is_null(tmp_path):
    _toy_data(tmp_path / "data")
    spec = _files_spec(dev=None, dev_fraction=0.5)
    stats = prepare_dataset("toy", spec, tmp_path / "data", tmp_path / "out")
    assert stats["splits"]["dev"]["labels"] == {"0": 3, "1": 3}
    assert stats["splits"]["train"]["labels"] == {"0": 3, "1": 3}
    assert stats["dropped"]["train"]["carved_to_dev"] == 6


def test_prepare_dataset_keeps_train_documents_stratified_after_carving_dev(tmp_path):
    _toy_data(tmp_path / "data")
    spec = _files_spec(dev=None, dev_fraction=0.5, train_documents=4)
    stats = prepare_dataset("toy", spec, tmp_path / "data", tmp_path / "out")
    train = read_documents(tmp_path / "out/train.jsonl")
    assert Counter(d.label for d in train) == {0: 2, 1: 2}
    assert stats["splits"]["dev"]["labels"] == {"0": 3, "1": 3}  # dev is carved from the whole split
    assert stats["dropped"]["train"]["carved_to_dev"] == 6 and stats["dropped"]["train"]["subsampled"] == 2
    full = read_documents(tmp_path / "out/dev.jsonl")
    prepare_dataset("toy", _files_spec(dev=None, dev_fraction=0.5), tmp_path / "data", tmp_path / "all")
    assert read_documents(tmp_path / "all/dev.jsonl") == full  # the same dev with and without the cut
    assert set(train) < set(read_documents(tmp_path / "all/train.jsonl"))
    with pytest.raises(DataError) as err:
        prepare_dataset("toy", _files_spec(train_documents=13), tmp_path / "data", tmp_path / "out")
    assert "train.txt" in str(err.value) and "has 12 documents" in str(err.value)
    assert "datasets.toy.train_documents to at most 12" in str(err.value)
    assert not (tmp_path / "out/stats.json").exists()


def test_subsample_keeps_each_class_share_by_largest_remainder():
    docs = [Document(id=f"d{i}", label=int(i >= 6), sentences=("x.",)) for i in range(9)]  # 6 of class 0, 3 of 1
    kept = subsample(docs, 5, seed=0)  # quotas 3.33 and 1.67: class 1 has the larger remainder
    assert Counter(d.label for d in kept) == {0: 3, 1: 2}
    assert [d.id for d in kept] == sorted((d.id for d in kept), key=lambda i: int(i[1:]))  # input order
    assert subsample(docs, 5, seed=0) == kept and subsample(docs, 9, seed=3) == docs
    with pytest.raises(ValueError, match="cannot keep 10 of 9"):
        subsample(docs, 10, seed=0)


def test_prepare_dataset_synthetic(tmp_path):
    spec = {"source": "synthetic", "synthetic": {"n_train": 40, "n_dev": 10, "n_test": 10}, "seed": 3}
    stats = prepare_dataset("synthetic", spec, tmp_path, tmp_path / "out")
    assert [stats["splits"][s]["documents"] for s in ("train", "dev", "test")] == [40, 10, 10]
    assert read_documents(tmp_path / "out/test.jsonl") == generate_synthetic(40, 10, 10, seed=3)["test"]


def test_prepare_dataset_missing_file_and_one_class(tmp_path):
    with pytest.raises(DataError, match="file not found") as err:
        prepare_dataset("toy", _files_spec(), tmp_path / "nowhere", tmp_path / "out")
    assert "python -m icda download" in str(err.value)
    assert not (tmp_path / "out/stats.json").exists()
    _toy_data(tmp_path / "data")
    spec = _files_spec(min_sentences=6)  # every train document is too short
    with pytest.raises(DataError, match="after preparation"):
        prepare_dataset("toy", spec, tmp_path / "data", tmp_path / "out")
    assert not (tmp_path / "out/stats.json").exists()


@pytest.mark.parametrize(
    "over, key",
    [
        ({"colour": "red"}, "datasets.toy.colour: unknown key"),
        ({"format": "csv"}, "datasets.toy.format:"),
        ({"balance": "yes"}, "datasets.toy.balance:"),
        ({"seed": 1.5}, "datasets.toy.seed:"),
        ({"keywords": "food"}, "datasets.toy.keywords:"),
        ({"dev_fraction": 0.2}, "datasets.toy.dev: give exactly one of dev and dev_fraction"),
        ({"dev": None}, "datasets.toy.dev: give exactly one"),
        ({"train_documents": 0}, "datasets.toy.train_documents: 0 is not a positive integer"),
        ({"train_documents": 1.5}, "datasets.toy.train_documents: 1.5 is not"),
        ({"train": None}, "datasets.toy.train: missing"),
        ({"test_format": "hotel"}, "datasets.toy.keywords: hotel test files"),
        ({"source": "synthetic"}, "datasets.toy.synthetic.n_train: missing"),
        ({"md5": "abc"}, "datasets.toy.md5: 'abc' is not a mapping"),
        ({"md5": {"toy/train.txt": "xyz"}}, "datasets.toy.md5.toy/train.txt: 'xyz' is not an md5"),
        ({"git_blob": {"toy/train.txt": "0" * 32}}, "datasets.toy.git_blob.toy/train.txt: '000"),
    ],
)
def test_validate_spec_errors_name_dataset_and_key(over, key):
    with pytest.raises(ConfigError) as err:
        validate_spec("toy", _files_spec(**over))
    assert key in str(err.value)


def test_missing_files_and_describe_missing(tmp_path):
    spec = _files_spec(dev=None, dev_fraction=0.2)
    assert missing_files(spec, tmp_path) == [tmp_path / "toy/train.txt", tmp_path / "toy/test.txt"]
    text = describe_missing("toy", spec, tmp_path)
    assert str(tmp_path / "toy/train.txt") in text and "snakemake --cores 1 download" in text
    assert "python -m icda download" in text
    beer = _files_spec(public=False, url=None, how_to_get="email the authors")
    text = describe_missing("beer", beer, tmp_path)
    assert "not public. email the authors" in text and str(tmp_path / "toy/dev.txt") in text
    _toy_data(tmp_path)
    assert missing_files(spec, tmp_path) == [] and describe_missing("toy", spec, tmp_path) == ""
    assert missing_files({"source": "synthetic"}, tmp_path) == []


def test_download_fetches_missing_files(tmp_path):
    _toy_data(tmp_path / "remote")
    spec = _files_spec(url=(tmp_path / "remote").as_uri() + "/", allow_file_url=True)
    (tmp_path / "local/toy").mkdir(parents=True)
    (tmp_path / "local/toy/dev.txt").write_text("0\tkept.\n", encoding="utf-8")
    got = download("toy", spec, tmp_path / "local")
    assert got == [tmp_path / "local/toy/train.txt", tmp_path / "local/toy/test.txt"]
    assert (tmp_path / "local/toy/train.txt").read_bytes() == (tmp_path / "remote/toy/train.txt").read_bytes()
    assert (tmp_path / "local/toy/dev.txt").read_text() == "0\tkept.\n"  # present files untouched
    assert download("toy", spec, tmp_path / "local") == []
    with pytest.raises(DataError, match="could not download .*empty/toy/train.txt"):
        download("toy", _files_spec(url=(tmp_path / "empty").as_uri(), allow_file_url=True), tmp_path / "other")
    assert not list((tmp_path / "other").rglob("*.txt"))  # nothing half-written
    with pytest.raises(DataError, match="not public"):
        download("beer", _files_spec(public=False), tmp_path / "other")


def test_download_over_http_verifies_known_checksums(tmp_path, http_server, caplog):
    _toy_data(tmp_path / "remote")
    md5 = {rel: hashlib.md5((tmp_path / "remote" / rel).read_bytes()).hexdigest()
           for rel in ("toy/train.txt", "toy/dev.txt")}  # test.txt: no known checksum
    spec = _files_spec(url=http_server, md5=md5)
    with caplog.at_level(logging.INFO, logger="icda.steps.download"):
        got = download("toy", spec, tmp_path / "data")
    assert got == [tmp_path / "data/toy" / f for f in ("train.txt", "dev.txt", "test.txt")]
    for rel in ("toy/train.txt", "toy/dev.txt", "toy/test.txt"):
        assert (tmp_path / "data" / rel).read_bytes() == (tmp_path / "remote" / rel).read_bytes()
    assert f"md5 {md5['toy/train.txt']} verified" in caplog.text
    test_md5 = hashlib.md5((tmp_path / "remote/toy/test.txt").read_bytes()).hexdigest()
    assert f"toy/test.txt has no known checksum; its md5 is {test_md5}" in caplog.text
    assert not [p for p in (tmp_path / "data/toy").iterdir() if p.name.startswith(".")]  # no temp files


def test_download_verifies_git_blob_ids_as_git_computes_them(tmp_path, http_server):
    """A file known by its upstream git blob id (no md5) is checked against it: the id git gives
    its bytes passes, another is refused and the file not kept."""
    _toy_data(tmp_path / "remote")
    blob = subprocess.run(["git", "hash-object", str(tmp_path / "remote/toy/train.txt")], capture_output=True,
                          text=True, check=True).stdout.strip()
    assert download("toy", _files_spec(url=http_server, git_blob={"toy/train.txt": blob}), tmp_path / "a")
    with pytest.raises(DataError) as err:
        download("toy", _files_spec(url=http_server, git_blob={"toy/train.txt": "f" * 40}), tmp_path / "b")
    assert f"has git_blob {blob}, expected {'f' * 40} (datasets.toy.git_blob)" in err.value.problem
    assert not (tmp_path / "b/toy/train.txt").exists()


def test_download_checksum_mismatch_names_file_both_checksums_and_fix(tmp_path, http_server):
    _toy_data(tmp_path / "remote")
    actual = hashlib.md5((tmp_path / "remote/toy/dev.txt").read_bytes()).hexdigest()
    spec = _files_spec(url=http_server, md5={"toy/dev.txt": "0" * 32})
    with pytest.raises(DataError) as err:
        download("toy", spec, tmp_path / "data")
    assert err.value.path == str(tmp_path / "data/toy/dev.txt")
    assert f"has md5 {actual}, expected {'0' * 32}" in err.value.problem
    assert "rerun" in err.value.fix and str((tmp_path / "data/toy/dev.txt").resolve()) in err.value.fix
    assert not (tmp_path / "data/toy/dev.txt").exists()  # a corrupt file is not kept
    assert (tmp_path / "data/toy/train.txt").exists()  # the files before it were fine


def test_download_offline_names_url_path_and_run_datasets(tmp_path):
    with socket.socket() as sock:  # a port with nothing listening: the connection is refused
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/data/"
    with pytest.raises(DataError) as err:
        download("toy", _files_spec(url=url), tmp_path / "data", timeout=5)
    path = (tmp_path / "data/toy/train.txt").resolve()
    assert f"could not download {url}toy/train.txt" in err.value.problem
    assert f"put it at {path}" in err.value.fix and "run_datasets" in err.value.fix
    assert not (tmp_path / "data/toy").exists() or not list((tmp_path / "data/toy").iterdir())


# ---------------------------------------------------------------------------------------- CLI


def test_cli_prepare_with_spec_and_config(tmp_path, capsys):
    _toy_data(tmp_path / "data")
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps({"name": "toy", "data_dir": str(tmp_path / "data"), **_files_spec()}))
    assert main(["prepare", "--spec", str(spec_file), "--out-dir", str(tmp_path / "a")]) == 0
    out = capsys.readouterr().out
    assert "toy: prepared" in out and "train" in out and "12 docs" in out
    config = tmp_path / "config.yaml"
    config.write_text(f"data_dir: {tmp_path / 'data'}\ndatasets:\n  toy: {json.dumps(_files_spec())}\n")
    by_config = ["prepare", "--config", str(config), "--out-dir"]
    assert main(by_config + [str(tmp_path / "b"), "--dataset", "toy"]) == 0
    assert (tmp_path / "a/train.jsonl").read_bytes() == (tmp_path / "b/train.jsonl").read_bytes()
    assert main(by_config + [str(tmp_path / "c"), "--dataset", "nope"]) == 2
    assert "no dataset 'nope'" in capsys.readouterr().err


def test_cli_download_reports_non_public(tmp_path, capsys):
    _toy_data(tmp_path / "remote")
    config = tmp_path / "config.yaml"
    config.write_text(
        f"data_dir: {tmp_path / 'data'}\ndatasets:\n"
        f"  toy: {json.dumps(_files_spec(url=(tmp_path / 'remote').as_uri() + '/', allow_file_url=True))}\n"
        f"  beer: {json.dumps(_files_spec(train='beer/train.txt', public=False))}\n"
    )
    assert main(["download", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert "toy: downloaded" in out and "beer: cannot download" in out and "not public" in out
    assert (tmp_path / "data/toy/test.txt").exists()
    assert main(["download", "--config", str(config), "--dataset", "beer"]) == 2


def test_dataset_spec_keys_and_choices_are_the_schemas():
    """validate_spec checks what the schema declares (keys, enums), with richer messages: the two
    cannot drift apart."""
    from icda.data.dataset_spec import _CHOICES, SPEC_DEFAULTS
    from icda.io import read_yaml
    from icda.schema import SCHEMA

    declared = read_yaml(SCHEMA, "")["properties"]["datasets"]["additionalProperties"]["properties"]
    assert set(SPEC_DEFAULTS) == set(declared)
    assert _CHOICES == {key: tuple(prop["enum"]) for key, prop in declared.items() if "enum" in prop}


def test_jsonl_files_are_read_as_jsonl_without_a_format_key(tmp_path):
    """A ``*.jsonl`` file needs no ``format:`` ; another suffix stays ICDA."""
    (tmp_path / "toy").mkdir()
    rows = [{"label": i % 2, "sentences": [f"The food was {'great' if i % 2 else 'awful'} {i}.", "A.", "B.", "C.",
                                            "D."]} for i in range(8)]
    for split in ("train", "dev", "test"):
        write(tmp_path, f"toy/{split}.jsonl", "\n".join(json.dumps(r) for r in rows) + "\n")
    spec = _files_spec(train="toy/train.jsonl", dev="toy/dev.jsonl", test="toy/test.jsonl")
    assert validate_spec("toy", spec)["format"] == validate_spec("toy", spec)["test_format"] == "jsonl"
    assert validate_spec("toy", _files_spec())["format"] == "icda"
    assert validate_spec("toy", {**spec, "format": "icda"})["format"] == "icda"  # an explicit format wins
    stats = prepare_dataset("toy", spec, tmp_path, tmp_path / "out")
    assert stats["splits"]["train"]["labels"] == {"0": 4, "1": 4}
    assert read_documents(tmp_path / "out/test.jsonl")[1].sentences[0] == "The food was great 1."


def test_icda_files_from_windows_editors_and_lower_cased_corpora_read_as_written(tmp_path):
    """A byte-order mark before the first label, ``[sep]`` in lower case and lone-CR line ends
    are the same documents as the plain file, not a label '\\ufeff1' or one-sentence documents."""
    plain = "1\tThe food.[SEP]The room.[SEP]The staff.\n0\tBland dish.[SEP]Fine view.\n"
    variants = {"plain": plain.encode(), "bom": "\ufeff".encode() + plain.encode(),
                "lower": plain.replace("[SEP]", "[sep]").encode(), "cr": plain.replace("\n", "\r").encode()}
    read = {}
    for name, data in variants.items():
        (tmp_path / name).write_bytes(data)
        read[name] = [(d.label, d.sentences) for d in read_icda(tmp_path / name)]
    assert read["plain"] == [(1, ("The food.", "The room.", "The staff.")), (0, ("Bland dish.", "Fine view."))]
    assert all(docs == read["plain"] for docs in read.values())


def test_a_jsonl_file_read_as_tab_separated_says_how_to_declare_its_format(tmp_path):
    (tmp_path / "dev.jsonl").write_text('{"label": 1, "sentences": ["a", "b"]}\n', encoding="utf-8")
    with pytest.raises(DataError) as err:
        read_icda(tmp_path / "dev.jsonl")
    assert err.value.line == 1 and "no tab" in err.value.problem
    assert "the line is a JSON object" in err.value.fix and "`format: jsonl`" in err.value.fix


def test_a_class_missing_after_preparation_gets_the_fix_of_its_cause(tmp_path):
    """Too few synthetic documents, a file without one class, and documents dropped as too
    short are three causes with three fixes, not one "lower min_sentences"."""
    five = {"source": "synthetic", "classes": 5, "synthetic": {"n_train": 4, "n_dev": 20, "n_test": 20}}
    with pytest.raises(DataError) as err:
        prepare_dataset("five", five, tmp_path, tmp_path / "five")
    assert "class(es) [4] missing" in err.value.problem and err.value.fix.startswith("raise synthetic.n_train (now 4)")

    _toy_data(tmp_path / "data")
    one_class = "".join(f"1\tfood {i}.[SEP]b.[SEP]c.[SEP]d.[SEP]e.\n" for i in range(6))
    (tmp_path / "data/toy/train.txt").write_text(one_class, encoding="utf-8")
    with pytest.raises(DataError) as err:
        prepare_dataset("toy", _files_spec(), tmp_path / "data", tmp_path / "out")
    assert err.value.fix.startswith("the train data has no document of class(es) [0]: check the file")

    short = one_class + "".join(f"0\tbland {i}.[SEP]b.\n" for i in range(6))
    (tmp_path / "data/toy/train.txt").write_text(short, encoding="utf-8")
    with pytest.raises(DataError) as err:
        prepare_dataset("toy", _files_spec(), tmp_path / "data", tmp_path / "out")
    assert err.value.fix.startswith("preparation dropped the documents of class(es) [0] (duplicates: 0, short: 6")
    assert "lower datasets.toy.min_sentences (now 5; it must stay above model.k)" in err.value.fix
    # at 2 (the least model.k = 1 allows) lowering it cannot work: not proposed
    (tmp_path / "data/toy/train.txt").write_text(one_class + "".join(f"0\tbland {i}.\n" for i in range(6)),
                                                 encoding="utf-8")
    with pytest.raises(DataError) as err:
        prepare_dataset("toy", _files_spec(min_sentences=2), tmp_path / "data", tmp_path / "out")
    assert "short: 6" in err.value.fix and "min_sentences" not in err.value.fix, err.value.fix


# ------------------------------------------------------------------ decoding errors


def test_decoding_error_is_reported_on_its_line(tmp_path):
    path = tmp_path / "latin1.txt"
    good = "".join(f"1\tSentence {i}.[SEP]More.\n" for i in range(10)).encode()
    path.write_bytes(good + "0\tCaf\u00e9 au lait.[SEP]Fine.\n".encode("latin-1"))
    with pytest.raises(DataError, match="not UTF-8 text") as err:
        read_icda(path)
    assert err.value.line == 11
