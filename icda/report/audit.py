"""The data audit table: every dataset's ``data_audit.json`` (:class:`icda.records.DataAudit`,
``python -m icda audit``) as one row per dataset and split, in ``data_audit.csv`` and
``data_audit.md`` (``python -m icda report audit``)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

import pandas as pd

from icda.io import atomic_path, atomic_write
from icda.records import DataAudit

#: the columns of :func:`audit_table`, in order
COLUMNS = ["dataset", "split", "documents", "labels", "annotated", "duplicates", "sentences_median",
           "sentences_p99", "cut_by_max_sentences", "share_cut_by_max_sentences", "sentences_seen",
           "over_max_tokens", "in_test_exact", "in_test_near", "in_train_exact", "in_train_near",
           "in_dev_exact", "in_dev_near", "near_duplicate_threshold", "max_sentences", "max_tokens",
           "encoder"]


def audit_table(audits: Iterable[DataAudit]) -> pd.DataFrame:
    """One row per dataset and split (train, dev, test; a dev carved out of train has none):
    the split's counts, ``labels`` as ``class: documents`` pairs, the share of documents cut by
    ``max_sentences``, and ``in_<b>_exact``/``in_<b>_near``, the documents of the split that
    share their text with split b (empty where the pair is not counted)."""
    rows = []
    for audit in sorted(audits, key=lambda a: a.dataset):
        for split in ("train", "dev", "test"):
            if split not in audit.splits:
                continue
            counts = audit.splits[split]
            row = {"dataset": audit.dataset, "split": split,
                   **{k: v for k, v in counts.items() if k != "labels"},
                   "labels": ", ".join(f"{k}: {v}" for k, v in counts["labels"].items()),
                   "share_cut_by_max_sentences": (counts["cut_by_max_sentences"] / counts["documents"]
                                                  if counts["documents"] else 0.0),
                   "near_duplicate_threshold": audit.near_duplicate_threshold,
                   "max_sentences": audit.max_sentences, "max_tokens": audit.max_tokens,
                   "encoder": audit.encoder}
            for other in ("train", "dev", "test"):
                shared = audit.shared.get(f"{split}_{other}")
                row[f"in_{other}_exact"] = shared["exact"] if shared else None
                row[f"in_{other}_near"] = shared["near"] if shared else None
            rows.append(row)
    return pd.DataFrame(rows, columns=COLUMNS).astype({c: "Int64" for c in COLUMNS if c.startswith("in_")})


def markdown(table: pd.DataFrame) -> str:
    """The table as Markdown, with a paragraph saying what each column counts."""
    thresholds = sorted(set(table["near_duplicate_threshold"]))
    lengths = sorted({(r.max_sentences, r.max_tokens, r.encoder) for r in table.itertuples()})
    text = ["# Data audit", "",
            "Each dataset's splits as read, before preparation (a dev split carved out of train has no row). "
            "duplicates: documents repeating an earlier document of the split (same text after lower-casing "
            "and collapsing whitespace). sentences: per document, median and 99th percentile; cut: documents "
            "with more than encoder.max_sentences sentences (the model never sees the rest). over max_tokens: "
            "sentences, among those the model sees, with more than encoder.max_tokens wordpieces of the "
            "encoder's tokenizer ([CLS] and [SEP] included), whose middle the encoder cuts. "
            "in <split>: documents of this split whose text is also a document of that split: exact (case "
            "and whitespace normalised) + near-duplicates (the others whose word 3-shingles have a Jaccard "
            f"similarity of at least {', '.join(f'{t:g}' for t in thresholds)} with one, found by MinHash "
            "LSH and checked exactly; datasets.<name>.near_duplicate_threshold). "
            "datasets.<name>.drop_test_overlap: true removes the train and dev documents found in test "
            "(exact and near) before preparation.", "",
            "Encoder: " + "; ".join(f"{enc} (max_sentences {ms}, max_tokens {mt})" for ms, mt, enc in lengths), ""]

    def pair(exact, near):
        return "–" if pd.isna(exact) else f"{exact} + {near}"

    shown = pd.DataFrame({
        "dataset": table["dataset"], "split": table["split"], "documents": table["documents"],
        "labels": table["labels"], "annotated": table["annotated"], "duplicates": table["duplicates"],
        "sentences median / p99": [f"{m:g} / {p:g}" for m, p in zip(table["sentences_median"], table["sentences_p99"])],
        "cut by max_sentences": [f"{n} ({s:.1%})" for n, s in zip(table["cut_by_max_sentences"],
                                                                   table["share_cut_by_max_sentences"])],
        "over max_tokens": [f"{n} of {s}" for n, s in zip(table["over_max_tokens"], table["sentences_seen"])],
        **{f"in {other} (exact + near)": [pair(e, n) for e, n in zip(table[f"in_{other}_exact"],
                                                                      table[f"in_{other}_near"])]
           for other in ("train", "dev", "test")},
    })
    text.append(shown.to_markdown(index=False) if len(shown) else "No dataset.")
    return "\n".join(text) + "\n"


def write_audit_table(paths: Iterable[str | Path], out_dir: str | Path) -> list[Path]:
    """Read each ``data_audit.json`` and write ``data_audit.csv`` and ``data_audit.md`` into
    ``out_dir``; return the paths.

    Raises:
        DataError: a file is missing or not a data audit record.
    """
    out_dir = Path(out_dir)
    table = audit_table(DataAudit.read(path) for path in paths)
    written = [out_dir / "data_audit.csv", out_dir / "data_audit.md"]
    with atomic_path(written[0]) as tmp:
        table.to_csv(tmp, index=False)
    with atomic_write(written[1]) as fh:
        fh.write(markdown(table))
    return written
