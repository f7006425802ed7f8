"""Error-feedback refinement of API specs (DLLens §III-C, TensorJSFuzz's validity loop).

Each round draws ``per_api`` inputs per API with ``LibGenerator``, runs them on the
library's eager backend in the sandboxed pool (a library may segfault), and learns from
what failed:

- every exception message goes through ``feedback.constraints_from_error``; a candidate
  constraint is added only if it holds on every draw of that API that ran (so it cannot
  exclude an input the library accepts) and it is not in the spec already;
- a tensor (or dtype) parameter's dtype that failed in every draw that had it, while
  other dtypes of the same parameter ran, is dropped from the parameter's ``dtypes``;
- a learned constraint that a later draw violates although the draw ran, or that the
  generator could not satisfy in most draws of the next round, is taken back out.

After the last round one more batch measures the valid rate of the refined specs; an
API that never ran in any round is marked ``skip: "never ran: <most common error>"``.
The engine reuses ``refine`` online and the benchmark reuses ``valid_rate``.
"""

from __future__ import annotations

import ast
import collections
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from dlfuzz.cases import DType
from dlfuzz.engines.api.constraints import Constraint, holds, make
from dlfuzz.engines.api.errorfeedback.engine import constraints_from_error
from dlfuzz.engines.api.libspecs import LibParam, LibSpec

BATCH = 1000            # cases per pool.run call (progress granularity)
MIN_DTYPE_TRIES = 2     # draws a dtype needs before it can be dropped ...
EXPECTED_PASSES = 3.0   # ... and as many as would have given 3 passes at the other dtypes' rate
UNSATISFIED_SHARE = 0.5  # a learned constraint violated in more of a round's draws goes


@dataclass
class ApiRefinement:
    """What refinement did to one API."""

    api: str
    before: float = 0.0                # valid rate of the first round
    after: float = 0.0                 # valid rate of the final measurement
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    dtypes_dropped: dict[str, list[str]] = field(default_factory=dict)
    dtypes_set: dict[str, list[str]] = field(default_factory=dict)  # from messages
    skipped: str = ""
    errors: collections.Counter[str] = field(default_factory=collections.Counter)


@dataclass
class RefineReport:
    library: str
    rounds: int
    per_api: int
    apis: dict[str, ApiRefinement] = field(default_factory=dict)

    def summary(self) -> str:
        rows = list(self.apis.values())
        if not rows:
            return f"{self.library}: nothing refined"
        mean = (lambda xs: sum(xs) / len(xs))  # noqa: E731 - local shorthand
        return (f"{self.library}: {len(rows)} APIs, {self.rounds} rounds x {self.per_api} "
                f"draws; valid {mean([r.before for r in rows]):.1%} -> "
                f"{mean([r.after for r in rows]):.1%}; constraints added "
                f"{sum(len(r.added) for r in rows)} (taken back {sum(len(r.removed) for r in rows)})"
                f", dtypes dropped {sum(len(v) for r in rows for v in r.dtypes_dropped.values())}"
                f", dtype lists from messages {sum(len(r.dtypes_set) for r in rows)}"
                f", skipped {sum(bool(r.skipped) for r in rows)}")


@dataclass
class _Result:
    draws: list[Any]
    ok: list[bool]
    errors: list[tuple[str, str]]  # (exc_type, message) of failed draws, "" when ok
    failure: str = ""               # the generator itself failed


def _holds(c: Constraint, env: Any) -> bool:
    """``holds``, with an evaluation error (``min`` of a scalar) counted as not holding."""
    try:
        return holds(c, env)
    except (TypeError, ValueError, ArithmeticError):
        return False


def _error_text(exc_type: str, message: str) -> str:
    first = " ".join((message or "").split())[:160]
    return f"{exc_type}: {first}" if exc_type else first


def run_draws(specs: Sequence[LibSpec], library: str, n: int, *, mode: str = "adjust",
              backends: Sequence[str] | None = None, seed: int = 0, pool: Any = None,
              progress: Callable[[str], None] | None = None) -> dict[str, _Result]:
    """``n`` draws per spec, run on ``backends``: per API, the draws and how each ended.
    A draw is valid when any backend ran it without an exception (TensorJSFuzz §4.3.1)."""
    from dlfuzz.engines.api.libgen import LibGenerator, to_case

    results: dict[str, _Result] = {}
    cases, owners = [], []
    for i, spec in enumerate(specs):
        gen = LibGenerator(seed * 100_003 + i, mode=mode)
        try:
            draws = [gen.draw(spec) for _ in range(n)]
        except Exception as exc:  # noqa: BLE001 - one spec the generator cannot serve
            results[spec.api] = _Result([], [], [], f"generator: {type(exc).__name__}: {exc}")
            continue
        results[spec.api] = _Result(draws, [], [])
        for d in draws:
            cases.append(to_case(d))
            owners.append(spec.api)
    outcomes = _run(cases, library, backends, pool, progress)
    for api, out in zip(owners, outcomes, strict=True):
        res = results[api]
        ok = any(o.ok for o in out.values())
        res.ok.append(ok)
        first = next(iter(out.values()), None)
        if ok or first is None:
            res.errors.append(("", ""))
        elif first.status == "exception":
            res.errors.append((first.exc_type, first.message))
        else:
            res.errors.append((first.status, first.message or first.log_tail[-200:]))
    return results


def _run(cases: list[Any], library: str, backends: Sequence[str] | None, pool: Any,
         progress: Callable[[str], None] | None) -> list[dict[str, Any]]:
    from dlfuzz.executor.pool import Pool, WorkerConfig

    if not cases:
        return []
    own = pool is None
    if own:
        pool = Pool([WorkerConfig(b) for b in (backends or (library,))])
        pool.start()
        if not pool.workers:
            pool.close()
            from dlfuzz.errors import UsageError
            raise UsageError(f"no backend for {library!r} could start: {pool.unavailable}; "
                             "check that the library imports in this environment")
    try:
        out: list[dict[str, Any]] = []
        for start in range(0, len(cases), BATCH):
            out += pool.run(cases[start:start + BATCH])
            if progress:
                progress(f"ran {len(out)}/{len(cases)} cases")
        return out
    finally:
        if own:
            pool.close()


def valid_rate(specs: Sequence[LibSpec], library: str, mode: str = "adjust", n: int = 30,
               backends: Sequence[str] | None = None, seed: int = 0, pool: Any = None
               ) -> dict[str, float]:
    """API -> share of ``n`` generated inputs that ran (0.0 when the generator failed)."""
    res = run_draws([s for s in specs if not s.skip], library, n, mode=mode,
                    backends=backends, seed=seed, pool=pool)
    return {api: (sum(r.ok) / len(r.ok) if r.ok else 0.0) for api, r in res.items()}


def _dtype_of(value: Any) -> str | None:
    if isinstance(value, DType):
        return value.name
    if isinstance(value, list | tuple) and value and hasattr(value[0], "dtype"):
        value = value[0]
    dt = getattr(value, "dtype", None)
    return None if dt is None else str(getattr(dt, "name", dt))


Tally = dict[str, dict[str, list[int]]]  # param -> dtype -> [passed, failed unexplained]


def _count(tally: Tally, draws: Iterable[Any], ok: Iterable[bool], explained: Iterable[bool]
           ) -> None:
    """Add a round's draws to the dtype tally; a failure the message explained (feedback
    found a constraint for it) says nothing about the dtype."""
    for d, good, why in zip(draws, ok, explained, strict=True):
        if why and not good:
            continue
        for name, value in d.values.items():
            dt = _dtype_of(value)
            if dt is not None:
                tally.setdefault(name, {}).setdefault(dt, [0, 0])[0 if good else 1] += 1


def _narrow(spec: LibSpec, tally: Tally) -> tuple[LibSpec, dict[str, list[str]]]:
    """Drop a parameter's dtypes that failed in every draw that had them, when the other
    dtypes of the parameter pass often enough that this is not bad luck."""
    from dlfuzz.engines.api.typegen import ALL_DTYPES, DEFAULT_DTYPES

    dropped: dict[str, list[str]] = {}
    params: list[LibParam] = []
    for p in spec.params:
        seen = tally.get(p.name, {})
        bad = []
        for dt, (good, fail) in seen.items():
            others = [(g, f) for d2, (g, f) in seen.items() if d2 != dt]
            rate = sum(g for g, _ in others) / max(1, sum(g + f for g, f in others))
            if good == 0 and fail >= max(MIN_DTYPE_TRIES, EXPECTED_PASSES / max(rate, 1e-9)):
                bad.append(dt)
        kinds = set(p.structures)
        if bad and kinds & {"tensor", "tensors", "dtype"}:
            base = p.dtypes or (ALL_DTYPES if "dtype" in kinds and not kinds & {
                "tensor", "tensors"} else DEFAULT_DTYPES)
            keep = tuple(d for d in base if d not in bad)
            if keep and keep != base:
                dropped[p.name] = sorted(set(base) - set(keep))
                p = replace(p, dtypes=keep)
        params.append(p)
    return replace(spec, params=tuple(params)), dropped


def _learn(spec: LibSpec, library: str, res: _Result, ok_draws: list[Any], rec: ApiRefinement
           ) -> tuple[LibSpec, list[bool]]:
    """Constraints from this round's messages that every draw that ran satisfies, and
    for each draw whether its message yielded any constraint."""
    have = {c.text for c in spec.constraints}
    counts: collections.Counter[str] = collections.Counter()
    explained: list[bool] = []
    for d, good, (exc_type, message) in zip(res.draws, res.ok, res.errors, strict=True):
        found: list[str] = []
        if not good and exc_type not in ("crash", "timeout", "oom"):  # a crash is a finding
            try:
                found = constraints_from_error(library, exc_type, message, d)
            except Exception as exc:  # noqa: BLE001 - one odd message must not stop the run
                print(f"feedback failed on {spec.api}: {type(exc).__name__}: {exc}",
                      file=sys.stderr)
        explained.append(bool(found))
        counts.update(set(found))
    new: list[Constraint] = []
    for text, _ in counts.most_common():
        if text in have:
            continue
        c = make(text, "error", spec.names)
        if not all(_holds(c, d.env()) for d in ok_draws):
            continue
        as_list = _dtype_list(spec, text)
        if as_list is not None:  # "x.dtype in (...)": the parameter's dtypes say it
            name, keep = as_list
            spec = replace(spec, params=tuple(replace(p, dtypes=keep) if p.name == name
                                               else p for p in spec.params))
            rec.dtypes_set[name] = list(keep)
            continue
        new.append(c)
        rec.added.append(text)
    return (replace(spec, constraints=spec.constraints + tuple(new)) if new else spec,
            explained)


_UNARY_DTYPE = re.compile(r"^(\w+)\.dtype (==|!=|in|not in) (\(.*\)|'\w+')$")


def _dtype_list(spec: LibSpec, text: str) -> tuple[str, tuple[str, ...]] | None:
    """(param, new dtypes) when ``text`` only restricts one tensor parameter's dtype."""
    from dlfuzz.engines.api.typegen import ALL_DTYPES, DEFAULT_DTYPES

    m = _UNARY_DTYPE.match(text)
    p = spec.param(m.group(1)) if m else None
    if m is None or p is None or not {"tensor", "tensors"} & set(p.structures):
        return None
    rhs = ast.literal_eval(m.group(3))
    named = (rhs,) if isinstance(rhs, str) else tuple(rhs)
    base = p.dtypes or DEFAULT_DTYPES
    if m.group(2) in ("==", "in"):
        keep = tuple(d for d in base if d in named) or tuple(d for d in named if d in ALL_DTYPES)
    else:
        keep = tuple(d for d in base if d not in named) or tuple(
            d for d in DEFAULT_DTYPES if d not in named) or tuple(
            d for d in ALL_DTYPES if d not in named)
    return (p.name, tuple(dict.fromkeys(keep))) if keep else None


def _take_back(spec: LibSpec, res: _Result, ok_draws: list[Any], rec: ApiRefinement
               ) -> LibSpec:
    """Learned constraints that a draw that ran violates, or that the generator could not
    satisfy in most draws, come out again."""
    keep: list[Constraint] = []
    for c in spec.constraints:
        if c.source == "error" and c.text in rec.added:
            envs = [d.env() for d in res.draws]
            unsat = sum(not _holds(c, e) for e in envs) / max(1, len(envs))
            if any(not _holds(c, d.env()) for d in ok_draws) or unsat > UNSATISFIED_SHARE:
                rec.added.remove(c.text)
                rec.removed.append(c.text)
                continue
        keep.append(c)
    return replace(spec, constraints=tuple(keep)) if len(keep) != len(spec.constraints) \
        else spec


def refine(specs: list[LibSpec], library: str, *, rounds: int = 3, per_api: int = 30,
           mode: str = "adjust", backends: Sequence[str] | None = None, seed: int = 0,
           pool: Any = None, progress: Callable[[str], None] | None = None
           ) -> tuple[list[LibSpec], RefineReport]:
    """Refined copies of ``specs`` (order kept; skipped specs untouched) and a report."""
    report = RefineReport(library, rounds, per_api)
    current = {s.api: s for s in specs}
    active = [s.api for s in specs if not s.skip]
    ok_draws: dict[str, list[Any]] = collections.defaultdict(list)
    tallies: dict[str, Tally] = collections.defaultdict(dict)
    for r in range(rounds):
        res = run_draws([current[a] for a in active], library, per_api, mode=mode,
                        backends=backends, seed=seed + r, pool=pool, progress=progress)
        for api in active:
            rec = report.apis.setdefault(api, ApiRefinement(api))
            out = res[api]
            if out.failure:
                rec.errors[out.failure] += per_api
                continue
            rate = sum(out.ok) / len(out.ok) if out.ok else 0.0
            if r == 0:
                rec.before = rate
            rec.after = rate
            for good, (et, msg) in zip(out.ok, out.errors, strict=True):
                if not good:
                    rec.errors[_error_text(et, msg)] += 1
            ok_draws[api] += [d for d, good in zip(out.draws, out.ok, strict=True) if good]
            spec = _take_back(current[api], out, ok_draws[api], rec) if r else current[api]
            spec, explained = _learn(spec, library, out, ok_draws[api], rec)
            _count(tallies[api], out.draws, out.ok, explained)
            spec, dropped = _narrow(spec, tallies[api])
            for k, v in dropped.items():
                rec.dtypes_dropped.setdefault(k, []).extend(v)
            current[api] = spec
        if progress:
            progress(f"round {r + 1}/{rounds}: " + report.summary())
    if rounds:
        final = valid_rate([current[a] for a in active], library, mode, per_api, backends,
                           seed + rounds, pool)
        for api in active:
            rec = report.apis[api]
            rec.after = final.get(api, 0.0)
            if rec.after == 0.0 and not ok_draws[api]:
                worst = rec.errors.most_common(1)
                rec.skipped = "never ran: " + (worst[0][0] if worst else "no draw")
                current[api] = replace(current[api], skip=rec.skipped[:200])
    return [current[s.api] for s in specs], report
