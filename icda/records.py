"""The records the workflow's steps hand each other: one dataclass per JSON file.

Every inter-step file is written and read only through its class here (``write(path)``,
``read(path)``), so its fields are defined once and checked on reading: a missing, corrupt or
malformed file raises :class:`~icda.errors.DataError` naming the file, the field and the fix.
Checked are the types, the ranges (:attr:`Record.RANGES`: probabilities and accuracies in
[0, 1], epochs, iterations), and every index: sentence positions and document indices are
non-negative and consistent with the record's own sizes (a pools record's ``n_documents``), and,
where the reader passes the documents' sentence counts (``read(path, n_sentences=...)``), each
position lies inside its document. A negative index is never used as Python's "from the end".

Vocabulary (paper section "Implementation"; docs/algorithm.md):

- **positions**: the sentence indices a model picks as a document's rationale (per document,
  ``list[int]``); the model's 0/1 mask tensor itself (the paper's z) is its ``rationale_mask`` (:mod:`icda.model`).
- **predictions** (``predictions.json``): a trained candidate's P(y=1) (with C > 2 classes also
  the C class probabilities) and positions on the original train and dev splits.
- **choice** (``choice.json``): which candidate of an iteration won (``chosen``), its scores
  and ΔA (:func:`icda.model_selection.select_candidate`).

==================  ======================  ===========================================
file                class                   written by
==================  ======================  ===========================================
history.json        :class:`History`        ``python -m icda train``
predictions.json    :class:`Predictions`    ``python -m icda train``
choice.json         :class:`Choice`         ``python -m icda select``
pools.json          :class:`Pools`          ``python -m icda pools``
converge.json       :class:`Decision`       ``python -m icda converge``
eval.json           :class:`Evaluation`     ``python -m icda evaluate``
summary.json        :class:`RunSummary`     the workflow's ``run_summary`` rule
eraser_scores.json  :class:`EraserScores`   ``python -m icda export-eraser --scores``
baselines.json      :class:`Baselines`      ``python -m icda report baselines``
data_audit.json     :class:`DataAudit`      ``python -m icda audit``
==================  ======================  ===========================================
"""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Iterable, Sequence

from icda.errors import DataError, rebuild_fix
from icda.io import read_json_file, write_json
from icda.layout import model_path, predictions_path

SPLITS_PREDICTED = ("train", "dev")
#: sentence id of an empty slot in a [B, N] id matrix (:class:`~icda.data.sentence_ids.SentenceIdSplit`,
#: the input of :class:`~icda.model.RationaleNetwork`)
PAD = -1


def _conforms(value: Any, hint: Any) -> bool:
    """Whether a JSON value fits a (simple) type hint: int, float, bool, str, list, dict, Any,
    unions with None."""
    if hint is Any:
        return True
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_conforms(value, h) for h in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, origin or hint)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _indices(value: Any, what: str) -> list[int]:
    """``value`` if it is a list of non-negative integers, else ValueError naming ``what``."""
    if not isinstance(value, list):
        raise ValueError(f"{what} is {type(value).__name__}, not a list of indices")
    for i, index in enumerate(value):
        if not _is_int(index) or index < 0:
            raise ValueError(f"{what}[{i}] is {json.dumps(index)}, not an index (an integer >= 0)")
    return value


def _inside(index: int, size: int, what: str, unit: str) -> None:
    """ValueError unless ``0 <= index < size`` (``size`` ``unit``: "documents", "sentences")."""
    if not 0 <= index < size:
        raise ValueError(f"{what} is {index}, outside 0 to {size - 1} ({size} {unit})")


class Record:
    """Base of the records: typed fields, JSON round trip, validation on reading."""

    #: what the file is, for error messages ("a training history")
    WHAT: ClassVar[str] = "a record"
    #: the ``python -m icda`` command that writes it (for the fix)
    COMMAND: ClassVar[str] = ""
    #: fields holding nested objects (built by :meth:`_load_field`, not type-checked here)
    NESTED: ClassVar[tuple[str, ...]] = ()
    #: {field: (lowest, highest)} a number field must lie in (None: not bounded on that side)
    RANGES: ClassVar[dict[str, tuple[float | None, float | None]]] = {}

    def to_json(self) -> dict[str, Any]:
        return {f.name: _dump(getattr(self, f.name)) for f in dataclasses.fields(self)}

    @classmethod
    def from_json(cls, obj: Any):
        """Build the record from its JSON object (keys that are no field are ignored).

        Raises:
            ValueError: a field is missing, of the wrong type or out of its range (the message
                names it), or an index is out of range (:meth:`check`).
        """
        if not isinstance(obj, dict):
            raise ValueError(f"not a JSON object ({type(obj).__name__})")
        hints = typing.get_type_hints(cls)
        values = {}
        for f in dataclasses.fields(cls):
            if f.name not in obj:
                if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING:
                    continue
                raise ValueError(f"field '{f.name}' is missing")
            value = cls._load_field(f.name, obj[f.name]) if f.name in cls.NESTED else obj[f.name]
            if f.name not in cls.NESTED and not _conforms(value, hints[f.name]):
                raise ValueError(f"field '{f.name}' is {type(value).__name__} {json.dumps(value)[:60]}, "
                                 f"not {hints[f.name]}")
            low, high = cls.RANGES.get(f.name, (None, None))
            if isinstance(value, (int, float)) and ((low is not None and value < low)
                                                    or (high is not None and value > high)):
                raise ValueError(f"field '{f.name}' is {value}, outside "
                                 f"[{'-inf' if low is None else low}, {'inf' if high is None else high}]")
            values[f.name] = value
        record = cls(**values)
        record.check()
        return record

    @classmethod
    def _load_field(cls, name: str, value: Any) -> Any:
        """Hook for the :attr:`NESTED` fields: turn the field's JSON value into its object."""
        raise NotImplementedError(name)

    def check(self) -> None:
        """Hook for checks beyond types and ranges (indices); raises ValueError."""

    def check_sentences(self, n_sentences: Any) -> None:
        """Hook: check the record's sentence positions against the documents' sentence counts;
        raises ValueError."""
        raise TypeError(f"{type(self).__name__} holds no sentence positions")

    def write(self, path: str | Path) -> None:
        """Write the record as indented JSON, atomically (:func:`icda.io.write_json`)."""
        write_json(self.to_json(), path)

    @classmethod
    def read(cls, path: str | Path, n_sentences: Any = None):
        """Read and validate the record at ``path``.

        Args:
            n_sentences: the sentence counts of the documents the record's positions refer to
                (:meth:`check_sentences`; only for records that hold positions), or None.

        Raises:
            DataError: the file is missing, not JSON (with the line), or not this record (the
                field named; among others an index or probability out of range, or a position
                past the end of its document); the fix names the step that writes it.
        """
        path = Path(path)
        obj = read_json_file(path, f"run the step that writes it first (`python -m icda {cls.COMMAND}`)",
                             rebuild_fix(path, cls.COMMAND))
        try:
            record = cls.from_json(obj)
            if n_sentences is not None:
                record.check_sentences(n_sentences)
            return record
        except ValueError as exc:
            raise DataError(path, None, f"not {cls.WHAT}: {exc}", rebuild_fix(path, cls.COMMAND)) from None


def _dump(value: Any) -> Any:
    if hasattr(value, "to_json"):  # a record, an augmentation plan
        return value.to_json()
    if isinstance(value, dict):
        return {k: _dump(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_dump(v) for v in value]
    return value


# --------------------------------------------------------------------------- train


@dataclass(frozen=True)
class History(Record):
    """``history.json`` of one trained model (:func:`icda.train.train_model`, paper "Settings"):
    the kept epoch (``best_epoch``; −1 = the initial evaluation), its dev loss (nats) and
    accuracy, whether every epoch was degenerate, one dict per epoch
    (:class:`icda.train.EpochRecord`), the mean seconds per trained epoch, and how it was
    trained (seed, warm-start file, pools file, objective, COMP λ); ``cpu_seconds``: the CPU
    time of the training process spent on this model outside its epochs, ``{"load": reading
    the data and embeddings (the job's, on its first model), "predictions": the final
    predictions and files}`` (None in files written before it existed); ``rationale_probe``: the
    dev accuracy of the rationale probe on the kept model's rationales (:mod:`icda.rationale_probe`;
    None in fine-tuning mode and in files written before it existed); ``label_flip``: the dev flip
    rate of the kept model's counterfactuals (:mod:`icda.label_flip`; None where not computed)."""

    WHAT: ClassVar[str] = "a training history"
    COMMAND: ClassVar[str] = "train"
    RANGES: ClassVar[dict] = {"best_epoch": (-1, None), "dev_loss": (0, None), "dev_accuracy": (0, 1),
                              "seconds_per_epoch": (0, None), "rationale_probe": (0, 1), "label_flip": (0, 1)}

    best_epoch: int
    dev_loss: float
    dev_accuracy: float
    degenerate: bool
    epochs: list
    seconds_per_epoch: float | None
    seed: int | None
    init: str | None = None
    augmented: str | None = None
    objective: str = "mmi"
    comp_lambda: float = 1.0
    cpu_seconds: dict | None = None
    rationale_probe: float | None = None
    label_flip: float | None = None

    @property
    def epochs_trained(self) -> int:
        return sum(e["epoch"] >= 0 for e in self.epochs)


def _check_splits(record: Any, n_sentences: dict[str, Sequence[int]]) -> None:
    """``check_sentences`` of each split field of ``record`` named in ``n_sentences`` (its
    documents' sentence counts; a split the record does not hold, None, has nothing to check);
    the error names the field."""
    for split, counts in n_sentences.items():
        if getattr(record, split) is None:
            continue
        try:
            getattr(record, split).check_sentences(counts)
        except ValueError as exc:
            raise ValueError(f"field '{split}': {exc}") from None


@dataclass(frozen=True)
class SplitPredictions(Record):
    """A model's predictions on the D documents of one split: ``prob_positive`` [D] (P(y=1),
    rounded to 6 decimals), ``positions`` (per document, its rationale's sentence indices) and,
    for a model of C > 2 classes, ``probabilities`` [D][C] (P(y=c), rounded to 6 decimals; None,
    and left out of the file, for two classes, where P(y=0) = 1 − P(y=1))."""

    WHAT: ClassVar[str] = "split predictions"
    prob_positive: list
    positions: list
    probabilities: list | None = None

    def check(self) -> None:
        if len(self.prob_positive) != len(self.positions):
            raise ValueError(f"{len(self.prob_positive)} probabilities but {len(self.positions)} position lists")
        for i, p in enumerate(self.prob_positive):
            if not _conforms(p, float) or not 0 <= p <= 1:
                raise ValueError(f"prob_positive[{i}] is {json.dumps(p)}, not a probability in [0, 1]")
        for i, positions in enumerate(self.positions):
            _indices(positions, f"positions[{i}]")
        if self.probabilities is not None:
            if len(self.probabilities) != len(self.positions):
                raise ValueError(f"{len(self.probabilities)} rows of class probabilities but "
                                 f"{len(self.positions)} position lists")
            for i, row in enumerate(self.probabilities):
                if not (isinstance(row, list) and len(row) > 2
                        and all(_conforms(p, float) and 0 <= p <= 1 for p in row)):
                    raise ValueError(f"probabilities[{i}] is {json.dumps(row)[:60]}, not a list of more than "
                                     "two class probabilities in [0, 1]")

    def to_json(self) -> dict[str, Any]:
        out = super().to_json()
        if self.probabilities is None:  # two classes: the file as before multi-class
            del out["probabilities"]
        return out

    @property
    def class_probabilities(self) -> list:
        """Per document what its label is scored by: P(y=1) (a float, two classes) or the C class
        probabilities (a list); :func:`icda.model_selection.probability_of` reads either."""
        return self.prob_positive if self.probabilities is None else self.probabilities

    def predicted(self) -> list[int]:
        """[D] the predicted classes: P(y=1) > 0.5 (two classes), else the most probable class
        (the model's argmax up to the 6-decimal rounding)."""
        if self.probabilities is None:
            return [int(p > 0.5) for p in self.prob_positive]
        return [max(range(len(row)), key=row.__getitem__) for row in self.probabilities]

    def check_sentences(self, n_sentences: Sequence[int]) -> None:
        """Check that there is one position list per document and that each position lies inside
        its document (``n_sentences[d]``: the sentences document d shows the model)."""
        if len(self.positions) != len(n_sentences):
            raise ValueError(f"{len(self.positions)} documents, but the prepared split has {len(n_sentences)}")
        for d, positions in enumerate(self.positions):
            for p in positions:
                _inside(p, n_sentences[d], f"a position of document {d} (positions[{d}])", "sentences")


@dataclass(frozen=True)
class Predictions(Record):
    """``predictions.json`` of one trained candidate: its :class:`SplitPredictions` on the
    original train and dev splits (pools, ΔA and the original-dev loss are computed from them)
    and on the test split (``evaluate`` scores them against the test ground truth, which training
    never reads; None in files written before it existed)."""

    WHAT: ClassVar[str] = "candidate predictions"
    COMMAND: ClassVar[str] = "train"
    NESTED: ClassVar[tuple[str, ...]] = (*SPLITS_PREDICTED, "test")
    train: SplitPredictions
    dev: SplitPredictions
    test: SplitPredictions | None = None

    @classmethod
    def _load_field(cls, name: str, value: Any) -> Any:
        if name == "test" and value is None:
            return None
        try:
            return SplitPredictions.from_json(value)
        except ValueError as exc:
            raise ValueError(f"field '{name}': {exc}") from None

    def check_sentences(self, n_sentences: dict[str, Sequence[int]]) -> None:
        """:meth:`SplitPredictions.check_sentences` of each split in ``n_sentences``
        (``{"train": [...], "dev": [...]}``)."""
        _check_splits(self, n_sentences)


# the files of a candidate folder: MODEL_FILE, PREDICTIONS_FILE, HISTORY_FILE, MODEL_CARD_FILE (icda.layout)


@dataclass(frozen=True)
class ModelCard(Record):
    """``model.json`` beside a ``model.pt`` (a candidate folder, or the exported
    ``results/<dataset>/icda_model/``): what ``python -m icda predict`` needs to read new
    documents as the model read its training data.

    ``settings``: the settings it was trained with (the dict of ``settings.json``; ``encoder``
    decides how a sentence becomes a vector); ``encoder_fingerprint``: the digest of the
    encoder's files then (:func:`icda.encoder.encoder_fingerprint`), checked on load;
    ``source``: the candidate folder an exported model was copied from (None in a candidate);
    ``class_names``: the names of its classes in label order 0 … C−1, from the prepared dataset
    (``python -m icda predict`` prints them as its ``label``; None: the classes are unnamed, or
    a candidate folder).
    """

    WHAT: ClassVar[str] = "a model card"
    COMMAND: ClassVar[str] = "train"

    settings: dict
    encoder_fingerprint: str
    source: str | None = None
    class_names: list[str] | None = None

    def check(self) -> None:
        model = self.settings.get("model") if isinstance(self.settings, dict) else None
        n = model.get("n_classes") if isinstance(model, dict) else None
        if self.class_names is not None and not all(isinstance(name, str) for name in self.class_names):
            raise ValueError("field 'class_names' is not a list of strings")
        if self.class_names is not None and isinstance(n, int) and len(self.class_names) != n:
            raise ValueError(f"field 'class_names' names {len(self.class_names)} classes, the model has {n}")


# --------------------------------------------------------------------------- select


@dataclass(frozen=True)
class CandidateScore(Record):
    """One candidate of an iteration as :func:`icda.model_selection.select_candidate` scored it: its
    folder, whether it is the warm start, its seed, dev loss (nats; on the dev set it was trained
    with), loss on the original dev set, dev accuracy, degeneration, best epoch, ΔA against the
    previous choice and score (lower wins)."""

    RANGES: ClassVar[dict] = {"dev_loss": (0, None), "original_dev_loss": (0, None), "dev_accuracy": (0, 1),
                              "best_epoch": (-1, None), "delta_A": (0, 1), "score": (0, None), "agreement": (0, 1),
                              "rationale_probe": (0, 1), "label_flip": (0, 1)}
    name: str
    candidate_dir: str
    warm_start: bool
    seed: int | None
    dev_loss: float
    original_dev_loss: float | None
    dev_accuracy: float
    degenerate: bool
    best_epoch: int
    delta_A: float | None
    score: float
    original_dev_accuracy: float | None = None
    agreement: float | None = None  #: mean share of dev documents where it picks what each other fresh candidate picks
    #: dev accuracy of the rationale probe on its rationales (icda.rationale_probe; None: not computed)
    rationale_probe: float | None = None
    #: dev flip rate of its counterfactuals (icda.label_flip; None: not computed)
    label_flip: float | None = None


@dataclass(frozen=True)
class Choice(Record):
    """``choice.json``: the candidate ``chosen`` in iteration ``iteration`` (paper Algorithm 2)
    with its scores, the loss that ranked the candidates, the previous iteration's ΔA, every
    candidate's :class:`CandidateScore` and ``reason``, why it won
    (:func:`icda.model_selection.choose`; None in files written before it existed). The chosen
    candidate's folder (``chosen.candidate_dir``) is followed only here, with the file names of
    :mod:`icda.layout`: :attr:`candidate_path`, :attr:`model_path`, :attr:`predictions_path`,
    :meth:`predictions`, :meth:`fresh_predictions`."""

    WHAT: ClassVar[str] = "a candidate choice"
    COMMAND: ClassVar[str] = "select"
    NESTED: ClassVar[tuple[str, ...]] = ("chosen", "candidates")
    RANGES: ClassVar[dict] = {"iteration": (0, None), "previous_delta_A": (0, 1), "agreement": (0, 1)}

    iteration: int
    candidate_loss: str
    previous_delta_A: float | None
    chosen: CandidateScore
    candidates: list = field(default_factory=list)
    reason: str | None = None
    delta_a_gate: bool = True  #: whether the paper's ΔA penalty scored the candidates
    candidate_choice: str = "loss"  #: "loss" (lowest score) or "agreement" (icda.model_selection.choose)
    agreement: float | None = None  #: the fresh candidates' mean pairwise agreement on dev rationales
    #: with ``icda.final_selector`` ``candidates`` or ``ensemble`` (k >= 1): the candidate folders of the
    #: selector this iteration reports, per iteration of its window (k alone, or max(1, k − 2) … k), oldest first; None: the
    #: chosen candidate alone (:func:`icda.model_selection.ensemble_window`)
    ensemble: list[list[str]] | None = None

    @classmethod
    def _load_field(cls, name: str, value: Any) -> Any:
        if name == "candidates" and not isinstance(value, list):
            raise ValueError("field 'candidates' is not a list")
        try:
            if name == "chosen":
                return CandidateScore.from_json(value)
            return [CandidateScore.from_json(row) for row in value]
        except ValueError as exc:
            raise ValueError(f"field '{name}': {exc}") from None

    @property
    def candidate_path(self) -> Path:
        """The chosen candidate's folder (a candidate folder of :mod:`icda.layout`)."""
        return Path(self.chosen.candidate_dir)

    @property
    def model_path(self) -> Path:
        """The chosen candidate's ``model.pt``."""
        return model_path(self.candidate_path)

    @property
    def predictions_path(self) -> Path:
        """The chosen candidate's ``predictions.json``."""
        return predictions_path(self.candidate_path)

    def predictions(self, n_sentences: dict[str, Sequence[int]] | None = None) -> Predictions:
        """The chosen candidate's ``predictions.json`` (positions checked against
        ``n_sentences``, :meth:`Predictions.check_sentences`, when given).

        Raises:
            DataError: it is missing or malformed.
        """
        return Predictions.read(self.predictions_path, n_sentences)

    @property
    def reported_models(self) -> list[Path]:
        """The ``model.pt`` of the selector this iteration reports: the ensemble's members
        (:attr:`ensemble`), or the chosen candidate's alone."""
        if not self.ensemble:
            return [self.model_path]
        return [model_path(folder) for group in self.ensemble for folder in group]

    def fresh_predictions(self, n_sentences: dict[str, Sequence[int]] | None = None) -> list[Predictions]:
        """The ``predictions.json`` of every fresh (not warm-started) candidate, in order.

        Raises:
            DataError: one is missing or malformed.
        """
        return [Predictions.read(predictions_path(c.candidate_dir), n_sentences)
                for c in self.candidates if not c.warm_start]


# --------------------------------------------------------------------------- pools


@dataclass
class AugmentationPlan:
    """What the counterfactuals of one split are drawn from (paper section "Implementation").

    kept: indices of the kept original documents (C·m of them).
    positions: per kept document, its rationale positions (the slots to replace).
    pools: class → [(document index, position)] of the rationale pool A_c, for each of the C
        classes.
    targets: class y → the classes a counterfactual of a class-y document may take (one drawn
        uniformly); None: every other class.
    """

    kept: list[int]
    positions: list[list[int]]
    pools: dict[int, list[tuple[int, int]]]
    targets: dict[int, list[int]] | None = None

    def to_json(self) -> dict:
        out = {
            "kept": self.kept,
            "positions": self.positions,
            "pools": {str(c): [list(r) for r in refs] for c, refs in self.pools.items()},
        }
        if self.targets is not None:
            out["targets"] = {str(y): list(cs) for y, cs in self.targets.items()}
        return out

    @classmethod
    def from_json(cls, obj: dict) -> "AugmentationPlan":
        targets = obj.get("targets")
        return cls(
            kept=[int(i) for i in obj["kept"]],
            positions=[[int(p) for p in ps] for ps in obj["positions"]],
            pools={int(c): [(int(d), int(p)) for d, p in refs] for c, refs in obj["pools"].items()},
            targets=None if targets is None else {int(y): [int(c) for c in cs] for y, cs in targets.items()},
        )

    def target_classes(self, label: int) -> list[int]:
        """The classes a counterfactual of a class-``label`` document may take."""
        if self.targets is not None:
            return self.targets[label]
        return [c for c in sorted(self.pools) if c != label]



@dataclass(frozen=True)
class SplitPools(Record):
    """The kept originals and rationale pools of one split (:func:`icda.counterfactual.build_plan`):
    its statistics, the :class:`AugmentationPlan`, and the pool sentences'
    text per class (for reading only)."""

    NESTED: ClassVar[tuple[str, ...]] = ("plan",)
    stats: dict
    plan: Any  #: an AugmentationPlan
    pool_sentences: dict

    @classmethod
    def _load_field(cls, name: str, value: Any) -> Any:
        if name != "plan":
            return value
        if not isinstance(value, dict) or not {"kept", "positions", "pools"} <= value.keys():
            raise ValueError("field 'plan' is not an augmentation plan (keys kept, positions, pools)")
        _indices(value["kept"], "plan.kept")
        if not isinstance(value["positions"], list):
            raise ValueError("plan.positions is not a list")
        for i, positions in enumerate(value["positions"]):
            _indices(positions, f"plan.positions[{i}]")
        classes = [str(c) for c in range(max(2, len(value["pools"]) if isinstance(value["pools"], dict) else 0))]
        if not isinstance(value["pools"], dict) or set(value["pools"]) != set(classes):
            raise ValueError(f"plan.pools is not a mapping of the classes {', '.join(map(json.dumps, classes))} "
                             "(0 … C−1, C >= 2)")
        targets = value.get("targets")
        if targets is not None and not (
                isinstance(targets, dict) and set(targets) == set(classes)
                and all(isinstance(cs, list) and cs and all(str(c) in classes and str(c) != y for c in cs)
                        for y, cs in targets.items())):
            raise ValueError(f"plan.targets is {json.dumps(targets)[:80]}, not a mapping of a class to a "
                             "non-empty list of other classes")
        for c, refs in value["pools"].items():
            if not isinstance(refs, list):
                raise ValueError(f"plan.pools.{c} is not a list of [document, position] pairs")
            for i, ref in enumerate(refs):
                if len(_indices(ref, f"plan.pools.{c}[{i}]")) != 2:
                    raise ValueError(f"plan.pools.{c}[{i}] is {json.dumps(ref)}, not a [document, position] pair")
        return AugmentationPlan.from_json(value)

    def check(self) -> None:
        plan = self.plan
        if len(plan.positions) != len(plan.kept):
            raise ValueError(f"plan: {len(plan.kept)} kept documents but {len(plan.positions)} position lists")
        if len(set(plan.kept)) != len(plan.kept):
            raise ValueError("plan.kept lists a document twice")
        n = self.stats.get("n_documents")
        if not _is_int(n) or n < 0:
            raise ValueError(f"stats.n_documents is {json.dumps(n)}, not a number of documents")
        for i, d in enumerate(plan.kept):
            _inside(d, n, f"plan.kept[{i}]", "documents in stats.n_documents")
        for c, refs in plan.pools.items():
            for i, (d, _) in enumerate(refs):
                _inside(d, n, f"the document of plan.pools.{c}[{i}]", "documents in stats.n_documents")

    def check_sentences(self, n_sentences: Sequence[int]) -> None:
        """Check the plan against the split's documents (``n_sentences[d]``: the sentences of
        document d): as many documents, and every position inside its document."""
        if len(n_sentences) != self.stats["n_documents"]:
            raise ValueError(f"built for {self.stats['n_documents']} documents, but the prepared split has "
                             f"{len(n_sentences)}")
        for i, (d, positions) in enumerate(zip(self.plan.kept, self.plan.positions)):
            for p in positions:
                _inside(p, n_sentences[d], f"a position of kept document {d} (plan.positions[{i}])", "sentences")
        for c, refs in self.plan.pools.items():
            for i, (d, p) in enumerate(refs):
                _inside(p, n_sentences[d], f"the position of plan.pools.{c}[{i}] (document {d})", "sentences")


@dataclass(frozen=True)
class Pools(Record):
    """``pools.json`` of one iteration: the chosen candidate and :class:`SplitPools` of the
    original train and dev splits (paper "Implementation", "Settings"), or, where the chosen
    selector gets a whole class wrong so that no counterfactual can be built
    (:class:`icda.counterfactual.NoCounterfactual`), ``blocked``: why, and no splits. A blocked
    iteration ends its run (:func:`icda.model_selection.convergence`); nothing is augmented from it
    (:meth:`read_plans` refuses it)."""

    WHAT: ClassVar[str] = "a pools record"
    COMMAND: ClassVar[str] = "pools"
    NESTED: ClassVar[tuple[str, ...]] = SPLITS_PREDICTED
    chosen: str
    candidate_dir: str
    train: SplitPools | None
    dev: SplitPools | None
    blocked: str | None = None

    @classmethod
    def _load_field(cls, name: str, value: Any) -> Any:
        if name not in SPLITS_PREDICTED or value is None:
            return value
        try:
            return SplitPools.from_json(value)
        except ValueError as exc:
            raise ValueError(f"field '{name}': {exc}") from None

    def check(self) -> None:
        if (self.blocked is None) != (self.train is not None and self.dev is not None):
            raise ValueError("a pools record holds either both splits' pools (train, dev) or 'blocked', "
                             "the reason none could be built")

    @classmethod
    def read_plans(cls, path: str | Path, n_sentences: Any = None) -> "Pools":
        """:meth:`read`, refusing a blocked record (augment and train need its plans).

        Raises:
            DataError: as :meth:`read`, or the record is blocked (the message says why).
        """
        record = cls.read(path, n_sentences)
        if record.blocked is not None:
            raise DataError(path, None, f"this iteration built no counterfactual ({record.blocked}); the "
                            "run ends at it and nothing is augmented from it",
                            "augment or train from an iteration whose pools were built (its converge.json "
                            "names the iteration taken as ICDA)")
        return record

    def check_sentences(self, n_sentences: dict[str, Sequence[int]]) -> None:
        """:meth:`SplitPools.check_sentences` of each split in ``n_sentences``
        (``{"train": [...], "dev": [...]}``)."""
        _check_splits(self, n_sentences)


# --------------------------------------------------------------------------- converge


#: a run's verdict (``icda.verdict``: :func:`icda.model_selection.verdict` or
#: :func:`icda.run_agreement.run_agreement_verdict`): the loop helped (its ICDA is reported); it
#: did not apply (MMI reported); it went the wrong way (MMI reported); nothing could be measured
#: (fine-tuning mode, or a single run; ICDA reported as the stop rule took it)
VERDICTS = ("helped", "did not apply", "wrong way", "not measured")
#: the verdicts under which a run reports the iteration its stop rule took; under the others, MMI
REPORTS_ICDA = ("helped", "not measured")


@dataclass(frozen=True)
class Decision(Record):
    """``converge.json``: whether the ICDA loop stops after iteration ``iteration``
    (:func:`icda.model_selection.convergence`), whether that is convergence, and why; ``signals``: per
    iteration 0 … ``iteration`` what the stop rule reads (:class:`icda.model_selection.Signals` as
    dicts); when it stops, ``final_iteration``: the iteration taken as ICDA (its selector and
    augmented dataset), and ``final_reason``, why."""

    WHAT: ClassVar[str] = "a stop decision"
    COMMAND: ClassVar[str] = "converge"
    RANGES: ClassVar[dict] = {"iteration": (0, None)}
    iteration: int
    stop: bool
    converged: bool
    reason: str
    signals: list = field(default_factory=list)
    final_iteration: int | None = None
    final_reason: str | None = None
    #: the iteration's pools record is blocked (:attr:`Pools.blocked`): the run stopped because its
    #: selector got a whole class wrong, and this iteration has no augmented dataset
    blocked: bool = False
    #: once stopped, whether ICDA applied (:data:`VERDICTS`, :func:`icda.model_selection.verdict`;
    #: None: ``icda.verdict: none``), and why, in a line
    verdict: str | None = None
    verdict_reason: str | None = None

    def check(self) -> None:
        _check_verdict(self.verdict)


def _check_verdict(verdict: str | None) -> None:
    if verdict is not None and verdict not in VERDICTS:
        raise ValueError(f"field 'verdict' is {verdict!r}, not one of {list(VERDICTS)}")


# --------------------------------------------------------------------------- evaluate

_FRACTION = {"type": "number", "minimum": 0, "maximum": 1}
_FRACTION_OR_NULL = {"anyOf": [_FRACTION, {"type": "null"}]}
#: what every ``eval.json`` must satisfy (checked by :meth:`Evaluation.from_json`)
EVAL_SCHEMA = {
    "type": "object",
    "required": ["precision", "recall", "f1", "accuracy"],
    "properties": {
        "dataset": {"type": "string", "minLength": 1},
        "run": {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}]},
        "iteration": {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]},
        "precision": _FRACTION_OR_NULL,
        "recall": _FRACTION_OR_NULL,
        "f1": _FRACTION_OR_NULL,
        "accuracy": _FRACTION_OR_NULL,
        "n_docs": {"type": "integer", "minimum": 0},
        "documents": {"type": "object", "required": ["ids", "positions", "predicted"], "properties": {
            "ids": {"type": "array", "items": {"type": "string"}},
            "positions": {"type": "array", "items": {"type": "array", "items": {"type": "integer", "minimum": 0}}},
            "predicted": {"type": "array", "items": {"type": ["integer", "null"], "minimum": 0}},
        }},
        "position_histogram": {"anyOf": [{"type": "array", "items": {"type": "integer", "minimum": 0}},
                                         {"type": "null"}]},
        "precision_by_class": {"anyOf": [{"type": "object", "additionalProperties": _FRACTION_OR_NULL},
                                         {"type": "null"}]},
    },
}

#: the labels an evaluation can carry (``python -m icda evaluate --dataset … --run …``)
EVAL_LABELS = ("dataset", "run", "iteration", "point", "seed")


@dataclass(frozen=True)
class Evaluation(Record):
    """``eval.json``: a model's rationale metrics on one split (:func:`icda.metrics.rationale_metrics`:
    fractions in [0, 1]; precision is the paper's metric, α = 1 − precision), what it is
    (dataset, run, iteration — None for COMP —, or sweep point and seed), the model file, and
    per document of the split (in order) its id, rationale positions and predicted class, which
    the rationale viewer shows."""

    WHAT: ClassVar[str] = "an evaluation record"
    COMMAND: ClassVar[str] = "evaluate"

    precision: float | None
    recall: float | None
    f1: float | None
    accuracy: float | None
    alpha: float | None = None
    n_docs: int | None = None
    n_annotated: int | None = None
    position_histogram: list | None = None
    precision_by_class: dict | None = None  #: {"0": precision, …, "C−1": precision} per gold class
    model: str | None = None
    split: str = "test"
    documents: dict | None = None  #: {"ids": [D], "positions": [D lists], "predicted": [D]}
    dataset: str | None = None
    run: int | None = None
    iteration: int | None = None
    point: str | None = None
    seed: int | None = None

    def check(self) -> None:
        docs = self.documents
        if docs is not None and not len(docs["ids"]) == len(docs["positions"]) == len(docs["predicted"]):
            raise ValueError(f"field 'documents': {len(docs['ids'])} ids, {len(docs['positions'])} position "
                             f"lists and {len(docs['predicted'])} predictions")

    def class_precision(self, label: int) -> float | None:
        """Precision over the documents of gold class ``label`` (None where not recorded)."""
        return (self.precision_by_class or {}).get(str(label))

    @classmethod
    def from_json(cls, obj: Any):
        import jsonschema

        error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(EVAL_SCHEMA).iter_errors(obj))
        if error is not None:
            place = "/".join(str(p) for p in error.absolute_path)
            raise ValueError(f"{f'field {place!r}: ' if place else ''}{error.message}")
        return super().from_json(obj)

    def to_json(self) -> dict[str, Any]:
        out = super().to_json()
        labels = {k: out.pop(k) for k in EVAL_LABELS}
        return {k: v for k, v in labels.items() if v is not None} | out  # labels first

    def positions(self, path: str | Path) -> list[list[int]]:
        """Per document of the split, the rationale positions (the rationale viewer's input).

        Raises:
            DataError: the record has no per-document positions (written by an older version).
        """
        if not isinstance(self.documents, dict) or not {"ids", "positions"} <= self.documents.keys():
            raise DataError(path, None, "no per-document rationale positions (key 'documents')",
                            "re-run the evaluations with `snakemake --forcerun evaluate evaluate_comp` (no "
                            "model is retrained), or delete this file and re-run its evaluate step")
        return [list(map(int, p)) for p in self.documents["positions"]]


# --------------------------------------------------------------------------- run summary


def icda_iteration(iterations: Iterable[int], taken: int | None = None) -> int | None:
    """Which iteration of a run is ICDA, the one rule every reader (run summaries, result tables,
    rationale viewer, workflow) follows: ``taken``, the iteration the run's stop rule took (a
    decision's or summary's ``final_iteration``), or, where none is recorded (a file written
    before it existed, a run still going), the last of ``iterations``. A run with only
    iteration 0 (MMI) has no ICDA yet (None); a run that went further reports MMI only where its
    final choice took iteration 0 (``icda.final_choice: rationale_probe``, the guard against a
    loop that made its rationales worse).

    Raises:
        ValueError: ``taken`` is None and ``iterations`` is empty.
    """
    last = max(iterations)
    k = last if taken is None else taken
    return k if k >= 1 or last >= 1 else None


@dataclass(frozen=True)
class RunSummary(Record):
    """``summary.json`` of one ICDA run: its iterations, per iteration the test precision, α,
    accuracy and stop reason, why the loop stopped, and which iteration is ICDA
    (``final_iteration``; None in files written before it existed: the last) and why."""

    WHAT: ClassVar[str] = "a run summary"
    COMMAND: ClassVar[str] = "converge"
    RANGES: ClassVar[dict] = {"run": (1, None), "iterations": (1, None)}
    dataset: str
    run: int
    iterations: int
    converged: bool
    reason: str
    per_iteration: list
    final_iteration: int | None = None
    final_reason: str | None = None
    blocked: bool = False  #: the run stopped at an iteration that built no counterfactual (Decision.blocked)
    verdict: str | None = None  #: whether ICDA applied (Decision.verdict)
    verdict_reason: str | None = None

    def check(self) -> None:
        _check_verdict(self.verdict)

    @property
    def icda_iteration(self) -> int | None:
        """The iteration taken as ICDA (:func:`icda_iteration`): ``final_iteration``, or the last
        one; None for a run with only iteration 0."""
        return icda_iteration(range(self.iterations), self.final_iteration)


@dataclass(frozen=True)
class DatasetVerdict(Record):
    """``results/<dataset>/verdict.json`` (``icda.verdict: run_agreement``): whether ICDA helped
    the dataset's runs, read from how far their rationales agree before and after the loop
    (:func:`icda.run_agreement.run_agreement_verdict`; no ground truth), and per run (``runs``,
    in order) its own verdict and reason (:func:`icda.run_agreement.run_verdicts`: the dataset's,
    or "helped" where its rationale sufficiency rose by the rule's margin while the runs split),
    the sufficiency of its MMI and ICDA selectors (nats; None without a sentence judge), the
    iteration its stop rule took (``loop_iterations``) and the one it reports (``reported``: that
    one where its verdict is one of :data:`REPORTS_ICDA`, else 0, MMI; written out for the reader
    of the file, and checked against the verdicts). A file without ``run_verdicts`` gives every
    run the dataset's verdict."""

    WHAT: ClassVar[str] = "a dataset verdict"
    COMMAND: ClassVar[str] = "verdict"
    RANGES: ClassVar[dict] = {"mmi_agreement": (0, 1), "icda_agreement": (0, 1)}
    dataset: str
    verdict: str
    reason: str
    runs: list[int]
    loop_iterations: list[int]
    reported: list[int]
    mmi_agreement: float | None = None  #: mean pairwise agreement of the runs' MMI selectors on dev
    icda_agreement: float | None = None  #: the same of their ICDA selectors (None: one run)
    run_verdicts: list[str] | None = None  #: per run, its verdict (None: the dataset's for every run)
    run_reasons: list[str] | None = None  #: per run, why
    mmi_sufficiency: list[float | None] | None = None  #: per run, its MMI selector's rationale sufficiency
    icda_sufficiency: list[float | None] | None = None  #: per run, its ICDA selector's

    def check(self) -> None:
        _check_verdict(self.verdict)
        n = len(self.runs)
        per_run = {"loop_iterations": self.loop_iterations, "reported": self.reported,
                   "run_verdicts": self.run_verdicts, "run_reasons": self.run_reasons,
                   "mmi_sufficiency": self.mmi_sufficiency, "icda_sufficiency": self.icda_sufficiency}
        for name, values in per_run.items():
            if not n or (values is not None and len(values) != n):
                raise ValueError(f"field '{name}' holds {len(values or [])} entries for {n} runs, not one per run")
        kinds = {"runs": (self.runs, int), "loop_iterations": (self.loop_iterations, int),
                 "reported": (self.reported, int), "run_verdicts": (self.run_verdicts or [], str),
                 "run_reasons": (self.run_reasons or [], str)}
        for name, (values, kind) in kinds.items():
            if any(isinstance(v, bool) or not isinstance(v, kind) for v in values):
                raise ValueError(f"field '{name}' holds {values!r}, not a list of {kind.__name__}")
        for value in [*(self.mmi_sufficiency or []), *(self.icda_sufficiency or [])]:
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                      or not (math.isfinite(value) and value <= 0)):
                raise ValueError(f"a rationale sufficiency is {value!r}, not a log-probability (a finite value <= 0)")
        for run in self.runs:
            verdict = self.run_verdict(run)[0]
            _check_verdict(verdict)
            if verdict != self.verdict and (self.verdict in REPORTS_ICDA or verdict != "helped"):
                raise ValueError(f"run {run}: verdict {verdict!r} under the dataset's {self.verdict!r} "
                                 "(a run differs from its dataset only as 'helped' where the dataset's reports MMI)")
        for run, loop, reported in zip(self.runs, self.loop_iterations, self.reported):
            verdict = self.run_verdict(run)[0]
            expected, what = (loop, "the stop rule's iteration") if verdict in REPORTS_ICDA else (0, "MMI")
            if loop < 0 or reported != expected:
                raise ValueError(f"run {run}: field 'reported' is {reported}, not {expected} "
                                 f"({what}, as verdict {verdict!r} says)")

    def _index(self, run: int) -> int:
        if run not in self.runs:
            raise ValueError(f"{self.dataset}: the verdict holds runs {self.runs}, not run {run}")
        return self.runs.index(run)

    def run_verdict(self, run: int) -> tuple[str, str]:
        """``run``'s verdict and reason. Raises ValueError: the verdict holds no such run."""
        i = self._index(run)
        if self.run_verdicts is None:
            return self.verdict, self.reason
        return self.run_verdicts[i], (self.reason if self.run_reasons is None else self.run_reasons[i])

    def reported_iteration(self, run: int) -> int:
        """The iteration ``run`` reports. Raises ValueError: the verdict holds no such run."""
        return self.reported[self._index(run)]


# --------------------------------------------------------------------------- ERASER scores


def _at(obj: Any, path: tuple) -> Any:
    """``obj[path[0]][path[1]]…`` (an int indexes a list); ValueError naming the path where it
    does not exist."""
    for i, key in enumerate(path):
        try:
            obj = obj[key]
        except (KeyError, IndexError, TypeError):
            raise ValueError(f"field '{'.'.join(map(str, path[: i + 1]))}' is missing") from None
    return obj


@dataclass(frozen=True)
class EraserScores(Record):
    """The ``--scores`` JSON of ``python -m icda export-eraser`` (``eraser_scores.json`` of an
    iteration or of COMP, ``results/<dataset>/eraser/icda_scores.json``): ERASER's metrics of one
    selector's rationales on one split under ERASER's keys (:func:`icda.eraser_metrics.score_results`),
    the paper's precision on the same documents (``paper``), the model, the ids left out, and,
    like ``eval.json``, what it is (dataset, run, iteration — None for COMP). The numbers the
    tables show are :attr:`SUMMARY` (:meth:`summary`); each is checked on reading: the P/R/F1,
    IOU and AUPRC values are fractions in [0, 1], comprehensiveness, sufficiency and AOPC
    differences of probabilities in [−1, 1] (None where ERASER has no number)."""

    WHAT: ClassVar[str] = "an ERASER scores record"
    COMMAND: ClassVar[str] = "export-eraser"
    #: the tables' column → where it lies in the file and its range (ERASER's "Token F1" and
    #: "IOU F1" are its macro averages; the sentence P/R/F1 are micro, so sentence_p is the
    #: paper's precision with k sentences per document)
    SUMMARY: ClassVar[dict[str, tuple[tuple, tuple[float, float]]]] = {
        "sentence_p": (("sentence_prf", "instance_micro", "p"), (0, 1)),
        "sentence_r": (("sentence_prf", "instance_micro", "r"), (0, 1)),
        "sentence_f1": (("sentence_prf", "instance_micro", "f1"), (0, 1)),
        "token_p": (("token_prf", "instance_macro", "p"), (0, 1)),
        "token_r": (("token_prf", "instance_macro", "r"), (0, 1)),
        "token_f1": (("token_prf", "instance_macro", "f1"), (0, 1)),
        "iou_f1": (("iou_scores", 0, "macro", "f1"), (0, 1)),
        "sentence_auprc": (("sentence_soft_metrics", "auprc"), (0, 1)),
        "comprehensiveness": (("classification_scores", "comprehensiveness"), (-1, 1)),
        "sufficiency": (("classification_scores", "sufficiency"), (-1, 1)),
        "comprehensiveness_aopc": (("classification_scores", "comprehensiveness_aopc"), (-1, 1)),
        "sufficiency_aopc": (("classification_scores", "sufficiency_aopc"), (-1, 1)),
    }
    #: the IOU threshold of ``iou_f1`` (the first entry of ``iou_scores``)
    IOU_THRESHOLD: ClassVar[float] = 0.5

    iou_scores: list
    rationale_prf: dict
    token_prf: dict
    sentence_prf: dict
    token_soft_metrics: dict
    sentence_soft_metrics: dict
    classification_scores: dict
    paper: dict | None = None
    model: str | None = None
    split: str | None = None
    left_out: dict | None = None
    dataset: str | None = None
    run: int | None = None
    iteration: int | None = None

    def check(self) -> None:
        threshold = _at(self.iou_scores, (0, "threshold"))
        if threshold != self.IOU_THRESHOLD:
            raise ValueError(f"field 'iou_scores.0.threshold' is {json.dumps(threshold)}, not {self.IOU_THRESHOLD} "
                             "(the threshold of the tables' IOU F1)")
        for (path, (low, high)) in self.SUMMARY.values():
            value = _at(self.to_json(), path)
            if value is not None and not (_conforms(value, float) and low <= value <= high):
                raise ValueError(f"field '{'.'.join(map(str, path))}' is {json.dumps(value)}, not a number in "
                                 f"[{low}, {high}] or null")
        if self.run is not None and (not _is_int(self.run) or self.run < 1):
            raise ValueError(f"field 'run' is {self.run}, not a run number (>= 1)")
        if self.iteration is not None and (not _is_int(self.iteration) or self.iteration < 0):
            raise ValueError(f"field 'iteration' is {self.iteration}, not an iteration (>= 0)")

    def summary(self) -> dict[str, float | None]:
        """{column of :attr:`SUMMARY`: its value (None where ERASER has none)}."""
        obj = self.to_json()
        return {name: _at(obj, path) for name, (path, _) in self.SUMMARY.items()}

    def to_json(self) -> dict[str, Any]:
        out = super().to_json()
        labels = {k: out.pop(k) for k in ("dataset", "run", "iteration")}
        return {k: v for k, v in labels.items() if v is not None} | {
            k: v for k, v in out.items()
            if v is not None or k not in ("paper", "model", "split", "left_out")}  # labels first


# --------------------------------------------------------------------------- baselines


@dataclass(frozen=True)
class Baselines(Record):
    """``baselines.json`` of one dataset (:func:`icda.report.baselines.dataset_baselines`): the
    test precision of selectors that read against chance, one value per draw (fractions in
    [0, 1]; None where the split has no annotated document): ``random``, k random sentences per
    document; ``keyword``, the keyword rule (None where the dataset has no ``keywords``); with
    the k, the number of draws, the seed and the keywords they were drawn with."""

    WHAT: ClassVar[str] = "a baselines record"
    COMMAND: ClassVar[str] = "report baselines"
    RANGES: ClassVar[dict] = {"k": (1, None), "draws": (1, None), "n_docs": (0, None)}
    dataset: str
    k: int
    draws: int
    seed: int
    n_docs: int
    random: list
    keyword: list | None = None
    keywords: list | None = None

    def check(self) -> None:
        for name in ("random", "keyword"):
            values = getattr(self, name)
            if values is None:
                continue
            if len(values) != self.draws:
                raise ValueError(f"field '{name}' holds {len(values)} precisions, not one per draw ({self.draws})")
            for i, p in enumerate(values):
                if p is not None and not (_conforms(p, float) and 0 <= p <= 1):
                    raise ValueError(f"{name}[{i}] is {json.dumps(p)}, not a precision in [0, 1] or null")
        if (self.keyword is None) != (self.keywords is None):
            raise ValueError("fields 'keyword' and 'keywords' must both be null or both be given")


# --------------------------------------------------------------------------- data audit

#: the counts of one split in a :class:`DataAudit`
AUDIT_COUNTS = ("documents", "annotated", "duplicates", "cut_by_max_sentences", "sentences_seen",
                "over_max_tokens")
#: the pairs of splits a :class:`DataAudit` counts shared documents of: ``<a>_<b>`` = documents
#: of split a that share their text with a document of split b
AUDIT_PAIRS = ("train_test", "dev_test", "test_train", "test_dev")


@dataclass(frozen=True)
class DataAudit(Record):
    """``data_audit.json`` of one dataset (:func:`icda.steps.audit.audit_splits`): what each split
    holds as read, before preparation (a dev split carved out of train has none).

    ``splits``: per split, ``documents``; ``labels`` (class → documents, ``"null"`` for none);
    ``annotated`` (documents with ground truth); ``duplicates`` (documents repeating an earlier
    one's text after normalising case and whitespace); ``sentences_median``, ``sentences_p99``
    (sentences per document); ``cut_by_max_sentences`` (documents longer than ``max_sentences``);
    ``sentences_seen`` (sentences among each document's first ``max_sentences``) and
    ``over_max_tokens`` (those of them longer than ``max_tokens`` wordpieces of the encoder's
    tokenizer, [CLS] and [SEP] included: the encoder cuts them). ``shared``: per pair
    ``<a>_<b>`` of :data:`AUDIT_PAIRS` whose splits both exist, ``exact`` (documents of a with the
    text of a document of b, case and whitespace normalised) and ``near`` (the others with a
    word 3-shingle Jaccard similarity of at least ``near_duplicate_threshold`` to one,
    :mod:`icda.data.overlap`)."""

    WHAT: ClassVar[str] = "a data audit record"
    COMMAND: ClassVar[str] = "audit"
    RANGES: ClassVar[dict] = {"max_sentences": (1, None), "max_tokens": (1, None),
                              "near_duplicate_threshold": (0, 1)}
    dataset: str
    encoder: str
    max_sentences: int
    max_tokens: int
    near_duplicate_threshold: float
    splits: dict
    shared: dict

    def check(self) -> None:
        for split, counts in self.splits.items():
            if split not in ("train", "dev", "test") or not isinstance(counts, dict):
                raise ValueError(f"splits.{split} is not a split's counts")
            for key in AUDIT_COUNTS:
                if not (_is_int(counts.get(key)) and counts[key] >= 0):
                    raise ValueError(f"splits.{split}.{key} is {json.dumps(counts.get(key))}, not a count >= 0")
            for key in ("sentences_median", "sentences_p99"):
                if not (_conforms(counts.get(key), float) and counts[key] >= 0):
                    raise ValueError(f"splits.{split}.{key} is {json.dumps(counts.get(key))}, not a number >= 0")
            labels = counts.get("labels")
            if not (isinstance(labels, dict) and all(_is_int(n) and n >= 0 for n in labels.values())
                    and sum(labels.values()) == counts["documents"]):
                raise ValueError(f"splits.{split}.labels is {json.dumps(labels)[:60]}, not class → "
                                 f"documents summing to {counts['documents']}")
            if counts["over_max_tokens"] > counts["sentences_seen"]:
                raise ValueError(f"splits.{split}.over_max_tokens exceeds its sentences_seen")
        for pair, counts in self.shared.items():
            if pair not in AUDIT_PAIRS:
                raise ValueError(f"shared.{pair} is not one of {list(AUDIT_PAIRS)}")
            a, b = pair.split("_")
            if a not in self.splits or b not in self.splits:
                raise ValueError(f"shared.{pair} counts a split the record does not hold")
            if not (isinstance(counts, dict) and set(counts) == {"exact", "near"}
                    and all(_is_int(n) and n >= 0 for n in counts.values())
                    and counts["exact"] + counts["near"] <= self.splits[a]["documents"]):
                raise ValueError(f"shared.{pair} is {json.dumps(counts)[:60]}, not "
                                 f"{{exact, near}} counts of at most the {a} split's documents")
