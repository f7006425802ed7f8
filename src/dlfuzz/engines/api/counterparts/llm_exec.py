"""Worker-side runner of "llm" counterparts: code an LLM wrote, executed once per source.

``run(code, name, *args, **kwargs)`` compiles and executes ``code`` the first time a
worker sees it (keyed by a hash of the text, so thousands of cases reuse one function),
then calls the function ``name`` it defines with the API's arguments, already converted
to the worker library's tensors. The code imports what it needs itself. It is stored
data (a counterpart file), validated like any counterpart before a campaign uses it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

_CACHE: dict[str, dict[str, Any]] = {}
_MAX = 512  # distinct sources kept per worker


def function(code: str, name: str) -> Callable[..., Any]:
    """The function ``name`` defined by ``code`` (executed once per distinct source)."""
    key = hashlib.blake2b(code.encode(), digest_size=16).hexdigest()
    namespace = _CACHE.get(key)
    if namespace is None:
        namespace = {"__name__": f"dlfuzz_llm_{key}"}
        exec(compile(code, f"<llm counterpart {key}>", "exec"), namespace)  # noqa: S102
        if len(_CACHE) >= _MAX:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = namespace
    fn = namespace.get(name)
    if not callable(fn):
        raise NameError(f"the counterpart code defines no function {name!r}")
    return fn


def run(code: str, name: str, *args: Any, **kwargs: Any) -> Any:
    return function(code, name)(*args, **kwargs)
