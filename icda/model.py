"""The hierarchical sentence-rationale network (paper "Implementation", "Network" appendix).

Pipeline for a batch of ``B`` documents of at most ``N`` sentences:

1. sentence vectors ``h`` [B, N, H]: from a frozen embedding cache (:class:`CachedSentences`)
   or a token encoder trained end to end (:class:`FinetunedSentences`);
2. per-sentence vectors ``v`` [B, N, D] for the classifier (frozen mode: a trainable adapter,
   ``D = d_model``; finetune mode: ``v = h``, ``D = H``);
3. a sentence-level transformer over ``v`` with a positional encoding (``positions``:
   ``"sinusoidal"`` as in the paper, ``"learned"``, or ``"none"``: the selector then sees only
   content, so it cannot learn a positional shortcut), run on the real sentences alone
   (:func:`transform_real_slots`) → one selector score per sentence [B, N]; with
   ``selector_input: "centred"`` its input also holds a linear map of each sentence's ``h`` minus
   its document's mean ``h`` (the selector sees the sentence against its document; departure 27);
4. hard top-k selection with the straight-through estimator (forward: the one-hot of the top-k
   real sentences; backward: the gradient of the softmax of the scores);
5. a classifier on the max-pool of the selected sentences' ``v`` (``classifier_input:
   "sentence"``: nothing from an unselected sentence reaches it) or of their transformer outputs
   (``"contextual"``: a departure that lets context leak into the prediction) → logits [B, C].
   ``pool_unselected``: ``"exclude"`` pools the selected sentences alone, so the classifier's
   gradient reaches the selector only through the selected sentence's score; ``"zero"`` pools
   every slot of ``v * z`` (the authors' code: ``x·z + (1−z)·(−1e−10)``, then a max over
   sentences): unselected sentences enter as zeros, so no information from them reaches the
   classifier but the straight-through gradient reaches every sentence's score; ``"linear"``
   pools exactly as ``"exclude"`` forward and backpropagates as if the pool were ``Σ_j z_j v_j``
   (:func:`linear_max`), so every real sentence's score gets the gradient of swapping it in.
   With ``objective="comp"`` a second classifier sees the complement (Yu et al. 2019,
   "complement control").

:class:`SelectorEnsemble` reads several trained networks as one (``icda.final_selector:
"ensemble"``, departure 28): their selector distributions averaged, their classifiers on the
ensemble's selection averaged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from icda.encoder import pad_batch
from icda.settings import ModelSettings


class CachedSentences(nn.Module):
    """Sentence vectors looked up in a frozen cache.

    Args:
        vectors: [U, H] float tensor, one row per unique sentence (not trained, not saved in
            the state dict).
    """

    def __init__(self, vectors: torch.Tensor):
        super().__init__()
        self.register_buffer("vectors", vectors.float(), persistent=False)
        self.hidden_size = vectors.shape[1]

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """ids [B, N] (``PAD`` = empty slot) → vectors [B, N, H] (zeros at empty slots)."""
        out = self.vectors[ids.clamp(min=0)]
        return out * (ids >= 0).unsqueeze(-1)

    def real(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The vectors of the real slots alone: ids [B, N], mask [B, N] bool (``ids >= 0``) →
        [T, H], T = ``mask.sum()``, in row-major slot order (``forward(ids)[mask]``, without
        gathering the empty slots)."""
        return self.vectors[ids[mask]]


class FinetunedSentences(nn.Module):
    """Sentence vectors computed by a trainable token encoder (the paper's fine-tuning setting).

    Args:
        encoder: an :class:`icda.encoder.SentenceEncoder` ([S, T] token ids → [S, H]).
        tokens: wordpiece ids of every sentence id (``tokens[i]`` for sentence id ``i``).
        pad_id: the tokenizer's padding id.

    Only the distinct real sentences of a batch are encoded; empty slots are never encoded.
    """

    def __init__(self, encoder: nn.Module, tokens: list[list[int]], pad_id: int):
        super().__init__()
        self.encoder, self.tokens, self.pad_id = encoder, tokens, pad_id
        self.hidden_size = encoder.hidden_size

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """ids [B, N] (``PAD`` = empty slot) → vectors [B, N, H] (zeros at empty slots)."""
        mask = ids >= 0
        encoded = self.real(ids, mask)
        out = encoded.new_zeros(*ids.shape, encoded.shape[-1])
        out[mask] = encoded
        return out

    def real(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The vectors of the real slots alone: ids [B, N], mask [B, N] bool → [T, H], in
        row-major slot order (``forward(ids)[mask]``)."""
        unique, inverse = torch.unique(ids[mask], return_inverse=True)
        input_ids, attention = pad_batch([self.tokens[i] for i in unique.tolist()], self.pad_id)
        device = ids.device
        return self.encoder(input_ids.to(device), attention.to(device))[inverse]


def sinusoidal_positions(n: int, dim: int) -> torch.Tensor:
    """The Transformer's sinusoidal positional encoding, [n, dim]."""
    position = torch.arange(n, dtype=torch.float32).unsqueeze(1)
    freq = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * (-math.log(10000.0) / dim))
    table = torch.zeros(n, dim)
    table[:, 0::2] = torch.sin(position * freq)
    table[:, 1::2] = torch.cos(position * freq[: dim // 2])
    return table


def straight_through_top_k(scores: torch.Tensor, mask: torch.Tensor, k: int) -> torch.Tensor:
    """Hard top-k selection with the straight-through estimator (Bengio et al. 2013).

    Args:
        scores: [B, N] selector scores.
        mask: [B, N] bool, True for real sentences.
        k: sentences selected per document (fewer where a document has fewer real sentences).

    Returns:
        z [B, N]: exactly 1.0 at the selected sentences and 0.0 elsewhere in the forward pass
        (``soft - soft.detach()`` is exactly zero); its gradient is that of
        ``softmax(scores)`` over the real sentences.
    """
    masked = scores.masked_fill(~mask, float("-inf"))
    soft = torch.softmax(masked, dim=-1)
    top = masked.topk(min(k, scores.shape[-1]), dim=-1).indices
    hard = torch.zeros_like(soft).scatter(-1, top, 1.0) * mask
    return hard + (soft - soft.detach())


def masked_max(v: torch.Tensor, z: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """Max-pool ``v * z`` over the slots where ``keep`` is True.

    v [B, N, D], z [B, N], keep [B, N] bool → [B, D]; a row with no kept slot pools to zeros.
    """
    gated = (v * z.unsqueeze(-1)).masked_fill(~keep.unsqueeze(-1), float("-inf"))
    pooled = gated.max(dim=1).values
    return torch.where(keep.any(dim=1, keepdim=True), pooled, torch.zeros_like(pooled))


def linear_max(v: torch.Tensor, z: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """Max-pool over the kept slots in the forward pass, the sum ``Σ_j z_j v_j`` in the backward pass.

    v [B, N, D], z [B, N] (straight-through: exactly 0/1 forward), keep [B, N] bool → [B, D].
    Forward: exactly :func:`masked_max` (the selected sentences alone). Backward to ``z``:
    d pooled / d z_j = v_j for every real slot j, selected or not, so each sentence's score gets
    the linearised effect on the loss of swapping it in (the straight-through estimator applied to
    the pooling as well as to the top-k); ``v`` gets its gradient from the max alone.
    """
    hard = z.detach()
    return masked_max(v, hard, keep) + ((z - hard).unsqueeze(-1) * v.detach()).sum(dim=1)


def zero_filled_max(v: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    """Max-pool ``v * z`` over every slot: v [B, N, D], z [B, N] → [B, D].

    Forward: ``max(v_selected, 0)`` per feature, since unselected and empty slots are exactly 0.
    Backward: d pooled / d z_j = v_j on the features where slot j attains the max (split evenly
    between tied slots, ``torch.amax``), so every sentence's straight-through score gets the
    linearised effect of pooling it.
    """
    return (v * z.unsqueeze(-1)).amax(dim=1)


def transform_real_slots(transformer: nn.TransformerEncoder, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Run ``transformer`` (post-norm ``nn.TransformerEncoderLayer`` s, ``batch_first``) on the real
    slots of x alone: the projections, feed-forward blocks and layer norms see the ``T`` real
    sentences of the batch as one [T, D] matrix, and only the attention is laid out as [B, N].

    x [B, N, D], mask [B, N] bool (True: real sentence; every row has one) → [B, N, D], zeros at
    empty slots. At the real slots this is ``transformer(x, src_key_padding_mask=~mask)`` (the same
    weights, the same function; a test checks outputs and gradients): what an empty slot would
    compute is never used (its score is masked, it is never pooled), so the time it would cost is
    saved. With sentence dropout, 41 % (restaurant) to 51 % (synthetic) of a training batch's
    slots are real. This is the sentence transformer of the paper's "Network" appendix; only where
    it computes changes.

    Raises:
        ValueError: a layer is pre-norm (``norm_first``), which this function does not compute.
    """
    if any(layer.norm_first for layer in transformer.layers):
        raise ValueError("transform_real_slots computes post-norm layers only (norm_first=False)")
    batch, n, d = x.shape
    real = mask.flatten().nonzero().squeeze(1)  # [T] flat indices of the real slots
    keep = mask[:, None, None, :]  # [B, 1, 1, N]: attend to real sentences only
    h = x.reshape(batch * n, d)[real]  # [T, D]
    for layer in transformer.layers:
        attn = layer.self_attn
        qkv = F.linear(h, attn.in_proj_weight, attn.in_proj_bias)  # [T, 3D]
        qkv = qkv.new_zeros(batch * n, 3 * d).index_copy(0, real, qkv)
        q, k, v = qkv.view(batch, n, 3, attn.num_heads, d // attn.num_heads).permute(2, 0, 3, 1, 4)
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=keep, dropout_p=attn.dropout if layer.training else 0.0)
        o = attn.out_proj(o.transpose(1, 2).reshape(batch * n, d)[real])  # [T, D]
        h = layer.norm1(h + layer.dropout1(o))
        h = layer.norm2(h + layer.dropout2(layer.linear2(layer.dropout(layer.activation(layer.linear1(h))))))
    return h.new_zeros(batch * n, d).index_copy(0, real, h).view(batch, n, d)


@dataclass
class RationaleOutput:
    """What :class:`RationaleNetwork` returns for a batch of ``B`` documents of ``N`` slots."""

    logits: torch.Tensor  #: [B, C] class logits from the rationale alone
    rationale_mask: torch.Tensor  #: [B, N] the 0/1 mask z of hard top-k over the slots (straight-through)
    scores: torch.Tensor  #: [B, N] selector scores
    comp_logits: torch.Tensor | None = None  #: [B, C] complement classifier (COMP only)


class RationaleNetwork(nn.Module):
    """Selector (sentence transformer + scorer) and classifier over selected sentences.

    Args:
        sentences: a :class:`CachedSentences` or :class:`FinetunedSentences` module.
        settings: :class:`icda.settings.ModelSettings`.
        max_sentences: the largest ``N`` the positional encoding must cover.
    """

    def __init__(self, sentences: nn.Module, settings: ModelSettings, max_sentences: int):
        super().__init__()
        self.settings = settings
        self.sentences = sentences
        hidden, d = sentences.hidden_size, settings.d_model
        if settings.finetune:
            self.adapter = nn.Identity()
            self.project = nn.Linear(hidden, d)
            self.sentence_dim = hidden
        else:
            self.adapter = nn.Sequential(nn.Linear(hidden, d), nn.GELU())
            self.project = nn.Identity()
            self.sentence_dim = d
        classifier_dim = d if settings.classifier_input == "contextual" else self.sentence_dim
        self.learned_positions = None
        if settings.positions == "learned":
            self.learned_positions = nn.Parameter(torch.zeros(max_sentences, d))
            nn.init.normal_(self.learned_positions, std=0.02)
        table = sinusoidal_positions(max_sentences, d)
        if settings.positions == "none":
            table.zero_()
        self.register_buffer("positions", table, persistent=False)
        layer = nn.TransformerEncoderLayer(
            d, settings.heads, settings.dff, settings.dropout, batch_first=True
        )
        self.transformer = (
            nn.TransformerEncoder(layer, settings.layers, enable_nested_tensor=False)
            if settings.layers else nn.Identity()
        )
        # selector_input "centred": the selector also reads h_i - mean_j h_j over the document's
        # real sentences (the classifier never does)
        self.centred = nn.Linear(hidden, d) if settings.selector_input == "centred" else None
        self.scorer = nn.Linear(d, 1)
        self.classifier = nn.Sequential(nn.Dropout(settings.dropout), nn.Linear(classifier_dim, settings.n_classes))
        self.comp_classifier = (
            nn.Sequential(nn.Dropout(settings.dropout), nn.Linear(classifier_dim, settings.n_classes))
            if settings.objective == "comp" else None
        )

    def forward(self, ids: torch.Tensor, rationale: torch.Tensor | None = None) -> RationaleOutput:
        """ids [B, N] sentence ids (``PAD`` for empty slots; every row has a real sentence).
        ``rationale``: a [B, N] bool selection the classifier reads instead of the selector's own
        top-k (:class:`SelectorEnsemble`); the scores are the selector's either way."""
        return self.classify(*self.score(ids), rationale)

    def score(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The selector's pass over ids [B, N]: the real-slot mask [B, N], what the classifier
        pools (``seen`` [B, N, D]) and the selector scores [B, N] (:meth:`classify` takes them)."""
        mask = ids >= 0
        h = self.sentences.real(ids, mask)  # [T, H]: the real slots' sentence vectors
        a = self.adapter(h)  # [T, D]
        v = a.new_zeros(*ids.shape, self.sentence_dim)  # (a's dtype: bfloat16 under autocast)
        v[mask] = a  # empty slots stay zero and cost nothing
        x = self.project(v) + self.positions[: ids.shape[1]]
        if self.centred is not None:
            x = x + self._centred(h, mask)
        if self.learned_positions is not None:
            x = x + self.learned_positions[: ids.shape[1]]
        if self.settings.layers:
            x = transform_real_slots(self.transformer, x, mask)
        scores = self.scorer(x).squeeze(-1)
        seen = x if self.settings.classifier_input == "contextual" else v
        return mask, seen, scores

    def classify(self, mask: torch.Tensor, seen: torch.Tensor, scores: torch.Tensor,
                 rationale: torch.Tensor | None = None) -> RationaleOutput:
        """Hard top-k of ``scores`` with the straight-through estimator (or the given
        ``rationale``), then the classifier (and the complement head) on what it selects."""
        z = (straight_through_top_k(scores, mask, self.settings.k) if rationale is None
             else (rationale & mask).to(scores.dtype))
        selected = z.detach() > 0.5
        logits = self.classifier(self._pool(seen, z, selected))
        comp_logits = None
        if self.comp_classifier is not None:
            comp_logits = self.comp_classifier(self._pool(seen, (1.0 - z) * mask, mask & ~selected))
        return RationaleOutput(logits, selected.float(), scores, comp_logits)

    def sentence_logits(self, mask: torch.Tensor, seen: torch.Tensor) -> torch.Tensor:
        """The classifier on every real sentence alone (``train.sentence_loss``, departure 32):
        mask [B, N] bool and ``seen`` [B, N, D] from :meth:`score` → logits [T, C], one row per
        real slot in row-major order (T = ``mask.sum()``). With k = 1 and ``classifier_input:
        "sentence"`` a row is what the classifier would say were that sentence the rationale."""
        return self.classifier(seen[mask])

    def _centred(self, h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The selector's view of each sentence against its document (``selector_input:
        "centred"``): h [T, H] (the real slots' vectors, row-major), mask [B, N] → [B, N, D],
        ``centred(h_i - mean_j h_j)`` with the mean over the document's real sentences, zeros at
        empty slots."""
        full = h.new_zeros(*mask.shape, h.shape[-1])
        full[mask] = h
        mean = full.sum(dim=1) / mask.sum(dim=1, keepdim=True).to(h.dtype)  # [B, H]
        c = self.centred(h - mean.unsqueeze(1).expand_as(full)[mask])  # [T, D]
        out = c.new_zeros(*mask.shape, c.shape[-1])
        out[mask] = c
        return out

    def _pool(self, v: torch.Tensor, z: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        """v [B, N, D], z [B, N], keep [B, N] (the slots pooled with ``pool_unselected="exclude"``)
        → [B, D]."""
        if self.settings.pool_unselected == "zero":
            return zero_filled_max(v, z)
        if self.settings.pool_unselected == "linear":
            return linear_max(v, z, keep)
        return masked_max(v, z, keep)

    def head_parameters(self) -> list[nn.Parameter]:
        """Parameters of the complement classifier (trained on L_comp alone)."""
        return [] if self.comp_classifier is None else list(self.comp_classifier.parameters())

    def empty_logits(self) -> torch.Tensor:
        """[1, C] the classifier's logits with nothing selected (the max-pool of no sentence is
        the zero vector, as :func:`masked_max` gives a row without a kept slot: its bias)."""
        width = self.classifier[-1].in_features
        return self.classifier(self.scorer.weight.new_zeros(1, width))


class SelectorEnsemble(nn.Module):
    """M trained :class:`RationaleNetwork` read as one rationale model (``icda.final_selector:
    "ensemble"``, departure 28; docs/experiments/hotel_final_selector.md).

    Selector: per document, each member's scores soft-maxed over the real sentences [B, N],
    averaged over the members; the top-k of that average is the rationale, and ``scores`` is its
    log (so a softmax of ``scores`` over the real sentences gives the average back). Classifier:
    each member's classifier on that rationale (:meth:`RationaleNetwork.classify` on its one
    selector pass),
    its class probabilities averaged; ``logits`` [B, C] is their log. Evaluation only: it is
    never trained, and has no complement head.

    Args:
        members: the networks (one model setting; at least one).

    Raises:
        ValueError: no member, or members of different model settings.
    """

    def __init__(self, members: list[RationaleNetwork]):
        super().__init__()
        if not members:
            raise ValueError("an ensemble needs at least one member")
        if any(m.settings != members[0].settings for m in members):
            raise ValueError("the ensemble's members were trained with different model settings")
        self.members = nn.ModuleList(members)
        self.settings = members[0].settings

    def forward(self, ids: torch.Tensor) -> RationaleOutput:
        """ids [B, N] → :class:`RationaleOutput` (``comp_logits`` None)."""
        mask = ids >= 0
        passes = [m.score(ids) for m in self.members]  # each member's selector runs once
        mean = torch.stack([torch.softmax(scores.float().masked_fill(~mask, float("-inf")), dim=-1)
                            for _, _, scores in passes]).mean(dim=0)  # [B, N], zero at empty slots
        scores = mean.clamp_min(torch.finfo(mean.dtype).tiny).log()
        selected = straight_through_top_k(scores, mask, self.settings.k).detach() > 0.5
        probabilities = torch.stack([torch.softmax(m.classify(*view, selected).logits.float(), dim=-1)
                                     for m, view in zip(self.members, passes)])
        return RationaleOutput(probabilities.mean(dim=0).log(), selected.float(), scores)

    def empty_logits(self) -> torch.Tensor:
        """[1, C]: the log of the members' class probabilities with nothing selected, averaged."""
        return torch.stack([torch.softmax(m.empty_logits().float(), dim=-1) for m in self.members]).mean(dim=0).log()
