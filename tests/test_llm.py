"""LLM-generated datasets (source: llm): spec validation, post-processing, generation against an
in-process fake OpenAI-compatible server (canned, malformed, empty, slow and failing answers),
a generation killed half-way and resumed, and the transformers backend with a tiny random GPT-2."""

from __future__ import annotations

import json
import logging
import os
import random
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from icda.steps.prepare import prepare_dataset
from icda.data.dataset_spec import validate_spec
from icda.data.dataset_spec_files import load_config_datasets
from icda.errors import ConfigError, DataError
from icda.generate.postprocess import SentenceFilter, responses_to_documents, strip_preamble
from icda.generate.records import ResponseCache, read_responses
from icda.generate.run import generate, plan_requests
from icda.data.llm_spec import parse_llm

REPO = Path(__file__).resolve().parents[1]
PROMPT = 'please write about a restaurant worth $RATING/10. Start with "My review:"'
FOOD = {1: ["The food was delicious.", "Every dish had a rich flavor.", "The cook clearly used fresh ingredients."],
        0: ["The food was bland.", "My dish was cold and dull.", "The ingredients tasted stale."]}
OTHER = ["We went on a Friday.", "The waiter was friendly.", "Parking was easy.", "The room was loud.",
         "The menu was short.", "Prices were fair.", "The tables were clean.", "We sat by the window.",
         "Dessert came late.", "The music was nice."]


def canned_review(prompt: str, seed: int) -> str:
    """A deterministic answer to ``prompt`` with sampling seed ``seed``: a preamble, 3 to 9
    sentences (so some documents are too short), a food sentence of the rating's polarity, and
    sentences the filters must drop (rating talk, prompt leakage)."""
    rng = random.Random(seed)
    rating = int(prompt.split("worth ")[1].split("/")[0])
    body = [rng.choice(FOOD[int(rating >= 6)])] + rng.sample(OTHER, rng.randint(2, 8))
    rng.shuffle(body)
    if rng.random() < 0.5:
        body.append(f"I would give it a {rating} out of 10.")
    if rng.random() < 0.5:
        body.insert(1, "They asked me to write about a restaurant worth a visit.")
    return "Sure! Here is my answer.\n\nMy Review: " + " ".join(body)


class FakeServer:
    """An OpenAI-compatible chat-completions server on 127.0.0.1 in a thread.

    ``script`` holds the behaviours of the next requests (FIFO; then ``default``): ``ok``,
    ``empty`` (no content), ``malformed`` (not JSON), ``no_choices``, ``fail`` (HTTP 500),
    ``slow`` (answers after ``slow_s``). ``fail_if(prompt)`` makes matching requests fail.
    ``delay`` slows every answer. ``requests`` records (prompt, seed, authorization) of each call.
    """

    def __init__(self):
        self.script: list[str] = []
        self.default = "ok"
        self.fail_if = lambda prompt: False
        self.delay = 0.0
        self.slow_s = 2.0
        self.requests: list[tuple[str, int, str | None]] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                prompt, seed = body["messages"][-1]["content"], body.get("seed")
                with server.lock:
                    server.requests.append((prompt, seed, self.headers.get("Authorization")))
                    mode = server.script.pop(0) if server.script else server.default
                if server.fail_if(prompt):
                    mode = "fail"
                time.sleep(server.delay + (server.slow_s if mode == "slow" else 0.0))
                if mode == "fail":
                    return self._send(500, json.dumps({"error": {"message": "boom", "type": "server_error"}}))
                if mode == "malformed":
                    return self._send(200, "{not json")
                if mode == "no_choices":
                    return self._send(200, json.dumps({"id": "x", "object": "chat.completion", "choices": []}))
                content = "" if mode == "empty" else canned_review(prompt, seed)
                self._send(200, json.dumps({
                    "id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": content}}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}))

            def _send(self, status, text):
                data = text.encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except BrokenPipeError:  # the client gave up (timeout test)
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    s = FakeServer()
    yield s
    s.close()


def llm_spec(url: str, per_label: int = 6, **backend) -> dict:
    """A restaurant-like ``source: llm`` dataset spec against ``url``."""
    return {
        "source": "llm", "seed": 3, "min_sentences": 5,
        "keywords": ["food", "dish", "flavor", "delicious", "bland", "cook", "ingredients"],
        "llm": {
            "prompt": PROMPT, "slot": "RATING", "values": {2: 0, 3: 0, 8: 1, 9: 1},
            "per_label": per_label, "dev": 0.2, "test": 0.2,
            "sampling": {"temperature": 0.7, "top_p": 0.9, "max_tokens": 64},
            "preamble": "My review:", "filters": ["review", "give it a", "out of"], "leakage_ngram": 5,
            "backend": {"type": "openai", "base_url": url, "model": "fake-llama", "concurrency": 3,
                        "retries": 3, "backoff": 0.0, "timeout": 10, **backend},
        },
    }


def read_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# --- spec ---


@pytest.mark.parametrize("change, key", [
    ({"slot": "STARS"}, "llm.prompt"),
    ({"values": {1: 0, 2: 0}}, "llm.values"),
    ({"per_label": 0}, "llm.per_label"),
    ({"dev": 0.5, "test": 0.5}, "llm.dev"),
    ({"sampling": {"top_p": 2}}, "llm.sampling.top_p"),
    ({"backend": {"type": "openai", "model": "m", "base_url": "http://x/v1", "api_key": "sk-1"}},
     "llm.backend.api_key"),
    ({"backend": {"type": "openai", "model": "m"}}, "llm.backend.base_url"),
    ({"colour": 1}, "llm.colour"),
])
def test_invalid_llm_block_names_the_key(change, key):
    spec = llm_spec("http://127.0.0.1:1/v1")
    spec["llm"].update(change)
    with pytest.raises(ConfigError, match=rf"datasets\.d\.{key}.*Fix:"):
        validate_spec("d", spec)


def test_llm_dataset_rejects_files_and_other_sources_reject_llm():
    with pytest.raises(ConfigError, match="datasets.d.train"):
        validate_spec("d", {**llm_spec("http://127.0.0.1:1/v1"), "train": "x.txt"})
    with pytest.raises(ConfigError, match="datasets.d.llm"):
        validate_spec("d", {"source": "synthetic", "synthetic": {"n_train": 1, "n_dev": 1, "n_test": 1},
                            "llm": {"prompt": "x"}})


def test_paper_config_has_the_paper_prompts_and_lists():
    _, datasets = load_config_datasets(REPO / "config/llm_restaurant.yaml")
    restaurant = parse_llm("restaurant_llm", validate_spec("restaurant_llm", datasets["restaurant_llm"])["llm"])
    connect = parse_llm("connect_llm", validate_spec("connect_llm", datasets["connect_llm"])["llm"])
    assert "your review should be a 7/10 but do not explicitly state" in restaurant.render("7")
    assert restaurant.filters == ("review", "give it a", "out of")
    assert set(restaurant.values) == {str(r) for r in range(1, 11)} - {"5"}
    assert "sturdyness, comfort, spotty connectivity" in connect.render("spotty")
    assert len(connect.values) == 12 and connect.values["unreliable"] == 0 and connect.values["excellent"] == 1
    assert restaurant.backend.base_url.startswith("http://127.0.0.1") and restaurant.backend.api_key_env is None
    requests = plan_requests(restaurant, 0, "m")
    assert len(requests) == 2 * restaurant.per_label and len({r.key for r in requests}) == len(requests)


# --- post-processing ---


def test_postprocess_strips_preamble_and_drops_filtered_and_leaked_sentences():
    from icda.data.sentences import SentenceSplitter
    from icda.generate.records import Response

    llm = parse_llm("d", llm_spec("http://127.0.0.1:1/v1")["llm"])
    assert strip_preamble("Sure!\nMY REVIEW: Great.", "My review:") == (" Great.", True)
    assert strip_preamble("Great.", "My review:") == ("Great.", False)
    keep = SentenceFilter(llm)
    assert keep("I'd give it a solid eight.", "8") == "filter"
    assert keep("Overall a great review.", "8") == "filter"
    assert keep("I was told to write about a restaurant worth it.", "8") == "leakage"
    assert keep("The food was great.", "8") is None
    text = "Here you go.\nMy review: The food was great. Service was slow.\nI'd rate it 8 out of 10.\n\nWe left happy."
    response = Response("k", 1, "8", 0, 1, "m", 1, text, None)
    [doc], counts = responses_to_documents([response], llm, SentenceSplitter())
    assert doc.sentences == ("The food was great.", "Service was slow.", "We left happy.")
    assert counts == {"responses": 1, "responses_per_label": {"1": 1}, "without_preamble": 0,
                      "sentences": 4, "dropped_filter": 1, "dropped_leakage": 0}


# --- generation against the fake server ---


def test_generate_and_prepare_with_fake_server(server, tmp_path):
    spec = llm_spec(server.url, per_label=12)
    report = generate("d", spec, tmp_path / "responses.jsonl", cache=tmp_path / "cache.jsonl")
    responses = read_responses(tmp_path / "responses.jsonl")
    assert len(responses) == 24 and all(r.ok for r in responses)
    assert [r.label for r in responses] == [0] * 12 + [1] * 12
    assert {r.value for r in responses if r.label == 1} == {"8", "9"}
    assert report["labels"] == {"0": {"requested": 12, "cached": 0, "generated": 12, "failed": 0},
                                "1": {"requested": 12, "cached": 0, "generated": 12, "failed": 0}}
    assert len({seed for _, seed, _ in server.requests}) == 24  # every request has its own seed

    stats = prepare_dataset("d", spec, ".", tmp_path / "data", responses=tmp_path / "responses.jsonl")
    gen = stats["generation"]
    assert gen["responses"] == 24 and gen["without_preamble"] == 0
    assert gen["dropped_filter"] > 0 and gen["dropped_leakage"] > 0 and gen["short"] > 0
    docs = {s: read_lines(tmp_path / "data" / f"{s}.jsonl") for s in ("train", "dev", "test")}
    sentences = [s for split in docs.values() for d in split for s in d["sentences"]]
    assert sentences and not any(("review" in s.lower()) or ("out of" in s) or ("worth" in s) for s in sentences)
    assert all(len(d["sentences"]) >= 5 for split in docs.values() for d in split)
    assert sum(len(v) for v in docs.values()) == gen["documents"]
    for split in ("train", "dev", "test"):
        labels = [d["label"] for d in docs[split]]
        assert labels.count(0) == labels.count(1) > 0
    for doc in docs["train"] + docs["dev"] + docs["test"]:  # keyword ground truth, every split
        assert doc["rationale"] == [i for i, s in enumerate(doc["sentences"])
                                    if any(k in s.lower() for k in spec["keywords"])]
    assert stats["test_ground_truth"]["coverage"] == 1.0

    server.requests.clear()  # everything cached: a rerun asks nothing and writes the same file
    before = (tmp_path / "responses.jsonl").read_bytes()
    again = generate("d", spec, tmp_path / "responses.jsonl", cache=tmp_path / "cache.jsonl")
    assert server.requests == [] and again["labels"]["0"]["cached"] == 12
    assert (tmp_path / "responses.jsonl").read_bytes() == before


def test_failed_malformed_empty_and_slow_answers_are_recorded_and_retried(server, tmp_path):
    server.script = ["fail", "malformed", "empty", "no_choices", "slow"]
    server.slow_s = 1.5
    spec = llm_spec(server.url, per_label=2, concurrency=1, retries=5, timeout=0.5)
    report = generate("d", spec, tmp_path / "responses.jsonl", cache=tmp_path / "cache.jsonl")
    assert report["failed_attempts"] == 5 and report["attempts"] == 9
    attempts = read_lines(tmp_path / "cache.jsonl")
    failures = [a for a in attempts if a["error"]]
    assert len(failures) == 5 and [a["attempt"] for a in attempts[:6]] == [1, 2, 3, 4, 5, 6]
    errors = " | ".join(a["error"] for a in failures)
    assert "InternalServerError" in errors and "empty response" in errors and "Timeout" in errors
    assert all(r.ok for r in read_responses(tmp_path / "responses.jsonl"))


def test_persistent_failures_stop_with_counts_and_a_rerun_asks_only_for_them(server, tmp_path):
    server.fail_if = lambda prompt: "worth 9/10" in prompt
    spec = llm_spec(server.url, per_label=4, retries=1)
    with pytest.raises(DataError, match=r"2 of 8 requests have no answer after 2 attempts.*\{1: 2\}.*Fix: .*rerun"):
        generate("d", spec, tmp_path / "responses.jsonl", cache=tmp_path / "cache.jsonl")
    assert not (tmp_path / "responses.jsonl").exists()
    cache = ResponseCache(tmp_path / "cache.jsonl")
    assert len(cache.successes()) == 6 and sum(1 for r in cache.read() if not r.ok) == 4

    server.fail_if = lambda prompt: False
    server.requests.clear()
    report = generate("d", spec, tmp_path / "responses.jsonl", cache=tmp_path / "cache.jsonl")
    assert len(server.requests) == 2 and all("worth 9/10" in p for p, _, _ in server.requests)
    assert report["labels"]["1"] == {"requested": 4, "cached": 2, "generated": 2, "failed": 0}
    assert len(read_responses(tmp_path / "responses.jsonl")) == 8


def test_api_key_comes_from_the_named_environment_variable(server, tmp_path, monkeypatch):
    spec = llm_spec(server.url, per_label=1, api_key_env="ICDA_TEST_KEY")
    monkeypatch.delenv("ICDA_TEST_KEY", raising=False)
    with pytest.raises(ConfigError, match="ICDA_TEST_KEY is not set"):
        generate("d", spec, tmp_path / "r.jsonl", cache=tmp_path / "c.jsonl")
    monkeypatch.setenv("ICDA_TEST_KEY", "sk-test-123")
    generate("d", spec, tmp_path / "r.jsonl", cache=tmp_path / "c.jsonl")
    assert {auth for _, _, auth in server.requests} == {"Bearer sk-test-123"}


def test_unreachable_server_fails_fast_with_the_url(tmp_path):
    import socket

    with socket.socket() as sock:  # a loopback port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    start = time.time()
    url = f"http://127.0.0.1:{port}/v1"
    with pytest.raises(ConfigError, match=rf"base_url: cannot reach {url}.*Fix: start the server"):
        generate("d", llm_spec(url, backoff=5.0), tmp_path / "r.jsonl",
                 cache=tmp_path / "c.jsonl")
    assert time.time() - start < 5


def test_cache_skips_a_line_cut_by_a_kill(tmp_path):
    from icda.generate.records import Response

    cache = ResponseCache(tmp_path / "c.jsonl")
    cache.append(Response("a", 0, "2", 0, 1, "m", 1, "text", None))
    with open(cache.path, "a") as fh:
        fh.write('{"key": "b", "lab')  # a run killed mid-write
    cache.append(Response("c", 1, "8", 0, 2, "m", 1, "more", None))
    assert set(cache.successes()) == {"a", "c"}


def test_killed_generation_resumes_to_the_same_dataset(server, tmp_path):
    """A generate process killed (SIGKILL) half-way and rerun gives the same responses and the same
    prepared dataset as an uninterrupted run, and the rerun asks only for what was missing."""
    server.delay = 0.1
    spec = llm_spec(server.url, per_label=15, concurrency=2)
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"datasets": {"d": spec}}))
    killed, cache = tmp_path / "killed", tmp_path / "killed" / "cache.jsonl"
    cmd = [sys.executable, "-m", "icda", "generate", "--config", str(config), "--dataset", "d",
           "--out", str(killed / "responses.jsonl"), "--cache", str(cache)]
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline and (not cache.exists() or len(cache.read_text().splitlines()) < 10):
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    answered = len(ResponseCache(cache).successes())
    assert 10 <= answered < 30 and not (killed / "responses.jsonl").exists()

    server.requests.clear()
    subprocess.run(cmd, env=env, check=True, capture_output=True)
    assert len(server.requests) == 30 - answered

    server.delay = 0.0
    whole = tmp_path / "whole"
    generate("d", spec, whole / "responses.jsonl", cache=whole / "cache.jsonl")
    assert (killed / "responses.jsonl").read_bytes() == (whole / "responses.jsonl").read_bytes()
    for run in (killed, whole):
        prepare_dataset("d", spec, ".", run / "data", responses=run / "responses.jsonl")
    for split in ("train", "dev", "test"):
        assert (killed / "data" / f"{split}.jsonl").read_bytes() == (whole / "data" / f"{split}.jsonl").read_bytes()


# --- transformers backend ---

_GPT_WORDS = """the food was delicious bland dish flavor great bad service staff slow friendly we i it
table menu price good very not and but cook ingredients place dinner nice""".split()


@pytest.fixture(scope="session")
def tiny_gpt2_dir(tmp_path_factory):
    """A tiny randomly initialised GPT-2 (2 layers, width 32) with a word-level tokenizer built
    here (no download); sentence ends are frequent enough to give multi-sentence answers."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    path = tmp_path_factory.mktemp("tiny-gpt2")
    vocab = {w: i for i, w in enumerate(["[UNK]", "<|endoftext|>", ".", "!", "?", ","] + _GPT_WORDS)}
    core = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=core, unk_token="[UNK]", eos_token="<|endoftext|>",
                            pad_token="<|endoftext|>").save_pretrained(path)
    config = GPT2Config(vocab_size=len(vocab), n_positions=128, n_embd=32, n_layer=2, n_head=2,
                        bos_token_id=1, eos_token_id=1)
    torch.manual_seed(0)
    GPT2LMHeadModel(config).save_pretrained(path)
    return path


def gpt2_spec(path: Path, per_label: int) -> dict:
    spec = llm_spec("unused", per_label=per_label)
    spec["min_sentences"] = 2
    spec["llm"]["sampling"]["max_tokens"] = 60
    spec["llm"]["backend"] = {"type": "transformers", "model": str(path), "device": "cpu", "retries": 3,
                               "backoff": 0}
    return spec


def test_transformers_backend_resumes_to_the_same_answers(tiny_gpt2_dir, tmp_path):
    """Each request samples with its own seed, so a run whose model dies after 3 answers, resumed
    with a fresh model, gives byte-identical responses to an uninterrupted run."""
    from icda.generate.backends import TransformersBackend

    spec = gpt2_spec(tiny_gpt2_dir, per_label=6)
    llm = parse_llm("d", spec["llm"])
    generate("d", spec, tmp_path / "whole.jsonl", cache=tmp_path / "whole-cache.jsonl")
    whole = read_responses(tmp_path / "whole.jsonl")
    assert len(whole) == 12 and all(r.ok and r.model == str(tiny_gpt2_dir) for r in whole)
    assert len({r.text for r in whole}) == 12

    class DiesAfterThree(TransformersBackend):
        calls = 0

        def complete(self, request, sampling):
            if DiesAfterThree.calls == 3:
                raise RuntimeError("CUDA error: device lost")
            DiesAfterThree.calls += 1
            return super().complete(request, sampling)

    with pytest.raises(DataError, match="9 of 12 requests have no answer"):
        generate("d", spec, tmp_path / "resumed.jsonl", backend=DiesAfterThree(llm.backend),
                 cache=tmp_path / "cache.jsonl")
    assert len(ResponseCache(tmp_path / "cache.jsonl").successes()) == 3
    generate("d", spec, tmp_path / "resumed.jsonl", cache=tmp_path / "cache.jsonl")
    assert (tmp_path / "resumed.jsonl").read_bytes() == (tmp_path / "whole.jsonl").read_bytes()
    # a dev share of 0.4: 12 responses leave dev the 2·C = 4 documents a counterfactual needs
    # (prepare refuses fewer); the shares do not enter the requests, so the cache answers them all
    spec["llm"] |= {"dev": 0.4, "test": 0.2}
    stats = prepare_dataset("d", spec, ".", tmp_path / "data", responses=tmp_path / "resumed.jsonl")
    assert stats["generation"]["responses"] == 12 and stats["generation"]["sentences"] > 24


# --- workflow ---


@pytest.mark.slow  # two dry runs of the workflow in fresh interpreters (about 5 s)
def test_generate_rule_runs_only_for_llm_datasets(tmp_path):
    def dry_run(*configfiles):
        env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
        proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "1", "-s", str(REPO / "Snakefile"),
                               "--directory", str(tmp_path), "--configfile",
                               *[str(REPO / c) for c in configfiles]], env=env, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        return proc.stdout
    llm = dry_run("config/config.yaml", "config/llm_restaurant.yaml")
    assert "rule generate:" in llm and "results/restaurant_llm/generated/responses.jsonl" in llm
    assert "results/connect_llm" not in llm  # not in run_datasets
    assert "rule generate:" not in dry_run("config/config.yaml")


def test_workflow_config_for_llm_datasets():
    from icda.workflow_config.run_settings import generate_gpus
    from icda.workflow_config.dataset_inputs import generated_responses

    config = {"datasets": {
        "local": {"source": "llm", "llm": {"backend": {"type": "transformers", "model": "m"}}},
        "local_cpu": {"source": "llm", "llm": {"backend": {"type": "transformers", "model": "m", "device": "cpu"}}},
        "server": {"source": "llm", "llm": {"backend": {"type": "openai", "model": "m"}}},
        "files": {"train": "t.txt"},
    }}
    assert [generate_gpus(config, n) for n in config["datasets"]] == [1, 0, 0, 0]
    assert generated_responses(config, "server") == ["results/server/generated/responses.jsonl"]
    assert generated_responses(config, "files") == []


def test_a_base_url_that_serves_a_web_page_is_refused_before_any_request(odd_server):
    """A web server's 200 text/html (base_url without /v1, a proxy's login page) is not the API:
    the start-up check says so with the fix, instead of an AttributeError from the client."""
    from icda.generate.backends import OpenAIBackend
    from icda.data.llm_spec import Backend

    odd_server.mode = "html"
    url = f"http://127.0.0.1:{odd_server.server_address[1]}"
    with pytest.raises(ConfigError) as err:
        OpenAIBackend(Backend(type="openai", base_url=url, model="m")).check()
    assert f"{url}/models answers with text/html; charset=utf-8 ('<p>Please log in</p>" in str(err.value)
    assert "Fix: give the API's root, e.g. http://localhost:8000/v1" in str(err.value)


# ------------------------------------------------------------------ the API key


def test_the_api_key_goes_only_to_base_url_as_documented(tmp_path, monkeypatch, caplog):
    from icda.generate.run import generate

    assert "`api_key_env` names is sent as the API" in (REPO / "docs/llm.md").read_text()
    assert "backend.api_key_env names the environment variable whose value is sent as the API key to " \
           "backend.base_url" in (REPO / "config/README.md").read_text()
    server = FakeServer()
    try:
        monkeypatch.setenv("ICDA_TEST_KEY", "sk-test-123")
        with caplog.at_level(logging.INFO, logger="icda.generate"):
            generate("d", llm_spec(server.url, per_label=1, api_key_env="ICDA_TEST_KEY"), tmp_path / "r.jsonl",
                     cache=tmp_path / "c.jsonl")
    finally:
        server.close()
    assert f"sending the value of $ICDA_TEST_KEY as the API key to {server.url}" in caplog.text
    assert "sk-test-123" not in caplog.text
