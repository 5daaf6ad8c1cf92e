"""What a dataset's jobs read besides results: the spec files of ``prepare`` and ``download``,
the data files (with their checksums, so that changed content reruns ``prepare``) and the
responses a ``source: llm`` dataset's ``generate`` writes."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from icda.data.dataset_spec import input_files
from icda.data.llm_spec import responses_path


def dataset_spec(config: dict, name: str, download: bool = False) -> dict[str, Any]:
    """The JSON that ``python -m icda prepare --spec`` reads; with ``download``, the one that
    ``python -m icda download --spec`` reads. Only the download's spec has the checksums
    (``md5``, ``git_blob``): prepare does not use them, so adding one does not rerun it."""
    spec = {"name": name, "data_dir": str(config["data_dir"]), **config["datasets"][name]}
    if not download:
        spec.pop("md5", None)
        spec.pop("git_blob", None)
    return spec


def generated_responses(config: dict, name: str) -> list[str]:
    """What ``prepare`` of dataset ``name`` needs besides its spec: the responses file that
    ``generate`` writes, for a ``source: llm`` dataset; nothing for any other."""
    if config["datasets"][name].get("source") != "llm":
        return []
    return [str(responses_path(name))]


def _docs_folders(config: dict, name: str) -> list[Path]:
    """The ``docs/`` folders beside dataset ``name``'s splits in ERASER's format
    (``format``/``test_format: eraser``) that exist, each once, in split order."""
    spec = config["datasets"][name]
    folders: list[Path] = []
    for split in ("train", "dev", "test"):
        fmt = spec.get("test_format" if split == "test" else "format")
        if spec.get(split) and fmt == "eraser":
            folder = (Path(config["data_dir"]) / spec[split]).parent / "docs"
            if folder.is_dir() and folder not in folders:
                folders.append(folder)
    return folders


def _folder_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file())


def data_files(config: dict, name: str) -> list[str]:
    """The data files dataset ``name`` is prepared from (rule ``prepare``: a change reruns it):
    its split files and, for a split in ERASER's format (``format``/``test_format: eraser``),
    every file of the ``docs/`` folder beside it (its documents), sorted."""
    files = input_files(config["datasets"][name], config["data_dir"])
    docs = [p for folder in _docs_folders(config, name) for p in _folder_files(folder)]
    return [str(p) for p in dict.fromkeys([*files, *docs])]


#: sha256 of the files :func:`data_checksums` hashed in this process, by (path, size, mtime,
#: ctime, inode): Snakemake asks once per job, the file is read once per invocation
_SHA256_CACHE: dict[tuple, str] = {}


def file_sha256(path: str | Path) -> str | None:
    """The sha256 hex digest of a file's bytes (None when it does not exist), cached for as long as
    its size, times and inode stay the same."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    key = (os.path.abspath(path), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
    if key not in _SHA256_CACHE:
        digest = hashlib.sha256()
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
        _SHA256_CACHE[key] = digest.hexdigest()
    return _SHA256_CACHE[key]


def data_checksums(config: dict, name: str) -> dict[str, str | None]:
    """{data file: sha256 of its content} of dataset ``name`` (None for a file still to be
    downloaded), a param of rule ``prepare``: Snakemake reruns a job whose params changed, so a
    data file whose content changes reruns ``prepare`` even when its modification time does not
    say so (``cp -p``, ``touch -r``, a restored backup, an older file moved in its place).

    An ERASER ``docs/`` folder (one file a document: about 2,000 for movies) is one entry,
    ``"<folder>/"``: the sha256 of its files' names and sha256s, in name order. Snakemake's rerun
    reason prints the param's old and new value whole, so a digest a document would make it
    print every document's digest twice."""
    files = input_files(config["datasets"][name], config["data_dir"])
    sums: dict[str, str | None] = {str(path): file_sha256(path) for path in files}
    for folder in _docs_folders(config, name):
        digest = hashlib.sha256()
        for path in _folder_files(folder):
            digest.update(f"{path.name}\0{file_sha256(path)}\n".encode())
        sums[f"{folder}/"] = digest.hexdigest()
    return sums
