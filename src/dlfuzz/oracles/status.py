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

from dlfuzz.cases import ApiCase, Finding, Outcome
from dlfuzz.oracles.base import Oracle, OracleContext, finding

_FAILURE = re.compile(
    r"internal|check failed|assert|llvm error|please report|this is a bug|compilerfailed|"
    r"inductorerror|lowering|segmentation|unexpected|codegen|xlaruntimeerror", re.I)
_REJECTION = re.compile(
    r"not implemented|not supported|unsupported|does not support|only supports?|expected|"
    r"must |must$|should |invalid|cannot|can't|could not|out of (range|bounds)|mismatch|"
    r"incompatible|requires?|not allowed|is not|are not|too (large|small|many)|"
    r"dimension|shape|axis|dtype|type promotion|casting|broadcast|non-finite|"
    r"singular|failed to converge", re.I)
_UNSUPPORTED = re.compile(
    r"unsupported op|not supported|unsupported operation|not implemented|"
    r"notimplementederror|no registered .* kernel|unimplementederror", re.I)
_REJECTION_TYPES = {"TypeError", "ValueError", "NotImplementedError", "IndexError",
                    "AxisError", "InvalidArgumentError", "UnimplementedError", "KeyError",
                    "LinAlgError", "_LinAlgError"}


def is_deliberate_rejection(outcome: Outcome) -> bool:
    """True when the exception looks like the library validating its input on purpose."""
    text = f"{outcome.exc_type}: {outcome.message}"
    if _FAILURE.search(text):
        return False
    return outcome.exc_type in _REJECTION_TYPES or bool(_REJECTION.search(outcome.message))


class StatusOracle(Oracle):
    name = "status"

    def check(self, case: ApiCase, outcomes: dict[str, Outcome], ctx: OracleContext
              ) -> list[Finding]:
        if getattr(case, "invalid", False):
            return []  # rejecting an invalid input is right; the boundary oracle judges it
        ok_libraries = {ctx.library_of.get(b, b) for b, o in outcomes.items() if o.ok}
        found = []
        for backend, o in outcomes.items():
            if o.status != "exception":
                continue
            sibling = ctx.eager_sibling(backend) if ctx.compiled.get(backend) else None
            text = f"{o.exc_type}: {o.message}"
            if sibling is not None and sibling in outcomes and outcomes[sibling].ok:
                if _UNSUPPORTED.search(text):
                    # A compiler that declines an op it does not implement (XLA has no
                    # MatrixDeterminant kernel, say) is a documented limit, not a bug.
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
