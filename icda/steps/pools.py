"""``python -m icda pools``: kept originals and rationale pools from the chosen model.

Pool share and base: icda.pool_fraction and icda.pool_base of the settings; whose rationales:
icda.pool_source (chosen or vote); whose confidences pick the pools' documents: icda.pool_confidence
(chosen or mean); the classes a counterfactual may take:
icda.counterfactual_classes.

The pools step: an iteration's choice.json (the chosen candidate's predictions.json) and the
prepared train and dev splits in; pools.json out, the kept originals and rationale pools of each
split (:func:`icda.counterfactual.build_plan`).
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from icda.counterfactual import NoCounterfactual, build_plan
from icda.label_flip import document_flips, predicted_classes, sentence_ids
from icda.data.document import read_split
from icda.guard import add_input, add_output, declared_inputs
from icda.model_selection import majority_vote
from icda.errors import ConfigError
from icda.records import Choice, Pools, SplitPools
from icda.steps import command_doc

if TYPE_CHECKING:  # torch: loaded only under icda.pool_flip
    from icda.loading import Workspace

log = logging.getLogger(__name__)


def make_pools(choice: str | Path, data_dir: str | Path, pool_fraction: float, pool_base: str,
               targets: dict[int, list[int]] | None = None, pool_source: str = "chosen",
               pool_min: int = 0, pool_confidence: str = "chosen", judged: Workspace | None = None) -> Pools:
    """The pools step on files: :func:`~icda.counterfactual.build_plan` of the original train and dev splits (in
    ``data_dir``) from the predictions of the candidate a ``choice.json`` names (``targets``: the
    plans' :attr:`~icda.records.AugmentationPlan.targets`).

    ``pool_source="vote"``: the rationale positions (of the pools and of the kept documents'
    swapped slots) are the majority vote of the iteration's fresh candidates
    (:func:`~icda.model_selection.majority_vote`, ties to the chosen candidate's); which documents
    are correct, kept and most confident still follows the chosen candidate's class probabilities,
    or with ``pool_confidence="mean"`` the mean of the fresh candidates' (a few confident mistakes
    of one candidate then cannot fill a class's pool alone; docs/experiments/loop-guard.md).
    Independently trained selectors agree on the sentence that carries the label more often than on
    a spurious one, so the vote's pools hold fewer wrong sentences (docs/experiments/robust-icda.md).
    ``pool_min`` is a floor on the training split's pools only (the dev counterfactuals, drawn once
    to select epochs, keep the share). ``judged`` (``icda.pool_flip``): the dataset's workspace
    (frozen sentence vectors); the kept originals and pools are then taken first among the
    documents whose counterfactuals flip under the label-flip check's sentence judge
    (:func:`icda.label_flip.document_flips`), so that a wrong rationale the judge can see is not
    swapped.

    Where the chosen selector classifies no document of some class right on a split
    (:class:`~icda.counterfactual.NoCounterfactual`), the record is ``blocked`` with the reason
    and holds no pools: the converge step then ends the run at its last iteration that built
    counterfactuals, and the workflow's other runs go on.

    Raises:
        DataError: a file is missing or malformed (among others, a prediction whose document count
            differs from the prepared split's, or a position outside its document).
    """
    chosen = Choice.read(choice)
    documents = {split: read_split(data_dir, split) for split in ("train", "dev")}
    sizes = {split: [len(d.sentences) for d in docs] for split, docs in documents.items()}
    predictions = chosen.predictions(sizes)
    fresh = chosen.fresh_predictions(sizes) if pool_source == "vote" or pool_confidence == "mean" else []
    splits = {}
    judge = None
    if judged is not None:
        from icda.steps.train import sentence_judge  # torch: only under icda.pool_flip

        judge = sentence_judge(judged, force=True)
    for split, docs in documents.items():
        predicted = getattr(predictions, split)
        positions = predicted.positions
        if pool_source == "vote" and fresh:
            positions = majority_vote([getattr(p, split).positions for p in fresh], positions)
        probabilities = predicted.class_probabilities
        if pool_confidence == "mean" and fresh:
            probabilities = np.mean([np.asarray(getattr(p, split).class_probabilities, dtype=np.float64) for p in fresh],
                                    axis=0)
        flips = None
        if judge is not None:
            flips = document_flips(judge, sentence_ids(judged.split(split)), [d.label for d in docs], positions,
                                   predicted_classes(probabilities))
        try:
            plan, stats = build_plan([d.label for d in docs], probabilities, positions,
                                     pool_fraction, pool_base, targets, pool_min if split == "train" else 0, flips)
        except NoCounterfactual as exc:
            reason = f"iteration {chosen.iteration}'s selector ({chosen.chosen.name}), on the {split} split: {exc}"
            log.warning("%s", reason)
            return Pools(chosen=chosen.chosen.name, candidate_dir=chosen.chosen.candidate_dir, train=None,
                         dev=None, blocked=reason)
        splits[split] = SplitPools(stats=stats, plan=plan, pool_sentences={
            str(c): [docs[d].sentences[p] for d, p in refs] for c, refs in plan.pools.items()})
        log.info("%s: kept %d of %d, pool sizes %s", split, len(plan.kept), stats["n_documents"],
                 {c: len(r) for c, r in plan.pools.items()})
    return Pools(chosen=chosen.chosen.name, candidate_dir=chosen.chosen.candidate_dir, **splits)


# --------------------------------------------------------------------------- the command


def register(sub) -> None:
    p = sub.add_parser("pools", help="kept originals and counterfactual rationale pools (train and dev)",
                       description=command_doc(__doc__, 2))
    add_input(p, "--choice", required=True, help="choice.json of this iteration")
    add_input(p, "--settings", required=True, help="the dataset's settings.json")
    add_input(p, "--data-dir", kind="folder", required=True, help="prepared dataset folder")
    add_input(p, "--embeddings", help="the dataset's sentence vectors (icda.pool_flip)")
    add_output(p, "--out", required=True, help="pools.json")
    p.set_defaults(func=run)
    declared_inputs(p, lambda a: {"the chosen candidate's folder --choice names":
                                  (Choice.read(a.choice).candidate_path, "folder")})


def run(args: argparse.Namespace) -> None:
    from icda.settings import Settings

    settings = Settings.load(args.settings)
    icda = settings.icda
    if icda.pool_flip and args.embeddings is None:
        raise ConfigError("icda.pool_flip reads the dataset's sentence vectors. Fix: pass --embeddings "
                          "(the embed step's embeddings.pt), or set icda.pool_flip: false")
    judged = None
    if icda.pool_flip:
        from icda.loading import open_workspace  # torch: only under icda.pool_flip

        judged = open_workspace(settings, args.data_dir, args.embeddings)
    make_pools(args.choice, args.data_dir, icda.pool_fraction, icda.pool_base,
               icda.counterfactual_targets(settings.model.n_classes), icda.pool_source, icda.pool_min,
               icda.pool_confidence, judged).write(args.out)
