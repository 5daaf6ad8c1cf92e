"""The dev-only check of docs/sweep/stop_rule.md: stop rules and final choices of the ICDA loop.

Reads a finished workflow whose runs went on to ``--horizon`` iterations with a trained warm
start (``icda: {stop_rule: rationales, stop_unchanged: false, max_iters: H}``) and

1. counts how often the paper's stop test would have fired on the epoch −1 artefact: the warm
   start's untrained evaluation (epoch −1) has a lower augmented-dev loss than each of its trained
   epochs, and the unimproved warm start would then have won the iteration;
2. prints per run and iteration the ground-truth-free signals (ΔA, original dev loss and
   accuracy of the chosen selector) next to its **dev** rationale precision;
3. replays every rule of the plan through :func:`icda.model_selection.convergence` (the code the
   workflow runs) on these trajectories and scores it by the dev precision of the iteration it
   takes as ICDA. Ground truth is read only for that score; test files are never opened.

    python scripts/stop_rule_check.py results --datasets restaurant connect synthetic_small
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics

from icda.data.document import read_split
from icda.metrics import rationale_metrics
from icda.layout import CHOICE_FILE, history_path, iteration_dir
from icda.records import Choice, History
from icda.model_selection import accuracy, choose, convergence, cross_entropy
from icda.settings import IcdaSettings
from icda.guard import add_input, parse_arguments

#: the plan's stop rules: name -> IcdaSettings fields (stop_rule: rationales)
STOPS = {
    "S0": {},
    "S1(0.02)": {"stop_delta_a": 0.02},
    "S1(0.05)": {"stop_delta_a": 0.05},
    "S1(0.10)": {"stop_delta_a": 0.10},
    "S2(1)": {"stop_patience": 1},
    "S2(2)": {"stop_patience": 2},
    "S3": {"stop_delta_a": 0.05, "stop_patience": 2},
    "S4(1)": {"stop_patience": 1, "patience_on": "delta_a"},
    "S4(2)": {"stop_patience": 2, "patience_on": "delta_a"},
}
CHOICES = {"C0": "last", "C1": "original_dev_loss", "C2": "original_dev_accuracy", "C3": "delta_a"}
HORIZONS = (4, 6)


def with_accuracy(choice: Choice, dev_labels: list[int]) -> Choice:
    """``choice`` with its chosen candidate's original dev accuracy filled in from its
    predictions.json (choices written before the field existed lack it)."""
    prob = choice.predictions().dev.prob_positive
    chosen = dataclasses.replace(choice.chosen, original_dev_accuracy=accuracy(prob, dev_labels),
                                 original_dev_loss=cross_entropy(prob, dev_labels))
    return dataclasses.replace(choice, chosen=chosen)


def paper_stop_fires(choice: Choice, previous: Choice) -> tuple[bool, bool]:
    """(epoch −1 would be the warm start's kept checkpoint under the paper's rule, and the
    unimproved warm start would then have won the iteration, ending the loop)."""
    warm = next(c for c in choice.candidates if c.warm_start)
    epochs = History.read(history_path(warm.candidate_dir)).epochs
    initial = next(e for e in epochs if e["epoch"] == -1)
    trained = [e["dev_loss"] for e in epochs if e["epoch"] >= 0 and not e["degenerate"]]
    kept_initial = not trained or initial["dev_loss"] < min(trained)
    if not kept_initial:
        return False, False
    unimproved = dataclasses.replace(warm, dev_loss=initial["dev_loss"], best_epoch=-1, delta_A=0.0,
                                     original_dev_loss=previous.chosen.original_dev_loss)
    rows = [unimproved if c.warm_start else c for c in choice.candidates]
    pick, _ = choose(rows, choice.iteration, choice.candidate_loss, choice.previous_delta_A)
    return True, pick.warm_start


def replay(choices: list[Choice], icda: IcdaSettings) -> tuple[int, int]:
    """(the iteration the loop stops after, the iteration taken as ICDA) under ``icda``."""
    decision = None
    for choice in choices[: icda.max_iters + 1]:
        decision = convergence(choice, icda, decision)
        if decision.stop:
            break
    return decision.iteration, decision.final_iteration


def build_parser() -> argparse.ArgumentParser:
    """The command line of :func:`main` (its path arguments declared for the output guard, icda.guard)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_input(parser, "results", kind="tree", help="the workflow's results/ folder (run from its parent)")
    parser.add_argument("--datasets", nargs="+", default=["restaurant", "connect", "synthetic_small"])
    parser.add_argument("--horizon", type=int, default=6, help="the iteration every run reached")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = parse_arguments(build_parser(), argv)

    runs = {}  # (dataset, run) -> (choices with accuracy, dev precision per iteration)
    kept_initial = fired = total = 0
    print("## Per run: ΔA, original dev loss, original dev accuracy, dev precision % per iteration\n")
    print("| dataset | run | ΔA | original dev loss | original dev accuracy | dev precision % |")
    print("|---|---|---|---|---|---|")
    for dataset in args.datasets:
        dev = read_split(args.results / dataset / "data", "dev")
        labels = [d.label for d in dev]
        for run_dir in sorted(args.results.glob(f"{dataset}/run*")):
            choices = [with_accuracy(Choice.read(iteration_dir(run_dir, k) / CHOICE_FILE), labels)
                       for k in range(args.horizon + 1)]
            precision = []
            for choice in choices:
                pred = choice.predictions().dev
                precision.append(rationale_metrics(pred.positions, [d.rationale for d in dev],
                                                   [len(d.sentences) for d in dev])["precision"])
            for k in range(1, len(choices)):
                kept, won = paper_stop_fires(choices[k], choices[k - 1])
                kept_initial += kept
                fired += won
                total += 1
            runs[dataset, run_dir.name] = (choices, precision)
            c = [ch.chosen for ch in choices]
            print(f"| {dataset} | {run_dir.name} | " + ", ".join(f"{x.delta_A:.3f}" for x in c[1:])
                  + " | " + ", ".join(f"{x.original_dev_loss:.3f}" for x in c)
                  + " | " + ", ".join(f"{x.original_dev_accuracy:.3f}" for x in c)
                  + " | " + " → ".join(f"{100 * p:.1f}" for p in precision) + " |")
    print(f"\nIn {total} iterations k ≥ 1, the warm start's epoch −1 had the lowest augmented-dev loss "
          f"of its epochs in {kept_initial}; in {fired} the unimproved warm start would then have won "
          "the iteration, which ends the loop under the paper's rule.\n")

    print("## Rules (dev precision % of the iteration taken as ICDA, mean over runs)\n")
    header = "| rule | H | choice | " + " | ".join(args.datasets) + " | mean | mean iterations | runs below MMI |"
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    rows = []
    for h in HORIZONS:
        for stop_name, fields in STOPS.items():
            for choice_name, final_choice in CHOICES.items():
                icda = IcdaSettings(stop_rule="rationales", stop_unchanged=False, max_iters=h,
                                    final_choice=final_choice, **fields)
                per_dataset, iterations, below = [], [], 0
                for dataset in args.datasets:
                    scores = []
                    for (name, _), (choices, precision) in runs.items():
                        if name != dataset:
                            continue
                        stop, taken = replay(choices, icda)
                        iterations.append(stop)
                        scores.append(precision[taken])
                        below += precision[taken] < precision[0]
                    per_dataset.append(100 * statistics.mean(scores))
                rows.append((statistics.mean(per_dataset), statistics.mean(iterations), stop_name, h, choice_name,
                             per_dataset, below))
                print(f"| {stop_name} | {h} | {choice_name} | " + " | ".join(f"{p:.1f}" for p in per_dataset)
                      + f" | {statistics.mean(per_dataset):.1f} | {statistics.mean(iterations):.2f} | {below} |")
    best = max(r[0] for r in rows)
    near = [r for r in rows if r[0] >= best - 0.5]
    order = {(s, h, c): i for i, (s, h, c) in enumerate((s, h, c) for h in HORIZONS for s in STOPS for c in CHOICES)}
    winner = min(near, key=lambda r: (r[1], order[r[2], r[3], r[4]]))
    print(f"\nBest mean {best:.1f}; within 0.5 points: {len(near)} rules; the fewest mean iterations, then "
          f"the earlier rule: **{winner[2]}, H = {winner[3]}, {winner[4]}** (mean {winner[0]:.1f}, "
          f"{winner[1]:.2f} iterations per run).")


if __name__ == "__main__":
    main()
