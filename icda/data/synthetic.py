"""Synthetic multi-aspect restaurant reviews with a target aspect X1 and a spurious aspect X2.

The generator realises the paper's binary example (section "Iterative Counterfactual Data
Augmentation" and its appendix) as text: the label Y is uniform on {0, 1} (every split is
balanced); the sentence about the target aspect X1 (``food``) has the sentiment of Y with
probability ``p_x1``, the sentence about the spurious aspect X2 (``service``) with probability
``p_x2``, independently given Y; every other aspect gets a random sentiment. Because Y is
uniform and the noise symmetric, ``p(Y=y | X1=y) = p_x1`` and ``p(Y=y | X2=y) = p_x2``; the
defaults are the paper's ``p(Y1|X1) = 0.9`` and ``p(Y1|X2) = 0.85``. X1 is thus the best single predictor of Y, yet X2 is
nearly as good: the setting in which a rationale model can lock onto the spurious aspect. The
ground-truth rationale is the index of the X1 sentence.

Each aspect sentence is drawn uniformly from a bank of phrasings × aspect nouns × adjectives of
its polarity (:data:`SENTENCE_BANK`), so a sentence encoder sees lexical variety; documents also
hold neutral filler sentences, and the sentence order is shuffled so that the position of the
target varies.

The shortcuts real reviews have are options: an overall-verdict sentence (:data:`VERDICTS`,
no aspect noun) at the start, the end or either, whose sentiment agrees with the label with
probability ``p_verdict`` (a positional shortcut: the verdict sits where real reviews put it),
and documents of ``min_sentences`` to ``max_sentences`` sentences. By the paper's binary theory
MMI selects the most informative sentence: the verdict once ``p_verdict > p_x1``, the target
aspect below that.

With ``n_classes`` C > 2 the same example has C classes (the paper's N-class generalisation): Y
is uniform on {0, …, C−1}; every aspect sentence expresses one of C ordered values
(:data:`LEVELS`: e.g. negative, neutral, positive for C = 3; very negative … very positive for
C = 5); the X1 sentence expresses Y with probability ``p_x1`` and otherwise one of the other C − 1
values uniformly, the same for X2 with ``p_x2``, so again ``p(Y=y | X1=y) = p_x1`` and
``p(Y=y | X2=y) = p_x2``; other aspects take a uniform value. C = 2 gives exactly the binary
documents (the same random draws).
"""

from __future__ import annotations

import random
from itertools import product

from icda.data.document import Document

#: aspects in order: the first is the target X1, the second the spurious X2; ``n_aspects`` takes
#: the first n. Each: (nouns, positive adjectives, negative adjectives); a noun fits every
#: adjective of its aspect and appears in no other aspect.
ASPECTS: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "food": (
        ("food", "main course", "appetizer", "pasta"),
        ("delicious", "flavorful", "superb", "fresh and tasty", "wonderfully seasoned"),
        ("bland", "tasteless", "overcooked", "stale", "greasy and dull"),
    ),
    "service": (
        ("service", "staff", "waiter", "hostess"),
        ("friendly", "attentive", "welcoming", "helpful", "warm and professional"),
        ("rude", "slow", "inattentive", "unfriendly", "dismissive"),
    ),
    "price": (
        ("bill", "check", "price tag", "cost"),
        ("reasonable", "fair", "affordable", "modest", "easy on the wallet"),
        ("steep", "outrageous", "unreasonable", "excessive", "far too high"),
    ),
    "ambience": (
        ("atmosphere", "decor", "dining room", "lighting"),
        ("cozy", "charming", "relaxing", "lovely", "inviting"),
        ("gloomy", "noisy", "dreary", "unpleasant", "harsh and cold"),
    ),
    "location": (
        ("location", "neighborhood", "street", "surrounding area"),
        ("convenient", "easy to find", "pleasant", "quiet and safe", "well connected"),
        ("inconvenient", "hard to find", "sketchy", "run-down", "remote"),
    ),
    "cleanliness": (
        ("table", "restroom", "floor", "cutlery"),
        ("spotless", "clean", "tidy", "immaculate", "well kept"),
        ("dirty", "sticky", "filthy", "grimy", "messy"),
    ),
    "drinks": (
        ("wine", "coffee", "cocktail", "lemonade"),
        ("refreshing", "excellent", "smooth", "delightful", "perfectly made"),
        ("watery", "flat", "sour", "lukewarm", "awful"),
    ),
    "wait": (
        ("wait", "wait time", "wait for a table", "line at the door"),
        ("short", "quick", "painless", "bearable", "surprisingly brief"),
        ("endless", "far too long", "frustrating", "exhausting", "absurdly long"),
    ),
}

#: phrasings of an aspect sentence
FRAMES: tuple[str, ...] = (
    "The {noun} was {adj}.",
    "I found the {noun} {adj}.",
    "Honestly, the {noun} was {adj}.",
    "We all agreed that the {noun} was {adj}.",
    "As for the {noun}, it was {adj}.",
    "The {noun} was {adj}, as far as I could tell.",
)

#: neutral sentences (no aspect, no sentiment)
FILLER: tuple[str, ...] = (
    "We visited on a Friday evening.",
    "I went there with two colleagues after work.",
    "It was my first time at this place.",
    "We had booked a table for four.",
    "The restaurant opened a few months ago.",
    "My sister picked the place.",
    "It was a birthday dinner for a friend.",
    "We came in after a movie.",
    "I had heard about it from a neighbor.",
    "We stayed for about an hour and a half.",
    "It was a rainy Tuesday.",
    "We were a group of six.",
    "I ordered what the waitress recommended that day.",
    "We arrived around seven o'clock.",
    "This was our second visit this year.",
    "My partner and I went for lunch.",
    "We sat near the window.",
    "I paid by card.",
    "The place was about half full.",
    "We walked there from the station.",
)


#: overall verdicts, by polarity: no aspect noun, so never a ground-truth rationale
_VERDICT_FRAMES = ("Overall, it was", "All in all, it was", "In short, it was", "To sum up, it was")
VERDICTS: dict[int, tuple[str, ...]] = {
    polarity: tuple(f"{frame} {ending}" for frame, ending in product(_VERDICT_FRAMES, endings))
    for polarity, endings in (
        (1, ("a great evening.", "a wonderful experience.", "a visit worth repeating.",
             "one of our best nights out.", "well worth it.")),
        (0, ("a disappointing evening.", "a miserable experience.", "a visit not worth repeating.",
             "one of our worst nights out.", "not worth it.")),
    )
}

VERDICT_POSITIONS = ("start", "end", "either")


def _bank() -> dict[tuple[str, int], tuple[str, ...]]:
    bank = {}
    for aspect, (nouns, positive, negative) in ASPECTS.items():
        for polarity, adjectives in ((1, positive), (0, negative)):
            bank[aspect, polarity] = tuple(
                frame.format(noun=noun, adj=adj) for frame, noun, adj in product(FRAMES, nouns, adjectives)
            )
    return bank


#: every aspect sentence, by (aspect, polarity); polarity 1 positive, 0 negative
SENTENCE_BANK: dict[tuple[str, int], tuple[str, ...]] = _bank()

#: the values an aspect sentence expresses with C classes, class 0 first: (polarity 0/1, or None
#: for neutral; whether intensified). Two classes are the binary bank's negative and positive.
LEVELS: dict[int, tuple[tuple[int | None, bool], ...]] = {
    2: ((0, False), (1, False)),
    3: ((0, False), (None, False), (1, False)),
    4: ((0, True), (0, False), (1, False), (1, True)),
    5: ((0, True), (0, False), (None, False), (1, False), (1, True)),
}
#: adjectives of a neutral aspect value (any aspect)
NEUTRAL = ("average", "ordinary", "acceptable", "unremarkable", "neither good nor bad")
#: words that intensify an adjective (the extreme values of C = 4, 5)
INTENSIFIERS = ("extremely", "truly", "utterly", "incredibly")


def sentence_bank(n_classes: int) -> dict[tuple[str, int], tuple[str, ...]]:
    """Every aspect sentence by (aspect, value 0 … C−1) for C = ``n_classes`` classes
    (:data:`LEVELS`; two classes: :data:`SENTENCE_BANK`, value 0 negative, 1 positive).

    Raises:
        KeyError: ``n_classes`` is not a key of :data:`LEVELS`.
    """
    if n_classes == 2:
        return SENTENCE_BANK
    bank = {}
    for aspect, (nouns, positive, negative) in ASPECTS.items():
        for value, (polarity, intense) in enumerate(LEVELS[n_classes]):
            adjectives = NEUTRAL if polarity is None else (negative, positive)[polarity]
            if intense:
                adjectives = tuple(f"{word} {adj}" for word, adj in product(INTENSIFIERS, adjectives))
            bank[aspect, value] = tuple(
                frame.format(noun=noun, adj=adj) for frame, noun, adj in product(FRAMES, nouns, adjectives))
    return bank


MIN_SENTENCES = 5
MAX_SENTENCES = 9


#: the most documents a synthetic split may have (a typo such as 1e9 would run for days)
MAX_DOCUMENTS = 1_000_000
#: the most sentences a synthetic document may have beside its aspects
MAX_DOCUMENT_SENTENCES = 200


def check_synthetic(args: dict) -> tuple[str, str, str] | None:
    """The first problem of :func:`generate_synthetic`'s keyword ``args`` (as a config gives them:
    counts must be integers, not booleans or strings; probabilities finite numbers), as ``(key,
    problem, fix)``, or None. ``generate_synthetic`` raises for the same."""
    import inspect

    params = inspect.signature(generate_synthetic).parameters
    values = {k: p.default for k, p in params.items() if p.default is not inspect.Parameter.empty} | dict(args)

    def integer(x):
        return isinstance(x, int) and not isinstance(x, bool)

    for key in ("n_train", "n_dev", "n_test"):
        if key in values and not (integer(values[key]) and 0 <= values[key] <= MAX_DOCUMENTS):
            return key, f"{values[key]!r} is not a number of documents", f"give an integer from 0 to {MAX_DOCUMENTS:,}"
    for key in ("p_x1", "p_x2", "p_verdict"):
        x = values[key]
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not 0 <= x <= 1:  # NaN fails too
            return key, f"{x!r} is not a probability", "give a number from 0 to 1"
    if not (integer(values["n_aspects"]) and 2 <= values["n_aspects"] <= len(ASPECTS)):
        return "n_aspects", f"{values['n_aspects']!r} is not a number of aspects", f"give an integer from 2 to {len(ASPECTS)}"
    if not integer(values["seed"]) or values["seed"] < 0:
        return "seed", f"{values['seed']!r} is not a seed", "give an integer >= 0"
    if values["verdict"] is not None and values["verdict"] not in VERDICT_POSITIONS:
        return "verdict", f"{values['verdict']!r} is not a verdict position", f"give null or one of {', '.join(VERDICT_POSITIONS)}"
    for key in ("min_sentences", "max_sentences"):
        if not (integer(values[key]) and 1 <= values[key] <= MAX_DOCUMENT_SENTENCES):
            return key, f"{values[key]!r} is not a number of sentences", f"give an integer from 1 to {MAX_DOCUMENT_SENTENCES}"
    if values["min_sentences"] > values["max_sentences"]:
        return ("max_sentences", f"{values['max_sentences']} is below min_sentences {values['min_sentences']} "
                f"(default {MIN_SENTENCES})", "give max_sentences >= min_sentences")
    return None


def generate_synthetic(
    n_train: int,
    n_dev: int,
    n_test: int,
    p_x1: float = 0.9,
    p_x2: float = 0.85,
    n_aspects: int = 5,
    seed: int = 0,
    verdict: str | None = None,
    p_verdict: float = 0.8,
    min_sentences: int = MIN_SENTENCES,
    max_sentences: int = MAX_SENTENCES,
    n_classes: int = 2,
) -> dict[str, list[Document]]:
    """Generate the synthetic dataset (module docstring: the paper's binary example as text).

    Args:
        n_train, n_dev, n_test: documents per split.
        p_x1: probability that the target aspect's sentence (X1, ``food``) has the label's
            sentiment; the paper's p(Y1|X1) = 0.9.
        p_x2: the same for the spurious aspect (X2, ``service``); the paper's p(Y1|X2) = 0.85.
        n_aspects: aspects per document, the first ``n_aspects`` of :data:`ASPECTS` (2 to 8);
            every document has one sentence per aspect plus neutral filler sentences, for
            ``max(min_sentences, n_aspects)`` to ``max(max_sentences, n_aspects)`` sentences in
            shuffled order (plus the verdict, if any).
        seed: the random seed; each split draws from its own stream, so a split does not change
            when the sizes of the others do.
        verdict: None (no verdict sentence), or where an overall verdict goes: ``"start"``,
            ``"end"`` or ``"either"`` (each document picks one of the two at random).
        p_verdict: probability that the verdict's sentiment is the label's.
        min_sentences, max_sentences: the range of aspect + filler sentences per document.
        n_classes: the number C of classes, 2 to 5 (module docstring); the verdict needs C = 2.

    Returns:
        ``{"train": [...], "dev": [...], "test": [...]}``; ids ``"<split>-<i>"``; labels 0 … C−1,
        uniform: a random permutation of equal counts (the lower classes one more each when C
        does not divide a size), so every split is balanced; ``rationale`` = the index of the X1 sentence, in every split (the model never
        trains on it; train/dev carry it for diagnostics).

    Raises:
        ValueError: a size is negative, a probability is outside [0, 1], ``n_aspects`` is not
            in 2..8, ``verdict`` is unknown, or the sentence range is empty; ``n_classes`` is not in
            2..5, or a verdict is asked for with more than two classes.
    """
    for name, n in (("n_train", n_train), ("n_dev", n_dev), ("n_test", n_test)):
        if n < 0:
            raise ValueError(f"{name} must be >= 0, got {n}")
    if verdict is not None and verdict not in VERDICT_POSITIONS:
        raise ValueError(f"verdict must be one of {VERDICT_POSITIONS} or None, got {verdict!r}")
    if not 1 <= min_sentences <= max_sentences:
        raise ValueError(f"need 1 <= min_sentences <= max_sentences, got {min_sentences}, {max_sentences}")
    for name, p in (("p_x1", p_x1), ("p_x2", p_x2), ("p_verdict", p_verdict)):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"{name} must be in [0, 1], got {p}")
    if not 2 <= n_aspects <= len(ASPECTS):
        raise ValueError(f"n_aspects must be in 2..{len(ASPECTS)}, got {n_aspects}")
    if n_classes not in LEVELS:
        raise ValueError(f"n_classes must be in {min(LEVELS)}..{max(LEVELS)}, got {n_classes}")
    if verdict is not None and n_classes != 2:
        raise ValueError(f"the verdict sentence has two polarities; verdict needs n_classes=2, got {n_classes}")
    aspects = list(ASPECTS)[:n_aspects]
    bank = sentence_bank(n_classes)
    out = {}
    for split, n in (("train", n_train), ("dev", n_dev), ("test", n_test)):
        rng = random.Random(f"icda-synthetic:{seed}:{split}")
        labels = [i % n_classes for i in range(n)]
        rng.shuffle(labels)
        out[split] = [
            _review(rng, f"{split}-{i}", y, aspects, p_x1, p_x2, verdict, p_verdict, min_sentences, max_sentences,
                    n_classes, bank)
            for i, y in enumerate(labels)
        ]
    return out


def _value(rng: random.Random, label: int, p: float, n_classes: int) -> int:
    """The label with probability ``p``, else one of the other classes uniformly (binary: the
    other class, no further draw)."""
    if rng.random() < p:
        return label
    if n_classes == 2:
        return 1 - label
    return rng.choice([c for c in range(n_classes) if c != label])


def _review(
    rng: random.Random, doc_id: str, label: int, aspects: list[str], p_x1: float, p_x2: float,
    verdict: str | None, p_verdict: float, min_sentences: int, max_sentences: int, n_classes: int,
    bank: dict[tuple[str, int], tuple[str, ...]],
) -> Document:
    n_filler = rng.randint(max(0, min_sentences - len(aspects)), max(0, max_sentences - len(aspects)))
    sentences = []  # (is_target, text)
    for k, aspect in enumerate(aspects):
        if k == 0:
            value = _value(rng, label, p_x1, n_classes)
        elif k == 1:
            value = _value(rng, label, p_x2, n_classes)
        else:
            value = rng.randrange(n_classes)
        sentences.append((k == 0, rng.choice(bank[aspect, value])))
    sentences.extend((False, s) for s in rng.sample(FILLER, n_filler))
    rng.shuffle(sentences)
    if verdict is not None:
        polarity = _value(rng, label, p_verdict, 2)
        where = verdict if verdict != "either" else rng.choice(("start", "end"))
        sentences.insert(0 if where == "start" else len(sentences), (False, rng.choice(VERDICTS[polarity])))
    target = frozenset(i for i, (is_target, _) in enumerate(sentences) if is_target)
    return Document(doc_id, label, tuple(s for _, s in sentences), target)
