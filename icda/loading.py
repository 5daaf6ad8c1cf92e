"""What the train, evaluate and predict steps load: a dataset's settings (:func:`load_settings`),
prepared splits and sentence vectors as a :class:`Workspace` (documents → sentence-id tensors, and
the network built on those vectors), and the model files (model.pt: :func:`save_model`,
:func:`read_saved_model`, :func:`load_weights`)."""

from __future__ import annotations

import copy
import dataclasses
import math
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch

from icda.data.document import Document, read_split
from icda.data.sentence_ids import SentenceIdSplit, to_sentence_ids
from icda.embed import EmbeddingCache
from icda.encoder import SentenceEncoder, load_tokenizer, resolve_device, tokenize_sentences
from icda.errors import ConfigError, DataError, load_failure, rebuild_fix
from icda.io import save_torch
from icda.layout import SPLITS, split_path
from icda.model import CachedSentences, FinetunedSentences, RationaleNetwork, SelectorEnsemble
from icda.settings import (
    EncoderSettings,
    ModelSettings,
    Settings,
    k_fix,
    prediction_encoder_settings,
    settings_fingerprint,
)


@dataclass
class Workspace:
    """One dataset ready for training: its settings, original splits, sentence ids and device."""

    settings: Settings
    data_dir: Path
    documents: dict[str, list[Document]]
    sentence_id: Callable[[str], int]
    sentences: torch.nn.Module  #: CachedSentences (frozen) or FinetunedSentences (finetune)
    device: str
    pretrained_encoder_state: dict | None = None  #: finetune mode: the encoder's initial weights

    def network(self, seed: int, model_settings: ModelSettings | None = None,
                own_encoder: bool = False) -> RationaleNetwork:
        """A freshly initialised network (weights drawn from ``seed``), on the device. In finetune
        mode it shares the workspace's token encoder, unless ``own_encoder`` gives it a copy (an
        ensemble's members each carry their own fine-tuned encoder)."""
        torch.manual_seed(seed)
        sentences = self.sentences
        if self.settings.model.finetune:  # the token encoder starts from its pretrained weights
            self.sentences.encoder.load_state_dict(self.pretrained_encoder_state)
            sentences = copy.deepcopy(self.sentences) if own_encoder else self.sentences
        model = RationaleNetwork(sentences, model_settings or self.settings.model,
                                 self.settings.encoder.max_sentences)
        return model.to(self.device)

    def load_model(self, path: str | Path, own_encoder: bool = False) -> RationaleNetwork | SelectorEnsemble:
        """The network saved at ``path`` by :func:`save_model`, built with its own model settings
        (so a COMP model gets its complement head); a file :func:`save_ensemble` wrote gives its
        :class:`~icda.model.SelectorEnsemble` (``own_encoder``: see :meth:`network`).

        Raises:
            DataError: the file is missing, corrupt, or its weights do not fit its settings.
        """
        saved = read_saved_model(path)
        settings = ModelSettings(**saved["model"])
        states = saved.get("members") or [saved["state_dict"]]
        self._check_shapes(settings, states, path)
        networks = []
        for state_dict in states:
            networks.append(self.network(0, settings, own_encoder or len(states) > 1))
            _fit(networks[-1], saved | {"state_dict": state_dict}, path)
        return SelectorEnsemble(networks) if "members" in saved else networks[0]

    def _check_shapes(self, settings: ModelSettings, states: list[dict], path: str | Path) -> None:
        """Check, before any network is built, that each of ``states`` has the parameters (names
        and shapes) of the network ``settings`` describe, found on the meta device (nothing
        allocated): a file's sizes (``d_model: 1e12``) cannot exhaust the memory.

        Raises:
            DataError: naming the first parameter that differs.
        """
        try:
            with torch.device("meta"):
                probe = RationaleNetwork(self.sentences, settings, self.settings.encoder.max_sentences)
        except Exception as exc:  # sizes past what torch can address (TypeError, RuntimeError)
            raise DataError(path, None, f"its model settings describe no network torch can build "
                            f"({(str(exc).splitlines() or [type(exc).__name__])[0][:120]})",
                            rebuild_fix(path, "train")) from None
        shapes = {key: tuple(value.shape) for key, value in probe.state_dict().items()}
        for i, state in enumerate(states):
            where = "state_dict" if len(states) == 1 else f"members[{i}]"
            odd = sorted(shapes.keys() ^ state.keys())
            if odd:
                problem = "is missing" if odd[0] in shapes else "is not a parameter of this network"
                raise DataError(path, None, f"weights do not fit this network ({where}[{odd[0]!r}] {problem})",
                                "use the same model settings as the run that saved it")
            for key, shape in shapes.items():
                if tuple(state[key].shape) != shape:
                    raise DataError(path, None, f"weights do not fit this network ({where}[{key!r}] has the "
                                    f"shape {list(state[key].shape)}, the network {list(shape)})",
                                    "use the same model settings as the run that saved it")

    def load_models(self, paths: list[Path]) -> RationaleNetwork | SelectorEnsemble:
        """The selector a choice reports (:attr:`icda.records.Choice.reported_models`): the one
        network of a single path, else the :class:`~icda.model.SelectorEnsemble` of them.

        Raises:
            DataError: as :meth:`load_model`; ValueError: members of different model settings.
        """
        networks = [self.load_model(path, len(paths) > 1) for path in paths]
        return networks[0] if len(networks) == 1 else SelectorEnsemble(networks)

    def sentence_ids(self, docs: list[Document], where: str) -> SentenceIdSplit:
        return to_sentence_ids(docs, self.sentence_id, self.settings.encoder.max_sentences, where)

    def split(self, name: str) -> SentenceIdSplit:
        return self.sentence_ids(self.documents[name], str(split_path(self.data_dir, name)))


def load_settings(path: str | Path, threads: int | None = None) -> Settings:
    """The settings of a ``settings.json``, after setting torch's CPU threads to ``threads``
    (``--threads`` of the commands that load a workspace; None or 0: torch's default)."""
    if threads:
        torch.set_num_threads(threads)
    return Settings.load(path)


def open_workspace(settings: Settings, data_dir: str | Path, embeddings: str | Path | None = None) -> Workspace:
    """Load the prepared splits and the sentence vectors of one dataset.

    Frozen mode (``model.finetune: false``) needs ``embeddings``, the cache written by
    ``python -m icda embed``; finetune mode encodes sentences with a trainable encoder.

    Raises:
        DataError: a split is missing; a train or dev document shows the model no more sentences
            than ``model.k`` (all of them would be selected; the message names the file, the
            line and the fix); or the cache was built with other encoder settings or lacks a
            sentence of the data (stale cache).
    """
    data_dir = Path(data_dir)
    documents = {s: read_split(data_dir, s) for s in SPLITS}
    for split in ("train", "dev"):
        check_k(settings, documents[split], split_path(data_dir, split))
    device = resolve_device(settings.device)
    if not settings.model.finetune:
        if embeddings is None:
            raise DataError(data_dir, None, "frozen mode needs the embedding cache", "pass --embeddings (from `python -m icda embed`)")
        cache = EmbeddingCache.load(embeddings)
        # (a cache written before a setting existed holds that setting's default)
        if EncoderSettings.from_dict(cache.settings, strict=False) != settings.encoder:
            raise DataError(
                embeddings, None,
                f"stale embedding cache: built with {cache.settings}, settings ask for {settings.encoder.to_dict()}",
                "delete it and rerun `python -m icda embed` with these settings",
            )

        def sentence_id(text: str) -> int:
            return int(cache.lookup([text])[0])

        return Workspace(settings, data_dir, documents, sentence_id, CachedSentences(cache.vectors), device)

    return finetune_workspace(settings, data_dir, documents, device)


def finetune_workspace(settings: Settings, data_dir: Path, documents: dict[str, list[Document]],
                      device: str) -> Workspace:
    """Finetune mode's workspace: the first ``encoder.max_sentences`` sentences of every document
    tokenised for a trainable token encoder (:class:`~icda.model.FinetunedSentences`)."""
    table: dict[str, int] = {}
    for docs in documents.values():
        for doc in docs:
            for sentence in doc.sentences[: settings.encoder.max_sentences]:
                table.setdefault(sentence, len(table))
    tokenizer = load_tokenizer(settings.encoder)
    tokens = tokenize_sentences(tokenizer, list(table), settings.encoder.max_tokens)
    encoder = SentenceEncoder(settings.encoder)
    return Workspace(
        settings, data_dir, documents, table.__getitem__,
        FinetunedSentences(encoder, tokens, tokenizer.pad_token_id), device,
        {k: v.clone() for k, v in encoder.state_dict().items()},
    )


def check_k(settings: Settings, docs: list[Document], path: str | Path) -> None:
    """Check that every document of a prepared train/dev split shows the model more sentences
    (its first ``encoder.max_sentences``) than the ``model.k`` it selects.

    Raises:
        DataError: the shortest such document (by its line in ``path``) is not longer than k: all of
            its sentences would be selected and its counterfactual would replace it whole.
    """
    k, seen = settings.model.k, settings.encoder.max_sentences
    lengths = [min(len(doc.sentences), seen) for doc in docs]
    if not lengths or min(lengths) > k:
        return
    row = lengths.index(min(lengths))
    raise DataError(path, row + 1, f"document {docs[row].id} shows the model {lengths[row]} sentences, "
                    f"not more than model.k = {k}: all of them would be selected, so its rationale and "
                    "counterfactual would be meaningless",
                    k_fix(k, lengths[row], "the dataset's min_sentences (datasets.<name>.min_sentences)")
                    + " (a changed min_sentences takes effect when prepare reruns)")


def save_model(model: RationaleNetwork, path: str | Path, state_dict: dict | None = None,
               encoder: EncoderSettings | None = None) -> None:
    """Save trainable weights (not the frozen cache) with the model settings, atomically; with
    ``encoder`` (the settings that made its sentence vectors) also those that shape its
    predictions and their fingerprint (:func:`record_settings`)."""
    saved = {"state_dict": state_dict or model.state_dict(), "model": dataclasses.asdict(model.settings)}
    save_torch(saved if encoder is None else record_settings(saved, encoder), path)


def record_settings(saved: dict, encoder: EncoderSettings) -> dict:
    """``saved`` (a :func:`save_model` dict) with ``encoder``: the encoder settings that shape its
    predictions (:func:`icda.settings.prediction_encoder_settings`), and
    ``settings_fingerprint``: :func:`icda.settings.settings_fingerprint` of those and of its
    model settings, against which ``python -m icda predict`` checks model.json."""
    values = prediction_encoder_settings(encoder)
    return saved | {"encoder": values, "settings_fingerprint": settings_fingerprint(values, saved["model"])}


def copy_model(source: str | Path, target: str | Path, encoder: EncoderSettings) -> None:
    """Copy the model file ``source`` to ``target`` (not atomically: give a temporary path); one
    saved before settings fingerprints gets them (:func:`record_settings`, with ``encoder``, the
    encoder settings it was trained with).

    Raises:
        DataError: ``source`` is missing or corrupt.
    """
    saved = read_saved_model(source)
    if "settings_fingerprint" in saved:
        shutil.copyfile(source, target)
    else:
        torch.save(record_settings(saved, encoder), target)


def save_ensemble(sources: list[Path], target: str | Path, encoder: EncoderSettings) -> None:
    """Write the members ``sources`` (model files of one model setting) to ``target`` as one
    ensemble file (not atomically: give a temporary path): the first member's dict with
    ``members``, every member's state dict (:meth:`Workspace.load_model` reads it as a
    :class:`~icda.model.SelectorEnsemble`), and the settings fingerprint (:func:`record_settings`).

    Raises:
        DataError: a source is missing or corrupt, or its model settings differ from the first's.
    """
    saved = [read_saved_model(path) for path in sources]
    for path, member in zip(sources, saved):
        if member["model"] != saved[0]["model"]:
            raise DataError(path, None, f"its model settings differ from those of {sources[0]}",
                            "an ensemble's members must be trained with one model setting")
    torch.save(record_settings({"state_dict": saved[0]["state_dict"], "model": saved[0]["model"],
                                "members": [member["state_dict"] for member in saved]}, encoder), target)


#: the most members an ensemble file may hold (the workflow writes at most 9; each member is a
#: network built and run on every prediction)
MAX_MEMBERS = 64


def read_saved_model(path: str | Path) -> dict:
    """The dict saved by :func:`save_model`: ``state_dict`` and ``model`` (the model settings),
    ``members`` in an ensemble file (:func:`save_ensemble`), and in files saved since settings
    fingerprints ``encoder`` and ``settings_fingerprint``
    (:func:`record_settings`).

    Raises:
        DataError: the file is missing, or corrupt (truncated, not a saved model: each value
            checked, naming its key, :func:`_saved_model_problem`), or its weights are not finite.
    """
    path = Path(path)
    if not path.exists():
        raise DataError(path, None, "model file not found", "train it first (`python -m icda train`)")
    try:
        saved = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # unpickling errors of a truncated, empty or foreign file
        reason = "an empty file" if path.is_file() and not path.stat().st_size else load_failure(exc)
        raise DataError(path, None, f"corrupt model file ({reason})", rebuild_fix(path, "train")) from exc
    problem = _saved_model_problem(saved)
    if problem is not None:
        raise DataError(path, None, f"corrupt model file ({problem})", rebuild_fix(path, "train"))
    for where, state_dict in [("state_dict", saved["state_dict"])] + [
            (f"members[{i}]", member) for i, member in enumerate(saved.get("members") or [])]:
        for key, tensor in state_dict.items():
            if (tensor.is_floating_point() or tensor.is_complex()) and not torch.isfinite(tensor).all():
                raise DataError(path, None, f"the weights {where}[{key!r}] hold NaN or infinite values (training "
                                "diverged, or the file was altered): its predictions would be NaN",
                                rebuild_fix(path, "train"))
    return saved


#: what a model setting's value must be, by the type of its field
_SETTING_TYPES = {"int": (int,), "float": (int, float), "bool": (bool,), "str": (str,)}


def _plain(value: object) -> bool:
    """Whether ``value`` is what a settings file holds: a string, a bool, None, a finite float
    or an integer a 64-bit integer holds (a longer one may not even print)."""
    return (value is None or isinstance(value, (str, bool)) or (isinstance(value, float) and math.isfinite(value))
            or (isinstance(value, int) and -2**63 <= value < 2**63))


def _saved_model_problem(saved: object) -> str | None:
    """What is wrong with ``saved`` (what :func:`torch.load` read from a model file), naming the
    key; None for a dict :func:`save_model` or :func:`save_ensemble` could have written: a
    ``model`` of known model settings of their types (:meth:`ModelSettings.validate`); state
    dicts (``state_dict``, at most :data:`MAX_MEMBERS` ``members``) of parameter names and
    tensors; ``encoder`` a mapping of names to plain values; ``settings_fingerprint`` a string."""
    if not isinstance(saved, dict) or not {"state_dict", "model"} <= saved.keys():
        return "no state_dict and model settings"
    model = saved["model"]
    if not isinstance(model, dict):
        return f"'model' is {type(model).__name__}, not the mapping of model settings"
    fields = {f.name: f for f in dataclasses.fields(ModelSettings)}
    for key, value in model.items():
        if key not in fields:
            return f"'model' has the key {key!r:.40}, not a model setting"
        kinds = _SETTING_TYPES[str(fields[key].type)]
        if not _plain(value) or (isinstance(value, bool) and bool not in kinds) or not isinstance(value, kinds):
            long = isinstance(value, int) and not -2**63 <= value < 2**63  # may not even print
            shown = f"an integer of {value.bit_length()} bits" if long else f"{value!r:.40}"
            return f"model.{key} is {shown}, not a value of type {fields[key].type}"
    try:
        settings = ModelSettings(**model)
        settings.validate("model")
    except ConfigError as exc:
        return str(exc)
    encoder = saved.get("encoder", {})
    if not isinstance(encoder, dict) or not all(isinstance(key, str) and _plain(value)
                                                for key, value in encoder.items()):
        return "'encoder' is not a mapping of encoder settings"
    if not isinstance(saved.get("settings_fingerprint", ""), str):
        return "'settings_fingerprint' is not a string"
    members = saved.get("members")
    if members is not None and (not isinstance(members, list) or not members):
        return "'members' is not a list of state dicts (an ensemble file)"
    if members is not None and len(members) > MAX_MEMBERS:
        return f"'members' holds {len(members):,} state dicts, more than the {MAX_MEMBERS} an ensemble may have"
    for where, state_dict in [("state_dict", saved["state_dict"])] + [
            (f"members[{i}]", member) for i, member in enumerate(members or [])]:
        if not isinstance(state_dict, dict):
            return f"{where} is {type(state_dict).__name__}, not a state dict"
        for key, tensor in state_dict.items():
            if not isinstance(key, str):
                return f"{where} has the key {key!r:.40}, not a parameter name"
            if not isinstance(tensor, torch.Tensor):
                return f"{where}[{key!r:.60}] is {type(tensor).__name__}, not a tensor"
        if settings.layers > len(state_dict):  # each layer has its own weights
            return f"model.layers is {settings.layers}, more than the {len(state_dict)} tensors of {where}"
    return None


def load_weights(model: RationaleNetwork, path: str | Path) -> None:
    """Load weights saved by :func:`save_model` into ``model`` (the warm start).

    Raises:
        DataError: the file is missing, corrupt, or was saved from a network of another shape.
    """
    _fit(model, read_saved_model(path), path)


def _fit(model: RationaleNetwork, saved: dict, path: str | Path) -> None:
    try:
        model.load_state_dict(saved["state_dict"])
    except RuntimeError as exc:
        raise DataError(path, None, f"weights do not fit this network ({str(exc).splitlines()[0]})",
                        "use the same model settings as the run that saved it") from exc
