"""Crashes, hangs and memory blow-ups of a library.

A crash (signal or abnormal exit of the worker) is always a finding. A timeout or an
out-of-memory is one only when some other backend finished the same case normally: a
case every library finds too heavy says nothing about any of them.
"""

from __future__ import annotations

from dlfuzz.cases import ApiCase, Finding, Outcome
from dlfuzz.oracles.base import Oracle, OracleContext, finding


class CrashOracle(Oracle):
    name = "crash"

    def check(self, case: ApiCase, outcomes: dict[str, Outcome], ctx: OracleContext
              ) -> list[Finding]:
        others_ok = {b for b, o in outcomes.items() if o.ok}
        found = []
        for backend, o in outcomes.items():
            if o.status == "crash":
                found.append(finding(self.name, "crash", case, backend, o.stage,
                                     f"{o.exc_type}: {o.message}", o.exc_type,
                                     log_tail=o.log_tail[-2000:]))
            elif o.status in ("timeout", "oom") and others_ok - {backend}:
                found.append(finding(self.name, o.status, case, backend, o.stage,
                                     o.message or o.status, o.status,
                                     log_tail=o.log_tail[-2000:]))
        return found
