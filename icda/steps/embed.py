"""The ``embed`` step (``python -m icda embed``, frozen-encoder mode): a prepared dataset's
split files in, one embedding cache file out (:mod:`icda.embed` builds and checks the cache)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Mapping

from icda.data.document import read_documents
from icda.embed import EmbeddingCache, cache_key, embed_documents, unique_sentences
from icda.encoder import EncoderSettings, encoder_fingerprint, resolve_encoder_path
from icda.errors import DataError

log = logging.getLogger(__name__)


def embed_splits(doc_paths: Mapping[str, str | Path], settings: EncoderSettings,
                 out_path: str | Path, cache_dir: str | Path | None = None, *,
                 device: str = "cpu", progress: bool = True) -> EmbeddingCache:
    """One cache file for several splits of a dataset (e.g. train/dev/test JSONL files).

    The union of the splits' sentences (in the order of ``doc_paths``) is embedded with
    :func:`embed_documents` and saved to ``out_path``. An ``out_path`` already built under the
    same key is kept as it is.

    Raises:
        DataError: a split file is missing or malformed (see ``read_documents``).
        ConfigError: see :func:`embed_documents`.
    """
    docs = [doc for split in doc_paths.values() for doc in read_documents(split)]
    out_path = Path(out_path)
    if out_path.exists():
        sentences = unique_sentences(docs, settings.max_sentences)
        key = cache_key(settings, sentences,
                        encoder_fingerprint(resolve_encoder_path(settings.name)))
        try:
            cache = EmbeddingCache.load(out_path, expected_key=key)
            log.info("%s is up to date (%d sentences)", out_path, len(cache.index))
            return cache
        except DataError as exc:
            log.info("rebuilding %s: %s", out_path, exc)
    cache = embed_documents(docs, settings, cache_dir=cache_dir, device=device, progress=progress)
    cache.save(out_path)
    log.info("wrote %s: %d sentences × %d", out_path, *cache.vectors.shape)
    return cache
