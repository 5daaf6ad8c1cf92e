"""``python -m icda augment``: write the counterfactually augmented train and dev sets.

The dev draw is the one training evaluates on; training re-draws the train counterfactuals every
epoch, the train file is one draw. Seed: icda.dev_seed; sentences per document:
encoder.max_sentences of the settings.

The augment step: an iteration's pools.json and the prepared train and dev splits in; the
augmented train.jsonl and dev.jsonl out, each kept original followed by its counterfactual
(:func:`icda.counterfactual.augmented_documents`).
"""

from __future__ import annotations

import argparse
import logging
import os
import re
from pathlib import Path

from icda.counterfactual import augmented_documents
from icda.data.document import read_split
from icda.errors import ConfigError
from icda.guard import add_input, add_output
from icda.io import write_jsonl
from icda.layout import AUGMENTED_DIR, POOLS_FILE, split_path
from icda.records import Pools
from icda.steps import command_doc

log = logging.getLogger(__name__)


def write_augmented(pools: str | Path, data_dir: str | Path, seed: int, max_sentences: int,
                    out_dir: str | Path) -> dict[str, int]:
    """The augment step on files: one draw of :func:`~icda.counterfactual.augmented_documents` per split, written to
    ``out_dir/train.jsonl`` (seed ``seed``) and ``out_dir/dev.jsonl`` (seed ``seed + 1``).

    Returns:
        {split: documents written}.

    Raises:
        DataError: a file is missing or malformed (among others, a plan built for another number of
            documents, or a position outside the first ``max_sentences`` sentences of its document).
    """
    documents = {split: read_split(data_dir, split) for split in ("train", "dev")}
    record = Pools.read_plans(pools, {split: [min(len(d.sentences), max_sentences) for d in docs]
                                for split, docs in documents.items()})
    written = {}
    for offset, (split, docs) in enumerate(documents.items()):
        plan = getattr(record, split).plan
        records = augmented_documents(docs, plan, seed + offset)
        write_jsonl(records, split_path(out_dir, split))
        written[split] = len(records)
        log.info("%s: %d documents (%d originals + counterfactuals)", split, len(records), len(plan.kept))
    return written


# --------------------------------------------------------------------------- the command


def register(sub) -> None:
    p = sub.add_parser("augment", help="materialise the augmented dataset (originals + counterfactuals)",
                       description=command_doc(__doc__, 2))
    add_input(p, "--pools", required=True, help="pools.json of this iteration")
    add_input(p, "--settings", required=True, help="the dataset's settings.json")
    add_input(p, "--data-dir", kind="folder", required=True, help="prepared dataset folder")
    add_output(p, "--out-dir", kind="owned", required=True, help="writes train.jsonl and dev.jsonl")
    p.set_defaults(func=run)


def check_iteration(pools: str | Path, out_dir: str | Path) -> None:
    """Refuse an ``augmented/`` output folder of another iteration than ``pools``: where both lie
    as :mod:`icda.layout` places them (``<iteration>/pools.json``, ``<iteration>/augmented``, an
    iteration folder being ``iter<k>``), the augmented data of iteration k belongs beside its
    pools (another iteration's would be replaced).

    Raises:
        ConfigError: naming both paths and the fix.
    """
    pools, out_dir = Path(pools), Path(out_dir)
    if pools.name != POOLS_FILE or out_dir.name != AUGMENTED_DIR:
        return
    here, there = Path(os.path.realpath(pools)).parent, Path(os.path.realpath(out_dir)).parent
    if here != there and re.fullmatch(r"iter[0-9]+", there.name):  # (an augmented/ folder elsewhere is no iteration's)
        raise ConfigError(f"--out-dir {out_dir}: is the {AUGMENTED_DIR}/ folder of {there}, not of the iteration of "
                          f"--pools {pools} ({here}): it would replace that iteration's augmented data. Fix: "
                          f"--out-dir {here / AUGMENTED_DIR}")


def run(args: argparse.Namespace) -> None:
    from icda.settings import Settings

    check_iteration(args.pools, args.out_dir)

    settings = Settings.load(args.settings)
    write_augmented(args.pools, args.data_dir, settings.icda.dev_seed, settings.encoder.max_sentences, args.out_dir)
