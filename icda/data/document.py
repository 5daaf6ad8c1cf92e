"""The ``Document`` record and its JSONL storage (the format every workflow step exchanges)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from icda.errors import DataError
from icda.io import read_json_file, read_jsonl, write_jsonl
from icda.layout import STATS_FILE, split_path


#: what a document id may be: a plain file name (ERASER keeps a document in ``docs/<docid>``), of
#: ASCII letters, digits, ``.``, ``_`` and ``-``, starting with a letter or digit, at most 200
#: characters (no ``/``, no ``..`` alone, no space, nothing a file system or a shell reads otherwise)
DOC_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")
#: :data:`DOC_ID` in words, for messages
DOC_ID_RULE = ("letters A-Z a-z, digits, '.', '_' and '-', starting with a letter or digit, at most 200 "
               "characters (pattern [A-Za-z0-9][A-Za-z0-9._-]{0,199})")


def is_doc_id(value: object) -> bool:
    """Whether ``value`` is a string that :data:`DOC_ID` matches whole."""
    return isinstance(value, str) and DOC_ID.fullmatch(value) is not None


@dataclass(frozen=True)
class Document:
    """One document: a list of sentences with a class label.

    Attributes:
        id: unique within its split (e.g. ``"train-17"``).
        label: class index (0 negative, 1 positive), or None where the file has no label (the
            hotel test files).
        sentences: the sentences, in document order.
        rationale: 0-based indices of the ground-truth rationale sentences, or None when the
            split has no annotation (train/dev). An empty frozenset means "annotated, none".
    """

    id: str
    label: int | None
    sentences: tuple[str, ...]
    rationale: frozenset[int] | None = None

    def to_json(self) -> dict:
        out = {"id": self.id, "label": self.label, "sentences": list(self.sentences)}
        if self.rationale is not None:
            out["rationale"] = sorted(self.rationale)
        return out

    @classmethod
    def from_json(cls, obj: dict) -> "Document":
        rationale = obj.get("rationale")
        return cls(
            id=str(obj["id"]),
            label=None if obj.get("label") is None else int(obj["label"]),
            sentences=tuple(obj["sentences"]),
            rationale=None if rationale is None else frozenset(int(i) for i in rationale),
        )


def write_documents(docs: Iterable[Document], path: str | Path) -> None:
    """Write documents as JSONL (one ``Document.to_json`` a line), atomically."""
    write_jsonl((doc.to_json() for doc in docs), path)


def read_documents(path: str | Path) -> list[Document]:
    """Read documents written by :func:`write_documents`.

    Raises:
        DataError: the file is missing or not UTF-8, or a line is not a valid document record.
    """
    path = Path(path)
    if not path.exists():
        raise DataError(path, None, "file not found", "run `python -m icda prepare` first")
    try:
        return read_jsonl(path, Document.from_json, "a prepared document record",
                          "regenerate the file with `python -m icda prepare`")
    except UnicodeDecodeError:  # named as the raw readers name it: the line, the byte and its column
        for lineno, raw in enumerate(path.read_bytes().split(b"\n"), 1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DataError(path, lineno, f"not UTF-8 text (byte {raw[exc.start]:#04x} at column "
                                f"{exc.start + 1}: {exc.reason})", "convert the file to UTF-8, or regenerate it "
                                "with `python -m icda prepare`") from None
        raise


def read_split(data_dir: str | Path, split: str) -> list[Document]:
    """The documents of one prepared split, ``<data_dir>/<split>.jsonl``
    (:func:`icda.layout.split_path`; ``data_dir``: a prepared data folder of ``python -m icda
    prepare``, or an iteration's augmented folder for ``train`` and ``dev``).

    Raises:
        DataError: the file is missing or a line is not a valid document record.
    """
    return read_documents(split_path(data_dir, split))


def write_split(docs: Iterable[Document], data_dir: str | Path, split: str) -> Path:
    """Write the documents of one prepared split to ``<data_dir>/<split>.jsonl``, atomically;
    returns the path."""
    path = split_path(data_dir, split)
    write_documents(docs, path)
    return path


def read_class_names(data_dir: str | Path) -> list[str] | None:
    """The class names of a prepared data folder in label order 0 … C−1 (its ``stats.json``:
    ``class_names``, else, in a folder prepared before that key was written, ``eraser.class_names``),
    or None: the dataset names no class (its labels are their indices) or the folder has no
    ``stats.json``.

    Raises:
        DataError: ``stats.json`` is not a prepared data folder's statistics.
    """
    import json

    stats = Path(data_dir) / STATS_FILE
    if not stats.is_file():
        return None
    try:
        found = json.loads(stats.read_text(encoding="utf-8"))
        names = found.get("class_names") if "class_names" in found else found.get("eraser", {}).get("class_names")
    except (ValueError, AttributeError):
        raise DataError(stats, None, "not a prepared data folder's statistics", "rerun `python -m icda prepare`") from None
    return names if isinstance(names, list) and all(isinstance(n, str) for n in names) else None


def read_small_data(stats: str | Path) -> tuple[str, str | None]:
    """(dataset, its small-data warning or None) from a prepared data folder's ``stats.json``:
    ``prepare`` records there, as ``small_data``, the warning it logs for a training split smaller
    than the size at which the loop was measured to be reliable
    (:func:`icda.steps.prepare.small_data_warning`); a folder prepared before that key was
    written has none.

    Raises:
        DataError: ``stats`` is missing or not a prepared data folder's statistics (no ``dataset``
            name, or ``small_data`` neither text nor null).
    """
    fix = "rerun `python -m icda prepare` (snakemake --forcerun prepare)"
    found = read_json_file(stats, fix, fix)
    if not isinstance(found, dict) or not isinstance(found.get("dataset"), str) \
            or not isinstance(found.get("small_data"), (str, type(None))):
        raise DataError(stats, None, "not a prepared data folder's statistics (a dataset name and a "
                        "small_data warning or null expected)", fix)
    return found["dataset"], found.get("small_data")


def label_name(label: int | None, names: Sequence[str] | None) -> int | str | None:
    """A label as shown to a reader: its class name when the dataset names its classes
    (``names``, label order; a label beyond them stays its index), else the index itself."""
    if label is None or not names or not 0 <= label < len(names):
        return label
    return names[label]
