"""Documents a split repeats, and documents two splits share: exact after normalising case and
whitespace, and near-duplicates found by MinHash (the data audit, ``python -m icda audit``, and
``prepare``'s ``drop_test_overlap``).

A document's **key** is its sentences joined by a space, lower-cased, with every run of
whitespace made one space (:func:`normal_text`): two documents with the same key are the same
text whatever their sentence splits, case or spacing. A **near-duplicate** of a test document is
a document whose set of word 3-shingles (of the key) has a Jaccard similarity of at least
``threshold`` with the test document's, without the same key. Candidates are found with
datasketch's MinHash LSH (:data:`NUM_PERM` permutations, seed :data:`MINHASH_SEED`) and each is
then checked with the exact Jaccard similarity of the shingle sets, so a pair reported is above
the threshold (LSH may miss a pair close to it, rarely).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Sequence

from icda.data.document import Document

#: MinHash permutations of the near-duplicate search
NUM_PERM = 128
#: seed of the MinHash permutations (fixed: the same documents give the same candidates)
MINHASH_SEED = 1
#: words per shingle of the near-duplicate similarity
SHINGLE = 3


def normal_text(doc: Document) -> str:
    """The document's key: sentences joined by a space, lower-cased, whitespace runs made one space."""
    return " ".join(" ".join(doc.sentences).lower().split())


def exact_duplicates(docs: Iterable[Document]) -> int:
    """How many documents repeat the key of an earlier one (a text held three times counts 2)."""
    counts = Counter(normal_text(doc) for doc in docs)
    return sum(n - 1 for n in counts.values())


def shingles(text: str) -> set[str]:
    """The word 3-shingles of a key (a text of fewer words: the text itself)."""
    words = text.split()
    if len(words) < SHINGLE:
        return {text}
    return {" ".join(words[i:i + SHINGLE]) for i in range(len(words) - SHINGLE + 1)}


def jaccard(a: set, b: set) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


@dataclass(frozen=True)
class Shared:
    """Which documents of ``docs`` share their text with a document of ``others``
    (:func:`shared_documents`): indices into ``docs``."""

    exact: frozenset[int]
    near: frozenset[int]

    @property
    def all(self) -> frozenset[int]:
        return self.exact | self.near


def shared_documents(docs: Sequence[Document], others: Sequence[Document],
                     threshold: float | None) -> Shared:
    """The documents of ``docs`` with the key of a document of ``others`` (``exact``), and those
    without, whose shingles have a Jaccard similarity of at least ``threshold`` with those of a
    document of ``others`` (``near``; None: no near-duplicate search).

    Raises:
        ValueError: ``threshold`` is not in (0, 1).
    """
    return overlap(docs, others, threshold)[0]


def overlap(docs: Sequence[Document], others: Sequence[Document],
            threshold: float | None) -> tuple[Shared, Shared]:
    """:func:`shared_documents` both ways, each document hashed once: (the documents of ``docs``
    found in ``others``, the documents of ``others`` found in ``docs``).

    Raises:
        ValueError: ``threshold`` is not in (0, 1).
    """
    keys = [normal_text(doc) for doc in docs]
    other_keys = [normal_text(doc) for doc in others]
    key_set, other_set = set(keys), set(other_keys)
    exact = frozenset(i for i, key in enumerate(keys) if key in other_set)
    other_exact = frozenset(j for j, key in enumerate(other_keys) if key in key_set)
    if threshold is None or not docs or not others:
        return Shared(exact, frozenset()), Shared(other_exact, frozenset())
    if not 0 < threshold < 1:
        raise ValueError(f"near-duplicate threshold {threshold} is not in (0, 1)")
    from datasketch import MinHashLSH

    unique, unique_other = list(dict.fromkeys(keys)), list(dict.fromkeys(other_keys))
    # candidates at a threshold of at most 0.9 (above it LSH gets a single band); each candidate
    # is checked against the real threshold
    lsh = MinHashLSH(threshold=min(threshold, 0.9), num_perm=NUM_PERM)
    other_hashes, other_sets = _minhashes(unique_other)
    for j, minhash in enumerate(other_hashes):
        lsh.insert(j, minhash)
    near_keys, near_other_keys = set(), set()
    for key, minhash, sh in zip(unique, *_minhashes(unique)):
        for j in lsh.query(minhash):
            if unique_other[j] != key and jaccard(sh, other_sets[j]) >= threshold:
                near_keys.add(key)
                near_other_keys.add(unique_other[j])
    near = frozenset(i for i, key in enumerate(keys) if key in near_keys and i not in exact)
    other_near = frozenset(j for j, key in enumerate(other_keys) if key in near_other_keys and j not in other_exact)
    return Shared(exact, near), Shared(other_exact, other_near)


def _minhashes(keys: list[str]):
    from datasketch import MinHash

    sets = [shingles(key) for key in keys]
    encoded = [[s.encode("utf-8") for s in sh] for sh in sets]
    return MinHash.bulk(encoded, num_perm=NUM_PERM, seed=MINHASH_SEED), sets
