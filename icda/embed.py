"""Frozen-encoder mode: encode every unique sentence once and cache the vectors.

Frozen mode (``finetune: false``; docs/departures.md, item 1): the token encoder is frozen, so
each sentence's vector is computed once per (dataset, encoder settings) and training runs on
cached vectors. ICDA's counterfactuals only move whole sentences between documents, so an
augmented document is a list of rows of the cache (:meth:`EmbeddingCache.lookup`): no re-encoding ever.

A cache is keyed by :func:`cache_key` (encoder identity and weights fingerprint, pooling,
max_tokens, the ordered sentence texts): a cache built with another encoder, other settings or
other input never matches, and :meth:`EmbeddingCache.load` refuses it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from pathlib import Path
from typing import Iterable, Sequence

import torch
from tqdm import tqdm

from icda.data.document import Document
from icda.encoder import (
    EncoderSettings,
    SentenceEncoder,
    encoder_fingerprint,
    load_tokenizer,
    pad_batch,
    resolve_device,
    resolve_encoder_path,
    tokenize_sentences,
)
from icda.errors import DataError, load_failure
from icda.io import save_torch
from icda.kernels import kernel_id

log = logging.getLogger(__name__)

#: format tag stored in every cache file
CACHE_FORMAT = "icda-embeddings/1"
_REBUILD = "delete it and rerun `python -m icda embed`"


def cache_key(settings: EncoderSettings, sentences: Iterable[str], encoder_fingerprint: str) -> str:
    """sha256 (hex) identifying the vectors of ``sentences`` under ``settings``.

    Covers the encoder name as configured and ``encoder_fingerprint`` (see
    :func:`icda.encoder.encoder_fingerprint`: configuration, tokenizer and weights content, so a
    moved checkout keeps its caches and changed weights at the same path invalidate them),
    ``pooling``, ``max_tokens``, ``layers``, the CPU kernel path (:func:`icda.kernels.kernel_id`: another
    path gives other last bits) and the sentence texts in order. ``max_sentences`` acts through
    the sentence list; ``batch_size`` does not change the vectors and is left out.
    """
    h = hashlib.sha256()
    head = {"format": CACHE_FORMAT, "encoder": settings.name, "fingerprint": encoder_fingerprint,
            "pooling": settings.pooling, "max_tokens": settings.max_tokens, "kernels": kernel_id()}
    if settings.layers != 1:  # (keys of the one-layer read-out stay as before)
        head["layers"] = settings.layers
    h.update(json.dumps(head, sort_keys=True).encode() + b"\n")
    for sentence in sentences:
        # JSON-escaped text holds no raw newline: one sentence a line is unambiguous
        h.update(json.dumps(sentence, ensure_ascii=False).encode() + b"\n")
    return h.hexdigest()


class EmbeddingCache:
    """Sentence vectors of one dataset under one encoder setting.

    Attributes:
        vectors: FloatTensor [U, H] (float32, CPU), one row per unique sentence.
        index: sentence text → row of ``vectors``.
        key: the :func:`cache_key` the vectors were built under.
        settings: the :class:`EncoderSettings` as a dict (``EncoderSettings.from_dict``).
        fingerprint: the encoder fingerprint that went into ``key``.
        path: the file it was loaded from or last saved to (None if neither).
    """

    def __init__(self, vectors: torch.Tensor, sentences: Sequence[str], key: str,
                 settings: dict, fingerprint: str = "", path: Path | None = None):
        if vectors.ndim != 2 or vectors.shape[0] != len(sentences):
            raise ValueError(f"vectors {tuple(vectors.shape)} do not match {len(sentences)} sentences")
        self.vectors = vectors.to(torch.float32)
        self.index = {s: i for i, s in enumerate(sentences)}
        if len(self.index) != len(sentences):
            raise ValueError("sentences must be unique")
        self.key, self.settings, self.fingerprint, self.path = key, dict(settings), fingerprint, path

    @property
    def sentences(self) -> list[str]:
        """The sentence of each row, in row order."""
        return list(self.index)

    def save(self, path: str | Path) -> None:
        """Write the cache to ``path`` atomically (a torch file of plain tensors, lists, dicts)."""
        save_torch({"format": CACHE_FORMAT, "key": self.key, "settings": self.settings,
                    "fingerprint": self.fingerprint, "sentences": self.sentences,
                    "vectors": self.vectors.contiguous()}, path)
        self.path = Path(path)

    @classmethod
    def load(cls, path: str | Path, expected_key: str | None = None) -> "EmbeddingCache":
        """Read a cache written by :meth:`save`.

        Raises:
            DataError: the file is missing or not a cache, or ``expected_key`` is given and the
                file was built under another key (stale: other encoder, settings or input).
        """
        path = Path(path)
        if not path.is_file():
            raise DataError(path, None, "embedding cache not found", "run `python -m icda embed`")
        try:
            obj = torch.load(path, map_location="cpu", weights_only=True)
            if obj.get("format") != CACHE_FORMAT:
                raise ValueError(f"format {obj.get('format')!r}, expected {CACHE_FORMAT!r}")
            cache = cls(obj["vectors"], obj["sentences"], obj["key"], obj["settings"],
                        obj.get("fingerprint", ""), path)
        except Exception as exc:  # unpickling, a missing key, a shape mismatch
            raise DataError(path, None, f"not an icda embedding cache ({load_failure(exc)})", _REBUILD) from exc
        if expected_key is not None and cache.key != expected_key:
            raise DataError(
                path, None,
                f"stale embedding cache: built for key {cache.key[:12]}… (settings "
                f"{cache.settings}), expected {expected_key[:12]}… (another encoder, other "
                "settings or changed sentences)", _REBUILD)
        return cache

    def lookup(self, sentences: Iterable[str]) -> torch.Tensor:
        """Rows of ``sentences`` in ``vectors``: LongTensor [len(sentences)].

        Raises:
            DataError: a sentence is not in the cache (a cache of another dataset, or a
                sentence beyond the first ``max_sentences`` of its document).
        """
        rows = []
        for sentence in sentences:
            try:
                rows.append(self.index[sentence])
            except KeyError:
                raise DataError(
                    self.path or "<embedding cache>", None,
                    f"sentence not in the embedding cache: {sentence[:80]!r}",
                    "rebuild the cache from the same data (`python -m icda embed`) and keep "
                    f"documents to their first {self.settings.get('max_sentences')} sentences",
                ) from None
        return torch.tensor(rows, dtype=torch.long)


def unique_sentences(docs: Iterable[Document], max_sentences: int) -> list[str]:
    """The distinct sentences among each document's first ``max_sentences``, in first-seen order."""
    seen: dict[str, None] = {}
    for doc in docs:
        for sentence in doc.sentences[:max_sentences]:
            seen.setdefault(sentence, None)
    return list(seen)


def encode_sentences(encoder: SentenceEncoder, tokenizer, sentences: Sequence[str], *,
                     batch_size: int, device: str | torch.device = "cpu",
                     progress: bool = True) -> torch.Tensor:
    """Encode ``sentences`` in batches of similar length (longest first, to fail early on memory).

    Returns:
        FloatTensor [len(sentences), H] (float32, CPU), row i for ``sentences[i]``.
    """
    token_lists = tokenize_sentences(tokenizer, sentences, encoder.settings.max_tokens)
    order = sorted(range(len(token_lists)), key=lambda i: (-len(token_lists[i]), i))
    out = torch.empty((len(sentences), encoder.hidden_size), dtype=torch.float32)
    was_training = encoder.training
    encoder.eval()
    start = time.perf_counter()
    with torch.inference_mode(), tqdm(total=len(order), unit="sent", desc="encoding",
                                       disable=not progress, dynamic_ncols=True) as bar:
        for at in range(0, len(order), batch_size):
            rows = order[at: at + batch_size]
            ids, mask = pad_batch([token_lists[i] for i in rows], tokenizer.pad_token_id)
            vectors = encoder(ids.to(device), mask.to(device))
            out[torch.tensor(rows)] = vectors.float().cpu()
            bar.update(len(rows))
    encoder.train(was_training)
    took = time.perf_counter() - start
    log.info("encoded %d sentences in %.1f s (%.0f sentences/s)",
             len(sentences), took, len(sentences) / max(took, 1e-9))
    return out


def embed_documents(docs: Sequence[Document], settings: EncoderSettings, *,
                    cache_dir: str | Path | None = None, device: str = "cpu",
                    progress: bool = True) -> EmbeddingCache:
    """Vectors of the unique sentences among the documents' first ``settings.max_sentences``.

    With ``cache_dir``, ``<cache_dir>/<key>.pt`` is loaded when it exists and written otherwise.
    ``device``: ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ... or ``"auto"`` (cuda when available).
    Encoding runs under ``torch.inference_mode()`` in eval mode and is deterministic: the same
    input gives the same vectors on the same machine.

    Raises:
        ConfigError: the encoder cannot be found or does not fit the settings.
        DataError: the cache file is unreadable.
    """
    sentences = unique_sentences(docs, settings.max_sentences)
    path = resolve_encoder_path(settings.name)
    fingerprint = encoder_fingerprint(path)
    key = cache_key(settings, sentences, fingerprint)
    target = None if cache_dir is None else Path(cache_dir) / f"{key}.pt"
    if target is not None and target.exists():
        log.info("embedding cache hit: %s (%d sentences)", target, len(sentences))
        return EmbeddingCache.load(target, expected_key=key)
    device = resolve_device(device)
    log.info("encoding %d unique sentences with %s (%s pooling, max %d tokens) on %s",
             len(sentences), path, settings.pooling, settings.max_tokens, device)
    encoder = SentenceEncoder(settings).to(device)
    vectors = encode_sentences(encoder, load_tokenizer(settings), sentences,
                               batch_size=settings.batch_size, device=device, progress=progress)
    cache = EmbeddingCache(vectors, sentences, key, settings.to_dict(), fingerprint)
    if target is not None:
        cache.save(target)
    return cache
