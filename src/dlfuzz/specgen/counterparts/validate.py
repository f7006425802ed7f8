"""DLLens Eq. 1, stricter: a candidate is a counterpart only if it matches everywhere.

DLLens accepts a counterpart C of API A when, on a non-empty set of at most three valid
inputs, ``allclose(A(x), C(x), atol=0.1, equal_nan=True)`` after flattening. Here, for
each dtype an API is validated on, every candidate must be tested on at least
``MIN_VALID`` (5) inputs that the API accepts, including edge shapes where the generator
reaches them (``inputs``), and on every one of them:

* the candidate returns (status ok) wherever the API returns,
* with the same output structure (number of outputs, shapes),
* and values within the per-dtype tolerance (``tolerances.tolerance_for``, the looser of
  the two outputs' dtypes), NaN/Inf in the same places (``compare.deviation``).

A candidate that fails or differs only on degenerate shapes (a rank-0 tensor, a
zero-size dimension: ``model.SHAPE_EDGES``) keeps the dtype and is kept off those shapes
instead (``not_on``): libraries part ways there by design, and such an input alone
used to take a dtype away (torch's float32 ``cumsum`` and ``conv2d`` had no counterpart,
the first for a scalar, the second for zero input channels), so a wrong float32 result
there had nothing to disagree with. The ordinary inputs of the dtype must still agree,
``MIN_VALID`` of them.

A dtype where the candidate fails or differs is left out of the counterpart's ``dtypes``
(the fuzzer will not use it there); a value or structure mismatch on a *core* dtype
(float32, float64, int32, int64) rejects the candidate outright, since there it is
not a dtype-support gap but a different computation; a candidate with no dtype left is
rejected. Rejections are kept with their reason.

Everything runs in sandboxed workers (``executor.pool.Pool``): the API and eager
candidates on the libraries' eager backends, "mode" candidates on the compiled backend
with the API's own call. Many candidates go in one batch.
"""

from __future__ import annotations

import datetime
import itertools
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from dlfuzz.cases import ApiCase, Outcome
from dlfuzz.engines.api.counterparts.model import MODE_BACKENDS, SHAPE_EDGES, Counterpart
from dlfuzz.engines.api.libspecs import LibSpec
from dlfuzz.libraries import all_libraries
from dlfuzz.oracles.compare import deviation, loosest
from dlfuzz.specgen.counterparts.inputs import (
    EXTRA_DRAWS,
    LOW,
    MIN_VALID,
    NO_TENSOR,
    Input,
    draws,
    dtypes_for,
    expand,
    for_dtype,
    inputs_for,
    with_values,
)

CORE_DTYPES = frozenset({"float32", "float64", "int32", "int64"})
HALF = frozenset({"float16", "bfloat16"})
MAX_PER_DTYPE = 6       # inputs run per candidate and dtype (edges first)
MODE_PER_DTYPE = 5      # fewer for compiled modes: each new shape is a compilation
MODE_DTYPES = 2         # dtypes validated per API for compiled modes
BATCH = 500             # cases per Pool.run call
SLOW_S = 2.0            # a case this slow is named in the progress log
EAGER = ("torch", "tf", "jax")
# Libraries whose API calls run on a backend named otherwise (the API side only).
# spec library without a Python module -> the backend that runs its APIs (tfjs-cpu)
API_BACKENDS = {lib.name: lib.backend_names[0] for lib in all_libraries() if lib.npm}
CROSS = frozenset({"same-name", "composition", "llm"})  # implementations in other libraries


@dataclass
class Verdict:
    """What validation concluded about one candidate."""

    candidate: Counterpart
    accepted: Counterpart | None = None
    reason: str = ""
    tested: dict[str, int] = field(default_factory=dict)
    outvoted: list[str] = field(default_factory=list)  # inputs where the API looked wrong


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _run(pool: Any, cases: Sequence[ApiCase], only: Iterable[str], label: str
         ) -> list[dict[str, Outcome]]:
    # Round-robin over libraries, so every batch keeps each library's worker busy.
    lanes: dict[str, list[int]] = defaultdict(list)
    for i, case in enumerate(cases):
        lanes[case.calls[0][0] if case.calls else ""].append(i)
    order = [i for group in itertools.zip_longest(*lanes.values()) for i in group
             if i is not None]
    cases = [cases[i] for i in order]
    out: list[dict[str, Outcome]] = []
    only = set(only)
    started = time.perf_counter()
    slow: list[tuple[float, str, str]] = []
    for start in range(0, len(cases), BATCH):
        batch = cases[start:start + BATCH]
        results = pool.run(batch, only=only)
        out += results
        for case, res in zip(batch, results, strict=True):
            for o in res.values():
                if o.duration_s > SLOW_S or o.status in ("timeout", "crash", "oom"):
                    slow.append((o.duration_s, case.api, f"{o.backend} {o.status}"))
        _say(f"  {label}: {len(out)}/{len(cases)} cases, {time.perf_counter() - started:.0f} s")
    if slow:
        worst = sorted(slow, reverse=True)[:8]
        _say(f"  {label}: {len(slow)} slow or dead cases; worst: "
             + "; ".join(f"{api} {what} {d:.1f}s" for d, api, what in worst))
    restored: list[dict[str, Outcome]] = [{} for _ in out]
    for position, i in enumerate(order):
        restored[i] = out[position]
    return restored


def _eager_outcome(outcomes: Mapping[str, Outcome], library: str) -> Outcome | None:
    return outcomes.get(API_BACKENDS.get(library, library))


def compare(api: Outcome, other: Outcome) -> tuple[str, float]:
    """("agree" | "fail" | "structure" | "value", worst deviation in tolerance units)."""
    if not other.ok:
        return "fail", float("inf")
    a = [t.to_numpy() for t in api.outputs]
    b = [t.to_numpy() for t in other.outputs]
    if len(a) != len(b) or any(x.shape != y.shape for x, y in zip(a, b, strict=True)):
        return "structure", float("inf")
    worst = 0.0
    for x, y in zip(a, b, strict=True):
        ratio = deviation(y, x, loosest(x, y)).ratio
        worst = max(worst, ratio)
    return ("agree" if worst <= 1.0 else "value"), worst


class Validator:
    """Runs candidates of many APIs against generated valid inputs (see module doc)."""

    def __init__(self, specs: Mapping[str, LibSpec], seed: int = 0, mode: str = "adjust",
                 progress: Callable[[str], None] = _say) -> None:
        from dlfuzz.engines.api.libgen import LibGenerator

        self.specs = dict(specs)
        self.gen = LibGenerator(seed, mode=mode, specials=False)
        self.say = progress
        self.inputs: dict[str, list[Input]] = {}
        self.outcomes: dict[int, Outcome] = {}    # id(input) -> the API's own outcome
        self.versions: dict[str, str] = {}
        self._votes: dict[int, list[tuple[str, Outcome]]] = defaultdict(list)

    # ---- phase 1: valid inputs ----------------------------------------------------------
    def prepare(self, pool: Any, candidates: Sequence[Counterpart]) -> None:
        """Draw inputs for every API with candidates and run the API on them."""
        by_api: dict[str, list[Counterpart]] = defaultdict(list)
        for cp in candidates:
            by_api[cp.api].append(cp)
        fresh: list[Input] = []
        for api, cps in sorted(by_api.items()):
            if api in self.inputs or api not in self.specs:
                continue
            spec = self.specs[api]
            variants = {frozenset(n for n, _ in cp.requires_default) for cp in cps}
            # Compiled modes are validated on fewer dtypes: draw only what they will use.
            dtypes = dtypes_for(spec)[:MODE_DTYPES] if all(
                cp.kind == "mode" for cp in cps) else None
            self.inputs[api] = inputs_for(spec, self.gen, variants, dtypes=dtypes)
            fresh += self.inputs[api]
        self._run_api(pool, fresh, "API inputs")
        # Where a dtype (and variant) has too few valid inputs of ordinary shapes, draw
        # once more (a plain draw may be rank-0 or empty itself, and a candidate kept off
        # such shapes needs ``MIN_VALID`` others).
        more: list[Input] = []
        for api, cps in sorted(by_api.items()):
            if api not in self.specs:
                continue
            spec = self.specs[api]
            # (parameters left out, parameters that must have a value) of each candidate
            needs = {(frozenset(n for n, _ in cp.requires_default), cp.requires_value): cp
                     for cp in cps}
            ordinary = [x for x in self.inputs.get(api, ())
                        if self._ok(x) and not x.edges & set(SHAPE_EDGES)]
            for dtype in sorted({x.dtype for x in self.inputs.get(api, ())}):
                short = [(v, values) for (v, values), cp in needs.items()
                         if sum(x.dtype == dtype and x.variant == v and
                                cp._defaults_ok(x.values) for x in ordinary) < MIN_VALID]
                for values in sorted({values for _, values in short}):
                    typed = for_dtype(spec, dtype) if dtype != NO_TENSOR else spec
                    typed = with_values(typed, values) if values else typed
                    strips = {v for v, vals in short if vals == values}
                    extra = expand(spec, draws(self.gen, typed, EXTRA_DRAWS), strips)
                    extra = [x for x in extra if x.dtype == dtype]
                    self.inputs[api] += extra
                    more += extra
        self._run_api(pool, more, "more API inputs")

    def _run_api(self, pool: Any, inputs: list[Input], label: str) -> None:
        if not inputs:
            return
        libs = {self.specs[x.api].library for x in inputs}
        backends = {API_BACKENDS.get(lib, lib) for lib in libs}
        results = _run(pool, [x.case for x in inputs],
                       backends & (set(EAGER) | set(API_BACKENDS.values())), label)
        for x, res in zip(inputs, results, strict=True):
            out = _eager_outcome(res, self.specs[x.api].library)
            if out is not None:
                self.outcomes[id(x)] = out

    def _ok(self, x: Input) -> bool:
        out = self.outcomes.get(id(x))
        return out is not None and out.ok

    # ---- phase 2: candidates ------------------------------------------------------------
    def selection(self, cp: Counterpart) -> dict[str, list[Input]]:
        """The valid inputs a candidate is run on, by dtype (edges first, then plain)."""
        strip = frozenset(n for n, _ in cp.requires_default)
        chosen: dict[str, list[Input]] = defaultdict(list)
        compiled = cp.kind == "mode"
        cap = MODE_PER_DTYPE if compiled else MAX_PER_DTYPE
        pool = [x for x in self.inputs.get(cp.api, ()) if self._ok(x)
                and x.variant in (frozenset(), strip) and cp._defaults_ok(x.values)]
        if cp.kind == "precision":
            pool = [x for x in pool if x.dtype in LOW]
        seen: set[int] = set()
        # The first input of each degenerate shape (``SHAPE_EDGES``) comes on top of the
        # cap, the others after every ordinary input: where the candidate fails only on
        # such a shape it is kept off it (``not_on``), and the cap's inputs must still
        # show ``MIN_VALID`` ordinary ones agreeing.
        firsts: dict[str, set[str]] = defaultdict(set)
        extra: set[int] = set()
        for x in pool:
            shapes = x.edges & set(SHAPE_EDGES)
            if shapes and not shapes <= firsts[x.dtype]:
                firsts[x.dtype] |= shapes
                extra.add(id(x))

        def order(x: Input) -> tuple[int, bool]:
            if id(x) in extra:
                return 0, x.variant != strip
            if x.edges & set(SHAPE_EDGES):
                return 3, x.variant != strip
            return (1 if x.edges else 2), x.variant != strip

        for x in sorted(pool, key=order):
            key = id(x.case)
            if key in seen or (id(x) not in extra and len(chosen[x.dtype]) >= cap
                               + len([y for y in chosen[x.dtype] if id(y) in extra])):
                continue
            seen.add(key)
            chosen[x.dtype].append(x)
        if compiled:
            keep = sorted(chosen, key=lambda d: -len(chosen[d]))[:MODE_DTYPES]
            chosen = defaultdict(list, {d: chosen[d] for d in keep})
        return chosen

    def case_for(self, cp: Counterpart, x: Input) -> ApiCase:
        if cp.kind == "mode":
            return x.case
        from dlfuzz.engines.api.libdraw import with_refs

        refs, tensors = with_refs(x.values, self.specs[cp.api])
        return ApiCase(cp.api, tuple(tensors), ((cp.worker_library, cp.call(refs)),),
                       x.case.params)

    def judge(self, pool: Any, candidates: Sequence[Counterpart]) -> list[Verdict]:
        """Run every candidate on its inputs and decide."""
        jobs: list[tuple[int, Input]] = []
        cases: list[ApiCase] = []
        verdicts = [Verdict(cp) for cp in candidates]
        failed_build: dict[int, str] = {}
        for i, cp in enumerate(candidates):
            for x in (x for xs in self.selection(cp).values() for x in xs):
                try:
                    cases.append(self.case_for(cp, x))
                except Exception as exc:  # noqa: BLE001 - a candidate that cannot be called
                    failed_build[i] = f"cannot build the call: {exc}"
                    continue
                jobs.append((i, x))
        eager = [k for k, (i, _) in enumerate(jobs) if candidates[i].kind != "mode"]
        results: dict[int, Outcome] = {}
        if eager:
            outs = _run(self.pool_eager(pool), [cases[k] for k in eager], EAGER,
                        "candidates")
            for k, res in zip(eager, outs, strict=True):
                cp = candidates[jobs[k][0]]
                got = res.get(cp.worker_library)
                if got is not None:
                    results[k] = got
        for backend in MODE_BACKENDS:
            ks = [k for k, (i, _) in enumerate(jobs) if candidates[i].library == backend]
            if not ks:
                continue
            outs = _run(self.pool_compiled(pool), [cases[k] for k in ks], (backend,), backend)
            for k, res in zip(ks, outs, strict=True):
                if backend in res:
                    results[k] = res[backend]
        per: dict[int, list[tuple[Input, Outcome | None]]] = defaultdict(list)
        self._votes = defaultdict(list)
        for k, (i, x) in enumerate(jobs):
            per[i].append((x, results.get(k)))
            if candidates[i].kind in CROSS and k in results:
                self._votes[id(x)].append((candidates[i].worker_library, results[k]))
        for i, v in enumerate(verdicts):
            self._decide(v, per.get(i, []), failed_build.get(i, ""))
        return verdicts

    def _outvoted(self, cp: Counterpart, x: Input, out: Outcome) -> bool:
        """Whether the API, not the candidate, is the odd one out on this input: an
        implementation in a third library agrees with the candidate (LEMON-style vote)."""
        if cp.kind not in CROSS or not out.ok:
            return False
        return any(lib != cp.worker_library and lib != self.specs[cp.api].library
                   and other.ok and compare(other, out)[0] == "agree"
                   for lib, other in self._votes.get(id(x), ()))

    # Pools: one object may serve both (tests pass one Pool with every backend).
    def pool_eager(self, pool: Any) -> Any:
        return pool.get("eager", pool) if isinstance(pool, dict) else pool

    def pool_compiled(self, pool: Any) -> Any:
        return pool.get("compiled", pool) if isinstance(pool, dict) else pool

    def _decide(self, v: Verdict, runs: list[tuple[Input, Outcome | None]],
                build_error: str) -> None:
        cp = v.candidate
        by_dtype: dict[str, list[tuple[Input, Outcome | None]]] = defaultdict(list)
        for x, out in runs:
            by_dtype[x.dtype].append((x, out))
        good: list[str] = []
        bad: dict[str, str] = {}
        worst = 0.0
        edges: dict[str, int] = defaultdict(int)
        mismatch_core = ""
        off: dict[str, str] = {}  # degenerate shape -> what happened there (``not_on``)
        suspects = v.outvoted
        for dtype, items in sorted(by_dtype.items()):
            v.tested[dtype] = len(items)
            problem = ""
            agreed = 0
            shaped: list[frozenset[str]] = []  # degenerate shapes of agreeing inputs
            here: dict[str, str] = {}  # degenerate shape -> what happened, this dtype
            for x, out in items:
                api_out = self.outcomes[id(x)]
                if out is None:
                    problem = "no result (backend unavailable)"
                    break
                verdict, ratio = compare(api_out, out)
                if verdict == "agree":
                    worst = max(worst, ratio)
                    degenerate_shapes = x.edges & set(SHAPE_EDGES)
                    if degenerate_shapes:
                        shaped.append(degenerate_shapes)
                    else:
                        agreed += 1
                    continue
                shapes = [list(t.shape) for t in x.case.tensors]
                # A third library may outvote the API on a shape, or on values where the
                # dtype is precise enough that two libraries agreeing means something
                # (in half precision both may round alike where the API accumulates wider).
                if (verdict == "structure" or (verdict == "value" and dtype not in HALF)) \
                        and self._outvoted(cp, x, out):
                    suspects.append(f"{dtype} {verdict} mismatch, inputs {shapes}")
                    continue
                if verdict == "fail":
                    what = (f"{out.status} {out.exc_type}: {out.message[:80]} "
                            f"(inputs {shapes})").strip()
                else:
                    what = (f"{verdict} mismatch, deviation {ratio:.3g} tolerance units "
                            f"(inputs {shapes})")
                degenerate = [e for e in SHAPE_EDGES if e in x.edges]
                if degenerate:  # kept off that shape, not off the dtype (below)
                    for e in degenerate:
                        here.setdefault(e, f"{dtype}: {what}")
                    continue
                problem = what
                if verdict != "fail":
                    if dtype in CORE_DTYPES and not mismatch_core:
                        mismatch_core = f"{dtype}: {problem}"
                break
            # An agreeing degenerate input counts unless the candidate failed on its shape
            # in this dtype. Kept off a shape only where the dtype holds without it: an
            # API whose inputs are mostly rank-0 (``full``'s fill value) keeps the failure
            # as the dtype's, as before.
            agreed += sum(not e & set(here) for e in shaped)
            if problem:
                bad[dtype] = problem
            elif agreed < MIN_VALID:
                bad[dtype] = next(iter(here.values()), "").partition(": ")[2] or \
                    f"only {agreed} valid inputs agree (need {MIN_VALID})"
            else:
                for e, what in here.items():
                    off.setdefault(e, what)
                good.append(dtype)
                for x, _ in items:
                    for e in x.edges:
                        edges[e] += 1
        if build_error and not good:
            v.reason = build_error
            return
        if mismatch_core:
            v.reason = mismatch_core
            return
        if not good:
            v.reason = "; ".join(f"{d}: {r}" for d, r in sorted(bad.items())) or \
                "no valid input of the API reached this candidate"
            return
        drawn = self.inputs.get(cp.api, [])
        evidence = {
            "api_inputs": {"drawn": len(drawn), "valid": sum(map(self._ok, drawn))},
            "inputs": sum(v.tested[d] for d in good),
            "per_dtype": {d: v.tested[d] for d in good},
            "edges": dict(sorted(edges.items())),
            "max_deviation": round(worst, 4),
            "date": datetime.date.today().isoformat(),
            "versions": {lib: self.versions[lib] for lib in sorted(
                {self.specs[cp.api].library, cp.worker_library}) if lib in self.versions},
        }
        if bad:
            evidence["excluded_dtypes"] = dict(sorted(bad.items()))
        if off:
            evidence["not_on"] = dict(sorted(off.items()))
        if suspects:  # the API disagreed with two other libraries that agree
            evidence["api_outvoted"] = suspects[:5]
        dtypes = tuple(d for d in good if d != NO_TENSOR)
        v.accepted = replace(cp, dtypes=dtypes, not_on=tuple(e for e in SHAPE_EDGES if e in off),
                             evidence=tuple(sorted(evidence.items())))


def rejected_entry(v: Verdict) -> dict[str, Any]:
    cp = v.candidate
    needs = {"requires_value": list(cp.requires_value)} if cp.requires_value else {}
    return {"api": cp.api, "library": cp.library, "kind": cp.kind, "target": cp.target,
            **needs, "reason": v.reason[:300]}


def validate(specs: Mapping[str, LibSpec], candidates: Sequence[Counterpart], pools: Any,
             seed: int = 0, versions: Mapping[str, str] | None = None) -> list[Verdict]:
    """Validate ``candidates`` of APIs in ``specs`` using ``pools`` (a started Pool with the
    needed backends, or {"eager": Pool, "compiled": Pool})."""
    val = Validator(specs, seed)
    val.versions = dict(versions or {})
    wanted = [cp for cp in candidates if cp.api in specs]
    eager = val.pool_eager(pools)
    val.prepare(eager, wanted)
    return val.judge(pools, wanted)
