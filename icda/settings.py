"""Model, training and ICDA settings: dataclasses read from the workflow's ``settings.json``.

The workflow writes one ``results/<dataset>/settings.json`` holding the keys ``encoder``
(:class:`icda.encoder.EncoderSettings` fields), ``model``, ``train`` and ``icda`` (the fields of the
dataclasses below) and ``device``; every command that trains or evaluates reads it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from icda.errors import ConfigError
from icda.io import read_json


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
    backward: every score gets the effect of swapping its sentence in).
    """

    d_model: int = 128
    layers: int = 1
    heads: int = 4
    dff: int = 256
    dropout: float = 0.1
    k: int = 1
    objective: str = "mmi"
    comp_lambda: float = 1.0
    finetune: bool = False
    n_classes: int = 2
    positions: str = "sinusoidal"
    classifier_input: str = "sentence"
    pool_unselected: str = "exclude"

    def validate(self, where: str = "model") -> None:
        for name, allowed in (("objective", ("mmi", "comp")), ("positions", ("sinusoidal", "learned", "none")),
                              ("classifier_input", ("sentence", "contextual")),
                              ("pool_unselected", ("exclude", "zero", "linear"))):
            if getattr(self, name) not in allowed:
                raise ConfigError(f"{where}.{name}={getattr(self, name)!r}: use one of {list(allowed)}")
        if self.d_model % self.heads:
            raise ConfigError(f"{where}: d_model={self.d_model} must be divisible by heads={self.heads}")
        for name in ("d_model", "heads", "dff", "k", "n_classes"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{where}.{name} must be positive")
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
    """

    lr: float = 1e-3
    encoder_lr: float | None = None
    weight_decay: float = 1e-2
    batch_size: int = 64
    max_epochs: int = 30
    patience: int = 5
    degeneration_threshold: float = 0.2
    degeneration_guard: bool = True
    shuffle_sentences: bool = False
    grad_clip: float | None = 1.0

    def validate(self, where: str = "train") -> None:
        if self.lr <= 0 or self.batch_size < 1 or self.max_epochs < 1 or self.patience < 1:
            raise ConfigError(f"{where}: lr, batch_size, max_epochs and patience must be positive")


@dataclass(frozen=True)
class IcdaSettings:
    """The ICDA loop (paper Algorithm 2, section "Implementation").

    ``pool_fraction``: share of a class's most confident correct documents whose rationales
    form the counterfactual pool (paper: 10 %). ``pool_base``: ``"class"`` takes that share of the
    class's documents (the paper); ``"kept"`` takes it of the kept originals per class (the authors'
    code, about 5 % of a class). ``max_iters``: the last iteration index allowed.
    ``candidate_loss``: the loss that ranks an iteration's candidates from iteration 1 on,
    ``"augmented_dev"`` (the paper) or ``"original_dev"`` (:func:`icda.selection.select_candidate`).
    """

    pool_fraction: float = 0.10
    pool_base: str = "class"
    max_iters: int = 10
    dev_seed: int = 0
    candidate_loss: str = "augmented_dev"

    def validate(self, where: str = "icda") -> None:
        if not 0 < self.pool_fraction <= 1:
            raise ConfigError(f"{where}.pool_fraction must lie in (0, 1]")
        if self.pool_base not in ("class", "kept"):
            raise ConfigError(f"{where}.pool_base={self.pool_base!r}: use 'class' or 'kept'")
        from icda.selection import CANDIDATE_LOSSES

        if self.candidate_loss not in CANDIDATE_LOSSES:
            raise ConfigError(f"{where}.candidate_loss={self.candidate_loss!r}: use one of {list(CANDIDATE_LOSSES)}")
        if self.max_iters < 1:
            raise ConfigError(f"{where}.max_iters must be >= 1")


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
        from icda.encoder import EncoderSettings

        values = dict(values)
        unknown = sorted(set(values) - {"encoder", "model", "train", "icda", "device"})
        if unknown:
            raise ConfigError(f"{where}: unknown key(s) {unknown}")
        return cls(
            encoder=EncoderSettings.from_dict(values.get("encoder") or {}),
            model=_from_dict(ModelSettings, values.get("model"), f"{where}.model"),
            train=_from_dict(TrainSettings, values.get("train"), f"{where}.train"),
            icda=_from_dict(IcdaSettings, values.get("icda"), f"{where}.icda"),
            device=values.get("device", "auto"),
        )

    @classmethod
    def load(cls, path: str | Path) -> "Settings":
        return cls.from_dict(read_json(path), where=str(path))

    def to_dict(self) -> dict[str, Any]:
        return {
            "encoder": self.encoder.to_dict(),
            "model": dataclasses.asdict(self.model),
            "train": dataclasses.asdict(self.train),
            "icda": dataclasses.asdict(self.icda),
            "device": self.device,
        }

