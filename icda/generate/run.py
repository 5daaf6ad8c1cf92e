"""``python -m icda generate``: ask a language model for the documents of a ``source: llm``
dataset (workflow rule ``generate``).

Writes the responses file (default ``results/<dataset>/generated/responses.jsonl``) once every
request has an answer; every attempt is appended to the dataset's cache first, so a killed run
resumes with the same command and asks only for what is missing (:func:`generate`).
``python -m icda prepare`` then makes train/dev/test. The API key, if any, is read from the
environment variable named in ``llm.backend.api_key_env``; the dataset comes from ``--spec``
(JSON {name, ...spec}, as the workflow writes it) or from ``--config`` and ``--dataset``.

Generating the responses: plan, resume from the cache, ask, retry. The requests are planned from the spec alone (labels × ``per_label``, slot values in turn), so a
rerun plans the same requests; those with a successful answer in the cache are not asked again.
Each attempt is appended to the cache; a failed or empty answer is retried with exponential
backoff. The responses file is written only when every request has an answer: one per request,
in plan order, so an interrupted-and-resumed run writes the same file as an uninterrupted one.
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import replace
from pathlib import Path

from icda.data.dataset_spec import validate_spec
from icda.data.dataset_spec_files import load_one_spec
from icda.errors import DataError
from icda.generate.records import (Request, Response, ResponseCache, clean_text, request_key, request_seed,
                                   write_responses)
from icda.data.llm_spec import LlmSpec, parse_llm, responses_path
from icda.guard import add_input, add_output

log = logging.getLogger(__name__)

#: the longest wait between two attempts, seconds
MAX_BACKOFF = 60.0


def plan_requests(llm: LlmSpec, seed: int, model: str) -> list[Request]:
    """The requests of a dataset: for each label, ``per_label`` requests cycling through the
    label's slot values in config order; ``index`` counts the requests of one value."""
    sampling = llm.sampling.to_json()
    out = []
    for label in llm.labels():
        values = llm.values_of(label)
        for i in range(llm.per_label):
            value, index = values[i % len(values)], i // len(values)
            prompt = llm.render(value)
            out.append(Request(key=request_key(prompt, value, index, seed, model, sampling), label=label,
                               value=value, index=index, seed=request_seed(seed, value, index), prompt=prompt))
    return out


def ask(backend, request: Request, llm: LlmSpec, cache: ResponseCache, sleep=time.sleep) -> Response:
    """Ask ``backend`` for one request, up to ``1 + retries`` times; every attempt is recorded in
    the cache. Returns the successful response, or the last failed one. An answer or an error is
    recorded as :func:`icda.generate.records.clean_text` gives it: secrets (the API key, a URL's
    password) as ``***``, half a surrogate pair as U+FFFD.

    A failed attempt (an exception: server error, timeout, malformed reply) is retried with the
    same seed, since the model never answered. An empty answer is retried with a new seed derived
    from the request's seed and the number of empty answers so far, since the same seed would give
    the same empty answer again; both rules keep a deterministic model's answers reproducible.
    """
    retries, backoff = llm.backend.retries, llm.backend.backoff
    empty = 0
    for attempt in range(1, retries + 2):
        asked = replace(request, seed=request_seed(request.seed, "empty", empty)) if empty else request
        try:
            text = backend.complete(asked, llm.sampling)
            error = None if isinstance(text, str) and text.strip() else "empty response"
            empty += error is not None
        except Exception as exc:  # any failure of the server or the model is recorded and retried
            text, error = None, clean_text(f"{type(exc).__name__}: {exc}")[:500]
        if isinstance(text, str):
            text = clean_text(text)  # a server that echoes the key, or sends half a surrogate pair
        response = Response(key=request.key, label=request.label, value=request.value, index=request.index,
                            seed=asked.seed, model=backend.model, attempt=attempt, text=text, error=error)
        cache.append(response)
        if response.ok:
            return response
        log.warning("request %s (label %d, %r #%d) attempt %d/%d failed: %s", request.key[:10],
                    request.label, request.value, request.index, attempt, retries + 1, error)
        if attempt <= retries:
            sleep(min(backoff * 2 ** (attempt - 1), MAX_BACKOFF))
    return response


def generate(name: str, spec: dict, out: str | Path | None = None, backend=None,
             cache: str | Path | None = None) -> dict:
    """Generate (or complete) the responses of dataset ``name`` and write them to ``out``.

    Args:
        name, spec: the dataset and its spec (``source: llm``).
        out: the responses file (default :func:`~icda.data.llm_spec.responses_path`).
        backend: the model (default: the one the spec's ``llm.backend`` describes).
        cache: the cache file (default: ``llm.cache`` or ``results/cache/llm/<name>.jsonl``).

    Returns:
        The report: model, cache, and per label the responses requested, found in the cache,
        generated now and failed, plus the attempts made and how many failed.

    Raises:
        ConfigError: the spec is invalid or the backend cannot be set up.
        DataError: some requests still have no answer after every retry (their attempts are in
            the cache; rerunning asks only for them).
    """
    spec = validate_spec(name, spec)
    if spec["source"] != "llm":
        raise DataError(f"datasets.{name}", None, f"source is {spec['source']!r}, not 'llm'",
                        "generate only datasets with source: llm")
    llm = parse_llm(name, spec["llm"])
    out = Path(out) if out is not None else responses_path(name)
    cache = ResponseCache(cache if cache is not None else llm.cache_path(name))
    if backend is None:
        from icda.generate.backends import make_backend

        backend = make_backend(llm.backend)
    requests = plan_requests(llm, spec["seed"], backend.model)
    answers = cache.successes()
    todo = [r for r in requests if r.key not in answers]
    cached = Counter(r.label for r in requests if r.key in answers)
    log.info("%s: %d requests, %d answered in %s, asking %s (%s) for %d", name, len(requests),
             len(requests) - len(todo), cache.path, backend.model, type(backend).__name__, len(todo))

    if todo and hasattr(backend, "check"):
        backend.check()
    failed: dict[str, Response] = {}
    attempts = Counter()
    pool = ThreadPoolExecutor(max_workers=backend.concurrency)
    try:
        futures = [pool.submit(ask, backend, r, llm, cache) for r in todo]
        for n, future in enumerate(as_completed(futures), 1):
            response = future.result()
            attempts["total"] += response.attempt
            attempts["failed"] += response.attempt - response.ok
            (answers if response.ok else failed)[response.key] = response
            if n % 100 == 0 or n == len(todo):
                log.info("%s: %d of %d asked (%d failed so far)", name, n, len(todo), len(failed))
    finally:
        pool.shutdown(wait=False, cancel_futures=True)

    requested = Counter(r.label for r in requests)
    missing = Counter(r.label for r in requests if r.key in failed)
    report = {
        "dataset": name,
        "model": backend.model,
        "cache": str(cache.path),
        "attempts": attempts["total"],
        "failed_attempts": attempts["failed"],
        "labels": {str(y): {"requested": requested[y], "cached": cached[y],
                            "generated": requested[y] - cached[y] - missing[y], "failed": missing[y]}
                   for y in sorted(requested)},
    }
    if failed:
        last = next(iter(failed.values()))
        raise DataError(cache.path, None,
                        f"{len(failed)} of {len(requests)} requests have no answer after "
                        f"{llm.backend.retries + 1} attempts each (e.g. {last.error}); per label: "
                        f"{dict(sorted(missing.items()))}",
                        "check that the server is up and the model name is right; then rerun the "
                        "same command: answered requests are kept in the cache and only the failed "
                        "ones are asked again")
    write_responses([answers[r.key] for r in requests], out)
    log.info("%s: wrote %d responses to %s", name, len(requests), out)
    return report


# --------------------------------------------------------------------------- the command


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "generate",
        help="generate an LLM dataset's raw responses (resumable, cached)",
        description=(
            "Ask the model in the dataset's llm.backend (an OpenAI-compatible server, or a local "
            "transformers model) for per_label responses per label to the llm.prompt, with "
            "retries and backoff; every attempt is cached, so a rerun asks only for what is "
            "missing. The API key, if any, is read from the environment variable named in "
            "llm.backend.api_key_env. The dataset comes from --spec (JSON {name, ...spec}, as the "
            "workflow writes it) or from --config and --dataset."
        ),
    )
    add_input(p, "--spec", help="JSON spec: {\"name\": ..., **spec}")
    add_input(p, "--config", help="YAML config with data_dir and datasets (instead of --spec)")
    p.add_argument("--dataset", help="dataset name under `datasets` in --config")
    add_output(p, "--out", help="responses file (default results/<dataset>/generated/responses.jsonl)")
    add_output(p, "--cache", help="cache file (default llm.cache or results/cache/llm/<dataset>.jsonl)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    name, spec, _ = load_one_spec(args.spec, args.config, args.dataset, "generate")
    report = generate(name, spec, args.out, cache=args.cache)
    print(summary(report))
    return 0


def summary(report: dict) -> str:
    """The counts per label, and the report as JSON."""
    lines = [f"{report['dataset']}: {report['model']}, {report['attempts']} attempts "
             f"({report['failed_attempts']} failed); cache {report['cache']}"]
    for label, c in report["labels"].items():
        lines.append(f"  label {label}: {c['requested']} requested, {c['cached']} from the cache, "
                     f"{c['generated']} generated, {c['failed']} failed")
    return "\n".join(lines + [json.dumps(report)])
