"""The degeneration guard (paper appendix "Avoiding Rationale Degeneration").

A degenerate rationale model signals the class through *where* it selects (e.g. the first
sentence for one class, any other for the other). On the correctly predicted dev documents of
each class, the selected index divided by the document's sentence count is binned into ten bins
of width 0.1; an epoch is degenerate when the two classes' normalised histograms differ by more
than ``threshold`` (0.2) in any bin, or when | |b1[0] − b1[1]| − |b0[0] − b0[1]| | > threshold
(the first/second-bin rule). With C > 2 classes both rules apply to every pair of classes: the
largest gap between any two classes' histograms decides. Bins use integer arithmetic: bin = (10 · index) // n, so that an
index i of an n-sentence document always lands in [i/n, (i+1)/n) exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

N_BINS = 10


def position_bins(positions: np.ndarray, n_sentences: np.ndarray) -> np.ndarray:
    """Histogram of selected positions.

    Args:
        positions: [M] 0-based selected sentence indices.
        n_sentences: [M] sentence counts of their documents (each > the position).

    Returns:
        [10] int counts; bin b holds positions with b/10 <= index/n < (b+1)/10.

    Raises:
        ValueError: a position is negative or not smaller than its sentence count.
    """
    positions = np.asarray(positions, dtype=np.int64)
    n_sentences = np.asarray(n_sentences, dtype=np.int64)
    if np.any(positions < 0) or np.any(positions >= n_sentences):
        raise ValueError("selected positions must satisfy 0 <= index < sentence count")
    bins = (N_BINS * positions) // n_sentences
    return np.bincount(bins, minlength=N_BINS)


@dataclass(frozen=True)
class DegenerationReport:
    degenerate: bool
    max_bin_gap: float  #: largest |h_j[b] − h_i[b]| over bins and pairs of classes i < j (normalised histograms)
    first_bins_gap: float  #: largest | |h_j[0] − h_j[1]| − |h_i[0] − h_i[1]| | over pairs i < j
    histograms: tuple[tuple[int, ...], ...]  #: raw counts of class 0, 1, … C−1


def check_histograms(*counts: np.ndarray, threshold: float = 0.2) -> DegenerationReport:
    """Apply both rules to the C >= 2 classes' position histograms (raw counts, [10] each, class 0
    first), every pair of classes; the report holds the largest gaps.

    A class with no correctly predicted document makes the model degenerate (the histograms
    cannot be compared, and such a model never predicts that class).
    """
    counts = [np.asarray(c) for c in counts]
    hist = tuple(tuple(int(x) for x in c) for c in counts)
    if any(c.sum() == 0 for c in counts):
        return DegenerationReport(True, 1.0, 1.0, hist)
    h = [c / c.sum() for c in counts]
    pairs = [(i, j) for j in range(len(h)) for i in range(j)]
    max_gap = max(float(np.max(np.abs(h[j] - h[i]))) for i, j in pairs)
    first_gap = max(float(abs(abs(h[j][0] - h[j][1]) - abs(h[i][0] - h[i][1]))) for i, j in pairs)
    return DegenerationReport(max_gap > threshold or first_gap > threshold, max_gap, first_gap, hist)


def check_degeneration(
    positions: Sequence[Sequence[int]],
    n_sentences: Sequence[int],
    labels: Sequence[int],
    predictions: Sequence[int],
    threshold: float = 0.2,
    n_classes: int = 2,
) -> DegenerationReport:
    """The guard on a labelled dev set of D documents.

    Args:
        positions: per document, its rationale positions.
        n_sentences: [D] real sentence counts.
        labels, predictions: [D] gold and predicted classes 0 … C−1.
        threshold: the paper's 0.2.
        n_classes: C.
    """
    counts = []
    for c in range(n_classes):
        pos, n = [], []
        for sel, size, y, p in zip(positions, n_sentences, labels, predictions):
            if y == c and p == c:
                pos.extend(sel)
                n.extend([size] * len(sel))
        counts.append(position_bins(np.array(pos, dtype=np.int64), np.array(n, dtype=np.int64)))
    return check_histograms(*counts, threshold=threshold)
