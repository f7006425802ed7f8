"""Boundary checks: an input that breaks the API's spec must be rejected cleanly.

Violate-mode cases (``ApiCase.expect == "invalid:<constraint>"``) break exactly one
constraint that the library itself vouches for (its validation code, its own error
messages, its signature). MoCo and TensorJSFuzz report the library *accepting* such an
input as a bug: a negative size silently clamped, an out-of-range probability used, a
shape mismatch broadcast away. Here:

* the API's library (eager or compiled) returns normally -> a ``boundary`` finding;
* it raises an exception -> correct, nothing to report (a crash or hang is the crash
  oracle's, which sees every case);
* the case breaks other constraints of the spec too (the engine's ``broken`` check,
  which also guards reduction steps) -> no verdict.

Counterpart calls of other libraries are not judged: the constraint is the API's.

Each finding names where its constraint comes from (detail ``constraint_source`` and the
message): "documentation: ...", "source check: ...", "learned error message: ..." (with
the count of rejections when learned in this campaign) or "hand table: ...". A
maintainer reads a report on an invalid input only with that evidence; a constraint of
unknown origin counts as a hand-table one (the weakest evidence).
"""

from __future__ import annotations

from dlfuzz.cases import OUTPUT_TOO_LARGE, ApiCase, Finding, Outcome
from dlfuzz.oracles.base import Oracle, OracleContext, finding

UNKNOWN_SOURCE = "hand table: source not recorded"


class BoundaryOracle(Oracle):
    name = "boundary"

    def check(self, case: ApiCase, outcomes: dict[str, Outcome], ctx: OracleContext
              ) -> list[Finding]:
        if not getattr(case, "invalid", False) or not case.calls:
            return []
        library = case.calls[0][0]  # the API's own library comes first
        broken = case.expect.partition(":")[2]
        if ctx.broken is not None and ctx.broken(case) != [broken]:
            # It breaks more than its constraint (or no longer breaks it, after a
            # reduction step): acceptance would not show that this check is missing.
            ctx.stats["boundary_ambiguous"] += 1
            return []
        source = (ctx.constraint_source(case) if ctx.constraint_source is not None
                  else "") or UNKNOWN_SOURCE
        found = []
        for backend, o in outcomes.items():
            if ctx.library_of.get(backend, backend) != library:
                continue
            if o.ok or o.exc_type == OUTPUT_TOO_LARGE:  # a result, too large to send
                found.append(finding(
                    self.name, "boundary", case, backend, o.stage,
                    f"accepted an invalid input: it breaks `{broken}` and {case.api} "
                    f"returned a result instead of raising an exception (constraint from "
                    f"{source})",
                    f"accepts input breaking {broken}", constraint=broken,
                    constraint_source=source))
            elif o.status == "exception":
                ctx.stats["rejected_invalid"] += 1
        return found
