"""Data files as they arrive: line ends, downloads that stall or bring back a web page."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from icda.data.readers import read_icda, read_jsonl
from icda.errors import DataError
from icda.steps import download as download_module
from icda.steps.download import download
from icda.steps.prepare import prepare_dataset

SPEC = {"train": "toy/train.txt", "dev": "toy/dev.txt", "test": "toy/test.txt", "keywords": ["food"]}


def toy_lines(prefix: str, n: int) -> list[str]:
    return [f"{i % 2}\tThe {prefix} food {i} was {'good' if i % 2 else 'bad'}.[SEP]A{i}.[SEP]B{i}.[SEP]C{i}.[SEP]D{i}."
            for i in range(n)]


def write_toy(data_dir: Path, newline: str = "\n", cr_splits: tuple[str, ...] = ()) -> None:
    """Toy train (20), dev (10) and test (10) files; the splits in ``cr_splits`` end their lines
    with ``newline``."""
    (data_dir / "toy").mkdir(parents=True, exist_ok=True)
    for split, n in (("train", 20), ("dev", 10), ("test", 10)):
        end = newline if split in cr_splits else "\n"
        (data_dir / f"toy/{split}.txt").write_bytes("".join(f"{line}{end}" for line in toy_lines(split, n))
                                                     .encode("utf-8"))


# ------------------------------------------------------------------ line ends


@pytest.mark.parametrize("newline", ["\r", "\r\n", "\n"])
def test_icda_files_with_any_line_end_are_read_line_by_line(tmp_path, newline):
    write_toy(tmp_path, newline, cr_splits=("test",))
    docs = read_icda(tmp_path / "toy/test.txt", keywords=["food"])
    assert len(docs) == 10
    assert [d.id for d in docs] == [f"test.txt-{i}" for i in range(1, 11)]
    assert docs[3].sentences == ("The test food 3 was good.", "A3.", "B3.", "C3.", "D3.")
    assert all("\r" not in s for d in docs for s in d.sentences)


def test_prepare_reads_cr_only_train_and_test_files_as_documents(tmp_path):
    write_toy(tmp_path / "data", "\r", cr_splits=("train", "dev", "test"))
    stats = prepare_dataset("toy", SPEC, tmp_path / "data", tmp_path / "out")
    assert stats["splits"]["test"]["documents"] == 10
    assert stats["splits"]["test"]["sentences_max"] == 5
    assert stats["dropped"]["train"]["read"] == 20 and stats["dropped"]["dev"]["read"] == 10


def test_jsonl_with_cr_only_line_ends_is_read_record_by_record(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_bytes(b'{"label": 1, "sentences": ["a.", "b."]}\r{"label": 0, "sentences": ["c."]}\r')
    docs = read_jsonl(path)
    assert [(d.id, d.label, d.sentences) for d in docs] == [("data.jsonl-1", 1, ("a.", "b.")),
                                                              ("data.jsonl-2", 0, ("c.",))]


# ------------------------------------------------------------------ downloads


def _url(server) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}/data/"


def test_a_download_that_trickles_stops_at_its_deadline_and_leaves_no_file(tmp_path, odd_server, monkeypatch):
    monkeypatch.setattr(download_module, "DOWNLOAD_DEADLINE", 2.0)
    url = _url(odd_server)
    start = time.monotonic()
    with pytest.raises(DataError) as err:
        download("toy", SPEC | {"url": url}, tmp_path / "data", timeout=10)
    assert time.monotonic() - start < 8
    assert f"{url}toy/train.txt" in err.value.problem and "deadline" in err.value.problem
    assert err.value.path == str(tmp_path / "data/toy/train.txt") and err.value.fix
    assert not list((tmp_path / "data").rglob("*.*"))  # no partial or temporary file


def test_the_download_deadline_defaults_to_half_an_hour():
    assert download_module.DOWNLOAD_DEADLINE == 30 * 60


def test_a_web_page_served_as_text_html_is_refused_and_not_kept(tmp_path, odd_server):
    odd_server.mode = "html"
    url = _url(odd_server)
    with pytest.raises(DataError) as err:
        download("toy", SPEC | {"url": url}, tmp_path / "data", timeout=10)
    assert f"{url}toy/train.txt" in err.value.problem and "web page" in err.value.problem
    assert "datasets.toy.url" in err.value.fix
    assert not list((tmp_path / "data").rglob("*.*"))


@pytest.mark.parametrize("start", [b"<!DOCTYPE html>\n<html>", b"  \n\t<HTML lang='en'>", b"\xef\xbb\xbf<html>"])
def test_a_web_page_served_as_plain_text_is_refused_and_not_kept(tmp_path, http_server, start):
    remote = tmp_path / "remote/toy"
    remote.mkdir()
    for split in ("train", "dev", "test"):
        (remote / f"{split}.txt").write_bytes(start + b"<body>Sign in</body></html>\n")
    with pytest.raises(DataError) as err:
        download("toy", SPEC | {"url": http_server}, tmp_path / "data", timeout=10)
    assert f"{http_server}toy/train.txt" in err.value.problem and "web page" in err.value.problem
    assert not list((tmp_path / "data").rglob("*.*"))


def test_data_that_mentions_html_later_is_kept(tmp_path, http_server):
    remote = tmp_path / "remote/toy"
    remote.mkdir()
    for split in ("train", "dev", "test"):
        (remote / f"{split}.txt").write_bytes(b"1\tThe food <html> was fine.[SEP]x.\n")
    assert len(download("toy", SPEC | {"url": http_server}, tmp_path / "data", timeout=10)) == 3


def test_a_missing_remote_file_is_reported_as_not_found_with_the_url(tmp_path, odd_server):
    odd_server.mode = "404"
    url = _url(odd_server)
    with pytest.raises(DataError) as err:
        download("toy", SPEC | {"url": url}, tmp_path / "data", timeout=10)
    assert f"{url}toy/train.txt was not found on the server (HTTP 404" in err.value.problem
    assert "internet" not in err.value.fix and "datasets.toy.url" in err.value.fix
    assert not list((tmp_path / "data").rglob("*.*"))


# ------------------------------------------------------------------ reruns follow the content


def test_data_checksums_are_the_files_sha256_and_none_for_a_missing_file(tmp_path):
    import hashlib

    from icda.workflow_config import dataset_inputs

    write_toy(tmp_path)
    (tmp_path / "toy/dev.txt").unlink()
    config = {"data_dir": str(tmp_path), "datasets": {"toy": SPEC}}
    got = dataset_inputs.data_checksums(config, "toy")
    assert got == {str(tmp_path / "toy/train.txt"): hashlib.sha256((tmp_path / "toy/train.txt").read_bytes()).hexdigest(),
                   str(tmp_path / "toy/dev.txt"): None,
                   str(tmp_path / "toy/test.txt"): hashlib.sha256((tmp_path / "toy/test.txt").read_bytes()).hexdigest()}
    before = (tmp_path / "toy/test.txt").stat()
    (tmp_path / "toy/test.txt").write_bytes((tmp_path / "toy/test.txt").read_bytes().replace(b"good", b"fine"))
    os.utime(tmp_path / "toy/test.txt", ns=(before.st_atime_ns, before.st_mtime_ns))  # same size and mtime
    assert dataset_inputs.data_checksums(config, "toy")[str(tmp_path / "toy/test.txt")] == \
        hashlib.sha256((tmp_path / "toy/test.txt").read_bytes()).hexdigest()


@pytest.mark.slow  # runs the workflow several times (about 10 s)
def test_prepare_reruns_when_a_data_file_changes_content_but_not_mtime(tmp_path):
    from toy_workflow import planned_jobs, toy_files, workflow_args
    from test_workflow import snakemake

    toy_files(tmp_path / "data")
    args = workflow_args(tmp_path, tmp_path / "data", run_datasets=["toy"])
    target = "results/toy/data/stats.json"
    snakemake(target, *args)
    assert planned_jobs(snakemake("-n", target, *args)) == {}

    test = tmp_path / "data/toy/test.txt"
    original, before = test.read_bytes(), test.stat()
    later = time.time() + 60
    os.utime(test, (later, later))  # same content, another mtime (touch)
    assert planned_jobs(snakemake("-n", target, *args)) == {}

    test.write_bytes(original.replace(b"was good", b"was fine"))  # other content, the old mtime (cp -p)
    os.utime(test, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert planned_jobs(snakemake("-n", target, *args)) == {"prepare": 1}

    test.write_bytes(original)  # the original back: nothing to do
    assert planned_jobs(snakemake("-n", target, *args)) == {}

    older = tmp_path / "data/toy/older.txt"  # an older file moved in its place
    older.write_bytes(original.replace(b"was bad", b"was poor"))
    os.utime(older, (before.st_mtime - 3600, before.st_mtime - 3600))
    os.replace(older, test)
    assert planned_jobs(snakemake("-n", target, *args)) == {"prepare": 1}


@pytest.mark.slow  # runs the workflow several times (about 10 s)
def test_prepare_after_a_download_does_not_rerun_for_the_checksums(tmp_path):
    """The files a download job writes are hashed when prepare runs, not when the run starts
    (they are absent then), so the next invocation finds nothing changed."""
    from toy_workflow import planned_jobs, toy_files, workflow_args
    from test_workflow import snakemake

    toy_files(tmp_path / "remote")
    toy = SPEC | {"url": (tmp_path / "remote").as_uri() + "/", "allow_file_url": True}
    args = workflow_args(tmp_path, tmp_path / "data", run_datasets=["toy"], datasets={"toy": toy})
    target = "results/toy/data/stats.json"
    assert planned_jobs(snakemake("-n", target, *args)) == {"download_toy": 1, "prepare": 1, "dataset_spec": 1,
                                                            "dataset_download_spec": 1}
    snakemake(target, *args)
    assert planned_jobs(snakemake("-n", target, *args)) == {}
