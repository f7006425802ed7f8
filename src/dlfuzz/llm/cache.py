"""On-disk cache of LLM answers, keyed by everything that determines the answer.

Why: LLM calls are slow, cost money and are not reproducible. Keeping every answer on
disk makes a spec extraction or a counterpart synthesis re-runnable offline and
bit-for-bit repeatable (the same prompts replay the same answers), and lets a run that
died halfway resume without paying again for the part already done.

The key is a SHA-256 of the canonical JSON of (endpoint, model, messages, temperature,
sample). ``sample`` tells apart several answers wanted for one prompt (DLLens asks for
three counterpart candidates per API); it is not sent to the server. The API key is never
part of the key nor of the stored file.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

CACHE_ENV = "DLFUZZ_LLM_CACHE"
DEFAULT_DIR = Path("~/.cache/dlfuzz/llm")


def cache_key(endpoint: str, model: str, messages: Sequence[Mapping[str, str]],
              temperature: float, sample: int = 0) -> str:
    """Hex digest naming one request (canonical JSON, so dict order does not matter)."""
    blob = json.dumps({"endpoint": endpoint, "model": model,
                       "messages": [dict(m) for m in messages],
                       "temperature": float(temperature), "sample": int(sample)},
                      sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """Answers as one JSON file each under ``root/<key[:2]>/<key>.json``.

    ``root`` defaults to ``$DLFUZZ_LLM_CACHE`` or ``~/.cache/dlfuzz/llm``. Writes go to a
    temporary file in the same directory and are renamed into place, so a reader never
    sees half an answer even when two processes fill the cache at once.
    """

    def __init__(self, root: str | Path | None = None) -> None:
        if root is None:
            root = os.environ.get(CACHE_ENV) or DEFAULT_DIR
        self.root = Path(root).expanduser()

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> str | None:
        """The stored answer, or None (missing or unreadable: a miss, never an error)."""
        try:
            data = json.loads(self.path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        answer = data.get("response") if isinstance(data, dict) else None
        return answer if isinstance(answer, str) else None

    def put(self, key: str, response: str, request: Mapping[str, Any] | None = None) -> None:
        """Store an answer atomically; a cache that cannot be written only warns, since
        losing the cache must not lose the answer the caller already paid for."""
        target = self.path(key)
        record = {"key": key, "response": response, "request": dict(request or {})}
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=target.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    json.dump(record, fh, ensure_ascii=False, indent=1)
                os.replace(tmp, target)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            warnings.warn(f"LLM cache {self.root}: cannot store an answer ({exc}); set "
                          f"{CACHE_ENV} to a writable directory to keep answers",
                          RuntimeWarning, stacklevel=2)

    def __len__(self) -> int:
        return sum(1 for _ in self.root.glob("*/*.json")) if self.root.is_dir() else 0
