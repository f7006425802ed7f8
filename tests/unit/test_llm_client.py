"""The LLM client, cache, constraint extraction and synthesis loop against a real local
HTTP server on 127.0.0.1 (no other network)."""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from dlfuzz.engines.api.constraints import make
from dlfuzz.engines.api.libspecs import LibParam, LibSpec
from dlfuzz.errors import UsageError
from dlfuzz.llm.cache import ResponseCache
from dlfuzz.llm.client import LlmClient, client_from_settings
from dlfuzz.llm.extract import llm_constraints, parse_reply
from dlfuzz.llm.prompts import EXAMPLE_ANSWER, EXAMPLE_PARAMS
from dlfuzz.llm.synthesize import extract_code, synthesize, synthesize_attempts
from dlfuzz.settings import CampaignSettings


def ok_body(content: str) -> bytes:
    return json.dumps({"choices": [{"message": {"role": "assistant",
                                                "content": content}}]}).encode()


class FakeLlm:
    """A scripted chat-completions server: replies are (status, body, delay_s), used in
    order (the last one repeats); every request is recorded."""

    def __init__(self) -> None:
        self.replies: list[tuple[int, bytes, float]] = []
        self.seen: list[dict] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length", 0))
                body = self.rfile.read(length)
                owner.seen.append({"path": self.path, "headers": dict(self.headers),
                                   "body": json.loads(body)})
                i = min(len(owner.seen), len(owner.replies)) - 1
                status, out, delay = owner.replies[i] if owner.replies else (
                    200, ok_body("default"), 0.0)
                time.sleep(delay)
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(out)))
                    self.end_headers()
                    self.wfile.write(out)
                except OSError:
                    pass  # the client gave up (timeout test)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,),
                                       daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def llm():
    server = FakeLlm()
    server.thread.start()
    yield server
    server.stop()


def client(server: FakeLlm, tmp_path, **kw) -> LlmClient:
    kw.setdefault("retries", 0)
    kw.setdefault("backoff_s", 0.0)
    return LlmClient(server.endpoint, "test-model", cache=ResponseCache(tmp_path / "cache"),
                     **kw)


MSG = [{"role": "user", "content": "say hi"}]


def test_ok_response_posts_openai_body(llm, tmp_path):
    llm.replies = [(200, ok_body("hi there"), 0.0)]
    c = client(llm, tmp_path)
    assert c.complete(MSG, temperature=0.25) == "hi there"
    req = llm.seen[0]
    assert req["path"] == "/v1/chat/completions"
    assert req["body"] == {"model": "test-model", "messages": MSG, "temperature": 0.25}
    assert "Authorization" not in req["headers"]


def test_bearer_key_sent_but_never_stored(llm, tmp_path):
    llm.replies = [(200, ok_body("ok"), 0.0)]
    c = client(llm, tmp_path, api_key="sekret-123")
    c.complete(MSG)
    assert llm.seen[0]["headers"]["Authorization"] == "Bearer sekret-123"
    assert "sekret" not in repr(c)
    stored = "".join(p.read_text() for p in (tmp_path / "cache").rglob("*.json"))
    assert "ok" in stored and "sekret" not in stored


def test_http_500_names_status_and_body_then_retry_succeeds(llm, tmp_path):
    llm.replies = [(500, b'{"error": "boom: model overloaded"}', 0.0)]
    with pytest.raises(UsageError, match=r"HTTP 500.*boom: model overloaded") as info:
        client(llm, tmp_path).complete(MSG)
    assert llm.endpoint in str(info.value)
    llm.seen.clear()
    llm.replies = [(503, b"busy", 0.0), (200, ok_body("second try"), 0.0)]
    assert client(llm, tmp_path, retries=1).complete(MSG) == "second try"
    assert len(llm.seen) == 2


def test_http_401_is_not_retried(llm, tmp_path):
    llm.replies = [(401, b'{"error": "invalid key"}', 0.0)]
    with pytest.raises(UsageError, match="HTTP 401.*API key"):
        client(llm, tmp_path, retries=3).complete(MSG)
    assert len(llm.seen) == 1


@pytest.mark.parametrize("body, needle", [
    (b"<html>not json</html>", "not JSON"),
    (b'{"choices": []}', "malformed answer"),
    (b'{"choices": [{"message": {"content": null}}]}', "content is NoneType"),
    (b'{"error": {"message": "no such model"}}', "server reported an error"),
])
def test_malformed_answers_are_usage_errors(llm, tmp_path, body, needle):
    llm.replies = [(200, body, 0.0)]
    with pytest.raises(UsageError, match=needle) as info:
        client(llm, tmp_path).complete(MSG)
    assert "/v1/chat/completions" in str(info.value)


def test_timeout(llm, tmp_path):
    llm.replies = [(200, ok_body("too late"), 1.5)]
    start = time.monotonic()
    with pytest.raises(UsageError, match=r"no answer within 0.2 s"):
        client(llm, tmp_path, timeout_s=0.2).complete(MSG)
    assert time.monotonic() - start < 1.4


def test_bad_endpoints_and_refused_connection(tmp_path):
    for bad in ("localhost:8000/v1", "ftp://127.0.0.1/v1", "http://", "http://h:port/v1"):
        with pytest.raises(UsageError, match="LLM endpoint"):
            LlmClient(bad, "m")
    with pytest.raises(UsageError, match="no model"):
        LlmClient("http://127.0.0.1:1/v1", " ")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    c = LlmClient(f"http://127.0.0.1:{port}/v1/chat/completions", "m", retries=0)
    assert c.url == f"http://127.0.0.1:{port}/v1/chat/completions"
    with pytest.raises(UsageError, match="cannot connect"):
        c.complete(MSG)


def test_cache_hit_needs_no_server(llm, tmp_path):
    llm.replies = [(200, ok_body("cached answer"), 0.0)]
    assert client(llm, tmp_path).complete(MSG, 0.0) == "cached answer"
    endpoint = llm.endpoint
    llm.stop()
    again = LlmClient(endpoint, "test-model", retries=0,
                      cache=ResponseCache(tmp_path / "cache"))
    assert again.complete(MSG, 0.0) == "cached answer"
    assert (again.requests, again.cache_hits) == (0, 1)
    with pytest.raises(UsageError, match="cannot connect"):  # another sample: not cached
        again.complete(MSG, 0.0, sample=1)


def test_client_from_settings(monkeypatch, tmp_path):
    for var in ("DLFUZZ_LLM_ENDPOINT", "DLFUZZ_LLM_MODEL", "DLFUZZ_LLM_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    assert client_from_settings(CampaignSettings()) is None
    with pytest.raises(UsageError, match="no model"):
        client_from_settings(CampaignSettings(llm_endpoint="http://127.0.0.1:9/v1"))
    monkeypatch.setenv("DLFUZZ_LLM_ENDPOINT", "http://127.0.0.1:9/v1/")
    monkeypatch.setenv("DLFUZZ_LLM_MODEL", "m1")
    monkeypatch.setenv("MY_KEY", "k")
    c = client_from_settings(CampaignSettings(llm_api_key_env="MY_KEY"),
                             cache=ResponseCache(tmp_path))
    assert (c.endpoint, c.model, c.api_key) == ("http://127.0.0.1:9/v1", "m1", "k")


# ---- constraint extraction --------------------------------------------------------------
SPEC = LibSpec("torch", "torch.nn.functional.conv1d", (
    LibParam("input", ("tensor",)), LibParam("weight", ("tensor",)),
    LibParam("groups", ("int",), optional=True, default=1)),
    constraints=(make("weight.shape[0] % groups == 0", "doc"),))

REPLY = """Here are the constraints:
```
1. input.ndims == 3
- `weight.ndims == 3`
* input.shape[1] == weight.shape[1] * groups;
weight.shape[0] % groups == 0
input.size(1) == 3
bias is None
groups >= 1
The kernel must fit the input.
input.ndims == 3
True
```"""


def test_llm_constraints_keep_valid_lines_only(llm, tmp_path):
    llm.replies = [(200, ok_body(REPLY), 0.0)]
    got = llm_constraints(client(llm, tmp_path), SPEC, "def conv1d(input, weight): ...",
                          "Applies a 1-D convolution.")
    assert [c.text for c in got] == ["input.ndims == 3", "weight.ndims == 3",
                                     "input.shape[1] == weight.shape[1] * groups",
                                     "groups >= 1"]
    assert {c.source for c in got} == {"llm"}
    messages = llm.seen[0]["body"]["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[2]["content"] == EXAMPLE_ANSWER  # the one-shot example
    assert "def conv1d(input, weight): ..." in messages[3]["content"]
    assert "Applies a 1-D convolution." in messages[3]["content"]
    assert "torch.nn.functional.conv1d(input, weight, groups=1)" in messages[3]["content"]
    report = parse_reply(REPLY, SPEC.names)
    reasons = dict(report.dropped)
    assert "unknown parameter 'bias'" in reasons["bias is None"]
    assert reasons["True"] == "mentions no parameter"


def test_example_answer_is_in_the_language():
    report = parse_reply(EXAMPLE_ANSWER, frozenset(EXAMPLE_PARAMS))
    assert not report.dropped and len(report.kept) == len(EXAMPLE_ANSWER.splitlines())


# ---- counterpart synthesis --------------------------------------------------------------
def code_reply(body: str) -> bytes:
    return ok_body(f"Sure:\n```python\n{body}\n```\nThis should work.")


BAD = "def counterpart(input, weight, groups=1):\n    return undefined_fn(input)"
GOOD = "def counterpart(input, weight, groups=1):\n    return input"


def test_repair_loop_feeds_errors_back_and_stops_on_success(llm, tmp_path):
    llm.replies = [(200, ok_body("I cannot write code."), 0.0), (200, code_reply(BAD), 0.0),
                   (200, code_reply(GOOD), 0.0), (200, code_reply("never asked"), 0.0)]
    checked = []

    def check(code: str) -> str | None:
        checked.append(code)
        return "NameError: name 'undefined_fn' is not defined" if "undefined" in code \
            else None

    examples = [{"input": __import__("numpy").ones((1, 2, 3), "float32"), "groups": 1}]
    got = synthesize(client(llm, tmp_path), SPEC, "jax", examples, check, candidates=1)
    assert got == [GOOD]
    assert len(llm.seen) == 3 and checked == [BAD, GOOD]
    first = llm.seen[0]["body"]["messages"][0]["content"]
    assert "JAX" in first and "shape (1, 2, 3)" in first and "counterpart(input" in first
    last = llm.seen[2]["body"]["messages"]
    assert [m["role"] for m in last] == ["user", "assistant", "user", "assistant", "user"]
    assert "no ```python code block" in last[2]["content"]
    assert "undefined_fn' is not defined" in last[4]["content"]


def test_repair_budget_and_static_checks(llm, tmp_path):
    own = "def counterpart(input, weight, groups=1):\n    import torch\n    return input"
    llm.replies = [(200, code_reply(own), 0.0)]
    calls = []
    attempts = synthesize_attempts(client(llm, tmp_path), SPEC, "tf", [], calls.append,
                                   candidates=2, repairs=2)
    assert len(llm.seen) == 2 * 3 and calls == []  # rejected before running
    assert all(not a.ok and a.repairs == 2 for a in attempts)
    assert "must not use torch" in attempts[0].errors[0]
    with pytest.raises(UsageError, match="must differ"):
        synthesize(client(llm, tmp_path), SPEC, "torch", [], lambda c: None)


def test_extract_code_prefers_the_named_function():
    reply = ("```python\nimport math\n```\n```python\ndef helper():\n    pass\n```\n"
             "```py\ndef counterpart(x):\n    return x\n```")
    assert extract_code(reply) == "def counterpart(x):\n    return x"
    assert extract_code("def counterpart(x):\n    return x\n") is not None
    assert extract_code("no code here") is None
