"""Requests, responses, the append-only response cache and the responses file.

A :class:`Request` is one document asked of the model: the prompt with one slot value, its label,
its index among the requests of that value, and its own seed. Its ``key`` hashes everything that
determines the answer (prompt, slot value, index, dataset seed, model, sampling settings), so a
cached answer is reused only for the very same question.

Every attempt, failed or not, is appended to the cache as a :class:`Response` (one JSON line,
flushed and synced): a killed run loses at most the line being written, which the reader skips.
The ``generate`` step's output is the responses file: exactly one successful response per
request, in request order, written atomically when all are in.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable

from icda.errors import DataError, redact
from icda.io import read_jsonl, write_jsonl

REGENERATE = "regenerate it with `python -m icda generate` (cached answers are reused)"


@dataclass(frozen=True)
class Request:
    """One document to generate.

    Attributes:
        key: hash of (prompt, value, index, dataset seed, model, sampling): the cache key.
        label: the class the slot value maps to.
        value: the slot value.
        index: 0-based number of this request among those of its value.
        seed: the request's own sampling seed (from the dataset seed, value and index).
        prompt: the prompt with the slot filled in.
    """

    key: str
    label: int
    value: str
    index: int
    seed: int
    prompt: str


@dataclass(frozen=True)
class Response:
    """One attempt at a request: ``text`` when it succeeded, ``error`` when it did not.

    Attributes:
        key, label, value, index: those of the request.
        seed: the sampling seed of this attempt (the request's; another after an empty answer).
        model: the model that answered.
        attempt: 1 for the first attempt of a request in a run, 2 for its first retry, ...
        text: the raw answer (None on failure).
        error: why the attempt failed (None on success); an empty answer is a failure.
    """

    key: str
    label: int
    value: str
    index: int
    seed: int
    model: str
    attempt: int
    text: str | None
    error: str | None

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.text and self.text.strip())

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, obj: dict) -> "Response":
        return cls(key=str(obj["key"]), label=int(obj["label"]), value=str(obj["value"]),
                   index=int(obj["index"]), seed=int(obj["seed"]), model=str(obj["model"]),
                   attempt=int(obj["attempt"]), text=obj["text"], error=obj["error"])


#: a code point of a UTF-16 surrogate: a server's JSON can carry one alone (``"\\ud83d"``)
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """``text`` as it may be recorded: secrets redacted (:func:`icda.errors.redact`), and a lone
    surrogate (half a UTF-16 pair, which no UTF-8 file can hold) replaced by U+FFFD, as a
    decoder replaces bytes that are no character."""
    return _SURROGATE.sub("\ufffd", redact(text))


def request_key(prompt: str, value: str, index: int, seed: int, model: str, sampling: dict) -> str:
    """The cache key of a request (hex SHA-256 of its defining fields)."""
    payload = json.dumps({"prompt": prompt, "value": value, "index": index, "seed": seed,
                          "model": model, "sampling": sampling}, sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def request_seed(seed: int, value: str, index: int) -> int:
    """The sampling seed of one request: stable across runs and machines, in [0, 2**31)."""
    digest = hashlib.sha256(f"{seed}\0{value}\0{index}".encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


class ResponseCache:
    """The append-only JSONL cache of every attempt (thread-safe appends).

    Args:
        path: the cache file; created (with its folder) on the first append.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = threading.Lock()

    def read(self) -> list[Response]:
        """Every recorded attempt, in file order; unreadable lines (a run killed mid-write) are
        skipped with a warning."""
        return read_jsonl(self.path, Response.from_json, "a response record", REGENERATE, strict=False) \
            if self.path.exists() else []

    def successes(self) -> dict[str, Response]:
        """The first successful response of each key."""
        out: dict[str, Response] = {}
        for response in self.read():
            if response.ok and response.key not in out:
                out[response.key] = response
        return out

    def append(self, response: Response) -> None:
        """Record one attempt: one line, flushed and synced to disk before returning; its text
        and error as :func:`clean_text` gives them."""
        record = response.to_json()
        record.update({key: clean_text(record[key]) for key in ("text", "error") if isinstance(record[key], str)})
        line = json.dumps(record, ensure_ascii=False) + "\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as fh:
                if fh.tell() > 0 and not _ends_with_newline(self.path):
                    fh.write("\n")  # a killed run left a partial line: keep it apart
                fh.write(line)
                fh.flush()
                os.fsync(fh.fileno())


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as fh:
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) == b"\n"


def write_responses(responses: Iterable[Response], path: str | Path) -> None:
    """Write the responses file (one JSON line each), atomically."""
    write_jsonl((response.to_json() for response in responses), path)


def read_responses(path: str | Path) -> list[Response]:
    """Read a responses file written by :func:`write_responses`.

    Raises:
        DataError: the file is missing or a line is not a response record.
    """
    path = Path(path)
    if not path.exists():
        raise DataError(path, None, "responses file not found",
                        "run `python -m icda generate` for this dataset first")
    return read_jsonl(path, Response.from_json, "a response record", REGENERATE)

