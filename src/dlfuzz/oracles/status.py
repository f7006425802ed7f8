"""Status inconsistency: one backend raises where others return.

Libraries differ on purpose in what they accept (dtypes, argument forms), so a plain
"numpy returns, torch raises TypeError" is an API difference, not a bug, and reporting it
would waste our users' time. Two kinds are reported:

* mode inconsistency: a compiled mode raises on a case its own eager mode computes
  (``torch.compile``, ``jax.jit`` and XLA must not change what a program can do), unless
  the compiler says it does not implement an operation (a documented limit);
* internal failures: a backend raises an exception that is not a deliberate rejection
  (an internal error, a failed check, a compiler failure) while two or more other
  libraries compute the case.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import cast

from dlfuzz.cases import ApiCase, Finding, GraphCase, Outcome, kind_of
from dlfuzz.oracles.base import Item, Oracle, OracleContext, finding
from dlfuzz.oracles.localize import first_wrong_prefix

_FAILURE = re.compile(
    r"internal|check failed|assert|llvm error|please report|this is a bug|compilerfailed|"
    r"inductorerror|lowering|segmentation|unexpected|codegen|xlaruntimeerror", re.I)
_REJECTION = re.compile(
    r"not implemented|not supported|unsupported|does not support|only supports?|expected|"
    r"must |must$|should |invalid|cannot|can't|could not|out of (range|bounds)|mismatch|"
    r"incompatible|requires?|not allowed|is not|are not|too (large|small|many)|"
    r"dimension|shape|axis|dtype|type promotion|casting|broadcast|non-finite|"
    r"singular|failed to converge|not registered for backend", re.I)
_UNSUPPORTED = re.compile(
    r"unsupported op|not supported|unsupported operation|not implemented|"
    r"notimplementederror|no registered .* kernel|unimplementederror", re.I)
# A compiled mode declining a call whose output shape or control flow depends on the
# data: documented limits of tracing compilers, not bugs. jax.jit's concretization
# errors (jnp.nonzero, unique, argwhere, trim_zeros without a static ``size``),
# torch.compile's data-dependent guards, XLA's compile-time-constant requirement.
_NOT_TRACEABLE = re.compile(
    r"ConcretizationTypeError|TracerBoolConversionError|TracerIntegerConversionError|"
    r"TracerArrayConversionError|NonConcreteBooleanIndexError|"
    r"data-dependent|DataDependentOutputException|GuardOnDataDependentSymNode|"
    r"must be a compile-time constant|requires a fixed tensor list size", re.I)
_REJECTION_TYPES = {"TypeError", "ValueError", "NotImplementedError", "IndexError",
                    "AxisError", "InvalidArgumentError", "UnimplementedError", "KeyError",
                    "LinAlgError", "_LinAlgError"}


def is_deliberate_rejection(outcome: Outcome) -> bool:
    """True when the exception looks like the library validating its input on purpose,
    or saying it does not implement the operation (TF.js' wasm backend registers no
    Conv2DBackpropFilter kernel: "Kernel '...' not registered for backend 'wasm'")."""
    text = f"{outcome.exc_type}: {outcome.message}"
    if _FAILURE.search(text):
        return False
    return outcome.exc_type in _REJECTION_TYPES or bool(_REJECTION.search(outcome.message))


class StatusOracle(Oracle):
    name = "status"

    def check_many(self, items: Sequence[Item], ctx: OracleContext) -> list[list[Finding]]:
        results = [self.check(case, outcomes, ctx) for case, outcomes in items]
        _localize_models(items, results, ctx)
        return results

    def check(self, case: ApiCase, outcomes: dict[str, Outcome], ctx: OracleContext
              ) -> list[Finding]:
        if not getattr(case, "answerable", True):
            # Rejecting an invalid input is right (the boundary oracle judges it), and
            # one outside the documented domain may be rejected or computed.
            return []
        ok_libraries = {ctx.library_of.get(b, b) for b, o in outcomes.items() if o.ok}
        found = []
        for backend, o in outcomes.items():
            if o.status != "exception":
                continue
            sibling = ctx.eager_sibling(backend) if ctx.compiled.get(backend) else None
            text = f"{o.exc_type}: {o.message}"
            if sibling is not None and sibling in outcomes and outcomes[sibling].ok:
                if _UNSUPPORTED.search(text) or _NOT_TRACEABLE.search(text):
                    # A compiler that declines an op it does not implement (XLA has no
                    # MatrixDeterminant kernel, say) or a data-dependent shape it cannot
                    # trace (jax.jit and jnp.nonzero) is a documented limit, not a bug.
                    ctx.stats["unsupported_in_mode"] += 1
                else:
                    found.append(finding(self.name, "status", case, backend, o.stage, text,
                                         kind="mode", eager=sibling))
                continue
            others = ok_libraries - {ctx.library_of.get(backend, backend)}
            if len(others) >= 2:
                if is_deliberate_rejection(o):
                    ctx.stats["rejections"] += 1
                else:
                    found.append(finding(self.name, "status", case, backend, o.stage, text,
                                         kind="internal", others=",".join(sorted(others))))
        return found


def _localize_models(items: Sequence[Item], results: list[list[Finding]],
                     ctx: OracleContext) -> None:
    """A model that fails on one backend is about the first layer whose model prefix fails
    there while a backend that ran the model computes it (the eager sibling of a compiled
    mode, else an eager backend of another library): the bug becomes (library, layer
    kind), as numeric model bugs are, instead of one bug per seed model. The case's kind
    says whether its failures are localized this way."""
    requests, where = [], []
    for i, ((case, outcomes), found) in enumerate(zip(items, results, strict=True)):
        if not kind_of(case).localizes_failures(case):
            continue
        for j, f in enumerate(found):
            sound = f.detail("eager") or next(
                (b for b, o in outcomes.items() if o.ok and not ctx.compiled.get(b)
                 and ctx.library_of.get(b) != ctx.library_of.get(f.guilty_backend)), "")
            if sound:
                # The kind said it localizes: its cases are models (GraphCase).
                requests.append((cast(GraphCase, case), f.guilty_backend, str(sound)))
                where.append((i, j))
    if not requests:
        return
    ctx.stats["localizations"] += len(requests)
    suspects = first_wrong_prefix(ctx.judge.runner, requests, failures_only=True)
    for (i, j), suspect in zip(where, suspects, strict=True):
        f = results[i][j]
        if not suspect.node or suspect.ratio != float("inf"):
            continue  # no prefix fails alone: keep the model label
        message = f"{f.message} (first failing prefix ends at {suspect.node}, {suspect.op})"
        case = items[i][0]
        located = finding(f.oracle, f.symptom, kind_of(case).relabel(case, suspect.op),
                          f.guilty_backend, f.stage, message, signature_message=f.message,
                          **dict(f.details), suspect_node=suspect.node,
                          suspect_op=suspect.op, localized_against=suspect.against,
                          localized_by="prefix")
        results[i][j] = located
