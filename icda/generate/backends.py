"""The models that answer: an OpenAI-compatible HTTP endpoint or a local transformers causal LM.

A backend has ``model`` (the id recorded with each response and hashed into the cache key),
``concurrency`` (requests it takes at once) and ``complete(request, sampling) -> str``, which
raises on any failure (the runner records it and retries).
"""

from __future__ import annotations

import logging
import os

from icda.errors import ConfigError, add_secret, add_url_secrets, import_extra, redact, redact_logs
from icda.generate.records import Request
from icda.data.llm_spec import Backend, Sampling

log = logging.getLogger(__name__)


class OpenAIBackend:
    """Chat completions from any OpenAI-compatible server (vLLM, llama.cpp server, Ollama, hosted
    APIs) through the ``openai`` client: one user message per request, the request's seed sent
    as ``seed`` (honoured by vLLM and llama.cpp; others may ignore it). The client's own retries
    are off: the runner retries, so every failed attempt is recorded.

    The key's value and the user-info of ``base_url`` (``http://user:password@host/``) are
    secrets: every log line (this package's, the client's and httpx's), error message and
    recorded response shows ``***`` in their place (:func:`icda.errors.redact`).

    Raises:
        ConfigError: ``api_key_env`` names a variable that is not set, or whose value holds a
            character other than printable ASCII (an HTTP header cannot carry it).
    """

    def __init__(self, backend: Backend):
        OpenAI = import_extra("openai", "llm", "llm.backend.type: openai").OpenAI

        add_url_secrets(backend.base_url)
        key = "not-needed"  # local servers take any key; the client insists on one
        if backend.api_key_env:
            key = os.environ.get(backend.api_key_env, "")
            if not key:
                raise ConfigError(f"llm.backend.api_key_env: the environment variable "
                                  f"{backend.api_key_env} is not set. Fix: `export "
                                  f"{backend.api_key_env}=...` before running, or set api_key_env: "
                                  "null for a server that needs no key")
            add_secret(key)
            bad = next((i for i, c in enumerate(key, 1) if not (c.isascii() and c.isprintable())), None)
            if bad is not None:  # an HTTP header carries ASCII alone; the character is part of the secret
                raise ConfigError(f"llm.backend.api_key_env: the value of {backend.api_key_env} holds a "
                                  f"character that is not printable ASCII (character {bad}; not shown: it is "
                                  "part of the key), which an HTTP header cannot carry. Fix: set "
                                  f"{backend.api_key_env} to the key alone, as the provider gives it (no curly "
                                  "quotes, non-breaking spaces or line breaks)")
        redact_logs("icda", "openai", "httpx", "httpx2", "httpcore")
        if backend.api_key_env:
            log.info("sending the value of $%s as the API key to %s", backend.api_key_env, redact(backend.base_url))
        self.model = backend.model
        self.concurrency = backend.concurrency
        self.client = OpenAI(base_url=backend.base_url, api_key=key, timeout=backend.timeout, max_retries=0)

    def check(self) -> None:
        """Fail fast when nothing listens at ``base_url`` (instead of retrying every request).
        Any other answer, even an error (some servers have no ``/models``), passes.

        Raises:
            ConfigError: the server cannot be reached, or it answers with something other than
                JSON (a web page: ``base_url`` is not the API's root).
        """
        openai = import_extra("openai", "llm", "llm.backend.type: openai")

        try:
            answer = self.client.models.with_raw_response.list()
        except openai.APIConnectionError as exc:
            raise ConfigError(redact(f"llm.backend.base_url: cannot reach {self.client.base_url} ({exc}). "
                                     "Fix: start the server (e.g. `vllm serve MODEL --port 8000`) or "
                                     "correct base_url")) from None
        except openai.APIError as exc:
            log.info("server check: %s answered %s; going on", redact(str(self.client.base_url)), type(exc).__name__)
            return
        kind = answer.headers.get("content-type", "")
        if "json" not in kind:
            raise ConfigError(redact(f"llm.backend.base_url: {answer.http_request.url} answers with "
                                     f"{kind or 'no type'} ({answer.http_response.text[:60]!r}), not the JSON "
                                     "of an OpenAI-compatible API. Fix: give the API's root, e.g. "
                                     "http://localhost:8000/v1"))

    def complete(self, request: Request, sampling: Sampling) -> str:
        reply = self.client.chat.completions.create(
            model=self.model,
            messages=[{"role": "user", "content": request.prompt}],
            temperature=sampling.temperature,
            top_p=sampling.top_p,
            max_tokens=sampling.max_tokens,
            seed=request.seed,
        )
        choices = getattr(reply, "choices", None)
        if not choices:
            raise ValueError(f"reply without choices: {str(reply)[:200]!r}")
        return choices[0].message.content or ""


class TransformersBackend:
    """A local causal LM (path or hub id) with its tokenizer; CUDA when present (``device:
    auto``). The prompt goes through the tokenizer's chat template when it has one. Each request
    samples with ``torch.manual_seed(request.seed)``, so an answer does not depend on which
    requests came before it (a resumed run gives the same answers). One request at a time.

    Raises:
        ConfigError: the model or tokenizer cannot be loaded or asks for custom code (it is loaded
            with ``trust_remote_code=False``), or CUDA is asked for and absent.
    """

    concurrency = 1

    def __init__(self, backend: Backend):
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from icda.encoder import from_pretrained, resolve_device

        self.device = resolve_device(backend.device)
        try:
            self.tokenizer = from_pretrained(AutoTokenizer, backend.model, "llm.backend.model")
            kwargs = {"dtype": "auto"} if self.device == "cuda" else {}
            self.lm = from_pretrained(AutoModelForCausalLM, backend.model, "llm.backend.model",
                                      **kwargs).to(self.device).eval()
        except (OSError, ValueError) as exc:
            raise ConfigError(f"llm.backend.model: cannot load {backend.model!r} ({exc}). Fix: give a "
                              "local folder with a causal LM and its tokenizer, or a hub id this "
                              "machine can download") from exc
        self.model = backend.model
        log.info("transformers backend: %s on %s", backend.model, self.device)

    def complete(self, request: Request, sampling: Sampling) -> str:
        import torch

        if getattr(self.tokenizer, "chat_template", None):
            enc = self.tokenizer.apply_chat_template([{"role": "user", "content": request.prompt}],
                                                     add_generation_prompt=True, return_dict=True,
                                                     return_tensors="pt")
        else:
            enc = self.tokenizer(request.prompt, return_tensors="pt")
        enc = {k: v.to(self.device) for k, v in enc.items() if k in ("input_ids", "attention_mask")}
        pad = self.tokenizer.pad_token_id
        pad = self.tokenizer.eos_token_id if pad is None else pad
        sample = sampling.temperature > 0
        sample_args = {"temperature": sampling.temperature, "top_p": sampling.top_p} if sample else {}
        torch.manual_seed(request.seed)
        with torch.no_grad():
            out = self.lm.generate(**enc, do_sample=sample, max_new_tokens=sampling.max_tokens,
                                   pad_token_id=pad, **sample_args)
        return self.tokenizer.decode(out[0, enc["input_ids"].shape[1]:], skip_special_tokens=True)


def make_backend(backend: Backend):
    """The backend the settings describe."""
    if backend.type == "openai":
        return OpenAIBackend(backend)
    return TransformersBackend(backend)
