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

``--readouts`` also encodes the split's sentences once more with the run's encoder settings, all
layers kept, and probes four read-outs of that one pass (docs/experiments/hotel_readout.md): the last layer's mean (unit
length), the same with the sentence minus its document's mean appended, the means of all layers
concatenated (unit length), and the last three layers' means with the document-centred copy: the
distance between the loop and what the vectors carry.
"""

from __future__ import annotations

import argparse

import icda  # noqa: F401  (first: the kernel path's variables before torch loads numpy's BLAS)
import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupKFold

from icda.data.document import read_split
from icda.embed import EmbeddingCache
from icda.errors import IcdaError
from icda.metrics import rationale_metrics
from icda.guard import add_input, parse_arguments  # noqa: E402

#: the probe strengths of the read-out table (``--readouts``)
READOUT_CS = (1.0, 10.0, 100.0)


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


def unit(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length."""
    return x / np.linalg.norm(x, axis=1, keepdims=True).clip(min=1e-12)


def centred(x: np.ndarray, doc_of: np.ndarray) -> np.ndarray:
    """Each row minus the mean of its document's rows."""
    means = np.stack([x[doc_of == d].mean(0) for d in range(doc_of.max() + 1)])
    return x - means[doc_of]


def readouts(cache: EmbeddingCache, sentences: list[str], doc_of: np.ndarray) -> dict[str, np.ndarray]:
    """The four read-outs of one encoder pass over ``sentences`` (the cache's encoder settings,
    every layer kept): name → [S, ·] vectors."""
    from dataclasses import replace

    from icda.embed import encode_sentences
    from icda.encoder import EncoderSettings, SentenceEncoder, load_tokenizer

    settings = EncoderSettings.from_dict(cache.settings, strict=False)
    probe_encoder = SentenceEncoder(settings)
    depth = int(probe_encoder.model.config.num_hidden_layers)
    every = SentenceEncoder(replace(settings, layers=depth))
    unique = list(dict.fromkeys(sentences))
    vectors = encode_sentences(every, load_tokenizer(settings), unique, batch_size=settings.batch_size,
                               progress=False).numpy()
    at = {s: i for i, s in enumerate(unique)}
    rows = vectors[[at[s] for s in sentences]]
    width = vectors.shape[1] // depth
    layer = [rows[:, i * width:(i + 1) * width] for i in range(depth)]  # last layer first
    last = unit(layer[0])
    top3 = unit(np.concatenate(layer[:3], axis=1))
    return {
        "last layer's mean, unit length": last,
        "the same + the sentence minus its document's mean": np.concatenate([last, centred(last, doc_of)], axis=1),
        f"the means of all {depth} layers, concatenated, unit length": unit(np.concatenate(layer, axis=1)),
        "the last 3 layers' means + the document-centred copy": np.concatenate([top3, centred(top3, doc_of)], axis=1),
    }


def build_parser() -> argparse.ArgumentParser:
    """The command line of :func:`main` (its path arguments declared for the output guard, icda.guard)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_input(parser, "results", kind="tree", help="a dataset's results folder (data/, embeddings.pt)")
    parser.add_argument("--split", default="test", help="an annotated split (default test)")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--c", type=float, default=1.0, help="the probe's inverse L2 strength (not tuned)")
    parser.add_argument("--readouts", action="store_true",
                        help=f"also probe four read-outs of one encoder pass at C {READOUT_CS}")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = parse_arguments(build_parser(), argv)
    if not args.results.is_dir():
        raise SystemExit(f"frozen_probe: {args.results}: no such folder. Fix: give a dataset's results folder of a "
                         "run of the workflow (data/, embeddings.pt)")
    try:
        probe(args)
    except (IcdaError, OSError) as exc:
        raise SystemExit(f"frozen_probe: {exc}") from None


def probe(args: argparse.Namespace) -> None:
    """The tables of main() for its arguments."""
    cache = EmbeddingCache.load(args.results / "embeddings.pt")
    docs = [d for d in read_split(args.results / "data", args.split) if d.rationale]
    if not docs:
        raise SystemExit(f"{args.results / 'data' / args.split}.jsonl has no annotated document")
    max_sentences = cache.settings.get("max_sentences") or None
    rows, doc_of, gold, texts = [], [], [], []
    for i, doc in enumerate(docs):
        sentences = doc.sentences[:max_sentences]
        texts += sentences
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
    if args.readouts:
        truth = [d.rationale for d in docs]
        print(f"\n| read-out of one encoder pass | probe precision %, C {' / '.join(f'{c:g}' for c in READOUT_CS)} |\n|---|---|")
        for name, x in readouts(cache, texts, doc_of).items():
            cells = [100 * rationale_metrics(probe_picks(x, doc_of, gold, args.folds, c), truth, n_sentences)["precision"]
                     for c in READOUT_CS]
            print(f"| {name} | {' / '.join(f'{v:.1f}' for v in cells)} |")


if __name__ == "__main__":
    main()
