"""Operating-system write errors (a full disk, a file-size limit, a read-only or unwritable
folder, an output below a file) end in one line ``error: <path>: <reason>`` and a non-zero exit
status, not a traceback; ``predict`` checks that its output can be written before it works."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile

import pytest
import yaml

from icda.cli import main
from icda.errors import ConfigError
from icda.io import check_writable

SYNTHETIC = {"source": "synthetic", "synthetic": {"n_train": 200, "n_dev": 40, "n_test": 40}}


def unwritable_folder() -> str | None:
    """A folder of this machine in which no file can be created even as root (sysfs), or None."""
    try:
        with tempfile.TemporaryFile(dir="/sys"):
            return None
    except OSError:
        return "/sys"


def prepare(tmp_path, out_dir, **popen):
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"data_dir": str(tmp_path), "datasets": {"s": SYNTHETIC}}))
    return subprocess.run([sys.executable, "-m", "icda", "prepare", "--config", str(config), "--dataset", "s",
                           "--out-dir", str(out_dir)], capture_output=True, text=True, cwd=tmp_path, **popen)


def test_a_file_size_limit_is_one_error_line_naming_the_file(tmp_path):
    def limit():  # 4 KiB: train.jsonl of 200 documents is larger
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    proc = prepare(tmp_path, tmp_path / "out", preexec_fn=limit)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.splitlines()[-1] == f"error: {tmp_path / 'out'}/train.jsonl: File too large"
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "out/train.jsonl").exists()


def test_an_out_dir_below_a_file_is_one_error_line(tmp_path):
    (tmp_path / "file.txt").write_text("x")
    proc = prepare(tmp_path, tmp_path / "file.txt/out")
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.splitlines()[-1].startswith(f"error: {tmp_path / 'file.txt'}")


def test_predict_checks_its_output_before_any_work(tmp_path, monkeypatch, capsys):
    """``--out`` below a file, or in a folder where no file can be created: refused before the
    model is read and the documents predicted (predict used to do all its work first)."""
    monkeypatch.setattr("icda.steps.predict.predict_file", lambda *a, **k: pytest.fail("predicted"))
    (tmp_path / "docs.txt").write_text("The food was cold.\n")
    (tmp_path / "file.txt").write_text("x")
    below = tmp_path / "file.txt/predictions.jsonl"
    assert main(["predict", "--model", str(tmp_path / "model"), "--input", str(tmp_path / "docs.txt"),
                 "--out", str(below)]) == 2
    assert capsys.readouterr().err == (f"error: --out {below}: {tmp_path / 'file.txt'} is a file, not a folder, so "
                                       "nothing can be written below it. Fix: give a path in a folder\n")
    folder = unwritable_folder()
    if folder is None:
        pytest.skip("no unwritable folder on this machine")
    assert main(["predict", "--model", str(tmp_path / "model"), "--input", str(tmp_path / "docs.txt"),
                 "--out", f"{folder}/predictions.jsonl"]) == 2
    assert capsys.readouterr().err.startswith(f"error: --out {folder}/predictions.jsonl: cannot write in {folder} (")


def test_check_writable_passes_standard_output_new_folders_and_existing_files(tmp_path):
    for out in (None, "-", "/dev/stdout", tmp_path / "new/deeper/p.jsonl", tmp_path):
        check_writable("--out", out)
    (tmp_path / "p.jsonl").write_text("old")
    check_writable("--out", tmp_path / "p.jsonl")
    with pytest.raises(ConfigError, match="is a file, not a folder"):
        check_writable("--out", tmp_path / "p.jsonl/deeper/x")


def test_a_write_error_without_a_file_name_gets_the_output_path(tmp_path):
    import errno

    from icda.io import atomic_write

    with pytest.raises(OSError) as err:
        with atomic_write(tmp_path / "out.json"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    assert (err.value.errno, err.value.filename) == (errno.ENOSPC, str(tmp_path / "out.json"))
    assert os.listdir(tmp_path) == []
