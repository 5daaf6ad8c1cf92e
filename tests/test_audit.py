"""The data audit (python -m icda audit, report audit) and prepare's drop_test_overlap, on a tiny
dataset with a planted duplicate, a planted document shared with test (case and spacing changed)
and a planted near-duplicate of a test document."""

from __future__ import annotations

import csv
import logging

import pytest

from icda.cli import main
from icda.data.document import Document, read_split
from icda.data.overlap import jaccard, normal_text, shared_documents, shingles
from icda.records import DataAudit
from icda.report.audit import write_audit_table
from icda.steps.audit import audit_splits
from icda.steps.prepare import prepare_dataset, read_raw
from icda.data.dataset_spec import validate_spec
from toy_workflow import TOY, toy_files

#: a long review: 6 sentences, 60 words
LONG = [" ".join(f"w{s}x{i}" for i in range(10)) + "." for s in range(6)]
#: the same review with its last word changed: word 3-shingle Jaccard 57/59 = 0.966 to LONG
NEAR = LONG[:5] + [LONG[5].replace("w5x9.", "changed.")]
#: a sentence of 200 wordpieces and more (over max_tokens 128)
LONG_SENTENCE = " ".join(["word"] * 200) + "."


def planted(data_dir):
    """toy_files plus: train line 3 twice (a duplicate), the LONG review in train, test holding
    train line 5 in other case and spacing (shared) and NEAR (a near-duplicate of LONG)."""
    toy_files(data_dir)
    train = data_dir / "toy/train.txt"
    lines = train.read_text().splitlines()
    lines += [lines[3], "1\t" + "[SEP]".join(LONG)]
    train.write_text("\n".join(lines) + "\n")
    test = data_dir / "toy/test.txt"
    shared = lines[5].split("\t")[1].upper().replace(" ", "  ")
    test.write_text(test.read_text() + f"1\t{shared}\n" + "0\tThe food." + "[SEP]".join(["", *NEAR]) + "\n")
    return lines


def test_planted_near_duplicate_is_above_the_threshold_and_below_identity():
    assert jaccard(shingles(" ".join(LONG)), shingles(" ".join(NEAR))) == pytest.approx(57 / 59)
    docs = [Document("a", 1, tuple(LONG)), Document("b", 0, ("other words here entirely.",))]
    assert shared_documents(docs, [Document("t", 1, tuple(NEAR))], 0.8).near == {0}
    assert shared_documents(docs, [Document("t", 1, tuple(NEAR))], 0.99).near == frozenset()
    assert shared_documents(docs, [Document("t", 1, tuple(s.upper() for s in LONG))], 0.8).exact == {0}
    assert normal_text(Document("x", 0, ("A  b", "C\td"))) == "a b c d"


def test_the_audit_finds_the_planted_duplicate_and_shared_documents(tmp_path):
    planted(tmp_path / "data")
    spec = validate_spec("toy", TOY)
    raw, _, _ = read_raw("toy", spec, tmp_path / "data")
    audit = audit_splits("toy", raw, max_sentences=5, max_tokens=8, threshold=0.8,
                         wordpieces=lambda sentences: [len(s.split()) + 2 for s in sentences], encoder="words")
    train, dev, test = (audit.splits[s] for s in ("train", "dev", "test"))
    assert (train["documents"], train["duplicates"], train["labels"]) == (22, 1, {"0": 10, "1": 12})
    assert (dev["documents"], dev["duplicates"], test["documents"], test["duplicates"]) == (10, 0, 12, 0)
    # LONG and NEAR have 6 sentences: cut by max_sentences 5; each of their seen sentences has 12 "wordpieces"
    assert train["cut_by_max_sentences"] == 1 and test["cut_by_max_sentences"] == 1
    assert train["sentences_median"] == 5 and train["sentences_seen"] == 22 * 5
    # toy sentences: "The train food 3 was bad." (6 words + 2 = 8, not over 8); LONG's 5 seen: 12;
    # test's "The food." (4) and NEAR's first 4
    assert train["over_max_tokens"] == 5 and test["over_max_tokens"] == 4
    assert audit.shared == {"train_test": {"exact": 1, "near": 1}, "dev_test": {"exact": 0, "near": 0},
                            "test_train": {"exact": 1, "near": 1}, "test_dev": {"exact": 0, "near": 0}}
    # stricter than the planted near-duplicate's 0.966: only the exact one is left
    strict = audit_splits("toy", raw, max_sentences=5, max_tokens=8, threshold=0.99,
                          wordpieces=lambda sentences: [3] * len(sentences), encoder="words")
    assert strict.shared["train_test"] == {"exact": 1, "near": 0}

    out = tmp_path / "data_audit.json"
    audit.write(out)
    assert DataAudit.read(out) == audit
    paths = write_audit_table([out], tmp_path / "tables")
    rows = list(csv.DictReader(paths[0].open()))
    assert [(r["split"], r["in_test_exact"], r["in_test_near"], r["in_train_exact"], r["in_train_near"])
            for r in rows] == [("train", "1", "1", "", ""), ("dev", "0", "0", "", ""), ("test", "", "", "1", "1")]
    assert rows[0]["share_cut_by_max_sentences"] == str(1 / 22) and rows[0]["near_duplicate_threshold"] == "0.8"
    md = paths[1].read_text()
    assert "Jaccard similarity of at least 0.8" in md
    assert "| toy       | test    |          12 |" in md and "1 + 1" in md


def test_a_malformed_audit_record_is_refused_naming_the_field(tmp_path):
    audit = DataAudit(dataset="d", encoder="e", max_sentences=5, max_tokens=8, near_duplicate_threshold=0.8,
                      splits={"train": {"documents": 1, "labels": {"0": 2}, "annotated": 0, "duplicates": 0,
                                        "sentences_median": 1.0, "sentences_p99": 1.0, "cut_by_max_sentences": 0,
                                        "sentences_seen": 1, "over_max_tokens": 0}}, shared={})
    audit.write(tmp_path / "a.json")
    with pytest.raises(Exception, match="splits.train.labels"):
        DataAudit.read(tmp_path / "a.json")


def test_the_audit_command_counts_wordpieces_with_the_encoders_tokenizer(tmp_path, capsys):
    """The default encoder's tokenizer: LONG_SENTENCE is over max_tokens 128, the toy sentences not."""
    data = tmp_path / "data"
    toy_files(data)
    dev = data / "toy/dev.txt"
    dev.write_text(dev.read_text() + "1\tThe food.[SEP]" + "[SEP]".join([LONG_SENTENCE, "a.", "b.", "c."]) + "\n")
    spec = tmp_path / "spec.json"
    spec.write_text(f'{{"name": "toy", "data_dir": "{data}", "train": "toy/train.txt", "dev": "toy/dev.txt", '
                    '"test": "toy/test.txt", "keywords": ["food"]}')
    settings = tmp_path / "settings.json"
    settings.write_text('{"encoder": {"name": "default", "max_tokens": 128, "max_sentences": 40}}')
    assert main(["audit", "--spec", str(spec), "--settings", str(settings), "--out", str(tmp_path / "a.json")]) == 0
    audit = DataAudit.read(tmp_path / "a.json")
    assert [audit.splits[s]["over_max_tokens"] for s in ("train", "dev", "test")] == [0, 1, 0]
    assert (audit.encoder, audit.max_tokens) == ("default", 128)
    assert "dev documents also in test: 0 exact, 0 near-duplicates" in capsys.readouterr().out


def test_drop_test_overlap_removes_exactly_the_shared_documents(tmp_path, caplog):
    lines = planted(tmp_path / "data")
    spec = TOY | {"balance": False}
    with caplog.at_level(logging.WARNING):
        kept = prepare_dataset("toy", spec, tmp_path / "data", tmp_path / "kept")
    warnings = [r.getMessage() for r in caplog.records if "share their text with a test document" in r.getMessage()]
    assert warnings == [
        "toy: 2 of 21 train and 0 of 10 dev documents share their text with a test document (1 the same text after "
        "normalising case and whitespace, 1 near-duplicate(s) of word 3-shingle Jaccard >= 0.8); kept, as "
        "published: set datasets.toy.drop_test_overlap: true to remove them"]
    assert kept["test_overlap"] == {"train": {"exact": 1, "near": 1}, "dev": {"exact": 0, "near": 0}}

    caplog.clear()
    with caplog.at_level(logging.WARNING):
        dropped = prepare_dataset("toy", spec | {"drop_test_overlap": True}, tmp_path / "data", tmp_path / "dropped")
    assert "share their text" not in caplog.text
    assert dropped["dropped"]["train"]["shared_with_test"] == 2 and dropped["dropped"]["dev"]["shared_with_test"] == 0
    assert dropped["test_overlap"] == {"train": {"exact": 0, "near": 0}, "dev": {"exact": 0, "near": 0}}
    before = {doc.sentences for doc in read_split(tmp_path / "kept", "train")}
    after = {doc.sentences for doc in read_split(tmp_path / "dropped", "train")}
    shared = tuple(lines[5].split("\t")[1].split("[SEP]"))
    assert before - after == {shared, tuple(LONG)} and after < before
    assert read_split(tmp_path / "dropped", "dev") == read_split(tmp_path / "kept", "dev")
    assert read_split(tmp_path / "dropped", "test") == read_split(tmp_path / "kept", "test")
