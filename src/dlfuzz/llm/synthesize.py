"""DLLens counterpart synthesis (§III-A2): candidates from the LLM, repaired from errors.

For one API the LLM sees the signature, valid inputs and the target library, and writes
a function with the same parameters built from the *other* library's APIs. Each candidate
is checked by the caller's ``check(code) -> error | None`` (helper CP runs it against
the valid inputs in a sandboxed worker and compares outputs); on failure the error
message goes back to the LLM, up to ``repairs`` times (NOTES.md: 3 candidates, 5
repairs). Parsing problems (no code block, a syntax error, a wrong function name, the
source library imported) are fed back the same way, without spending a ``check`` run.

Each candidate is a separate conversation with its own ``sample`` number, so candidates
differ at temperature > 0 and every conversation replays from the cache.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dlfuzz.engines.api.libspecs import LibSpec
from dlfuzz.libraries import get, is_known
from dlfuzz.llm.client import LlmClient
from dlfuzz.llm.prompts import COUNTERPART_FN, repair_message, synthesis_messages

CANDIDATES = 3
REPAIRS = 5
_BLOCK = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)```", re.DOTALL)

Check = Callable[[str], str | None]


@dataclass
class Attempt:
    """One candidate's conversation: the final code, whether it passed, the errors."""

    sample: int
    code: str | None = None
    ok: bool = False
    errors: list[str] = field(default_factory=list)

    @property
    def repairs(self) -> int:
        return max(0, len(self.errors) - (0 if self.ok else 1))


def extract_code(reply: str, fn_name: str = COUNTERPART_FN) -> str | None:
    """The code block defining ``fn_name`` (else the first Python-looking block, else the
    whole reply when it parses as Python with a ``def``); None when there is no code."""
    blocks = [(lang.lower(), body.strip("\n")) for lang, body in _BLOCK.findall(reply)]
    pattern = re.compile(rf"^\s*def\s+{re.escape(fn_name)}\s*\(", re.MULTILINE)
    for _, body in blocks:
        if pattern.search(body):
            return body
    for lang, body in blocks:
        if lang in ("python", "py", "python3", "") and re.search(r"^\s*def\s", body, re.M):
            return body
    text = reply.strip()
    if re.search(r"^\s*def\s", text, re.MULTILINE):
        try:
            ast.parse(text)
        except SyntaxError:
            return None
        return text
    return None


def _imported_roots(tree: ast.AST) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            roots.add(node.module.split(".")[0])
    return roots


def library_modules(library: str) -> tuple[str, ...]:
    """Top-level modules that mean ``library`` (a counterpart must not use its own): its
    import names and those of the libraries it ships (TensorFlow: tensorflow, keras)."""
    if not is_known(library) or not get(library).modules:
        return (library,)
    lib = get(library)
    return lib.modules + tuple(m for inner in lib.includes for m in get(inner).modules)


def static_problem(code: str, fn_name: str, source_library: str) -> str | None:
    """Why ``code`` cannot be a counterpart without running it, or None."""
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        return f"SyntaxError: {exc.msg} (line {exc.lineno})"
    defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    if fn_name not in defined:
        return (f"NameError: the code defines no function named `{fn_name}` "
                f"(found: {', '.join(sorted(defined)) or 'none'})")
    banned = set(library_modules(source_library))
    used = sorted(_imported_roots(tree) & banned)
    if used:
        return (f"ImportError: the counterpart must not use {', '.join(used)}, the library "
                "of the API under test; use only the target library")
    return None


def synthesize_attempts(client: LlmClient, spec: LibSpec, target_library: str,
                        examples: Sequence[Mapping[str, Any]], check: Check,
                        candidates: int = CANDIDATES, repairs: int = REPAIRS,
                        temperature: float = 1.0, fn_name: str = COUNTERPART_FN,
                        calling_note: str | None = None) -> list[Attempt]:
    """Every candidate's conversation, passing or not (for reports and statistics)."""
    if target_library == spec.library:
        from dlfuzz.errors import UsageError

        raise UsageError(f"counterpart synthesis for {spec.api}: the target library must "
                         f"differ from {spec.library!r} (DLLens: no aliases or callers)")
    base = synthesis_messages(spec, target_library, examples, fn_name, calling_note)
    attempts = []
    for sample in range(candidates):
        attempt = Attempt(sample)
        messages = list(base)
        for _ in range(repairs + 1):
            reply = client.complete(messages, temperature, sample=sample)
            code = extract_code(reply, fn_name)
            error: str | None
            if code is None:
                error = (f"no ```python code block defining `{fn_name}` in the answer")
            else:
                attempt.code = code
                error = static_problem(code, fn_name, spec.library)
                if error is None:
                    error = check(code)
            if error is None:
                attempt.ok = True
                break
            attempt.errors.append(error)
            messages = [*messages, {"role": "assistant", "content": reply},
                        repair_message(error, fn_name)]
        attempts.append(attempt)
    return attempts


def synthesize(client: LlmClient, spec: LibSpec, target_library: str,
               examples: Sequence[Mapping[str, Any]], check: Check,
               candidates: int = CANDIDATES, repairs: int = REPAIRS,
               temperature: float = 1.0, fn_name: str = COUNTERPART_FN,
               calling_note: str | None = None) -> list[str]:
    """Code of the candidates that passed ``check`` (distinct, in candidate order)."""
    out: list[str] = []
    for a in synthesize_attempts(client, spec, target_library, examples, check, candidates,
                                 repairs, temperature, fn_name, calling_note):
        if a.ok and a.code is not None and a.code not in out:
            out.append(a.code)
    return out
