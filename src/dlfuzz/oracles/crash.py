"""Crashes, hangs and memory blow-ups of a library.

A crash (signal or abnormal exit of the worker) is always a finding. A timeout or an
out-of-memory is one only when some other backend finished the same case normally: a
case every library finds too heavy says nothing about any of them.

A crash, hang or memory blow-up inside a counterpart dlfuzz wrote (a composition calling
the library) is demoted: dlfuzz's code chose that call (``_in_counterpart``).

One crash is demoted (an inconsistency, never a crash): a WebAssembly integer-division
trap on an input another library rejects with an exception. The trap is a catchable
JavaScript exception that leaves the instance working, so on an input the reference
library itself refuses (integer ``mod`` by zero: TF raises InvalidArgumentError) it is
an unhelpful error, not a crash a maintainer would triage as one. The same trap on an
input the other libraries accept (wasm ``prelu`` dividing by a zero-size dimension) is
an unchecked size and stays a crash.
"""

from __future__ import annotations

import re

from dlfuzz.cases import ApiCase, Finding, Outcome
from dlfuzz.oracles.base import Oracle, OracleContext, finding
from dlfuzz.oracles.counterpart_votes import written_by_dlfuzz
from dlfuzz.oracles.crash_log import crash_state, fatal_message, kept_output

_WASM_DIVISION_TRAP = re.compile(r"RuntimeError: (divide|remainder) by zero")


def _in_counterpart(case: ApiCase, backend: str, ctx: OracleContext) -> dict[str, str]:
    """The demotion of a crash, hang or memory blow-up inside a counterpart dlfuzz wrote
    (a composition of the library's functions): dlfuzz's code chose the call the library
    died in, and may have asked what no user would (``jax.ops.segment_max`` told to make
    9.2e18 segments, because the composition sized the output by the largest segment id
    the case held); its reproducer is dlfuzz's code, not the library's."""
    library = ctx.library_of.get(backend, backend)
    if not written_by_dlfuzz(case, library):
        return {}
    call = case.call_for(library)
    target = call.target.rsplit(".", 1)[-1] if call is not None else "?"
    return {"demoted": f"inside dlfuzz's own counterpart {library} {target}: the call the "
                       "library failed in is dlfuzz's code, not an API call a user makes"}


def _demotion(backend: str, message: str, outcomes: dict[str, Outcome],
              ctx: OracleContext) -> dict[str, str]:
    if not _WASM_DIVISION_TRAP.search(message):
        return {}
    lib = ctx.library_of.get(backend)
    rejecting = sorted(b for b, o in outcomes.items()
                       if o.status == "exception" and ctx.library_of.get(b) != lib)
    if not rejecting:
        return {}
    return {"demoted": f"a catchable wasm integer-division trap on an input "
                       f"{', '.join(rejecting)} rejects with an exception: an inconsistent "
                       f"error, not a crash"}


class CrashOracle(Oracle):
    name = "crash"
    case_kinds = ("api", "graph", "grad", "train")  # a backward pass may crash too

    def check(self, case: ApiCase, outcomes: dict[str, Outcome], ctx: OracleContext
              ) -> list[Finding]:
        others_ok = {b for b, o in outcomes.items() if o.ok}
        found = []
        for backend, o in outcomes.items():
            if o.status == "crash":
                fatal = fatal_message(o.log_tail)
                message = f"{o.exc_type}: {o.message}" + (f": {fatal}" if fatal else "")
                state = crash_state(o.log_tail)
                found.append(finding(self.name, "crash", case, backend, o.stage,
                                     message, o.exc_type, log_tail=kept_output(o.log_tail),
                                     **({"crash_state": state} if state else {}),
                                     **(_in_counterpart(case, backend, ctx)
                                        or _demotion(backend, message, outcomes, ctx))))
            elif o.status in ("timeout", "oom") and others_ok - {backend}:
                found.append(finding(self.name, o.status, case, backend, o.stage,
                                     o.message or o.status, o.status,
                                     log_tail=kept_output(o.log_tail),
                                     **_in_counterpart(case, backend, ctx)))
        return found
