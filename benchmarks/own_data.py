"""Own-style data: JSONL review files as a researcher brings them, with a known rationale.

Each review has 4 sentences in shuffled order: a food sentence that sets the label every time
(``--food-phrasings`` phrasings a class), a parking sentence that agrees with the label with
probability ``--p-shortcut`` (otherwise another class's; ``--shortcut-phrasings`` phrasings a
class: a shortcut with few phrasings is easy to learn), and 2 neutral fillers. Labels 0, 1, 2
(negative, mixed, positive); every split is class-balanced; dev and test carry the food
sentence's index as ``rationale``. It writes ``train.jsonl``, ``dev.jsonl`` and ``test.jsonl``
into ``--out`` (a new folder) and nothing else; the loop's account on them is
docs/experiments/own-data.md.

    python benchmarks/own_data.py --out ../bench/data/own300 --n-train 300 --seed 0
"""

from __future__ import annotations

import argparse
import json
import random
import sys

from icda.guard import add_output, parse_arguments

FOOD = {
    0: ["The food was cold and bland.", "Our dishes arrived burnt and tasteless.", "The pasta was soggy and stale.",
        "Every plate we ordered was greasy and awful.", "The soup tasted like dishwater."],
    1: ["The food was fine, nothing special.", "Our dishes were edible but forgettable.",
        "The pasta was okay, neither good nor bad.", "Some plates were decent, others were dull.",
        "The soup was passable."],
    2: ["The food was delicious and fresh.", "Our dishes were wonderfully seasoned.", "The pasta was superb.",
        "Every plate we ordered was a delight.", "The soup was rich and flavorful."],
}
PARKING = {
    0: ["Parking was a nightmare.", "We could not find anywhere to park."],
    1: ["Parking took a while but we found a spot.", "The parking lot was half full."],
    2: ["Parking was easy and free.", "There was plenty of parking right outside."],
}
FILLERS = ["We went there on a Tuesday evening.", "It was my sister's birthday.", "We had booked a table for four.",
           "The restaurant is near the station.", "We arrived around seven.", "My friend had recommended it.",
           "It was our first visit.", "We sat by the window."]
CLASSES = (0, 1, 2)


def review(label: int, rng: random.Random, p_shortcut: float, food: int, shortcut: int) -> dict:
    """One review of class ``label``: {"label", "sentences" (4), "rationale" ([index of the food
    sentence])}."""
    other = label if rng.random() < p_shortcut else rng.choice([c for c in CLASSES if c != label])
    sentences = [("food", rng.choice(FOOD[label][:food])), ("parking", rng.choice(PARKING[other][:shortcut])),
                 *(("filler", s) for s in rng.sample(FILLERS, 2))]
    rng.shuffle(sentences)
    return {"label": label, "sentences": [s for _, s in sentences],
            "rationale": [i for i, (kind, _) in enumerate(sentences) if kind == "food"]}


def split(n: int, rng: random.Random, p_shortcut: float, food: int, shortcut: int) -> list[dict]:
    """``n`` reviews, as equal a share of each class as ``n`` allows, in shuffled order."""
    docs = [review(CLASSES[i % len(CLASSES)], rng, p_shortcut, food, shortcut) for i in range(n)]
    rng.shuffle(docs)
    return docs


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_output(parser, "--out", kind="owned", required=True, help="a new folder for train/dev/test.jsonl")
    parser.add_argument("--n-train", type=int, default=300)
    parser.add_argument("--n-dev", type=int, default=60)
    parser.add_argument("--n-test", type=int, default=60)
    parser.add_argument("--p-shortcut", type=float, default=0.85, help="how often parking agrees with the label")
    parser.add_argument("--food-phrasings", type=int, default=5, choices=range(1, 6))
    parser.add_argument("--shortcut-phrasings", type=int, default=2, choices=range(1, 3))
    parser.add_argument("--seed", type=int, default=0)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parse_arguments(parser, argv)
    if min(args.n_train, args.n_dev, args.n_test) < len(CLASSES) or not 0 <= args.p_shortcut <= 1:
        parser.error(f"every split needs at least {len(CLASSES)} reviews and --p-shortcut lies in [0, 1]")
    if args.out.exists():
        parser.error(f"--out {args.out} exists: give a new folder (nothing is overwritten)")
    rng = random.Random(args.seed)
    args.out.mkdir(parents=True)
    for name, n in (("train", args.n_train), ("dev", args.n_dev), ("test", args.n_test)):
        docs = split(n, rng, args.p_shortcut, args.food_phrasings, args.shortcut_phrasings)
        with open(args.out / f"{name}.jsonl", "x", encoding="utf-8") as f:
            f.writelines(json.dumps(d) + "\n" for d in docs)
    print(f"{args.out}: {args.n_train} train, {args.n_dev} dev, {args.n_test} test reviews")
    return 0


if __name__ == "__main__":
    sys.exit(main())
