"""The check a dlfuzz-written counterpart passes before it may judge IEEE special inputs.

Validation (``validate.py``) draws ordinary, finite inputs. A re-implementation that is
right there can still be wrong where the native API follows IEEE 754: a ``hardshrink``
written as ``where(|x| > lambd, x, 0)`` maps NaN to 0 where torch propagates it; a
convolution that pads explicitly with zeros computes ``0 * inf = nan`` on taps the native
op skips. Such a counterpart, agreeing with a float64 re-run of itself, blames the library
that was right.

So each composition (and LLM-written counterpart) is run here against the native API on
inputs drawn from the API's spec (``PER_DTYPE`` per dtype) with special values planted in
every floating tensor (inputs holding an empty array left out: a shape edge): for each kind of
``SPECIAL_KINDS`` (NaN, +inf, -inf, -0.0, a large finite value whose square overflows), in
float32 and float64 (or the floating dtype it is validated on), with about a third of the
elements (at least one) replaced. Inputs the native API rejects say nothing and are
skipped. A kind is trusted when at least one input reached both and every one of them
agreed: same status, same structure, NaN and infinities in the same places with the same
signs, finite values within the dtype's tolerance (``validate.compare``); for large
finite inputs only where both results are finite, since where sums and products of them
overflow depends on the order of operations. The trusted
kinds become the counterpart's ``specials``; the first disagreement per kind is kept in its
evidence (``specials_disagree``) with the inputs' shapes, and the kinds no accepted input
reached (``specials_unchecked``: not trusted either). ``Counterpart.applies`` keeps a
counterpart away from inputs holding a kind it is not trusted on.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from dlfuzz.cases import ApiCase, Outcome, Tensor
from dlfuzz.engines.api.counterparts.model import SPECIAL_KINDS, Counterpart
from dlfuzz.engines.api.libspecs import LibSpec
from dlfuzz.specgen.counterparts.inputs import Input, draws, dtypes_for, for_dtype, make_input
from dlfuzz.specgen.counterparts.validate import API_BACKENDS, EAGER, _run, compare

CHECK_DTYPES = ("float32", "float64")
PER_DTYPE = 6          # drawn inputs per dtype that get each kind of special value
FRACTION = 1 / 3       # share of each floating tensor's elements replaced
_FLOATING = frozenset({"float16", "bfloat16", "float32", "float64"})


@dataclass
class SpecialVerdict:
    """What the check found for one counterpart: trusted kinds, disagreements by kind."""

    candidate: Counterpart
    tested: dict[str, int] = field(default_factory=dict)       # kind -> inputs compared
    disagree: dict[str, str] = field(default_factory=dict)     # kind -> first disagreement

    @property
    def trusted(self) -> tuple[str, ...]:
        return tuple(k for k in SPECIAL_KINDS if self.tested.get(k) and k not in self.disagree)

    @property
    def unchecked(self) -> tuple[str, ...]:
        """Kinds no input reached (the API rejected them, or no floating tensor held them)."""
        return tuple(k for k in SPECIAL_KINDS if not self.tested.get(k)
                     and k not in self.disagree)

    def updated(self) -> Counterpart:
        """The counterpart with ``specials`` and its evidence from this check."""
        evidence = {k: v for k, v in self.candidate.evidence
                    if k not in ("specials_disagree", "specials_unchecked")}
        if self.disagree:
            evidence["specials_disagree"] = dict(sorted(self.disagree.items()))
        if self.unchecked:
            evidence["specials_unchecked"] = list(self.unchecked)
        return replace(self.candidate, specials=self.trusted,
                       evidence=tuple(sorted(evidence.items())))


def special_value(kind: str, dtype: np.dtype[Any]) -> float:
    """The value planted for ``kind`` in arrays of ``dtype``."""
    if kind == "large":
        return float(np.finfo(dtype).max) / 4.0
    return {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf"),
            "-0": -0.0}[kind]


def plant(values: Mapping[str, Any], kind: str, rng: np.random.Generator
          ) -> dict[str, Any] | None:
    """The values with ``kind`` planted in every non-empty floating array (None: none)."""
    out: dict[str, Any] = {}
    planted = False
    for name, v in values.items():
        if isinstance(v, np.ndarray) and _floating(v):
            out[name] = _planted(v, kind, rng)
            planted = True
        elif isinstance(v, list | tuple) and v and all(isinstance(x, np.ndarray) for x in v):
            arrays = [_planted(x, kind, rng) if _floating(x) else x for x in v]
            planted = planted or any(_floating(x) for x in v)
            out[name] = type(v)(arrays) if isinstance(v, tuple) else arrays
        else:
            out[name] = v
    return out if planted else None


def _holds_empty(values: Mapping[str, Any]) -> bool:
    """Whether an input holds an empty array: a shape edge, which validation judges
    (``not_on``), not a special value. Kept, a conv2d input with no channels (the
    composition's output shape differs there) made the plant in its bias a
    disagreement of every kind, and torch's, JAX's and TF's conv compositions judged no
    input holding a special value (nearly every float input has one)."""
    for v in values.values():
        arrays = v if isinstance(v, list | tuple) else [v]
        if any(isinstance(a, np.ndarray) and a.size == 0 for a in arrays):
            return True
    return False


def _floating(a: np.ndarray) -> bool:
    return a.dtype.name in _FLOATING and a.size > 0


def _planted(a: np.ndarray, kind: str, rng: np.random.Generator) -> np.ndarray:
    out = np.array(a, copy=True)
    flat = out.reshape(-1)
    count = max(1, int(round(flat.size * FRACTION)))
    where = rng.choice(flat.size, size=count, replace=False)
    with np.errstate(over="ignore"):
        flat[where] = special_value(kind, np.dtype(np.float32) if a.dtype.name ==
                                    "bfloat16" else a.dtype)
    return out


def _dtypes(spec: LibSpec, cp: Counterpart) -> list[str]:
    """Float32 and float64 where the API takes them and the counterpart was validated on
    them; else the first floating dtype of both."""
    allowed = [d for d in dtypes_for(spec) if not cp.dtypes or d in cp.dtypes]
    wanted = [d for d in CHECK_DTYPES if d in allowed]
    # An input keyed by an integer tensor (embedding indices) may still carry floating
    # ones (the embedding's weight): checked in the dtypes it was validated on.
    return wanted or [d for d in allowed if d in _FLOATING][:1] or allowed[:2]


def check(specs: Mapping[str, LibSpec], candidates: Sequence[Counterpart], pool: Any,
          seed: int = 0, per_dtype: int = PER_DTYPE, rounds: int = 1
          ) -> list[SpecialVerdict]:
    """Run every candidate against its API on special inputs (see the module doc):
    ``per_dtype`` drawn inputs per dtype, each with every kind planted, in ``rounds``
    rounds of fresh draws (seeds ``seed``, ``seed + 1``, ...); a kind that disagrees in
    any round is not trusted."""
    wanted = [cp for cp in candidates if cp.api in specs]
    verdicts = [SpecialVerdict(cp) for cp in wanted]
    for r in range(rounds):
        _round(specs, wanted, verdicts, pool, seed + r, per_dtype)
    return verdicts


def _round(specs: Mapping[str, LibSpec], wanted: Sequence[Counterpart],
           verdicts: Sequence[SpecialVerdict], pool: Any, seed: int, per_dtype: int) -> None:
    from dlfuzz.engines.api.libgen import LibGenerator

    gen = LibGenerator(seed, mode="adjust", specials=False)
    rng = np.random.default_rng(seed)
    drawn: dict[tuple[str, str, frozenset[str]], list[Input]] = {}
    jobs: list[tuple[int, str, Input]] = []
    cases: list[ApiCase] = []
    for i, cp in enumerate(wanted):
        spec = specs[cp.api]
        strip = frozenset(n for n, _ in cp.requires_default)
        for dtype in _dtypes(spec, cp):
            key = (cp.api, dtype, strip)
            if key not in drawn:
                raw = draws(gen, for_dtype(spec, dtype), per_dtype)
                # Parameters the counterpart cannot express are left out (as validated).
                inputs = [make_input(spec, {k: v for k, v in values.items()
                                            if k not in strip}, strip) for values in raw]
                drawn[key] = [x for x in inputs if x.dtype == dtype]
            for x in drawn[key]:
                if not cp._defaults_ok(x.values) or _holds_empty(x.values):
                    continue
                for kind in SPECIAL_KINDS:
                    planted = plant(x.values, kind, rng)
                    if planted is None:
                        continue
                    try:
                        cases.append(_case(spec, cp, planted))
                    except Exception as exc:  # noqa: BLE001 - a call it cannot build
                        verdicts[i].disagree.setdefault(kind, f"cannot build the call: {exc}")
                        continue
                    jobs.append((i, kind, x))
    libs = {specs[cp.api].library for cp in wanted}
    backends = set(EAGER) | {API_BACKENDS[lib] for lib in libs if lib in API_BACKENDS}
    results = _run(pool, cases, backends, f"special inputs, seed {seed}") if cases else []
    for (i, kind, x), case, res in zip(jobs, cases, results, strict=True):
        _judge(verdicts[i], kind, x, case, res, specs)


def _case(spec: LibSpec, cp: Counterpart, values: Mapping[str, Any]) -> ApiCase:
    from dlfuzz.engines.api.libdraw import rebuild

    return rebuild(spec, values, [cp])


def _judge(v: SpecialVerdict, kind: str, x: Input, case: ApiCase,
           res: Mapping[str, Outcome], specs: Mapping[str, LibSpec]) -> None:
    cp = v.candidate
    lib = specs[cp.api].library
    native = res.get(API_BACKENDS.get(lib, lib))
    other = res.get(cp.worker_library)
    if native is None or not native.ok or other is None:
        return  # the API rejects this input (or a backend is missing): no evidence
    v.tested[kind] = v.tested.get(kind, 0) + 1
    if kind == "large":
        native, other = _finite_only(native, other)
    verdict, ratio = compare(native, other)
    if verdict == "agree" or kind in v.disagree:
        return
    shapes = [list(t.shape) for t in case.tensors]
    if verdict == "fail":
        what = f"{other.status} {other.exc_type}: {other.message[:80]}".strip()
    else:
        what = f"{verdict} mismatch, deviation {ratio:.3g} tolerance units"
        what += _first_difference(native, other)
    v.disagree[kind] = f"{x.dtype}: {what} (inputs {shapes})"


LARGE_RTOL = 1e-3  # large inputs: rounding of huge partial sums in another order


def _finite_only(native: Outcome, other: Outcome) -> tuple[Outcome, Outcome]:
    """Both outcomes with every element that is not finite on either side, or within
    ``LARGE_RTOL`` of the other side, set to 0.

    Large finite inputs overflow sums and products, and where they do depends on the
    order of the operations (IEEE: ``(M + M) - M`` is inf, ``M + (M - M)`` is M): an inf
    or NaN on one side is no evidence against either implementation, nor is the rounding
    of sums of huge terms in another order. Finite results on both sides that differ
    more still must agree, as must status and structure.
    """
    a = [t.to_numpy() for t in native.outputs]
    b = [t.to_numpy() for t in other.outputs]
    if len(a) != len(b) or any(x.shape != y.shape for x, y in zip(a, b, strict=True)):
        return native, other
    xs, ys = [], []
    for x, y in zip(a, b, strict=True):
        if x.dtype.kind in "fc" and y.dtype.kind in "fc":
            with np.errstate(invalid="ignore", over="ignore"):
                keep = np.isfinite(x) & np.isfinite(y)
                wide_x, wide_y = x.astype(np.complex128), y.astype(np.complex128)
                close = np.abs(wide_x - wide_y) <= LARGE_RTOL * np.maximum(
                    np.abs(wide_x), np.abs(wide_y))
                keep &= ~close
            x, y = np.where(keep, x, 0).astype(x.dtype), np.where(keep, y, 0).astype(y.dtype)
        xs.append(Tensor.from_numpy(x))
        ys.append(Tensor.from_numpy(y))
    return replace(native, outputs=tuple(xs)), replace(other, outputs=tuple(ys))


def _first_difference(native: Outcome, other: Outcome) -> str:
    """'; the API gives nan where it gives 0' for the worst element (a NaN/Inf mismatch
    first, else the largest relative difference)."""
    for a, b in zip(native.outputs, other.outputs, strict=False):
        x, y = a.to_numpy().reshape(-1), b.to_numpy().reshape(-1)
        if x.shape != y.shape or x.size == 0:
            continue
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            xx, yy = x.astype(np.complex128), y.astype(np.complex128)
            kind = (np.isnan(xx) != np.isnan(yy)) | (np.isinf(xx) != np.isinf(yy)) | (
                np.isinf(xx) & np.isinf(yy) & (xx != yy))
            rel = np.where(np.isfinite(xx) & np.isfinite(yy),
                           np.abs(xx - yy) / (np.abs(xx) + 1e-300), 0.0)
        k = int(np.argmax(kind)) if kind.any() else int(np.argmax(rel))
        if kind.any() or rel[k] > 0:
            return f"; the API gives {_fmt(x[k])} where it gives {_fmt(y[k])}"
    return ""


def _fmt(value: Any) -> str:
    return f"{value:.6g}" if np.isrealobj(value) else str(value)


def summary(verdicts: Sequence[SpecialVerdict]) -> dict[str, list[str]]:
    """Per counterpart target, the kinds it is not trusted on (for logs and tests)."""
    out: dict[str, list[str]] = defaultdict(list)
    for v in verdicts:
        missing = [k for k in SPECIAL_KINDS if k not in v.trusted]
        if missing:
            out[f"{v.candidate.api} <- {v.candidate.target}"] = missing
    return dict(out)
