"""The evaluate step, ``python -m icda evaluate``: a model (or the predictions.json training wrote)
and a prepared split in; eval.json out (rationale precision, recall, F1 and accuracy, paper
"Experiments", with each document's rationale positions).
"""

from __future__ import annotations

from pathlib import Path

from icda.data.document import read_documents
from icda.errors import ConfigError
from icda.metrics import rationale_metrics
from icda.records import MODEL_FILE, Choice, Evaluation, Predictions
from icda.settings import Settings


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
        model: a model.pt; or ``choice``: a choice.json whose chosen model is evaluated.
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
    model_path = Path(model) if model is not None else Choice.read(choice).model_path
    ws = open_workspace(settings, data_dir, embeddings)
    network = ws.load_model(model_path)
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
    docs = read_documents(Path(data_dir) / f"{split}.jsonl")
    max_sentences = settings.encoder.max_sentences
    n_sentences = [min(max_sentences, len(d.sentences)) for d in docs]
    pred = getattr(Predictions.read(predictions, {split: n_sentences}), split)
    if pred is None:
        raise ConfigError(f"{predictions} holds no predictions on {split} (written before training recorded "
                          "them): evaluate its model.pt (--model) instead")
    return _evaluation(docs, pred.positions, pred.predicted(), n_sentences,
                       Path(predictions).with_name(MODEL_FILE), split, labels, settings.model.n_classes)


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
