"""Training with dev-loss model selection and the degeneration guard (paper "Settings").

One log line per epoch. Epoch −1 is the evaluation before the first update: the ICDA
convergence rule needs to know whether training improved on the warm start at all. The kept
checkpoint is the lowest dev loss among non-degenerate epochs (the lowest overall, flagged
degenerate, if every epoch was).
"""

from __future__ import annotations

import copy
import logging
import time
from dataclasses import asdict, dataclass, field
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F

from icda.degeneration import check_degeneration
from icda.metrics import rationale_metrics
from icda.model import RationaleNetwork
from icda.records import PAD
from icda.settings import TrainSettings

log = logging.getLogger(__name__)


@dataclass
class ModelOutputs:
    """A model's outputs on D documents, in memory (training writes them to predictions.json,
    :class:`icda.records.Predictions`): ``logits`` [D, C], ``prob_positive`` [D] (P(y=1)),
    ``probabilities`` [D, C] (P(y=c)), ``positions`` (per document, its rationale's sentence indices: the nonzero entries of the
    model's ``rationale_mask``), ``comp_logits`` [D, C] or None."""

    logits: torch.Tensor
    prob_positive: np.ndarray
    probabilities: np.ndarray
    positions: list[list[int]]
    comp_logits: torch.Tensor | None = None

    @property
    def predicted(self) -> np.ndarray:
        return self.logits.argmax(dim=-1).numpy()


def trim(ids: torch.Tensor) -> torch.Tensor:
    """ids [B, N] with empty slots (``PAD``) at the end of each row → [B, n], n the longest row:
    the model does not spend time on columns that are empty in every row."""
    return ids[:, : max(int((ids >= 0).sum(1).max()), 1)] if len(ids) else ids


def shuffle_sentences(ids: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """Permute the real sentences of every row of ids [B, N] uniformly at random (empty slots stay
    at the end), drawing from ``generator``."""
    keys = torch.rand(ids.shape, generator=generator).masked_fill(ids < 0, 2.0)
    return ids.gather(1, keys.argsort(dim=1))


def drop_sentences(ids: torch.Tensor, p: float, generator: torch.Generator) -> torch.Tensor:
    """Remove each real sentence of ids [B, N] with probability ``p`` → ids [B, N] (every row
    keeps at least one: a row that would lose all keeps them all); the remaining sentences keep
    their order and move to the front, empty slots (``PAD``) to the end. Draws from
    ``generator``. ``train.sentence_dropout``, departure 21 in docs/departures.md."""
    real = ids >= 0
    drop = (torch.rand(ids.shape, generator=generator) < p) & real
    drop[~(real & ~drop).any(dim=1)] = False
    out = ids.masked_fill(drop, PAD)
    slot = torch.arange(ids.shape[1]).expand_as(ids)
    return out.gather(1, (slot + ids.shape[1] * (out < 0)).argsort(dim=1))


@torch.no_grad()
def predict(model: RationaleNetwork, ids: torch.Tensor, batch_size: int = 512, device: str = "cpu") -> ModelOutputs:
    """Run ``model`` in eval mode over ids [D, N]."""
    model.eval()
    logits, comp, positions = [], [], []
    for start in range(0, len(ids), batch_size):
        out = model(trim(ids[start : start + batch_size]).to(device))
        logits.append(out.logits.float().cpu())
        if out.comp_logits is not None:
            comp.append(out.comp_logits.float().cpu())
        selected = out.rationale_mask.cpu() > 0
        columns, at = selected.nonzero()[:, 1].tolist(), 0  # row-major: each row's positions in order
        for count in selected.sum(1).tolist():
            positions.append(columns[at : at + count])
            at += count
    logits_t = torch.cat(logits) if logits else torch.zeros(0, 2)
    probabilities = torch.softmax(logits_t, dim=-1).numpy()
    prob = probabilities[:, 1] if len(logits_t) else np.zeros(0)
    return ModelOutputs(logits_t, prob, probabilities, positions, torch.cat(comp) if comp else None)


@dataclass
class EpochRecord:
    epoch: int
    train_loss: float | None
    dev_loss: float
    dev_accuracy: float
    dev_precision: float | None  #: rationale precision on dev (diagnostic only, never selects)
    degenerate: bool
    max_bin_gap: float
    first_bins_gap: float
    seconds: float  #: wall time of the epoch, its dev evaluation included
    cpu_seconds: float = 0.0  #: CPU time of this process in the epoch, its dev evaluation included
    eval_cpu_seconds: float = 0.0  #: of which the dev evaluation (benchmarks/time_split.py)


@dataclass
class EarlyStopping:
    """The kept checkpoint and when to stop (paper "Settings": model selection by dev loss, with
    the degeneration guard): the lowest dev loss among non-degenerate eligible epochs; the lowest
    over all eligible epochs (``fallback``) only while none passes the guard; stop once
    ``patience`` eligible epochs in a row did not improve on the kept one. Epoch −1 (before any
    update) is eligible only with ``keep_initial``. :func:`train_model` applies it online, and
    ``benchmarks/patience_replay.py`` replays it on recorded histories."""

    patience: int
    keep_initial: bool = True
    best: EpochRecord | None = None
    fallback: EpochRecord | None = None
    since_best: int = 0

    def observe(self, record: EpochRecord) -> str | None:
        """Take one epoch's record → ``"best"`` (it is now the kept epoch), ``"fallback"`` (it is
        now the kept epoch should every epoch be degenerate) or None."""
        if record.epoch < 0 and not self.keep_initial:
            return None
        verdict = None
        if not record.degenerate and (self.best is None or record.dev_loss < self.best.dev_loss):
            self.best, self.since_best, verdict = record, 0, "best"
        elif self.best is not None:
            self.since_best += 1
        if self.best is None and (self.fallback is None or record.dev_loss < self.fallback.dev_loss):
            self.fallback, verdict = record, "fallback"
        return verdict

    @property
    def stop(self) -> bool:
        return self.since_best >= self.patience

    @property
    def kept(self) -> EpochRecord | None:
        return self.best or self.fallback


@dataclass
class TrainResult:
    """Outcome of :func:`train_model`; ``state_dict`` is the kept checkpoint."""

    best_epoch: int
    dev_loss: float
    dev_accuracy: float
    degenerate: bool
    epochs: list[EpochRecord] = field(default_factory=list)
    state_dict: dict | None = None

    def to_json(self) -> dict:
        out = {k: v for k, v in asdict(self).items() if k not in ("state_dict", "epochs")}
        out["epochs"] = [asdict(e) for e in self.epochs]
        trained = [e.seconds for e in self.epochs if e.epoch >= 0]
        out["seconds_per_epoch"] = float(np.mean(trained)) if trained else None
        return out


def evaluate_dev(
    model: RationaleNetwork, ids: torch.Tensor, labels: torch.Tensor, settings: TrainSettings, device: str,
    rationale: list | None = None,
) -> tuple[float, float, float | None, "object"]:
    """Dev loss (cross-entropy of the rationale classifier: with COMP, the classification loss
    alone), accuracy, rationale precision (None without ``rationale``, the per-document ground
    truth) and the degeneration report. ids [D, N], labels [D]."""
    pred = predict(model, ids, device=device)
    loss = F.cross_entropy(pred.logits, labels).item()
    accuracy = float((pred.predicted == labels.numpy()).mean())
    n_sentences = (ids >= 0).sum(1).numpy()
    report = check_degeneration(
        pred.positions, n_sentences, labels.numpy(), pred.predicted, settings.degeneration_threshold,
        pred.logits.shape[1],
    )
    precision = None
    if rationale is not None:
        precision = rationale_metrics(pred.positions, rationale, n_sentences)["precision"]
    return loss, accuracy, precision, report


def rationale_loss(model: RationaleNetwork, ids: torch.Tensor, labels: torch.Tensor,
                   sentence_loss: float = 0.0) -> tuple[torch.Tensor, torch.Tensor | None]:
    """The training loss of one batch: ids [B, N], labels [B] → (the loss the network minimises,
    the complement head's loss or None), both scalars in nats per document.

    MMI: the cross-entropy of the classifier on the rationale (paper Eq. 1). COMP adds
    ``comp_lambda · max(0, L − L_comp)`` (Yu et al. 2019). ``sentence_loss`` (λ ≥ 0,
    ``train.sentence_loss``, departure 32) adds λ times the mean cross-entropy of the classifier
    on every real sentence alone, each labelled with its document's class: the selector's
    straight-through gradient can only favour a sentence the classifier can read, and without it
    the classifier reads only the sentences the selector already picks.
    """
    mask, seen, scores = model.score(ids)
    out = model.classify(mask, seen, scores)
    rat = F.cross_entropy(out.logits, labels)
    main, comp = rat, None
    if out.comp_logits is not None:
        comp = F.cross_entropy(out.comp_logits, labels)
        main = rat + model.settings.comp_lambda * torch.clamp(rat - comp, min=0.0)
    if sentence_loss:
        every = labels.unsqueeze(1).expand_as(mask)[mask]  # [T]: each real sentence's document label
        main = main + sentence_loss * F.cross_entropy(model.sentence_logits(mask, seen), every)
    return main, comp


def train_model(
    model: RationaleNetwork,
    train_data: Callable[[int], tuple[torch.Tensor, torch.Tensor]],
    dev_ids: torch.Tensor,
    dev_labels: torch.Tensor,
    settings: TrainSettings,
    seed: int,
    device: str = "cpu",
    dev_rationale: list | None = None,
    keep_initial: bool = True,
) -> TrainResult:
    """Train with AdamW; keep the best non-degenerate dev-loss checkpoint.

    Args:
        model: the network (already on ``device``, weights initialised or warm-started).
        train_data: epoch → (ids [M, N], labels [M]); called once per epoch so counterfactuals
            can be re-drawn every epoch.
        dev_ids, dev_labels: [D, N] and [D]; the (possibly augmented) dev set.
        settings: optimisation, patience, degeneration guard, sentence shuffling.
        seed: seeds the batch order and shuffling (and dropout via torch's global generator).
        dev_rationale: per dev document its ground-truth positions (or None): dev precision is
            then logged per epoch, for diagnosis only.
        keep_initial: whether epoch −1 (the weights as given, before any update) may be the kept
            checkpoint. False for an ICDA warm start under ``icda.stop_rule: rationales``: the
            previous model is scored on a dev set built from its own selections, so untrained it
            often has the lowest loss (docs/sweep/stop_rule.md).

    Returns:
        :class:`TrainResult` with per-epoch records (epoch −1 = before training).
    """
    torch.manual_seed(seed)
    order_rng = torch.Generator().manual_seed(seed)
    head = {id(p) for p in model.head_parameters()}
    main_params = [p for p in model.parameters() if p.requires_grad and id(p) not in head]
    head_params = [p for p in model.parameters() if p.requires_grad and id(p) in head]
    groups = [{"params": main_params}]
    if settings.encoder_lr is not None and hasattr(model.sentences, "encoder"):
        enc = {id(p) for p in model.sentences.encoder.parameters()}
        groups = [
            {"params": [p for p in main_params if id(p) not in enc]},
            {"params": [p for p in main_params if id(p) in enc], "lr": settings.encoder_lr},
        ]
    if head_params:
        groups.append({"params": head_params})
    optimizer = torch.optim.AdamW(groups, lr=settings.lr, weight_decay=settings.weight_decay, fused=True)

    stopping = EarlyStopping(settings.patience, keep_initial)
    states = {}  # "best" / "fallback" → the weights of that epoch
    records = []
    for epoch in range(-1, settings.max_epochs):
        start, cpu_start = time.perf_counter(), time.process_time()
        train_loss = None
        if epoch >= 0:
            model.train()
            ids, labels = train_data(epoch)
            perm = torch.randperm(len(ids), generator=order_rng)
            total = 0.0
            for b in range(0, len(ids), settings.batch_size):
                idx = perm[b : b + settings.batch_size]
                x = ids[idx]
                if settings.sentence_dropout:
                    x = drop_sentences(x, settings.sentence_dropout, order_rng)
                if settings.shuffle_sentences:
                    x = shuffle_sentences(x, order_rng)
                x, y = trim(x).to(device), labels[idx].to(device)
                main, comp = rationale_loss(model, x, y, settings.sentence_loss)
                optimizer.zero_grad(set_to_none=True)
                if comp is None:
                    main.backward()
                else:  # the complement head minimises L_comp; everything else the main loss
                    grads = torch.autograd.grad(main, main_params, retain_graph=True, allow_unused=True)
                    grads += torch.autograd.grad(comp, head_params, allow_unused=True)
                    for p, g in zip(main_params + head_params, grads):
                        p.grad = g
                if settings.grad_clip:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), settings.grad_clip)
                optimizer.step()
                total += main.item() * len(idx)
            train_loss = total / max(len(ids), 1)
        eval_start = time.process_time()
        dev_loss, dev_acc, dev_precision, report = evaluate_dev(
            model, dev_ids, dev_labels, settings, device, dev_rationale)
        eval_cpu = time.process_time() - eval_start
        degenerate = report.degenerate and settings.degeneration_guard
        record = EpochRecord(
            epoch, train_loss, dev_loss, dev_acc, dev_precision, degenerate,
            report.max_bin_gap, report.first_bins_gap, time.perf_counter() - start,
            time.process_time() - cpu_start, eval_cpu,
        )
        records.append(record)
        log.info(
            "epoch %3d  train_loss %s  dev_loss %.4f  dev_acc %.3f  dev_precision %s  %s  (%.1fs)",
            epoch, "   -  " if train_loss is None else f"{train_loss:.4f}", dev_loss, dev_acc,
            "  -  " if dev_precision is None else f"{dev_precision:.3f}",
            "DEGENERATE" if degenerate else "ok", record.seconds,
        )
        verdict = stopping.observe(record)
        if verdict:
            states[verdict] = copy.deepcopy(model.state_dict())
        if stopping.stop:
            break
    kept = stopping.kept
    if stopping.best is None:
        log.warning("every epoch was degenerate; keeping epoch %d (dev loss %.4f)", kept.epoch, kept.dev_loss)
    state = states["best" if stopping.best is not None else "fallback"]
    return TrainResult(kept.epoch, kept.dev_loss, kept.dev_accuracy, stopping.best is None, records, state)
