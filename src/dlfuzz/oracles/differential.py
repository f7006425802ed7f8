"""Numeric inconsistency and NaN/Inf, blamed through the reference judge.

A cheap pairwise check runs on every case; only when some pair disagrees beyond the
looser of their dtype tolerances is a reference computed (``reference.Judge``), for all
suspicious cases of a batch in one round trip. Verdicts name the guilty backend.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dlfuzz.cases import ApiCase, Finding, Outcome
from dlfuzz.oracles.base import Item, Oracle, OracleContext, finding, input_dtypes
from dlfuzz.oracles.compare import agree


def _outputs(o: Outcome) -> tuple[np.ndarray, ...]:
    return tuple(t.to_numpy() for t in o.outputs)


def _suspicious(outcomes: dict[str, Outcome]) -> bool:
    ok = [o for o in outcomes.values() if o.ok]
    if len(ok) < 2:
        return False
    pivot = _outputs(ok[0])
    return any(not agree(pivot, _outputs(o)) for o in ok[1:])


class DifferentialOracle(Oracle):
    name = "differential"

    def check(self, case: ApiCase, outcomes: dict[str, Outcome], ctx: OracleContext
              ) -> list[Finding]:
        return self.check_many([(case, outcomes)], ctx)[0]

    def check_many(self, items: Sequence[Item], ctx: OracleContext) -> list[list[Finding]]:
        results: list[list[Finding]] = [[] for _ in items]
        suspects = [i for i, (_, outcomes) in enumerate(items) if _suspicious(outcomes)]
        if not suspects:
            return results
        ctx.stats["suspicious"] += len(suspects)
        refs = ctx.judge.references([items[i] for i in suspects])
        for i, ref in zip(suspects, refs, strict=True):
            case, outcomes = items[i]
            if ref is None:
                ctx.stats["unattributed"] += 1
                continue
            for v in ctx.judge.verdicts(outcomes, ref):
                if not v.guilty:
                    continue
                o = outcomes[v.backend]
                results[i].append(self._finding(case, o, v, ref.method, ref.libraries))
        return results

    def _finding(self, case: ApiCase, o: Outcome, verdict, method: str,
                 libraries: tuple[str, ...]) -> Finding:
        worst = max(verdict.deviations, key=lambda d: d.ratio, default=None)
        dtypes = input_dtypes(case)
        if verdict.symptom == "shape":
            msg = f"output shapes differ from the {method} reference"
        elif worst is not None:
            msg = (f"{worst.bad}/{worst.total} elements off the {method} reference of "
                   f"{'+'.join(libraries)} (worst {verdict.ratio:.3g}x tolerance, "
                   f"max abs diff {worst.max_abs:.3g})")
        else:
            msg = f"differs from the {method} reference"
        return finding(self.name, verdict.symptom, case, o.backend, o.stage, msg,
                       signature_message=f"inputs {dtypes}", method=method,
                       reference_libraries=",".join(libraries),
                       ratio=float(min(verdict.ratio, 1e300)))
