"""Which loss picks better ICDA candidates? A dev-only check of ``icda.candidate_loss``.

For every iteration k >= 1 of every run of a finished workflow, this reads the iteration's
``choice.json`` and compares the candidate that was chosen with the one the *other* loss
(augmented dev set or original dev set; the ΔA and degeneration penalties are the same, paper
Algorithm 2) would have chosen, by their rationale precision on the original **dev** split
(keyword and synthetic ground truth; test ground truth is never read). It is a one-step check:
the run itself went on with the candidate that was chosen.

    python scripts/compare_candidate_losses.py results [--datasets synthetic restaurant connect]

Prints a Markdown table (one row per iteration where the two losses pick different candidates)
and a tally.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from icda.data.document import read_split
from icda.metrics import rationale_metrics
from icda.layout import CHOICE_FILE, iteration_dir, predictions_path
from icda.records import Choice, Predictions
from icda.model_selection import rechoose
from icda.guard import add_input, parse_arguments

OTHER = {"augmented_dev": "original_dev", "original_dev": "augmented_dev"}


def dev_precision(candidate_dir: Path, dev) -> float:
    """Rationale precision (fraction) of a candidate's predictions on the original dev split."""
    pred = Predictions.read(predictions_path(candidate_dir)).dev
    return rationale_metrics(pred.positions, [d.rationale for d in dev], [len(d.sentences) for d in dev])["precision"]


def build_parser() -> argparse.ArgumentParser:
    """The command line of :func:`main` (its path arguments declared for the output guard, icda.guard)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_input(parser, "results", kind="tree", help="the workflow's results/ folder")
    parser.add_argument("--datasets", nargs="+", default=["synthetic", "restaurant", "connect"])
    return parser


def main(argv: list[str] | None = None) -> None:
    args = parse_arguments(build_parser(), argv)
    workdir = args.results.resolve().parent  # candidate_dir paths are relative to the workflow's folder
    print("| dataset | run | iteration | chosen by | chosen: dev precision % | other loss picks | its dev precision % |")
    print("|---|---|---|---|---|---|---|")
    other_better = differ = 0
    for dataset in args.datasets:
        dev = read_split(args.results / dataset / "data", "dev")
        for run_dir in sorted(args.results.glob(f"{dataset}/run*")):
            k = 1
            while (iteration_dir(run_dir, k) / CHOICE_FILE).exists():
                choice = Choice.read(iteration_dir(run_dir, k) / CHOICE_FILE)
                alt = rechoose(choice, OTHER[choice.candidate_loss])
                if alt.name != choice.chosen.name:
                    chosen_p = dev_precision(workdir / choice.chosen.candidate_dir, dev)
                    alt_p = dev_precision(workdir / alt.candidate_dir, dev)
                    differ += 1
                    other_better += alt_p > chosen_p
                    print(f"| {dataset} | {run_dir.name} | {k} | {choice.candidate_loss} | {choice.chosen.name} "
                          f"{100 * chosen_p:.1f} | {alt.name} | {100 * alt_p:.1f} |")
                k += 1
    print(f"\nThe other loss picks a different candidate in {differ} iterations; its pick has the higher "
          f"dev precision in {other_better} of them.")


if __name__ == "__main__":
    main()
