"""What a smaller ``train.patience`` would save and change, replayed on finished runs.

Training is deterministic, so a run with patience p' < p follows the same epochs as the recorded
one until it stops earlier: replaying :class:`icda.train.EarlyStopping` on every candidate's
``history.json`` gives exactly the epochs p' would train and the checkpoint it would keep. Per
dataset it prints the candidates, the share whose kept epoch changes, the epochs trained under
both patiences (the saving), the mean change of the kept dev loss, and where the kept epoch
changes, the mean and worst change of its dev rationale precision (datasets whose dev split has
ground truth; iteration ≥ 1 candidates are scored on the augmented dev set). Only each
candidate is exact: a changed checkpoint would change the iterations after it, which no replay
shows.

    PYTHONPATH=. .venv/bin/python benchmarks/patience_replay.py --patience 2 results ../bench/x/fixed/results
"""

from __future__ import annotations

import argparse
import statistics
from collections import defaultdict

from icda.records import History
from icda.settings import Settings
from icda.steps.train import keeps_initial
from icda.train import EarlyStopping, EpochRecord
from icda.guard import add_input, parse_arguments


def replay(history: History, patience: int, keep_initial: bool) -> tuple[EpochRecord, int]:
    """The kept epoch under ``patience`` and the number of epochs trained (epoch −1 excluded)."""
    stopping, trained = EarlyStopping(patience, keep_initial), 0
    for raw in history.epochs:
        record = EpochRecord(**raw)
        trained = record.epoch + 1
        stopping.observe(record)
        if stopping.stop:
            break
    return stopping.kept, trained


def build_parser() -> argparse.ArgumentParser:
    """The command line of :func:`main` (its path arguments declared for the output guard, icda.guard)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_input(parser, "results", kind="tree", nargs="+", help="results folders of finished runs")
    parser.add_argument("--patience", type=int, default=2, help="the smaller patience to replay")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = parse_arguments(build_parser(), argv)
    rows = defaultdict(list)
    settings = {}  # results/<dataset>/settings.json, read once per dataset
    for folder in args.results:
        for path in sorted(folder.glob("*/run*/iter*/candidates/*/history.json")):
            history = History.read(path)
            dataset = path.relative_to(folder).parts[0]
            if (folder, dataset) not in settings:
                settings[folder, dataset] = Settings.load(folder / dataset / "settings.json")
            keep_initial = keeps_initial(history.init is not None, settings[folder, dataset])
            # the run's own patience stopped it: its kept epoch is the best of every recorded one
            recorded, n_recorded = replay(history, len(history.epochs), keep_initial)
            if recorded.epoch != history.best_epoch:
                raise SystemExit(f"{path}: replay keeps epoch {recorded.epoch}, the run kept {history.best_epoch}")
            kept, n_kept = replay(history, args.patience, keep_initial)
            precision = (None if kept.dev_precision is None or kept.epoch == recorded.epoch
                         else kept.dev_precision - recorded.dev_precision)
            rows[dataset].append(
                (kept.epoch != recorded.epoch, n_recorded, n_kept, kept.dev_loss - recorded.dev_loss, precision))
    print(f"| dataset | candidates | kept epoch changes | epochs: recorded → patience {args.patience} | "
          "dev loss change (mean) | dev precision change where changed: mean, worst |")
    print("|---|---|---|---|---|---|")
    for dataset, got in sorted(rows.items()):
        changed = [p for c, *_, p in got if c and p is not None]
        before, after = sum(r[1] for r in got), sum(r[2] for r in got)
        precision = (f"{100 * statistics.mean(changed):+.1f}, {100 * min(changed):+.1f} points"
                     if changed else "–")
        print(f"| {dataset} | {len(got)} | {100 * sum(r[0] for r in got) / len(got):.0f} % | "
              f"{before / len(got):.2f} → {after / len(got):.2f} ({100 * (1 - after / before):.0f} % fewer) | "
              f"{statistics.mean(r[3] for r in got):+.4f} | {precision} |")


if __name__ == "__main__":
    main()
