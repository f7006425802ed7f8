"""Dtype differential: a float16/bfloat16 result against the same library in float64.

Many APIs have no counterpart in another library (``torch.special.*``, most of
``tf.image``), so the differential oracle never sees them disagree; and where several
libraries share a low-precision bug (an out-of-range scalar giving inf in bfloat16 where
float32 gives NaN) they agree with each other. This oracle compares a library with
itself: every eager backend of the API's own library that computed a case whose inputs
are float16 or bfloat16 is re-run on the same case upcast to float64 (and twice with
the inputs nudged by one rounding of their dtype, for the sensitivity), and the
low-precision result is judged against that float64 result with the low dtype's
tolerance, by the reference judge's rules (IEEE-fixed elements, overflow of the narrow
dtype's range, per-element sensitivity).

With no same-dtype peer to compare against, a numeric deviation must be clear: more
than ``MARGIN`` times the allowance (the dtype's tolerance plus four times the nudged
sensitivity). A NaN or infinity on one side only is judged at the allowance itself. A
library that computes in the low dtype throughout (and so rounds more than the nudges
move) is inside that margin; a kernel that is wrong in bfloat16 alone, or turns an
input into inf where float64 gives NaN, is not.

Left alone, because the comparison cannot tell a bug there:

* deviations within ``EVALUATION_STEPS`` roundings of the largest input (integer inputs
  included, since the low dtype computes them too): computing in
  the low dtype itself costs that where the result cancels (``x - tanh(x)``, ``exp(x) -
  1`` of a small x in bfloat16 lose the whole result), and libraries do not promise to
  compute low-precision inputs in float32;

* random APIs (dropout): two runs differ by design;
* calls returning more than ``MAX_OUTPUTS`` outputs (``unbind`` of a long axis): the
  judge's time grows with them;
* calls with a float scalar argument: the low-precision run rounds it to the low dtype
  (or computes ``1 - eps`` in it) and the float64 run does not, which the nudges
  (tensors only) do not measure: ``logit(1, eps=0.00068)`` is inf in bfloat16, where
  ``1 - eps`` is 1, and ``xlog1py(x, 1.8e308)`` is inf in float16, where the scalar is;
* integer outputs of a low-precision call, and float outputs holding only whole numbers
  (histogram counts, indices: ``histc``): they jump with the rounding of the inputs;
* NaN vs ±inf on an API whose result depends on the order of evaluation or on the
  computing dtype's range (``ieee.json``'s ``order_dependent`` rows), with the infinite
  inputs that make it so: a float16 ``cumprod`` of small factors underflows to zero
  before it meets an infinity (0 × inf is NaN), where float64 keeps the partial product
  and gives ±inf;
* NaN in the low-precision result where float64 gives a number, on inputs holding NaN:
  propagating NaN is IEEE's default, so the float64 kernel dropping it is no evidence
  against the low-precision one (``jax.lax.conv`` of a NaN weight over zero padding);
* inputs whose magnitude reaches the fourth root of the low dtype's largest value (16
  in float16): a square, a dot product or a finite difference of them overflows the
  narrow dtype in the middle of a correct computation (``torch.gradient`` of float16
  -65504 is NaN, ``round(x, decimals=2)`` of bfloat16's largest value is inf), which the
  dtype's range allows and float64 does not show; and integer inputs or whole-number
  scalar arguments beyond the low dtype's largest value, which promotion to it turns
  into ±inf (``torch.xlogy(float16 x, 2147483651)`` is inf).

Findings carry the differential oracle's details (``special_values``, ``demoted``, ...)
and its symptoms (``numeric``, ``nan``), so severity and triage treat them alike.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import ml_dtypes
import numpy as np

from dlfuzz.cases import DTYPES, ApiCase, Call, Finding, Outcome
from dlfuzz.oracles.base import Item, Oracle, OracleContext, finding
from dlfuzz.oracles.canonical import canonical_outcomes
from dlfuzz.oracles.differential import (
    call_scalars,
    float_scalar,
    judgement,
    order_dependent_only,
    within_low_evaluation,
)
from dlfuzz.oracles.discrepancy import fmt, tolerance_text
from dlfuzz.oracles.reference import Reference, Verdict, disagreements
from dlfuzz.oracles.special import input_specials, nan_mark
from dlfuzz.oracles.tolerances import LOW_PRECISION, as_comparable, largest_inputs, moved_counts

LOW = LOW_PRECISION
# A numeric deviation counts when it is this many times the allowance: clear of the
# extra rounding of a low-precision evaluation order, which the nudges only estimate
# (a bfloat16 result off by 1 at 2.1 is 14 times its allowance).
MARGIN = 4.0
# A call returning more outputs than this is left alone: the judge works output by
# output (about 0.4 ms each), and ``unbind`` along a stretched float16 axis returned
# 33,093 outputs a case, a group of them holding a torch campaign's batch for an hour.
MAX_OUTPUTS = 1024


def _candidates(case: ApiCase, outcomes: dict[str, Outcome], ctx: OracleContext
                ) -> list[str]:
    """Eager backends of the API's own library with a low-precision floating result."""
    if getattr(case, "kind", "api") != "api" or not getattr(case, "answerable", True):
        return []
    if not case.calls or not any(t.dtype in LOW for t in case.tensors):
        return []
    if ctx.deterministic is not None and not ctx.deterministic(case):
        return []  # dropout and friends: another run differs by design
    if _float_scalars(case):
        ctx.stats["dtype_float_scalar"] += 1
        return []
    if _near_overflow(case):
        ctx.stats["dtype_near_overflow"] += 1
        return []
    library = case.calls[0][0]
    out = [b for b, o in outcomes.items()
           if o.ok and ctx.library_of.get(b, b) == library and not ctx.compiled.get(b)
           and o.outputs and any(t.dtype in LOW for t in o.outputs)]
    if any(len(outcomes[b].outputs) > MAX_OUTPUTS for b in out):
        ctx.stats["dtype_many_outputs"] += 1
        return []
    return out


def _float_scalars(case: ApiCase) -> bool:
    """Whether the API's own call passes a non-integral float scalar (``eps=0.011``)."""
    return float_scalar(case.calls[0][1]) is not None


def _largest_low_inputs(case: ApiCase) -> list[tuple[str, float]]:
    return largest_inputs(case.tensors, lambda dtype: dtype in LOW)


def _largest_integer_inputs(case: ApiCase) -> list[tuple[str, float]]:
    return largest_inputs(case.tensors, lambda dtype: dtype.startswith(("int", "uint")))


def _near_overflow(case: ApiCase) -> bool:
    """A low-precision input at or above the fourth root of its dtype's largest value, or
    an integer input or whole-number scalar argument beyond the largest value of a low
    dtype of the case: promoted to it, the number is ±inf (``torch.remainder(int32
    INT_MIN, float16 1)`` is NaN, as ``remainder(-inf, 1)`` must be, where float64 gives
    -0; ``torch.xlogy(float16 0.217, 2147483651)`` is inf, the scalar taking the
    tensor's dtype as torch's promotion documents, where float64 gives 4.67)."""
    if any(largest >= float(ml_dtypes.finfo(DTYPES[dtype]).max) ** 0.25
           for dtype, largest in _largest_low_inputs(case)):
        return True
    lows = [float(ml_dtypes.finfo(DTYPES[t.dtype]).max) for t in case.tensors if t.dtype in LOW]
    integers = [largest for _, largest in _largest_integer_inputs(case)]
    integers += [abs(float(x)) for x in _whole_scalars(case.calls[0][1])]
    return bool(lows) and any(largest > min(lows) for largest in integers)


def _whole_scalars(call: Call) -> list[int | float]:
    """The whole-number scalars (ints, integral floats; not booleans) a call passes."""
    return [x for x in call_scalars(call) if isinstance(x, int | float)
            and not isinstance(x, bool) and math.isfinite(x) and float(x).is_integer()]


class DtypeOracle(Oracle):
    name = "dtype"
    case_kinds = ("api",)

    def check_many(self, items: Sequence[Item], ctx: OracleContext) -> list[list[Finding]]:
        results: list[list[Finding]] = [[] for _ in items]
        requests: list[tuple[ApiCase, str]] = []
        where: list[int] = []
        canonical = {}
        for i, (case, outcomes) in enumerate(items):
            for backend in _candidates(case, outcomes, ctx):
                requests.append((case, backend))
                where.append(i)
        if not requests:
            return results
        ctx.stats["dtype_checks"] += len(requests)

        def judged(k: int, ref: Reference | None) -> tuple[Outcome, Reference, Verdict] | None:
            """The verdict on request ``k`` against ``ref``; None where there is nothing
            to judge or the result is within the reference's allowance."""
            (case, backend), i = requests[k], where[k]
            if ref is None:
                return None
            if i not in canonical:
                canonical[i] = canonical_outcomes(case, items[i][1])
            outcome, ref = _low_outputs(canonical[i][backend], ref)
            if not outcome.outputs:
                return None
            verdict = ctx.judge.verdicts({backend: outcome}, ref, case)[0]
            if verdict.symptom == "shape" or verdict.ratio <= 1.0:
                return None
            if verdict.symptom == "numeric" and (verdict.ratio <= MARGIN
                                                 or within_low_evaluation(case, verdict)):
                ctx.stats["dtype_within_margin"] += 1
                return None
            return outcome, ref, verdict

        # The float64 run alone first: a result within the allowance of it without the
        # sensitivity is within it with the sensitivity too (which only widens it, so
        # fewer elements are off and the ratio is lower), so only the others pay for the
        # nudged runs (two more runs of the API per low-precision case, and in JAX a
        # float64 signature compiled per group).
        first = [judged(k, ref) for k, ref in
                 enumerate(ctx.judge.own_references(requests, with_nudges=False))]
        suspects = [k for k, j in enumerate(first) if j is not None]
        ctx.stats["dtype_unnudged"] += len(requests) - len(suspects)
        nudged = ctx.judge.own_references([requests[k] for k in suspects]) if suspects else []
        for k, ref in zip(suspects, nudged, strict=True):
            found = judged(k, ref)
            if found is None:
                continue
            (case, backend), i = requests[k], where[k]
            outcome, ref, verdict = found
            if "nan" in input_specials(case) and _only_low_nan(verdict):
                ctx.stats["dtype_nan_propagated"] += 1
                continue
            if order_dependent_only(case, verdict):
                ctx.stats["dtype_order_dependent_nan_inf"] += 1
                continue

            f = finding(self.name, verdict.symptom, case, backend, outcome.stage,
                        _message(backend, verdict), signature_message=_signature(case, verdict),
                        method="own float64", reference_libraries=ref.libraries[0],
                        ratio=float(min(verdict.ratio, 1e300)))
            results[i].append(_with_details(f, judgement(case, outcome, verdict, ctx)))
        return results


def _low_outputs(outcome: Outcome, ref: Reference) -> tuple[Outcome, Reference]:
    """Only the outputs the low-precision call gives in float16/bfloat16 with values
    that are not all whole numbers. Integer outputs, and float outputs of counts
    (histogram counts, indices: ``histc`` returns its counts as floats) jump with the
    rounding of the inputs: a bin edge computed in bfloat16 puts a value in the next bin,
    which says nothing about a bug (``_whole``, ``tolerances.moved_counts``)."""
    if len(outcome.outputs) != len(ref.outputs):
        return outcome, ref
    keep = [i for i, t in enumerate(outcome.outputs)
            if t.dtype in LOW and not _whole(ref.outputs[i])
            and not moved_counts(t.to_numpy(), ref.outputs[i])]
    if len(keep) == len(outcome.outputs):
        return outcome, ref
    sens = ref.sensitivity
    return (replace(outcome, outputs=tuple(outcome.outputs[i] for i in keep)),
            replace(ref, outputs=tuple(ref.outputs[i] for i in keep),
                    sensitivity=None if sens is None else tuple(sens[i] for i in keep)))


def _whole(array: np.ndarray) -> bool:
    """Every finite value a whole number, and at least one above 1 in magnitude (counts,
    not a result that happens to be 0 or +-1)."""
    wide = as_comparable(array)
    if wide.dtype.kind != "f" or not wide.size:
        return False
    finite = wide[np.isfinite(wide)]
    return bool(finite.size) and bool(np.all(finite == np.round(finite))) and \
        bool(np.any(np.abs(finite) > 1))


def _only_low_nan(verdict: Verdict) -> bool:
    """Every disagreeing element is NaN in the low-precision result and a number in the
    float64 one. On inputs holding NaN, propagating it is IEEE's default, so the float64
    kernel that drops it (``conv`` of a NaN weight over zero padding gives 0 in float64
    and NaN in float16) is no evidence against the low-precision one."""
    pairs = disagreements(verdict)
    return bool(pairs) and all(
        a.dtype.kind == "f" and bool(np.all(np.isnan(a) & ~np.isnan(e))) for a, e in pairs)


def _with_details(f: Finding, extra: tuple[tuple[str, object], ...]) -> Finding:
    return replace(f, details=tuple(sorted(f.details + extra)))


def _signature(case: ApiCase, verdict: Verdict) -> str:
    low = sorted({t.dtype for t in case.tensors if t.dtype in LOW})
    mark = nan_mark(case, verdict.actual, verdict.expected, verdict.bad)
    return f"{','.join(low)} vs float64 of the same library{mark}"


def _message(backend: str, verdict: Verdict) -> str:
    first = verdict.first
    if first is None:
        return f"{backend} in low precision differs from its own float64 result"
    where = f"element {list(first.index)}" if first.index else "the scalar"
    said = (f"{backend} gives {fmt(first.actual)} in {first.dtype} where the same call in "
            f"float64 gives {fmt(first.expected)} ({where})")
    if first.non_finite:
        return said + (f"; {first.bad} of {first.total} elements differ" if first.bad > 1
                       else "")
    return (f"{said}; max abs diff {first.max_abs:.3g}, "
            f"{tolerance_text(first.tolerance, first.dtype)}, "
            f"{first.bad} of {first.total} elements off")

