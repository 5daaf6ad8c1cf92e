"""The ``Document`` record and its JSONL storage (the format every workflow step exchanges)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from icda.errors import DataError
from icda.io import atomic_write


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
    with atomic_write(path) as fh:
        for doc in docs:
            fh.write(json.dumps(doc.to_json(), ensure_ascii=False) + "\n")


def read_documents(path: str | Path) -> list[Document]:
    """Read documents written by :func:`write_documents`.

    Raises:
        DataError: the file is missing or a line is not a valid document record.
    """
    path = Path(path)
    if not path.exists():
        raise DataError(path, None, "file not found", "run `python -m icda prepare` first")
    docs = []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                docs.append(Document.from_json(json.loads(line)))
            except (ValueError, KeyError, TypeError) as exc:
                raise DataError(
                    path, lineno, f"not a prepared document record ({exc})",
                    "regenerate the file with `python -m icda prepare`",
                ) from exc
    return docs
