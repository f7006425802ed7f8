"""A minimal OpenAI-compatible chat-completions client (``urllib`` only).

Why not an SDK: dlfuzz must install and run without any LLM; the LLM is an optional aid
for spec extraction (TensorJSFuzz §3.1.2) and counterpart synthesis (DLLens §III-A).
Every OpenAI-compatible server (OpenAI, vLLM, llama.cpp, Ollama, LM Studio, ...) accepts
``POST {endpoint}/chat/completions`` with ``{model, messages, temperature}`` and answers
``choices[0].message.content``, which is all we need.

Every failure a user can cause or fix (wrong URL, server down, HTTP error, bad key,
timeout, an answer that is not the expected JSON) becomes one ``UsageError`` naming the
endpoint and what was wrong; no traceback reaches the user.
"""

from __future__ import annotations

import http.client
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from typing import Any

from dlfuzz.errors import InternalError, UsageError
from dlfuzz.llm.cache import ResponseCache, cache_key

ENDPOINT_ENV = "DLFUZZ_LLM_ENDPOINT"
MODEL_ENV = "DLFUZZ_LLM_MODEL"
ROLES = ("system", "user", "assistant")
_RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
_EXCERPT = 300


def _excerpt(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _EXCERPT else text[:_EXCERPT] + "..."


def normalize_endpoint(endpoint: str) -> str:
    """The base URL (``http://host:port/v1``); a URL given with ``/chat/completions``
    already appended is accepted too. Raises UsageError for anything not http(s)."""
    text = (endpoint or "").strip()
    parts = urllib.parse.urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UsageError(f"LLM endpoint {endpoint!r}: not an http(s) URL; write the base "
                         "URL of an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1")
    try:
        parts.port  # noqa: B018 - raises ValueError for a non-numeric port
    except ValueError:
        raise UsageError(f"LLM endpoint {endpoint!r}: bad port; write e.g. "
                         "http://127.0.0.1:8000/v1") from None
    text = text.rstrip("/")
    if text.endswith("/chat/completions"):
        text = text[: -len("/chat/completions")]
    return text


class LlmClient:
    """Chat completions against one endpoint and model, with retries and a disk cache.

    ``retries`` counts extra attempts after the first one, made only for failures that
    may pass (timeouts, refused connections, HTTP 408/429/5xx); a 401 or 404 fails at
    once since retrying cannot fix a wrong key or URL.
    """

    def __init__(self, endpoint: str, model: str, api_key: str | None = None,
                 timeout_s: float = 60.0, retries: int = 2,
                 cache: ResponseCache | None = None, backoff_s: float = 1.0) -> None:
        self.endpoint = normalize_endpoint(endpoint)
        if not isinstance(model, str) or not model.strip():
            raise UsageError(f"LLM endpoint {self.endpoint}: no model name; set llm_model "
                             f"in the [campaign] table or {MODEL_ENV}")
        if timeout_s <= 0 or retries < 0:
            raise UsageError(f"LLM client: timeout_s must be positive and retries >= 0 "
                             f"(got {timeout_s}, {retries})")
        self.model = model.strip()
        self.api_key = api_key or None
        self.timeout_s = float(timeout_s)
        self.retries = int(retries)
        self.cache = cache
        self.backoff_s = float(backoff_s)
        self.requests = 0   # network requests made (cache hits excluded): for reports
        self.cache_hits = 0

    @property
    def url(self) -> str:
        return f"{self.endpoint}/chat/completions"

    def __repr__(self) -> str:  # never shows the key
        return f"LlmClient({self.endpoint!r}, {self.model!r})"

    def complete(self, messages: Sequence[Mapping[str, str]], temperature: float = 1.0,
                 sample: int = 0) -> str:
        """The assistant's answer to ``messages``.

        ``sample`` numbers independent answers to the same prompt: it is part of the
        cache key only, so sample 0, 1, 2 are three separate server calls the first time
        and three cached answers afterwards.
        """
        msgs = _check_messages(messages)
        key = cache_key(self.endpoint, self.model, msgs, temperature, sample)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                self.cache_hits += 1
                return hit
        body = {"model": self.model, "messages": msgs, "temperature": float(temperature)}
        answer = self._post_with_retries(body)
        if self.cache is not None:
            self.cache.put(key, answer, {"endpoint": self.endpoint, "model": self.model,
                                         "temperature": float(temperature),
                                         "sample": int(sample), "messages": msgs})
        return answer

    # ---- transport ----------------------------------------------------------------------
    def _post_with_retries(self, body: dict[str, Any]) -> str:
        attempt = 0
        while True:
            try:
                return self._post(body)
            except _Retryable as exc:
                if attempt >= self.retries:
                    raise UsageError(f"{exc} (after {attempt + 1} attempt"
                                     f"{'s' if attempt else ''})") from None
                delay = exc.retry_after if exc.retry_after is not None \
                    else self.backoff_s * (2 ** attempt)
                time.sleep(min(max(delay, 0.0), 30.0))
                attempt += 1

    def _post(self, body: dict[str, Any]) -> str:
        data = json.dumps(body).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
        self.requests += 1
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as resp:  # noqa: S310
                raw = resp.read()
        except urllib.error.HTTPError as exc:
            raise self._http_error(exc) from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, TimeoutError):
                raise _Retryable(f"LLM endpoint {self.url}: no answer within "
                                 f"{self.timeout_s:g} s (raise the timeout or check the "
                                 "server)") from None
            raise _Retryable(f"LLM endpoint {self.url}: cannot connect ({reason}); is the "
                             "server running and the URL right?") from None
        except TimeoutError:
            raise _Retryable(f"LLM endpoint {self.url}: no answer within "
                             f"{self.timeout_s:g} s (raise the timeout or check the "
                             "server)") from None
        except (OSError, http.client.HTTPException) as exc:
            raise _Retryable(f"LLM endpoint {self.url}: connection failed ({exc})") from None
        return self._content(raw)

    def _http_error(self, exc: urllib.error.HTTPError) -> Exception:
        try:
            text = exc.read().decode("utf-8", "replace")
        except OSError:
            text = ""
        hint = {401: "check the API key (env var named by llm_api_key_env)",
                403: "the key may lack access to this model",
                404: "check the endpoint URL (it should end in /v1 for most servers) "
                     "and the model name"}.get(exc.code, "")
        message = (f"LLM endpoint {self.url}: HTTP {exc.code} {exc.reason}"
                   + (f": {_excerpt(text)}" if text.strip() else "")
                   + (f"; {hint}" if hint else ""))
        if exc.code in _RETRY_STATUS:
            retry_after = None
            header = exc.headers.get("Retry-After") if exc.headers else None
            if header and header.strip().isdigit():
                retry_after = float(header.strip())
            return _Retryable(message, retry_after)
        return UsageError(message)

    def _content(self, raw: bytes) -> str:
        text = raw.decode("utf-8", "replace")
        try:
            data = json.loads(text)
        except ValueError:
            raise UsageError(f"LLM endpoint {self.url}: the answer is not JSON: "
                             f"{_excerpt(text)!r}; is this an OpenAI-compatible "
                             "chat-completions server?") from None
        if isinstance(data, dict) and data.get("error") and not data.get("choices"):
            raise UsageError(f"LLM endpoint {self.url}: the server reported an error: "
                             f"{_excerpt(json.dumps(data['error']))}")
        try:
            content = data["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise UsageError(f"LLM endpoint {self.url}: malformed answer, no "
                             f"choices[0].message.content in {_excerpt(text)!r}") from None
        if not isinstance(content, str):
            raise UsageError(f"LLM endpoint {self.url}: malformed answer, "
                             f"choices[0].message.content is {type(content).__name__}, "
                             "not text")
        return content


class _Retryable(Exception):
    """A failure that another attempt may not repeat; becomes a UsageError at the end."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def _check_messages(messages: Sequence[Mapping[str, str]]) -> list[dict[str, str]]:
    """Messages are built by dlfuzz itself: a bad one is a dlfuzz bug."""
    out = []
    for m in messages:
        if not isinstance(m, Mapping) or m.get("role") not in ROLES or not isinstance(
                m.get("content"), str):
            raise InternalError(f"bad chat message {m!r}: needs role in {ROLES} and "
                                "text content")
        out.append({"role": m["role"], "content": m["content"]})
    if not out:
        raise InternalError("no chat messages to send")
    return out


def client_from_settings(settings: Any, cache: ResponseCache | None = None,
                         timeout_s: float = 60.0, retries: int = 2) -> LlmClient | None:
    """The configured client, or None when no endpoint is set (everything runs offline).

    Settings win; ``$DLFUZZ_LLM_ENDPOINT`` / ``$DLFUZZ_LLM_MODEL`` fill in what the
    settings leave empty. The key is read from the environment variable the settings
    name (``llm_api_key_env``), never from a file, so it is not stored with a campaign.
    """
    endpoint = getattr(settings, "llm_endpoint", "") or os.environ.get(ENDPOINT_ENV, "")
    if not endpoint.strip():
        return None
    model = getattr(settings, "llm_model", "") or os.environ.get(MODEL_ENV, "")
    if not model.strip():
        raise UsageError(f"LLM endpoint {endpoint!r} is set but no model: set llm_model in "
                         f"the [campaign] table or {MODEL_ENV}")
    key_env = getattr(settings, "llm_api_key_env", "") or "DLFUZZ_LLM_API_KEY"
    return LlmClient(endpoint, model, api_key=os.environ.get(key_env) or None,
                     timeout_s=timeout_s, retries=retries,
                     cache=cache if cache is not None else ResponseCache())
