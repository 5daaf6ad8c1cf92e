"""``python -m icda train``: train one rationale model (one seed), or the candidates of one ICDA
iteration or of a run's COMP grid one after another in one process (``--candidates``: the dataset
is loaded once).

The train step: a prepared dataset and its sentence vectors (and, for an ICDA candidate, the
iteration's pools.json and augmented dev set) in; one model's model.pt, model.json,
predictions.json and history.json out (MMI, COMP, or an ICDA candidate trained on an iteration's
augmented data, paper "Implementation" and Algorithm 2). ``--objective`` and ``--comp-lambda``
override ``model.objective`` and ``model.comp_lambda``; ``--init`` warm-starts (fresh optimizer)
from a model.pt or a choice.json's chosen model.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from icda.counterfactual import augmented_tensors
from icda.data.document import read_documents
from icda.errors import ConfigError
from icda.guard import add_input, add_output, declared_inputs
from icda.io import PARTIAL_SUFFIX
from icda.layout import history_path, model_path, predictions_path
from icda.loading import Workspace, load_settings, load_weights, open_workspace, save_model
from icda.model import CachedSentences
from icda.label_flip import fit_sentence_judge, flip_rate, predicted_classes, sentence_ids
from icda.rationale_probe import probe_accuracy, rationale_vectors
from icda.records import Choice, History, Pools, Predictions
from icda.settings import Settings
from icda.steps import add_workspace_arguments, command_doc
from icda.steps.predict import write_model_card
from icda.train import predict, train_model

log = logging.getLogger("icda.train")

def init_model_path(init: str | Path) -> Path:
    """The weights a warm start loads: ``init`` itself (a model.pt) or, for a ``choice.json``,
    the chosen candidate's model.

    Raises:
        DataError: the choice file is missing or malformed.
    """
    init = Path(init)
    return Choice.read(init).model_path if init.suffix == ".json" else init


def train_candidate(
    settings: Settings,
    data_dir: str | Path,
    embeddings: str | Path | None,
    seed: int,
    out_dir: str | Path,
    init: str | Path | None = None,
    pools: str | Path | None = None,
    augmented_dev: str | Path | None = None,
    objective: str | None = None,
    comp_lambda: float | None = None,
) -> History:
    """Train one model and write ``model.pt``, ``model.json`` (its settings,
    :class:`~icda.records.ModelCard`), ``predictions.json`` and (last: its presence means
    complete) ``history.json`` into ``out_dir``.

    Args:
        settings: the dataset's settings (``settings.json``).
        data_dir: the prepared dataset (train/dev/test.jsonl).
        embeddings: the sentence-embedding cache (frozen mode), or None (finetune mode).
        seed: initialises the network (``torch.manual_seed``), the batch order and, with
            ``pools``, the counterfactual draw of epoch e (``np.random.default_rng([seed, e])``).
        init: warm start (fresh optimizer) from a model.pt or a choice.json's chosen model.
        pools: an iteration's ``pools.json``: train on its kept originals plus counterfactuals
            re-drawn every epoch (needs ``augmented_dev``, the dev set to select epochs on).
        objective, comp_lambda: override ``model.objective`` / ``model.comp_lambda`` (COMP).

    Returns:
        the :class:`~icda.records.History` written.

    Raises:
        DataError: an input file is missing or malformed (stale cache, corrupt model, ...).
        ValueError: ``pools`` without ``augmented_dev``.
    """
    settings = _with_objective(settings, objective, comp_lambda)
    ws, data, load_cpu = _load(settings, data_dir, embeddings, pools, augmented_dev)
    return _train(ws, settings, seed, out_dir, init, data, load_cpu)


def _with_objective(settings: Settings, objective: str | None, comp_lambda: float | None) -> Settings:
    """``settings`` with ``model.objective`` / ``model.comp_lambda`` overridden where given."""
    overrides = {k: v for k, v in (("objective", objective), ("comp_lambda", comp_lambda)) if v is not None}
    if not overrides:
        return settings
    return dataclasses.replace(settings, model=dataclasses.replace(settings.model, **overrides))


def train_candidates(
    settings: Settings,
    data_dir: str | Path,
    embeddings: str | Path | None,
    seeds: dict[str, int],
    out_dir: str | Path,
    warm: str | None = None,
    init: str | Path | None = None,
    pools: str | Path | None = None,
    augmented_dev: str | Path | None = None,
    comp_lambdas: dict[str, float] | None = None,
) -> list[History]:
    """Train the candidates of one ICDA iteration, or a run's COMP grid, one after another in one
    process (the dataset is loaded once) into ``out_dir/<name>/``: the same files and, candidate
    by candidate, the same numbers as :func:`train_candidate` (every candidate reseeds torch and
    draws its counterfactuals from its own seed). The candidates are trained into
    ``<out_dir>.partial`` and the folder is renamed to ``out_dir`` once all of them are written,
    so an interrupted job leaves no ``out_dir`` that looks complete.

    Args:
        seeds: {candidate folder name: training seed}, e.g. ``{"seed42": 42, "warm": 42}``.
        warm: the name in ``seeds`` of the warm start, which starts from ``init``.
        comp_lambdas: {candidate folder name: λ} for every name in ``seeds``: train COMP
            (``model.objective: comp``) with that ``comp_lambda``; None: the settings' objective.
        other arguments: as :func:`train_candidate`.

    Returns:
        the :class:`~icda.records.History` of each candidate, in the order of ``seeds``.

    Raises:
        DataError: an input file is missing or malformed.
        ValueError: ``warm`` is not in ``seeds`` or comes without ``init``; ``pools`` without
            ``augmented_dev``; ``comp_lambdas`` does not name exactly the candidates of ``seeds``.
    """
    if (warm is None) != (init is None) or (warm is not None and warm not in seeds):
        raise ValueError(f"the warm start {warm!r} needs init and must be one of {list(seeds)}")
    if comp_lambdas is not None and set(comp_lambdas) != set(seeds):
        raise ValueError(f"comp_lambdas names {sorted(comp_lambdas)}, the candidates are {sorted(seeds)}")
    ws, data, load_cpu = _load(settings, data_dir, embeddings, pools, augmented_dev, judge=comp_lambdas is None)
    out_dir = Path(out_dir)
    partial = out_dir.with_name(out_dir.name + PARTIAL_SUFFIX)  # published whole, or not at all
    shutil.rmtree(partial, ignore_errors=True)
    histories = []
    for i, (name, seed) in enumerate(seeds.items()):
        own = settings if comp_lambdas is None else _with_objective(settings, "comp", comp_lambdas[name])
        histories.append(_train(ws, own, seed, partial / name, init if name == warm else None, data,
                                load_cpu if i == 0 else 0.0))
    shutil.rmtree(out_dir, ignore_errors=True)
    os.replace(partial, out_dir)
    return histories


@dataclass
class _TrainingData:
    """What a candidate trains and selects epochs on: the original splits, the iteration's
    augmentation plan (None: MMI/COMP on the original data) from ``pools``, and the dev set of
    epoch selection (ids [D, N], labels [D], per-document ground truth or None)."""

    train: Any
    dev: Any
    test: Any
    plan: Any
    pools: str | Path | None
    dev_ids: Any
    dev_labels: Any
    dev_rationale: list | None
    judge: Any = None  #: the label-flip check's sentence judge (:func:`sentence_judge`), or None


def _load(settings: Settings, data_dir: str | Path, embeddings: str | Path | None, pools: str | Path | None,
          augmented_dev: str | Path | None, judge: bool = True) -> tuple[Workspace, _TrainingData, float]:
    """(the workspace, its :class:`_TrainingData`, the CPU seconds loading them took, the sentence
    judge's fit included); ``judge``: fit the label-flip check's sentence judge where the settings
    ask for it (not for COMP).

    Raises:
        ValueError: ``pools`` without ``augmented_dev`` or the reverse.
    """
    if (pools is None) != (augmented_dev is None):
        raise ValueError("train on augmented data needs both pools and augmented_dev")
    start = time.process_time()
    ws = open_workspace(settings, data_dir, embeddings)
    data = _training_data(ws, pools, augmented_dev)
    if judge:
        data = dataclasses.replace(data, judge=sentence_judge(ws))
    return ws, data, time.process_time() - start


def _training_data(ws: Workspace, pools: str | Path | None, augmented_dev: str | Path | None) -> _TrainingData:
    train, dev, test = ws.split("train"), ws.split("dev"), ws.split("test")
    if pools is not None:
        aug_dev = ws.sentence_ids(read_documents(augmented_dev), str(augmented_dev))
        sizes = {"train": train.n_sentences.tolist(), "dev": dev.n_sentences.tolist()}
        return _TrainingData(train, dev, test, Pools.read_plans(pools, sizes).train.plan, pools, aug_dev.ids,
                             aug_dev.labels, None)
    rationale = [d.rationale for d in dev.documents]
    return _TrainingData(train, dev, test, None, None, dev.ids, dev.labels,
                         None if all(r is None for r in rationale) else rationale)


def keeps_initial(warm_start: bool, settings: Settings) -> bool:
    """Whether epoch −1 (the weights before any update) may be the kept checkpoint
    (:func:`icda.train.train_model`'s ``keep_initial``): always for a fresh candidate; for a warm
    start only under the paper's stop rule (``icda.stop_rule: paper``), since under
    ``rationales`` the previous model, scored on a dev set built from its own selections, would
    often win untrained (docs/sweep/stop_rule.md)."""
    return not warm_start or settings.icda.stop_rule == "paper"


def _train(ws: Workspace, settings: Settings, seed: int, out_dir: str | Path, init: str | Path | None, data: _TrainingData,
           load_cpu: float) -> History:
    """Train one candidate on a loaded workspace and write its files (:func:`train_candidate`);
    ``settings``: the workspace's, or with another objective (COMP); ``load_cpu``: CPU seconds
    the job spent loading ``ws`` and ``data``, recorded in its history."""
    train, plan = data.train, data.plan
    model = ws.network(seed, settings.model)
    if init is not None:
        load_weights(model, init_model_path(init))

    def train_data(epoch: int):
        if plan is None:
            return train.ids, train.labels
        return augmented_tensors(train, plan, np.random.default_rng([seed, epoch]))

    log.info("training seed %d on %d documents/epoch (%s), dev %d, device %s",
             seed, 2 * len(plan.kept) if plan is not None else len(train),
             "augmented" if plan is not None else "original", len(data.dev_ids), ws.device)
    result = train_model(model, train_data, data.dev_ids, data.dev_labels, settings.train, seed, ws.device,
                         data.dev_rationale, keeps_initial(init is not None, settings))
    predict_start = time.process_time()
    model.load_state_dict(result.state_dict)
    predictions = {}
    for name, split in (("train", train), ("dev", data.dev), ("test", data.test)):  # test: no labels read
        pred = predict(model, split.ids, device=ws.device)
        predictions[name] = {"prob_positive": pred.prob_positive.round(6).tolist(), "positions": pred.positions}
        if settings.model.n_classes > 2:
            predictions[name]["probabilities"] = pred.probabilities.round(6).tolist()
    history = History.from_json(result.to_json() | {
        "rationale_probe": _rationale_probe(ws, train, data.dev, predictions),
        "label_flip": _label_flip(data.judge, data.dev, predictions),
        "seed": seed,
        "init": None if init is None else str(init),
        "augmented": None if data.pools is None else str(data.pools),
        "objective": settings.model.objective,
        "comp_lambda": settings.model.comp_lambda,
    })
    out_dir = Path(out_dir)
    save_model(model, model_path(out_dir), result.state_dict, settings.encoder)  # with its settings' fingerprint
    write_model_card(out_dir, settings)  # what `python -m icda predict` reads new documents with
    Predictions.from_json(predictions).write(predictions_path(out_dir))
    history = dataclasses.replace(history, cpu_seconds={"load": round(load_cpu, 3),
                                                        "predictions": round(time.process_time() - predict_start, 3)})
    history.write(history_path(out_dir))
    log.info("best epoch %d, dev loss %.4f, dev accuracy %.3f%s", result.best_epoch, result.dev_loss,
             result.dev_accuracy, " (DEGENERATE)" if result.degenerate else "")
    return history


def _rationale_probe(ws: Workspace, train, dev, predictions: dict) -> float | None:
    """The rationale probe's dev accuracy on the kept model's rationales (:mod:`icda.rationale_probe`),
    where the run's final choice reads it (``icda.final_choice: rationale_probe``, frozen mode);
    else None: the defaults do not pay for the fits (``benchmarks/loop_diagnostics.py`` computes
    the same number from a run's files), and fine-tuning mode has no fixed sentence vectors."""
    if ws.settings.icda.final_choice != "rationale_probe" or not isinstance(ws.sentences, CachedSentences):
        return None
    table = ws.sentences.vectors.numpy()
    x = {name: rationale_vectors(table, split.ids.numpy(), predictions[name]["positions"])
         for name, split in (("train", train), ("dev", dev))}
    return round(probe_accuracy(x["train"], train.labels.tolist(), x["dev"], dev.labels.tolist()), 6)


def sentence_judge(ws: Workspace, force: bool = False) -> np.ndarray | None:
    """The label-flip check's sentence judge (:func:`icda.label_flip.fit_sentence_judge`) on the
    training split, fitted once per job where a run's verdict reads it (``icda.verdict:
    label_flip``) or ``force``, in frozen mode; else None. Float [U, C]."""
    if (ws.settings.icda.verdict != "label_flip" and not force) or not isinstance(ws.sentences, CachedSentences):
        return None
    train = ws.split("train")
    return fit_sentence_judge(ws.sentences.vectors.numpy(), sentence_ids(train), train.labels.tolist(),
                              ws.settings.model.n_classes)


def _label_flip(judge: np.ndarray | None, dev, predictions: dict) -> float | None:
    """The dev flip rate of the kept model's counterfactuals (:func:`icda.label_flip.flip_rate`), or
    None without a judge. ``dev``: the original dev split."""
    if judge is None:
        return None
    predicted = predicted_classes(predictions["dev"].get("probabilities", predictions["dev"]["prob_positive"]))
    rate = flip_rate(judge, sentence_ids(dev), dev.labels.tolist(), predictions["dev"]["positions"], predicted)
    return None if rate is None else round(rate, 6)


# --------------------------------------------------------------------------- the command


def candidate(text: str) -> tuple[str, int]:
    """``NAME=SEED`` → (name, seed)."""
    name, sep, seed = text.partition("=")
    if not sep or not name or not seed.lstrip("-").isdigit():
        raise argparse.ArgumentTypeError(f"{text!r}: write a candidate as NAME=SEED, e.g. seed42=42")
    return name, int(seed)


def register(sub) -> None:
    p = sub.add_parser("train", help="train one rationale model (MMI, COMP, or on augmented data), or the "
                       "candidates of an ICDA iteration", description=command_doc(__doc__))
    add_workspace_arguments(p)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--seed", type=int, help="train one model into --out-dir")
    which.add_argument("--candidates", type=candidate, nargs="+", metavar="NAME=SEED",
                       help="train each candidate into --out-dir/NAME, e.g. seed42=42 seed43=43 warm=42")
    add_output(p, "--out-dir", kind="owned", required=True,
                   help="writes model.pt, predictions.json, history.json (with --candidates: per candidate folder)")
    add_input(p, "--pools",
                   help="pools.json of the previous ICDA iteration: train on its kept originals plus "
                        "counterfactuals re-drawn every epoch (with --augmented-dev)")
    add_input(p, "--augmented-dev", help="augmented/dev.jsonl of that iteration (selects epochs)")
    add_input(p, "--init",
                   help="warm start (fresh optimizer): a model.pt, or a choice.json whose chosen model is used")
    p.add_argument("--warm-start", metavar="NAME", help="with --candidates: the candidate that starts from --init")
    p.add_argument("--objective", choices=["mmi", "comp"], help="override model.objective")
    p.add_argument("--comp-lambda", type=float, nargs="+",
                   help="override model.comp_lambda (COMP); with --candidates one λ per candidate, in order")
    p.set_defaults(func=run)
    declared_inputs(p, lambda a: {"the model --init names": init_model_path(a.init)}
                    if a.init is not None and Path(a.init).suffix == ".json" else {})


def run(args: argparse.Namespace) -> None:
    lambdas = args.comp_lambda or []
    if args.candidates and (args.objective or lambdas) and (args.objective != "comp" or len(lambdas) != len(args.candidates)):
        raise ConfigError(f"--objective {args.objective} --comp-lambda with {len(lambdas)} value(s) for "
                          f"{len(args.candidates)} candidates: with --candidates, train COMP with "
                          "--objective comp and one λ per candidate (or neither option)")
    if not args.candidates and len(lambdas) > 1:
        raise ConfigError(f"--comp-lambda gives {len(lambdas)} values for one model (--seed): give one")
    settings = load_settings(args.settings, args.threads)
    if args.candidates:
        names = [name for name, _ in args.candidates]
        train_candidates(settings, args.data_dir, args.embeddings, dict(args.candidates), args.out_dir,
                         warm=args.warm_start, init=args.init, pools=args.pools, augmented_dev=args.augmented_dev,
                         comp_lambdas=dict(zip(names, lambdas)) if lambdas else None)
        return
    train_candidate(settings, args.data_dir, args.embeddings, args.seed, args.out_dir, init=args.init,
                    pools=args.pools, augmented_dev=args.augmented_dev, objective=args.objective,
                    comp_lambda=lambdas[0] if lambdas else None)
