"""Shared fixtures: a tiny randomly initialised BERT encoder (no downloaded weights needed)."""

from __future__ import annotations

import functools
import http.server
import os
import string
import threading
import time

import pytest

# Hypothesis (the property tests, tests/test_properties.py): a bounded profile for the fast suite,
# a longer one for CI's slow stage, chosen by HYPOTHESIS_PROFILE (.ci/run sets ci there); under ci
# the property tests are also marked slow, so that `pytest -m slow` runs them.
try:
    from hypothesis import HealthCheck, settings as hypothesis_settings
except ImportError:  # the test extra not installed: the property tests are skipped
    hypothesis_settings = None
else:
    _QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
    hypothesis_settings.register_profile("fast", max_examples=40, deadline=None, suppress_health_check=_QUIET,
                                         print_blob=True)
    hypothesis_settings.register_profile("ci", max_examples=400, deadline=None, suppress_health_check=_QUIET,
                                         print_blob=True)
    hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fast"))


def pytest_collection_modifyitems(config, items):
    if os.environ.get("HYPOTHESIS_PROFILE") == "ci":
        for item in items:
            if getattr(getattr(item, "obj", None), "is_hypothesis_test", False):
                item.add_marker(pytest.mark.slow)

# Common English words (and review vocabulary); with the single letters and ##letters below any
# lowercase text tokenises without [UNK].
_WORDS = """
the a an and or but if then so because as of to in on at by for with from about into over after
before under between through during without again out up down off than too very just only also
not no nor all any both each few more most other some such own same can will would should could
may might must do does did done doing have has had having be is am are was were been being get
got go went gone come came make made take took give gave see saw say said know knew think thought
look want use find tell ask work seem feel try leave call keep let begin help show hear play run
move like live believe bring happen write sit stand lose pay meet include continue set learn
change lead understand watch follow stop create speak read spend grow open walk win offer
remember love consider appear buy wait serve die send expect build stay fall cut reach kill
remain suggest raise pass sell require report decide pull i you he she it we they me him her us
them my your his its our their this that these those what which who whom whose when where why how
there here now well even back still way good new first last long great little own old right big
high different small large next early young important public bad able time year people day man
woman child world life hand part place case week company system program question government
number night point home water room mother area money story fact month lot study book eye job word
business issue side kind head house service friend father power hour game line end member law car
city community name president team minute idea kid body information school face others level
office door health person art war history party result morning reason research girl guy moment
air teacher force education food dish flavor delicious bland cook ingredients restaurant meal
dinner lunch menu staff waiter price table wine taste fresh hot cold sweet salt spicy chicken
beef fish rice bread soup salad dessert coffee tea beer drink order wait slow fast friendly rude
clean dirty nice awesome terrible amazing excellent average loud quiet cozy parking location hotel
room bed bath pool view phone call connect connection cuts dropout signal network battery screen
""".split()


@pytest.fixture(scope="session")
def tiny_bert_dir(tmp_path_factory):
    """A tiny randomly initialised BERT (hidden 32, 2 layers, 2 heads) with its tokenizer.

    Returns the directory (``pathlib.Path``) written by ``save_pretrained``; the weights are seeded
    (``torch.manual_seed(0)``), so every session builds the same model.
    """
    import torch
    from transformers import BertConfig, BertModel, BertTokenizer

    path = tmp_path_factory.mktemp("tiny-bert")
    chars = list(string.ascii_lowercase + string.digits + string.punctuation)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab += chars + ["##" + c for c in string.ascii_lowercase + string.digits]
    vocab += ["##s", "##ed", "##ing", "##ly", "##er", "##est"]
    vocab += [w for w in dict.fromkeys(_WORDS) if w not in vocab]
    (path / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    BertTokenizer(vocab=str(path / "vocab.txt")).save_pretrained(path)
    config = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64, max_position_embeddings=64)
    torch.manual_seed(0)
    BertModel(config).save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def tiny_encoder_settings(tiny_bert_dir):
    """``EncoderSettings`` for the tiny BERT: mean pooling, 16 tokens, 16 sentences, batches of 8."""
    from icda.encoder import EncoderSettings

    return EncoderSettings(name=str(tiny_bert_dir), pooling="mean", max_tokens=16,
                           max_sentences=16, batch_size=8)


@pytest.fixture
def http_server(tmp_path):
    """A local HTTP server in a thread serving ``tmp_path / "remote"``; yields its base URL."""
    (tmp_path / "remote").mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path / "remote"))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()
    thread.join()


class _Handler(http.server.BaseHTTPRequestHandler):
    """Answers every GET as ``server.mode`` says: "drip" (one byte every 0.3 s, for a minute),
    "html" (a web page, Content-Type text/html), "404" (not found)."""

    def log_message(self, *args):
        pass

    def do_GET(self):
        mode = self.server.mode
        if mode == "404":
            self.send_error(404, "Not Found")
            return
        if mode == "html":
            body = b"<p>Please log in</p>\n"
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", "200")
        self.end_headers()
        try:
            for _ in range(200):
                if self.server.stopping.is_set():
                    return
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(0.3)
        except OSError:
            pass


@pytest.fixture
def odd_server():
    """A local HTTP server in a thread whose answers :class:`_Handler` picks by ``server.mode``."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    server.stopping = threading.Event()
    server.mode = "drip"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.stopping.set()
    server.shutdown()
    server.server_close()
    thread.join()
