"""The ``llm`` block of a ``source: llm`` dataset spec: what to ask, of which model, and how to
clean the answers.

Example (the paper's restaurant prompt; config/llm_restaurant.yaml has both of the paper's)::

    llm:
      prompt: 'please write a detailed review ... should be a $RATING/10 ...'
      slot: RATING                      # the $NAME in the prompt
      values: {1: 0, 2: 0, 3: 0, 4: 0, 6: 1, 7: 1, 8: 1, 9: 1, 10: 1}   # slot value -> label
      per_label: 2500                   # responses requested per label
      dev: 0.1                          # fraction of the prepared documents for dev
      test: 0.1                         # ... and for test
      sampling: {temperature: 0.6, top_p: 0.9, max_tokens: 512}
      preamble: 'My review:'            # text up to and including it is stripped
      filters: [review, give it a, out of]   # drop sentences containing one of these
      leakage_ngram: 5                  # drop sentences sharing 5 consecutive words with the prompt (0: off)
      backend: {type: openai, base_url: 'http://127.0.0.1:8000/v1', model: ..., api_key_env: null,
                concurrency: 8, retries: 5, backoff: 2.0, timeout: 300}
      cache: null                       # default results/cache/llm/<dataset>.jsonl

The dataset's own ``seed`` seeds every request and the splits; its ``keywords`` give the test
ground truth; ``min_sentences`` and ``balance`` apply as for any dataset.
"""

from __future__ import annotations

import math
import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from icda.errors import ConfigError

#: where the ``generate`` step writes a dataset's responses (the ``prepare`` step reads them)
RESPONSES = "results/{dataset}/generated/responses.jsonl"
#: the default response cache of a dataset (outside the step's outputs: it survives a failed run)
CACHE = "results/cache/llm/{dataset}.jsonl"

BACKENDS = ("openai", "transformers")


@dataclass(frozen=True)
class Sampling:
    """Sampling settings sent with every request (part of the cache key)."""

    temperature: float = 0.6
    top_p: float = 0.9
    max_tokens: int = 512

    def to_json(self) -> dict:
        return {"temperature": self.temperature, "top_p": self.top_p, "max_tokens": self.max_tokens}


@dataclass(frozen=True)
class Backend:
    """Which model answers, and how requests are sent.

    Attributes:
        type: ``"openai"`` (any OpenAI-compatible chat endpoint: vLLM, llama.cpp server, Ollama,
            hosted APIs) or ``"transformers"`` (a local causal LM).
        model: the model id the server knows (openai), or a local path / hub id (transformers).
        base_url: the endpoint, e.g. ``http://127.0.0.1:8000/v1`` (openai only).
        api_key_env: name of the environment variable holding the API key; None for servers that
            need none. The key itself never goes in the config. By design, the variable's value
            is sent as the API key (bearer token) with every request to ``base_url`` and to no
            other server (unencrypted over ``http://``); whoever writes the config chooses both.
        concurrency: requests in flight at once (openai).
        retries: further attempts after a failed or empty response.
        backoff: seconds before the first retry, doubled at each further one (capped at 60).
        timeout: seconds to wait for one response (openai).
        device: ``auto`` (CUDA when present), ``cpu`` or ``cuda`` (transformers).
    """

    type: str = "openai"
    model: str = ""
    base_url: str | None = None
    api_key_env: str | None = None
    concurrency: int = 4
    retries: int = 5
    backoff: float = 2.0
    timeout: float = 300.0
    device: str = "auto"


@dataclass(frozen=True)
class LlmSpec:
    """A validated ``llm`` block (module docstring: every key)."""

    prompt: str
    slot: str
    values: dict[str, int]
    per_label: int
    dev: float = 0.1
    test: float = 0.1
    sampling: Sampling = field(default_factory=Sampling)
    preamble: str | None = "My review:"
    filters: tuple[str, ...] = ()
    leakage_ngram: int = 5
    backend: Backend = field(default_factory=Backend)
    cache: str | None = None

    def render(self, value: str) -> str:
        """The prompt with the slot filled in."""
        return string.Template(self.prompt).substitute({self.slot: value})

    def labels(self) -> list[int]:
        return sorted(set(self.values.values()))

    def values_of(self, label: int) -> list[str]:
        """The slot values of one label, in config order."""
        return [v for v, y in self.values.items() if y == label]

    def cache_path(self, dataset: str) -> Path:
        return Path(self.cache or CACHE.format(dataset=dataset))


def responses_path(dataset: str) -> Path:
    """Where ``generate`` writes, and ``prepare`` reads, the responses of ``dataset``."""
    return Path(RESPONSES.format(dataset=dataset))


def parse_llm(name: str, block: Any) -> LlmSpec:
    """Validate the ``llm`` block of dataset ``name`` and fill in the defaults.

    Raises:
        ConfigError: a key is unknown, missing or of the wrong type; the message names
            ``datasets.<name>.llm.<key>`` and the fix.
    """
    where = f"datasets.{name}.llm"

    def fail(key: str, problem: str, fix: str) -> ConfigError:
        return ConfigError(f"{where}.{key}: {problem}. Fix: {fix}")

    if not isinstance(block, dict) or not block:
        raise ConfigError(f"{where}: missing or not a mapping. Fix: give prompt, slot, values and "
                          "per_label (see config/llm_restaurant.yaml)")
    known = {"prompt", "slot", "values", "per_label", "dev", "test", "sampling", "preamble",
             "filters", "leakage_ngram", "backend", "cache"}
    for key in block:
        if key not in known:
            raise fail(key, "unknown key", f"use only {', '.join(sorted(known))}")
    for key in ("prompt", "slot", "values", "per_label"):
        if key not in block:
            raise fail(key, "missing", "see config/llm_restaurant.yaml for an example")

    prompt, slot = block["prompt"], block["slot"]
    if not isinstance(prompt, str) or not prompt.strip():
        raise fail("prompt", "not a non-empty string", "give the prompt template")
    if not isinstance(slot, str) or not slot.isidentifier():
        raise fail("slot", f"{slot!r} is not a name", "give the slot's name, e.g. RATING for $RATING")
    template = string.Template(prompt)
    if not template.is_valid():
        raise fail("prompt", "has a stray $", "write a literal $ as $$")
    if template.get_identifiers() != [slot]:
        raise fail("prompt", f"its slots are {template.get_identifiers()}, not [{slot!r}]",
                   f"use ${slot} in the prompt and no other $NAME (write a literal $ as $$)")

    values = block["values"]
    if not isinstance(values, dict) or not values:
        raise fail("values", "not a non-empty mapping",
                   "map each slot value to its label, e.g. {bad: 0, excellent: 1}")
    parsed: dict[str, int] = {}
    for value, label in values.items():
        if isinstance(label, bool) or not isinstance(label, int) or label < 0:
            raise fail(f"values.{value}", f"label {label!r} is not an integer >= 0", "give 0 or 1")
        parsed[str(value)] = label
    if len(set(parsed.values())) < 2:
        raise fail("values", "all values map to one label", "map some values to each label")

    per_label = _int(block["per_label"], 1, fail, "per_label")
    if per_label > MAX_PER_LABEL:  # every request is planned in memory before the first is asked
        raise fail("per_label", f"{per_label} is more than {MAX_PER_LABEL:,}", f"give at most {MAX_PER_LABEL:,}")
    dev = _fraction(block.get("dev", 0.1), fail, "dev")
    test = _fraction(block.get("test", 0.1), fail, "test")
    if dev + test >= 1:
        raise fail("dev", f"dev + test = {dev + test} leaves no training data", "lower dev or test")

    sampling = _sampling(block.get("sampling") or {}, fail)
    preamble = block.get("preamble", "My review:")
    if preamble is not None and (not isinstance(preamble, str) or not preamble.strip()):
        raise fail("preamble", f"{preamble!r} is not a non-empty string or null", "give e.g. 'My review:'")
    filters = block.get("filters") or []
    if not isinstance(filters, list) or not all(isinstance(f, str) and f for f in filters):
        raise fail("filters", f"{filters!r} is not a list of non-empty strings", "give e.g. [review, out of]")
    leakage = _int(block.get("leakage_ngram", LlmSpec.leakage_ngram), 0, fail, "leakage_ngram")
    cache = block.get("cache")
    if cache is not None and (not isinstance(cache, str) or not cache):
        raise fail("cache", f"{cache!r} is not a path or null", "give a file path or null")
    return LlmSpec(prompt=prompt, slot=slot, values=parsed, per_label=per_label, dev=dev, test=test,
                   sampling=sampling, preamble=preamble, filters=tuple(filters), leakage_ngram=leakage,
                   backend=_backend(block.get("backend") or {}, fail), cache=cache)


#: the most responses per label: the requests are planned in memory before the first is asked
MAX_PER_LABEL = 1_000_000


def _check_base_url(base_url: Any, fail) -> None:
    """Check an openai backend's ``base_url``: an http(s) URL that :func:`urllib.parse.urlsplit`
    reads, without a query string or fragment. The messages never repeat a string URL: its
    user-info or query may hold a password or a key (the secrets are not known yet)."""
    from urllib.parse import urlsplit

    fix = "give the server's OpenAI-compatible URL, e.g. http://127.0.0.1:8000/v1"
    if not isinstance(base_url, str):
        raise fail("backend.base_url", f"{base_url!r} is not an http(s) URL", fix)
    if not base_url.startswith(("http://", "https://")):
        raise fail("backend.base_url", "not an http(s) URL (it does not start with http:// or https://)", fix)
    try:
        parts = urlsplit(base_url)
        parts.port  # noqa: B018 (raises ValueError for a port that is not a number from 0 to 65535)
    except ValueError:  # e.g. an unclosed [ of an IPv6 address
        raise fail("backend.base_url", "not a valid URL (e.g. an unclosed [ of an IPv6 address, or a port that "
                   "is not a number from 0 to 65535); not repeated here, as it may hold a password", fix) from None
    if parts.query or parts.fragment:
        raise fail("backend.base_url", "has a query string or a fragment (?... or #...), which every request "
                   "would carry and the logs would show; not repeated here, as it may hold a key",
                   f"{fix}, without ?...; give an API key in an environment variable named by "
                   "backend.api_key_env")


def _int(value: Any, minimum: int, fail, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise fail(key, f"{value!r} is not an integer >= {minimum}", f"give an integer >= {minimum}")
    return value


def _number(value: Any, minimum: float, fail, key: str) -> float:
    """``value`` as a float: a finite number >= ``minimum`` (NaN passes every comparison as false,
    and an infinite timeout or backoff waits forever)."""
    try:
        number = None if isinstance(value, bool) or not isinstance(value, (int, float)) else float(value)
    except OverflowError:  # an integer beyond a float
        number = None
    if number is None or not math.isfinite(number) or number < minimum:
        raise fail(key, f"{value!r} is not a finite number >= {minimum}", f"give a number >= {minimum}")
    return number


def _fraction(value: Any, fail, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise fail(key, f"{value!r} is not a number in (0, 1)", "give e.g. 0.1")
    return float(value)


def _sampling(block: Any, fail) -> Sampling:
    if not isinstance(block, dict):
        raise fail("sampling", "not a mapping", "give {temperature, top_p, max_tokens}")
    for key in block:
        if key not in ("temperature", "top_p", "max_tokens"):
            raise fail(f"sampling.{key}", "unknown key", "use only temperature, top_p, max_tokens")
    d = Sampling()
    top_p = _number(block.get("top_p", d.top_p), 0.0, fail, "sampling.top_p")
    if top_p == 0 or top_p > 1:
        raise fail("sampling.top_p", f"{top_p} is not in (0, 1]", "give e.g. 0.9")
    return Sampling(temperature=_number(block.get("temperature", d.temperature), 0.0, fail, "sampling.temperature"),
                    top_p=top_p,
                    max_tokens=_int(block.get("max_tokens", d.max_tokens), 1, fail, "sampling.max_tokens"))


def _backend(block: Any, fail) -> Backend:
    if not isinstance(block, dict):
        raise fail("backend", "not a mapping", "give {type, model, base_url, ...}")
    if "api_key" in block:
        raise fail("backend.api_key", "a key in the config file would be shared with the config",
                   "remove it; put the key in an environment variable and name it in api_key_env")
    d = Backend()
    for key in block:
        if key not in Backend.__dataclass_fields__:
            raise fail(f"backend.{key}", "unknown key", f"use only {', '.join(Backend.__dataclass_fields__)}")
    kind = block.get("type", d.type)
    if kind not in BACKENDS:
        raise fail("backend.type", f"{kind!r} is not one of {list(BACKENDS)}", "use openai or transformers")
    model = block.get("model")
    if not isinstance(model, str) or not model:
        raise fail("backend.model", "missing", "give the model id (openai) or a local path / hub id (transformers)")
    base_url = block.get("base_url")
    if kind == "openai":
        _check_base_url(base_url, fail)
    key_env = block.get("api_key_env")
    if key_env is not None and (not isinstance(key_env, str) or not key_env):
        raise fail("backend.api_key_env", f"{key_env!r} is not a variable name or null",
                   "give e.g. OPENAI_API_KEY, or null for a local server")
    device = block.get("device", d.device)
    if device not in ("auto", "cpu", "cuda"):
        raise fail("backend.device", f"{device!r} is not auto, cpu or cuda", "give one of them")
    return Backend(type=kind, model=model, base_url=base_url, api_key_env=key_env,
                   concurrency=_int(block.get("concurrency", d.concurrency), 1, fail, "backend.concurrency"),
                   retries=_int(block.get("retries", d.retries), 0, fail, "backend.retries"),
                   backoff=_number(block.get("backoff", d.backoff), 0.0, fail, "backend.backoff"),
                   timeout=_number(block.get("timeout", d.timeout), 0.001, fail, "backend.timeout"),
                   device=device)
