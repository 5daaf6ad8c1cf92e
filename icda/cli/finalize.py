"""``python -m icda finalize``: the dataset's ICDA output, chosen among its runs.

Each run ends with its own augmented training set (the last iteration's kept originals and
counterfactuals). The one kept is from the run whose final selector has the lowest
cross-entropy on the *original* dev set, the one yardstick all runs share.
"""

from __future__ import annotations

import argparse
import logging
import shutil
from pathlib import Path

log = logging.getLogger("icda.finalize")


def register(sub) -> None:
    p = sub.add_parser("finalize", help="pick the final augmented dataset among the runs", description=__doc__)
    p.add_argument("--augmented", type=Path, nargs="+", required=True,
                   help="each run's last iteration augmented/train.jsonl")
    p.add_argument("--data-dir", type=Path, required=True, help="prepared dataset (original dev labels)")
    p.add_argument("--out", type=Path, required=True, help="icda_dataset.jsonl")
    p.set_defaults(func=run)


def original_dev_loss(iteration_dir: Path, labels: list[int]) -> float:
    """Mean cross-entropy of an iteration's selected model on the original dev documents."""
    from icda.io import read_json
    from icda.selection import cross_entropy

    selection = read_json(iteration_dir / "selected.json")
    return cross_entropy(read_json(Path(selection["candidate_dir"]) / "rationales.json")["dev"]["prob_positive"], labels)


def run(args: argparse.Namespace) -> None:
    from icda.data.document import read_documents
    from icda.io import atomic_path

    labels = [d.label for d in read_documents(args.data_dir / "dev.jsonl")]
    losses = {path: original_dev_loss(path.parent.parent, labels) for path in args.augmented}
    for path, loss in losses.items():
        log.info("%s: original dev loss %.4f", path.parent.parent, loss)
    best = min(losses, key=losses.get)
    with atomic_path(args.out) as tmp:
        shutil.copyfile(best, tmp)
    print(f"final ICDA dataset: {best} (original dev loss {losses[best]:.4f}) -> {args.out}")
