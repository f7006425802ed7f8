"""LLM constraint extraction (TensorJSFuzz §3.1.2) and DLLens path conditions.

The LLM reads an API's signature, docstring and Python source and answers constraints
one per line. Each line is cleaned of list markers and code fences and kept only when
``constraints.parse`` accepts it over the API's parameter names and it mentions at least
one parameter: the LLM proposes, the parser disposes. Kept constraints carry source
"llm", so later stages (validation against real runs, ``dlfuzz specs stats``) can tell
them from extracted or hand-written ones.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from dlfuzz.engines.api.constraints import Constraint, ConstraintError, names_in, parse
from dlfuzz.engines.api.libspecs import LibSpec
from dlfuzz.libraries import ResolveError, resolve
from dlfuzz.llm.client import LlmClient
from dlfuzz.llm.prompts import NO_CONSTRAINTS, constraint_messages, path_condition_messages

_MARKER = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)]|constraint\s*\d*\s*:)\s*", re.IGNORECASE)
_FENCE = re.compile(r"^\s*```")


@dataclass
class ExtractReport:
    """What one answer gave: kept constraints and dropped lines with the reason."""

    kept: list[Constraint] = field(default_factory=list)
    dropped: list[tuple[str, str]] = field(default_factory=list)


def clean_line(line: str) -> str:
    """A reply line without bullets, numbering, backticks and trailing separators."""
    text = _MARKER.sub("", line.strip(), count=1).strip()
    if len(text) >= 2 and text[0] == text[-1] == "`":
        text = text.strip("`").strip()
    return text.rstrip(";,").strip()


def parse_reply(reply: str, names: frozenset[str],
                known: Iterable[str] = ()) -> ExtractReport:
    """Every line of ``reply`` that parses as a constraint over ``names``, deduplicated
    (also against ``known`` texts, e.g. the spec's existing constraints)."""
    report = ExtractReport()
    seen = {" ".join(k.split()) for k in known}
    for raw in reply.splitlines():
        if _FENCE.match(raw) or not raw.strip() or raw.strip().startswith("#"):
            continue
        text = clean_line(raw)
        if not text or text.upper().rstrip(".") == NO_CONSTRAINTS:
            continue
        try:
            tree = parse(text, names)
        except ConstraintError as exc:
            report.dropped.append((text, exc.reason))
            continue
        if not names_in(tree):
            report.dropped.append((text, "mentions no parameter"))
            continue
        key = " ".join(text.split())
        if key in seen:
            continue
        seen.add(key)
        report.kept.append(Constraint(text, tree, "llm"))
    return report


def llm_constraints(client: LlmClient, spec: LibSpec, fn_source: str, doc: str,
                    temperature: float = 0.0) -> list[Constraint]:
    """Constraints the LLM reads off ``spec``'s source and docs, as source "llm".

    Temperature 0 by default: extraction wants the most likely reading, not variety.
    Constraints the spec already has are not repeated.
    """
    return llm_constraints_report(client, spec, fn_source, doc, temperature).kept


def llm_constraints_report(client: LlmClient, spec: LibSpec, fn_source: str, doc: str,
                           temperature: float = 0.0) -> ExtractReport:
    reply = client.complete(constraint_messages(spec, fn_source, doc), temperature)
    return parse_reply(reply, spec.names, (c.text for c in spec.constraints))


def llm_path_condition(client: LlmClient, spec: LibSpec, arg: str, trace: str,
                       statement: str, temperature: float = 0.0) -> Constraint | None:
    """DLLens Alg. 1 line 10: one statement with external functions -> one condition on
    ``arg``. None when the answer does not parse (the paper drops unsolvable ones too;
    a satisfiability check belongs to the z3 solver of the generator)."""
    reply = client.complete(path_condition_messages(spec, arg, trace, statement), temperature)
    report = parse_reply(reply, spec.names)
    for c in report.kept:
        if arg in c.names:
            return c
    return None


def resolve_api(api: str) -> object | None:
    """The Python object at a dotted path (``dlfuzz.libraries.resolve``: ``tf.`` means
    ``tensorflow.``); None when nothing resolves."""
    try:
        obj: object = resolve(api)
    except ResolveError:
        return None
    return obj


def api_source(api: str) -> tuple[str, str]:
    """(Python source, docstring) of an API; empty strings where there is none (native
    functions have docs but no Python source)."""
    obj = resolve_api(api)
    if obj is None:
        return "", ""
    doc = inspect.getdoc(obj) or ""
    try:
        source = inspect.getsource(inspect.unwrap(obj))  # type: ignore[arg-type]
    except (TypeError, OSError, ValueError):
        source = ""
    return source, doc
