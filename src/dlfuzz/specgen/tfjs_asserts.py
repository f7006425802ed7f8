"""TF.js dependency constraints from tfjs' own checking code (source tag ``validation``).

TensorJSFuzz asks an LLM to read each op's checking code; the checks in tfjs-core are
regular enough to translate mechanically instead. ``tfjs_dts.js`` parses each op's
implementation (``dist/ops/*.js``) with the TypeScript compiler and translates, per
``util.assert(cond, msg)`` / ``assert(...)`` / ``if (cond) throw`` / ``assertTypesMatch``
/ ``assertShapesMatch`` / ``assertAndGetBroadcastShape`` / ``parseAxisParam`` call, the
condition into the constraint language: ``$x`` (the ``convertToTensor`` result) becomes
``x``, ``.rank`` ``.ndims``, ``.size`` ``.num_element``, ``===`` ``==``, ``&&``/``||``/``!``
``and``/``or``/``not``, locals bound once to translatable expressions are inlined
(``inDepth = dataFormat === 'NHWC' ? x4D.shape[3] : x4D.shape[1]``), and the rank-3 →
rank-4 reshape idiom (``x4D``) counts dimensions from the end. An assertion inside an
``if`` holds only on that branch (``scale is None or ...``); one under an ``if`` that does
not translate, or that reads a loop variable or a reassigned local, is dropped.

This module finishes the job in Python: it expands the three shape macros the script
emits (``SHAPES(a, b)``, ``BROADCAST(a, b)``, ``AXIS(axis, x)``), keeps what
``constraints.parse`` accepts over the op's parameters, and counts the rest by reason.
"""

from __future__ import annotations

import collections
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dlfuzz.engines.api.constraints import Constraint, ConstraintError, make, names_in, parse

SOURCE = "validation"
MAX_RANK = 6  # tfjs tensors go up to rank 6 (Tensor6D)
_MACRO = re.compile(r"^(SHAPES|BROADCAST|AXIS)\((\w+), (\w+)\)$")


@dataclass
class Tally:
    """How many checks each op had, how many became constraints, why the rest did not."""

    kept: collections.Counter[str] = field(default_factory=collections.Counter)
    dropped: collections.Counter[str] = field(default_factory=collections.Counter)
    reasons: collections.Counter[str] = field(default_factory=collections.Counter)

    def summary(self) -> str:
        top = ", ".join(f"{r} {n}" for r, n in self.reasons.most_common(8))
        return (f"validation checks: {sum(self.kept.values())} constraints kept on "
                f"{len(self.kept)} ops, {sum(self.dropped.values())} dropped ({top})")


def expand_macro(text: str) -> list[str]:
    """The constraints one shape macro of ``tfjs_dts.js`` stands for (else ``[text]``).

    ``SHAPES(a, b)``: equal shapes (``util.assertShapesMatch``). ``BROADCAST(a, b)``:
    numpy broadcasting (``assertAndGetBroadcastShape``), one constraint per trailing
    dimension, in the form the tf specs use. ``AXIS(axis, x)``: every axis inside
    ``[-rank, rank)`` (``parseAxisParam``; an absent axis means all of them).
    """
    m = _MACRO.match(text)
    if not m:
        return [text]
    kind, a, b = m.groups()
    if kind == "SHAPES":
        return [f"{b}.ndims == {a}.ndims"] + [
            f"{b}.ndims <= {i} or {b}.shape[{i}] == {a}.shape[{i}]" for i in range(MAX_RANK)]
    if kind == "BROADCAST":
        return [f"{a}.ndims <= {i} or {b}.ndims <= {i} or {a}.shape[-{i + 1}] == "
                f"{b}.shape[-{i + 1}] or {a}.shape[-{i + 1}] == 1 or {b}.shape[-{i + 1}] == 1"
                for i in range(MAX_RANK)]
    return [f"{a} is None or (-{b}.ndims <= min({a}) and max({a}) < {b}.ndims)"]


def _strip(text: str) -> str:
    """One redundant pair of outer parentheses off (``(x.ndims == 4)``), for readability."""
    text = text.strip()
    if text.startswith("(") and text.endswith(")"):
        depth = 0
        for i, ch in enumerate(text):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0 and i < len(text) - 1:
                return text
        return _strip(text[1:-1])
    return text


def constraints_for(op: Mapping[str, Any], params: Iterable[str], tally: Tally | None = None
                    ) -> list[Constraint]:
    """The op's translated checks that parse over ``params``, deduplicated, in order."""
    names = frozenset(params)
    api = str(op.get("api", "?"))
    out: list[Constraint] = []
    seen: set[str] = set()

    def drop(reason: str) -> None:
        if tally is not None:
            tally.dropped[api] += 1
            tally.reasons[reason] += 1

    for check in op.get("checks") or ():
        if "py" not in check:
            drop(re.sub(r" \S+$", "", str(check.get("reason", "?"))) if str(
                check.get("reason", "")).startswith("local") else str(check.get("reason", "?")))
            continue
        for text in expand_macro(_strip(str(check["py"]))):
            text = _strip(text)
            try:
                tree = parse(text, names)
            except ConstraintError as exc:
                drop("does not parse: " + exc.reason.split(";")[0])
                continue
            if not names_in(tree):
                drop("no parameter")
                continue
            if text in seen:
                continue
            seen.add(text)
            out.append(make(text, SOURCE))
            if tally is not None:
                tally.kept[api] += 1
    return out


def dtype_constraints(op: Mapping[str, Any], params: Iterable[str]) -> list[Constraint]:
    """``convertToTensor(x, 'x', op, 'float32')`` rejects a tensor of another dtype."""
    names = frozenset(params)
    out = []
    for name, dtype in sorted((op.get("dtypes") or {}).items()):
        if name in names and dtype in ("float32", "int32", "bool", "complex64"):
            out.append(make(f"{name}.dtype == '{dtype}'", SOURCE))
    return out
