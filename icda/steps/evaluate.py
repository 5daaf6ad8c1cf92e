"""``python -m icda evaluate``: rationale precision, recall, F1 and accuracy on the test set.

The metrics JSON (:class:`icda.records.Evaluation`) also holds, under ``documents``, each
document's id, rationale positions and predicted class (split order), so the positions behind
the numbers can be inspected.

The evaluate step (:func:`evaluate`): a model (``--model``), the reported selector of a choice.json
(``--choice``: the chosen candidate's predictions.json where training recorded the split, else
its model.pt; an ensemble's members' model.pt, ``icda.final_selector: ensemble``) or the
predictions.json training wrote (``--predictions``: no model is loaded, torch is not imported) and
a prepared split in; eval.json out (rationale precision, recall, F1 and accuracy, paper
"Experiments", with each document's rationale positions). ``--dataset``, ``--run``,
``--iteration`` (null: COMP), ``--point`` and ``--seed`` are recorded in it as labels.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from icda.data.document import read_split
from icda.errors import ConfigError
from icda.guard import add_input, add_output
from icda.io import check_output
from icda.layout import model_path as model_file
from icda.metrics import rationale_metrics
from icda.records import EVAL_LABELS, Choice, Evaluation, Predictions
from icda.settings import Settings
from icda.steps import add_workspace_arguments, command_doc


def evaluate(
    settings: str | Path,
    data_dir: str | Path,
    split: str = "test",
    labels: dict | None = None,
    *,
    model: str | Path | None = None,
    choice: str | Path | None = None,
    predictions: str | Path | None = None,
    embeddings: str | Path | None = None,
    threads: int | None = None,
) -> Evaluation:
    """The evaluate step on files: the evaluation of exactly one of ``model`` (a model.pt),
    ``choice`` (a choice.json: its chosen candidate's predictions.json where it holds ``split``,
    else its model.pt; with an ensemble, its members' model.pt) and ``predictions`` (a
    predictions.json) on ``split`` of the prepared dataset ``data_dir``, with the dataset's ``settings`` (a settings.json). From predictions,
    :func:`evaluate_predictions` (torch is not imported); from a model,
    :func:`evaluate_model` (``embeddings``: the cache of frozen mode; ``threads``: torch CPU threads).

    Raises:
        ValueError: not exactly one of ``model``, ``choice`` and ``predictions``.
        ConfigError: ``predictions`` holds no predictions on ``split``.
        DataError: an input file is missing or malformed.
    """
    if sum(x is not None for x in (model, choice, predictions)) != 1:
        raise ValueError("evaluate needs exactly one of model, choice and predictions")
    reported = None if choice is None else Choice.read(choice)
    if reported is not None and not reported.ensemble:
        # the chosen candidate's predictions, where training recorded this split (an ensemble has none)
        predictions = reported.predictions_path if holds_split(reported.predictions_path, split) else None
    if predictions is not None:  # torch is not imported
        return evaluate_predictions(Settings.load(settings), data_dir, predictions, split, labels)
    from icda.loading import load_settings  # torch

    return evaluate_model(load_settings(settings, threads), data_dir, embeddings, model, choice, split, labels)


def evaluate_model(
    settings: Settings,
    data_dir: str | Path,
    embeddings: str | Path | None,
    model: str | Path | None = None,
    choice: str | Path | None = None,
    split: str = "test",
    labels: dict | None = None,
) -> Evaluation:
    """Rationale precision, recall, F1, accuracy and the position histogram of a model on one
    split (:func:`icda.metrics.rationale_metrics`), with each document's id, rationale positions
    and predicted class (split order).

    Args:
        model: a model.pt; or ``choice``: a choice.json whose reported selector is evaluated
            (its chosen candidate, or with ``icda.final_selector: ensemble`` the ensemble of
            :attr:`icda.records.Choice.reported_models`; the evaluation names the chosen candidate).
        split: ``"train"``, ``"dev"`` or ``"test"``.
        labels: what the evaluation is (keys of :data:`icda.records.EVAL_LABELS`: dataset, run,
            iteration (None: COMP), point, seed).

    Raises:
        ValueError: neither or both of ``model`` and ``choice``.
        DataError: an input file is missing or malformed.
    """
    from icda.loading import open_workspace  # torch: not for evaluate --predictions
    from icda.train import predict

    if (model is None) == (choice is None):
        raise ValueError("evaluate needs exactly one of model and choice")
    chosen = None if choice is None else Choice.read(choice)
    model_path = Path(model) if chosen is None else chosen.model_path
    ws = open_workspace(settings, data_dir, embeddings)
    network = ws.load_models([model_path] if chosen is None else chosen.reported_models)
    split_ids = ws.split(split)
    pred = predict(network, split_ids.ids, device=ws.device)
    return _evaluation(split_ids.documents, pred.positions, pred.predicted.tolist(), split_ids.n_sentences.tolist(),
                       model_path, split, labels, settings.model.n_classes)


def evaluate_predictions(
    settings: Settings, data_dir: str | Path, predictions: str | Path, split: str = "dev", labels: dict | None = None,
) -> Evaluation:
    """:func:`evaluate_model` from the ``predictions.json`` that training wrote (P(y=1) and
    positions on the train, dev and test splits, from the chosen epoch's model): no model is
    loaded, so torch is not imported. The positions, hence precision, recall and F1, are the
    model's; the predicted class is P(y=1) > 0.5 (C > 2: the most probable class), the model's
    argmax up to the 6-decimal rounding of the file (a document with P(y=1) within 5e-7 of 0.5
    may count differently in accuracy).

    Raises:
        ConfigError: the file holds no predictions on ``split`` (test: written before training
            recorded them; evaluate its model.pt instead).
        DataError: the file or the prepared split is missing or malformed, they differ in length,
            or a position lies outside the first ``max_sentences`` sentences of its document.
    """
    docs = read_split(data_dir, split)
    max_sentences = settings.encoder.max_sentences
    n_sentences = [min(max_sentences, len(d.sentences)) for d in docs]
    pred = getattr(Predictions.read(predictions, {split: n_sentences}), split)
    if pred is None:
        raise ConfigError(f"{predictions} holds no predictions on {split} (written before training recorded "
                          "them): evaluate its model.pt (--model) instead")
    return _evaluation(docs, pred.positions, pred.predicted(), n_sentences,
                       model_file(Path(predictions).parent), split, labels, settings.model.n_classes)


def holds_split(predictions: str | Path, split: str) -> bool:
    """Whether a ``predictions.json`` holds predictions on ``split``.

    Raises:
        DataError: the file is missing or malformed.
    """
    return getattr(Predictions.read(predictions), split, None) is not None


def _evaluation(docs, positions, predicted, n_sentences, model_path: Path, split: str, labels: dict | None,
                n_classes: int) -> Evaluation:
    metrics = rationale_metrics(positions, [d.rationale for d in docs], n_sentences, [d.label for d in docs],
                                predicted, n_classes)
    return Evaluation.from_json((labels or {}) | metrics | {
        "model": str(model_path), "split": split,
        # per document, in split order: what the rationale viewer (icda/report/viewer.py) highlights
        "documents": {"ids": [d.id for d in docs], "positions": positions, "predicted": predicted},
    })


# --------------------------------------------------------------------------- the command


def _null_or_int(text: str) -> int | None:
    return None if text in ("null", "none") else int(text)


def register(sub) -> None:
    p = sub.add_parser("evaluate", help="test-set rationale precision (paper metric) of a model",
                       description=command_doc(__doc__, 2))
    add_workspace_arguments(p)
    src = p.add_mutually_exclusive_group(required=True)
    add_input(src, "--model", help="a model.pt")
    add_input(src, "--choice", help="a choice.json of `python -m icda select` (its chosen candidate's "
                     "predictions.json where it holds the split, else its model.pt; an ensemble's members, "
                     "icda.final_selector: ensemble)")
    add_input(src, "--predictions",
                     help="a predictions.json of `python -m icda train` (no model is loaded)")
    p.add_argument("--split", default="test", choices=["train", "dev", "test"])
    add_output(p, "--out", required=True, help="metrics JSON")
    p.add_argument("--dataset", help="dataset name recorded in the JSON")
    p.add_argument("--run", type=int, help="run recorded in the JSON")
    p.add_argument("--iteration", type=_null_or_int, help="ICDA iteration recorded (null: COMP)")
    p.add_argument("--point", help="sweep point recorded in the JSON")
    p.add_argument("--seed", type=int, help="seed recorded in the JSON (sweep)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    labels = {key: value for key in EVAL_LABELS if (value := getattr(args, key)) is not None}
    check_output("--out", args.out, "the evaluation", {"the model": args.model, "the choice": args.choice,
                                                       "the predictions": args.predictions, "the settings": args.settings,
                                                       "the embeddings": args.embeddings},
                 {"the prepared data folder": args.data_dir,
                  "the model's folder": None if args.model is None else Path(args.model).parent})
    evaluation = evaluate(args.settings, args.data_dir, args.split, labels, model=args.model, choice=args.choice,
                          predictions=args.predictions, embeddings=args.embeddings, threads=args.threads)
    evaluation.write(args.out)
    shown = {k: getattr(evaluation, k) for k in ("precision", "recall", "f1", "accuracy")}
    print(" ".join(f"{k}={'-' if v is None else f'{v:.4f}'}" for k, v in shown.items()))
