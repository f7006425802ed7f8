"""Numeric inconsistency and NaN/Inf, blamed through the reference judge.

A cheap pairwise check runs on every case; only when some pair disagrees beyond the
looser of their dtype tolerances is a reference computed (``reference.Judge``), for all
suspicious cases of a batch in one round trip. Verdicts name the guilty backend. Whether
a finding is localized to a part of its case (a model's layer), how it is then filed and
which extra details it carries is the case's kind's answer (``kind_of``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import cast

import numpy as np

from dlfuzz.cases import ApiCase, Finding, GraphCase, Outcome, kind_of
from dlfuzz.oracles.base import Item, Oracle, OracleContext, finding, input_dtypes
from dlfuzz.oracles.canonical import canonical_outcomes
from dlfuzz.oracles.compare import agree
from dlfuzz.oracles.counterpart_votes import demote_counterpart_only
from dlfuzz.oracles.localize import Request, Suspect, localize_many
from dlfuzz.oracles.reference import REFERENCE_PREFERENCE, Reference, Verdict


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
        # Unordered outputs (eigenvalues, sets, tie-broken indices) in canonical form.
        items = [(case, canonical_outcomes(case, outcomes)) for case, outcomes in items]
        # A violate-mode input has no right answer to compare: the boundary oracle's.
        suspects = [i for i, (case, outcomes) in enumerate(items)
                    if not getattr(case, "invalid", False) and _suspicious(outcomes)]
        if not suspects:
            return results
        ctx.stats["suspicious"] += len(suspects)
        refs = ctx.judge.references([items[i] for i in suspects])
        guilty: list[tuple[int, Verdict, Reference]] = []
        for i, ref in zip(suspects, refs, strict=True):
            case, outcomes = items[i]
            if ref is None:
                ctx.stats["unattributed"] += 1
                continue
            verdicts = ctx.judge.verdicts(outcomes, ref)
            sound = [v.backend for v in verdicts if not v.guilty]
            for v in verdicts:
                if v.guilty and _is_composition(case, ctx, v.backend):
                    # A dlfuzz-written counterpart that disagrees with the reference is
                    # the composition's fault until shown otherwise: counted, not blamed
                    # on the library it is written in.
                    ctx.stats["counterpart_disagreements"] += 1
                elif v.guilty:
                    guilty.append((i, v, ref))
                    self._sound[(i, v.backend)] = _sound_pair(v.backend, sound, ctx)
        suspects_of = self._localize(items, guilty, ctx)
        for (i, v, ref), suspect in zip(guilty, suspects_of, strict=True):
            case, outcomes = items[i]
            f = self._finding(case, outcomes[v.backend], v, ref.method, ref.libraries, suspect)
            # Resting only on dlfuzz-written counterparts: listed, demoted, never blamed.
            f = demote_counterpart_only(f, case, ref.libraries)
            extra = kind_of(case).numeric_details(outcomes, ref.outputs)
            if extra:
                f = replace(f, details=f.details + extra)
            results[i].append(f)
        self._sound.clear()
        return results

    def __init__(self) -> None:
        self._sound: dict[tuple[int, str], tuple[str, str]] = {}

    def _localize(self, items: Sequence[Item], guilty: list[tuple[int, Verdict, Reference]],
                  ctx: OracleContext) -> list[Suspect | None]:
        """Localization where the case's kind asks for it (a model's layer: R_a, else
        model prefixes); API cases need none."""
        requests, where = [], []
        for k, (i, v, _) in enumerate(guilty):
            case = items[i][0]
            sound, second = self._sound.get((i, v.backend), ("", ""))
            if sound and kind_of(case).localizes_values(case):
                # The kind said it localizes: its cases are models (GraphCase).
                requests.append(Request(cast(GraphCase, case), v.backend, sound, second))
                where.append(k)
        out: list[Suspect | None] = [None] * len(guilty)
        if requests:
            ctx.stats["localizations"] += len(requests)
            for k, suspect in zip(where, localize_many(ctx.judge.runner, requests),
                                  strict=True):
                out[k] = suspect
        return out

    def _finding(self, case: ApiCase, o: Outcome, verdict: Verdict, method: str,
                 libraries: tuple[str, ...], suspect: Suspect | None = None) -> Finding:
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
        extra = {}
        if suspect is not None and suspect.node:
            # LEMON's unit of a model bug: (library, layer kind).
            case = kind_of(case).relabel(case, suspect.op)
            how = "R_a" if suspect.method == "R_a" else "the first wrong model prefix"
            msg += f"; localized to {suspect.node} ({suspect.op}) by {how} vs {suspect.against}"
            extra = {"suspect_node": suspect.node, "suspect_op": suspect.op,
                     "r_a": min(suspect.ratio, 1e300), "localized_against": suspect.against,
                     "localized_by": suspect.method}
        return finding(self.name, verdict.symptom, case, o.backend, o.stage, msg,
                       signature_message=f"inputs {dtypes}", method=method,
                       reference_libraries=",".join(libraries),
                       ratio=float(min(verdict.ratio, 1e300)), **extra)


def _is_composition(case: ApiCase, ctx: OracleContext, backend: str) -> bool:
    call = case.call_for(ctx.library_of.get(backend, backend)) if hasattr(case, "call_for") \
        else None
    return call is not None and call.target.startswith("dlfuzz.")


def _sound_pair(guilty: str, sound: list[str], ctx: OracleContext) -> tuple[str, str]:
    """Two backends of other libraries that agree with the reference, eager reference
    libraries first: the first to compare with, the second (of yet another library, if
    any) to measure the rounding noise each layer really has."""
    lib = ctx.library_of.get(guilty)
    ranked = sorted((b for b in sound if ctx.library_of.get(b) != lib),
                    key=lambda b: (ctx.compiled.get(b, False),
                                   ctx.library_of.get(b) not in REFERENCE_PREFERENCE))
    if not ranked:
        return "", ""
    first = ranked[0]
    second = next((b for b in ranked[1:]
                   if ctx.library_of.get(b) != ctx.library_of.get(first)), "")
    return first, second
