"""How well the frozen sentence vectors alone pick a dataset's annotated rationale: a diagnostic.

A logistic-regression probe on the cached sentence vectors (frozen mode, docs/departures.md item
1), trained with the annotations that ICDA never sees (is this sentence a ground-truth rationale
sentence?), cross-validated over documents: each fold's documents are scored by a probe fitted on
the other folds, and a document's pick is its highest-scoring sentence (k = 1). The precision of
those picks (the share of documents whose pick is a ground-truth sentence, as in
``icda.metrics``) says how much of the rationale the frozen vectors carry on their own, without
the document's other sentences or its label; where it is near the ICDA selector's precision, the
encoder rather than the loop limits the selector. It chooses no setting: it reads the split's
annotations and nothing else, and prints a random pick's precision as the floor.

    PYTHONPATH=. .venv/bin/python benchmarks/frozen_probe.py ../bench/loc_a/fixed/results/location --split test

The folder is a dataset's results folder of a run of the workflow (``data/<split>.jsonl`` and
``embeddings.pt``, the sentence vectors of every split).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import icda  # noqa: F401  (first: the kernel path's variables before torch loads numpy's BLAS)
import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupKFold

from icda.data.document import read_split
from icda.embed import EmbeddingCache
from icda.metrics import rationale_metrics


def probe_picks(vectors: np.ndarray, doc_of: np.ndarray, gold: np.ndarray, folds: int, c: float) -> list[list[int]]:
    """Each document's k = 1 pick by a probe fitted on the other folds' documents: per document
    (0 … D−1), [the row of its highest-scoring sentence, counted within the document].
    vectors [S, H] (one row per sentence, documents in order), doc_of [S] (its document), gold [S]
    (bool: a ground-truth sentence). Raises ValueError when a training fold holds one class only."""
    first_row = np.searchsorted(doc_of, np.arange(doc_of.max() + 1))
    picks: list[list[int]] = [[] for _ in first_row]
    for train, held in GroupKFold(n_splits=folds).split(vectors, gold, doc_of):
        probe = LogisticRegression(C=c, max_iter=2000).fit(vectors[train], gold[train])
        score = probe.decision_function(vectors[held])
        for doc in np.unique(doc_of[held]):
            mine = doc_of[held] == doc
            picks[doc] = [int(held[mine][np.argmax(score[mine])] - first_row[doc])]
    return picks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path, help="a dataset's results folder (data/, embeddings.pt)")
    parser.add_argument("--split", default="test", help="an annotated split (default test)")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--c", type=float, default=1.0, help="the probe's inverse L2 strength (not tuned)")
    args = parser.parse_args()

    cache = EmbeddingCache.load(args.results / "embeddings.pt")
    docs = [d for d in read_split(args.results / "data", args.split) if d.rationale]
    if not docs:
        raise SystemExit(f"{args.results / 'data' / args.split}.jsonl has no annotated document")
    max_sentences = cache.settings.get("max_sentences") or None
    rows, doc_of, gold = [], [], []
    for i, doc in enumerate(docs):
        sentences = doc.sentences[:max_sentences]
        rows.extend(cache.lookup(sentences).tolist())
        doc_of += [i] * len(sentences)
        gold += [p in doc.rationale for p in range(len(sentences))]
    vectors = cache.vectors[rows].numpy()
    doc_of, gold = np.array(doc_of), np.array(gold)
    n_sentences = [len(d.sentences[:max_sentences]) for d in docs]
    random_pick = np.mean([len(d.rationale & set(range(n))) / n for d, n in zip(docs, n_sentences)])
    picks = probe_picks(vectors, doc_of, gold, args.folds, args.c)
    precision = rationale_metrics(picks, [d.rationale for d in docs], n_sentences)["precision"]
    print(f"{args.results.name} {args.split}: {len(docs)} annotated documents, {len(gold)} sentences "
          f"({gold.mean():.1%} ground truth)")
    print(f"| pick | precision % |\n|---|---|\n| random sentence | {100 * random_pick:.1f} |\n"
          f"| frozen-vector probe, {args.folds}-fold over documents | {100 * precision:.1f} |")


if __name__ == "__main__":
    main()
