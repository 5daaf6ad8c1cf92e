"""Downloads of public datasets in the workflow: the missing files are fetched into data_dir before
prepare (checksums checked), and nothing is ever written outside data_dir."""

from __future__ import annotations

import hashlib
import json

import pytest

from icda.errors import ConfigError, DataError
from icda.workflow_config import availability
from test_workflow import snakemake
from toy_workflow import TOY, planned_jobs, toy_files, workflow_args


@pytest.mark.slow  # runs the workflow several times (about 10 s)
def test_workflow_downloads_missing_public_files_before_prepare(tmp_path):
    """A public dataset whose files are absent: its download job fetches them into data_dir
    (md5 checked), prepare runs on them, and a second invocation has nothing to do; a wrong
    checksum stops the job, keeps no file and says why in its log."""
    toy_files(tmp_path / "remote")
    train_md5 = hashlib.md5((tmp_path / "remote/toy/train.txt").read_bytes()).hexdigest()
    toy = TOY | {"url": (tmp_path / "remote").as_uri() + "/", "allow_file_url": True,
                 "md5": {"toy/train.txt": train_md5}}
    workdir, data_dir = tmp_path / "work", tmp_path / "work/data dir"
    workdir.mkdir()
    args = workflow_args(workdir, data_dir, run_datasets=["toy"], datasets={"toy": toy})
    snakemake("results/toy/data/stats.json", *args)
    for split in ("train", "dev", "test"):
        remote = tmp_path / f"remote/toy/{split}.txt"
        assert (data_dir / f"toy/{split}.txt").read_bytes() == remote.read_bytes()
    download_log = (workdir / "results/logs/toy/download.log").read_text()
    assert f"md5 {train_md5} verified" in download_log and "toy/dev.txt has no known checksum" in download_log
    stats = json.loads((workdir / "results/toy/data/stats.json").read_text())
    assert stats["splits"]["test"]["documents"] == 10
    assert planned_jobs(snakemake("-n", "results/toy/data/stats.json", *args)) == {}

    bad = toy | {"md5": {"toy/train.txt": "0" * 32}}
    args = workflow_args(workdir, tmp_path / "other", run_datasets=["toy"], datasets={"toy": bad})
    proc = snakemake("results/toy/data/stats.json", *args, check=False)
    assert proc.returncode != 0
    download_log = (workdir / "results/logs/toy/download.log").read_text()
    assert f"has md5 {train_md5}, expected {'0' * 32}" in download_log
    assert f"expected {'0' * 32}" in proc.stdout + proc.stderr  # the failed job's log is shown
    assert not (tmp_path / "other/toy/train.txt").exists()


def test_download_never_writes_outside_data_dir(tmp_path):
    """A dataset path with `..` (or an absolute one) stops the workflow at start, with the key and
    the fix, and nothing is written outside data_dir; so does a file:// URL not asked for."""
    toy_files(tmp_path / "remote/a/b")
    (tmp_path / "remote/escaped").mkdir()
    (tmp_path / "remote/escaped/evil.txt").write_text("1\tx.[SEP]y.\n")  # = url + ../../escaped/evil.txt
    url = (tmp_path / "remote/a/b").as_uri() + "/"
    workdir = tmp_path / "work"
    workdir.mkdir()
    escaping = TOY | {"train": "../../escaped/evil.txt", "url": url, "allow_file_url": True}
    args = workflow_args(workdir, workdir / "data", run_datasets=["toy"], datasets={"toy": escaping})
    proc = snakemake("download", *args, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "datasets.toy.train: '../../escaped/evil.txt' climbs out of data_dir" in out and "Fix:" in out
    assert list(tmp_path.rglob("evil.txt")) == [tmp_path / "remote/escaped/evil.txt"]

    config = {"data_dir": str(workdir / "data"), "run_datasets": ["toy"]}
    cases = [
        (TOY | {"test": str(tmp_path / "remote/a/b/toy/test.txt")}, "datasets.toy.test: '/.*' is an absolute path"),
        (TOY | {"md5": {"../x.txt": "0" * 32}}, r"datasets.toy.md5.../x.txt: '../x.txt' climbs out"),
        (TOY | {"url": url}, "datasets.toy.url: .* is a file:// URL.* Fix: .*allow_file_url: true"),
        (TOY | {"url": "ftp://example.org/data/"}, "datasets.toy.url: .* not an http:// or https:// URL"),
    ]
    for spec, message in cases:
        with pytest.raises(ConfigError, match=message):
            availability.availability(config | {"datasets": {"toy": spec}})

    # a folder inside data_dir that is a link to elsewhere: the download refuses to follow it
    from icda.steps.download import download

    (tmp_path / "elsewhere").mkdir()
    (workdir / "data").mkdir()
    (workdir / "data/toy").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(DataError, match=r"outside data_dir .* \(a symbolic link leads out\)") as err:
        download("toy", TOY | {"url": url, "allow_file_url": True}, workdir / "data")
    assert err.value.path == str(workdir / "data/toy/train.txt") and err.value.fix
    assert list((tmp_path / "elsewhere").iterdir()) == []
