"""Secrets stay secret: the API key and a URL's password appear in no log line, error message or
recorded file."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from icda.errors import ConfigError, add_url_secrets, redact

KEY = "sk-test-SECRET-0123456789"
PASSWORD = "hunter2-pass"


class EchoAuth(BaseHTTPRequestHandler):
    """Answers every request with 401 and a JSON error that echoes the Authorization header."""

    def log_message(self, *args):
        pass

    def _answer(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.dumps({"error": {"message": f"invalid credentials: {self.headers.get('Authorization')}",
                                     "type": "invalid_request_error"}}).encode()
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer


@pytest.fixture
def echo_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), EchoAuth)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def spec(base_url: str) -> dict:
    """The spec of a ``source: llm`` dataset against ``base_url``."""
    return {"source": "llm", "seed": 3, "llm": {
        "prompt": "write about $R", "slot": "R", "values": {"a": 0, "b": 1}, "per_label": 1,
        "dev": 0.2, "test": 0.2,
        "backend": {"type": "openai", "base_url": base_url, "model": "m", "retries": 1, "backoff": 0,
                    "api_key_env": "MY_SECRET_KEY"}}}


@pytest.mark.parametrize("userinfo", ["", f"user:{PASSWORD}@"])
def test_generate_writes_neither_the_key_nor_the_url_password(echo_server, tmp_path, userinfo):
    """A server that answers 401 and echoes the Authorization header (the key as a bearer token,
    or user:password as basic authentication): the warnings, the final error line and the cache
    show *** instead."""
    (tmp_path / "spec.json").write_text(json.dumps({"name": "d", **spec(f"http://{userinfo}127.0.0.1:{echo_server}/v1")}))
    cache = tmp_path / "cache.jsonl"
    run = subprocess.run([sys.executable, "-m", "icda", "generate", "--spec", str(tmp_path / "spec.json"),
                          "--out", str(tmp_path / "r.jsonl"), "--cache", str(cache)],
                         capture_output=True, text=True, cwd=tmp_path, timeout=120,
                         env={**os.environ, "MY_SECRET_KEY": KEY})
    output = run.stdout + run.stderr
    assert run.returncode == 2, output
    assert "attempt 1/2 failed: AuthenticationError: Error code: 401 - invalid credentials: " in output
    assert "error: " in run.stderr and "requests have no answer" in run.stderr
    recorded = cache.read_text()
    for secret in (KEY, PASSWORD, "dXNlcjpodW50ZXIyLXBhc3M="):  # the last: base64 of user:password
        assert secret not in output and secret not in recorded
    assert ("Basic ***" if userinfo else "Bearer ***") in run.stderr.splitlines()[-1]
    if userinfo:
        assert f"to http://***@127.0.0.1:{echo_server}/v1" in output


def test_the_unreachable_server_error_hides_the_url_password(tmp_path, monkeypatch):
    from icda.generate.run import generate

    with socket.socket() as sock:  # a loopback port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("MY_SECRET_KEY", KEY)
    with pytest.raises(ConfigError) as err:
        generate("d", spec(f"http://user:{PASSWORD}@127.0.0.1:{port}/v1"), tmp_path / "r.jsonl",
                 cache=tmp_path / "c.jsonl")
    assert f"base_url: cannot reach http://***@127.0.0.1:{port}/v1" in str(err.value)
    assert PASSWORD not in str(err.value) and KEY not in str(err.value)


def test_redact_replaces_url_userinfo_and_its_encoded_forms():
    add_url_secrets("https://me:p%40ss-word@proxy.example/v1")
    assert redact("GET https://me:p%40ss-word@proxy.example/v1/models") == "GET https://***@proxy.example/v1/models"
    assert redact("password p@ss-word, basic bWU6cEBzcy13b3Jk") == "password ***, basic ***"
    assert redact("ftp://anon@host/ and http://host/") == "ftp://***@host/ and http://host/"


def test_every_command_hides_url_user_info_in_its_log_lines():
    """Not only generate: e.g. a dataset url with a password (download logs the URL it fetches).
    A stand-in command logs such a URL through ``python -m icda``'s main."""
    script = f"""
import argparse, logging
from icda import cli

class Parser(argparse.ArgumentParser):
    def parse_args(self, argv):
        log = logging.getLogger("icda.steps.download")
        return argparse.Namespace(verbose=False, func=lambda args: log.info(
            "fetching %s", "https://me:{PASSWORD}@mirror.example/train.txt"))

cli.build_parser = lambda only=None: Parser()
raise SystemExit(cli.main([]))
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "fetching https://***@mirror.example/train.txt" in proc.stderr and PASSWORD not in proc.stderr


def test_the_redacting_filter_leaves_a_malformed_log_call_to_the_handler():
    """A record whose arguments do not fit its format is passed on unchanged (the handler reports
    it, as it would without the filter), not raised at the caller."""
    import logging

    from icda.errors import RedactingFilter

    record = logging.LogRecord("icda", logging.INFO, __file__, 1, "%d items", ("many",), None)
    assert RedactingFilter().filter(record) and record.args == ("many",)
