"""Numeric inconsistency and NaN/Inf, blamed through the reference judge.

A cheap pairwise check runs on every case; only when some pair disagrees beyond the
looser of their dtype tolerances is a reference computed (``reference.Judge``), for all
suspicious cases of a batch in one round trip. Verdicts name the guilty backend.

What a maintainer would make of a verdict is said in the finding's details (the shared
contract of docs/oracles.md): ``special_values`` when NaN/inf/-0 in the inputs, NaN/inf
in the reference or an overflow is involved (an IEEE rule's citation when one fixes the
result); ``ill_conditioned``/``condition_number`` for linear algebra the dtype cannot
resolve; ``demoted`` for a documented semantic difference. NaN vs ±inf on an API whose
result depends on evaluation order, with infinite inputs, is no finding at all
(counted as ``order_dependent_nan_inf``). Whether
a finding is localized to a part of its case (a model's layer), how it is then filed and
which extra details it carries is the case's kind's answer (``kind_of``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import cast

import numpy as np

from dlfuzz.cases import DTYPES, FLOAT_DTYPES, ApiCase, Call, Finding, GraphCase, Outcome, kind_of
from dlfuzz.oracles import ieee
from dlfuzz.oracles.base import Item, Oracle, OracleContext, finding, input_dtypes
from dlfuzz.oracles.canonical import canonical_outcomes
from dlfuzz.oracles.compare import deviation, loosest, structure
from dlfuzz.oracles.conditioning import conditioning
from dlfuzz.oracles.counterpart_votes import demote_counterpart_only
from dlfuzz.oracles.discrepancy import fmt, tolerance_text
from dlfuzz.oracles.localize import Request, Suspect, localize_many
from dlfuzz.oracles.reference import REFERENCE_PREFERENCE, Reference, Verdict, disagreements
from dlfuzz.oracles.semantics import documented_difference
from dlfuzz.oracles.special import input_specials, nan_mark, special_phrase
from dlfuzz.oracles.tolerances import (
    LOW_PRECISION,
    Tolerance,
    as_comparable,
    low_evaluation_limit,
    moved_counts,
)


def _outputs(o: Outcome) -> tuple[np.ndarray, ...]:
    return tuple(t.to_numpy() for t in o.outputs)


def suspicious(case: ApiCase, outcomes: dict[str, Outcome]) -> bool:
    """Whether the ok backends disagree enough to judge: beyond the looser dtype
    tolerance, and for a model beyond half its rounding budget (``model_rounding``).
    Two backends within ``c * budget`` tolerances of each other leave the worse one at
    most ``c * budget / (1 - 1/outlier_factor)`` from the reference while it is an
    outlier among its peers, so with c = 1/2 no finding can come of it, and the float64
    reference runs are saved."""
    ok = [o for o in outcomes.values() if o.ok]
    if len(ok) < 2:
        return False
    pivot = _outputs(ok[0])
    scale = _rounding_budget(case) / 2 if getattr(case, "kind", "") == "graph" else 1.0
    for o in ok[1:]:
        other = _outputs(o)
        if structure(pivot) != structure(other):
            return True
        for x, y in zip(pivot, other, strict=True):
            tol = loosest(x, y)
            if deviation(x, y, Tolerance(tol.rtol * scale, tol.atol * scale)).ratio > 1.0:
                return True
    return False


class DifferentialOracle(Oracle):
    name = "differential"

    def check(self, case: ApiCase, outcomes: dict[str, Outcome], ctx: OracleContext
              ) -> list[Finding]:
        return self.check_many([(case, outcomes)], ctx)[0]

    def check_many(self, items: Sequence[Item], ctx: OracleContext) -> list[list[Finding]]:
        results: list[list[Finding]] = [[] for _ in items]
        # Unordered outputs (eigenvalues, sets, tie-broken indices) in canonical form.
        items = [(case, canonical_outcomes(case, outcomes)) for case, outcomes in items]
        # A violate-mode input, or an edge one outside the documented domain, has no
        # right answer to compare.
        suspects = [i for i, (case, outcomes) in enumerate(items)
                    if getattr(case, "answerable", True) and suspicious(case, outcomes)]
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
            verdicts = ctx.judge.verdicts(outcomes, ref, case)
            sound = [v.backend for v in verdicts if not v.guilty]
            for v in verdicts:
                if v.guilty and _is_composition(case, ctx, v.backend):
                    # A dlfuzz-written counterpart that disagrees with the reference is
                    # the composition's fault until shown otherwise: counted, not blamed
                    # on the library it is written in.
                    ctx.stats["counterpart_disagreements"] += 1
                elif v.guilty and order_dependent_only(case, v):
                    # Which of +inf and -inf meet first decides NaN vs ±inf in a sum or a
                    # contraction, and whether a product underflows before it meets an
                    # infinity: IEEE leaves that order to the implementation.
                    ctx.stats["order_dependent_nan_inf"] += 1
                elif v.guilty and model_rounding(case, outcomes[v.backend], v):
                    # A model off by no more than its depth of rounding.
                    ctx.stats["model_rounding"] += 1
                elif v.guilty:
                    guilty.append((i, v, ref))
                    self._sound[(i, v.backend)] = _sound_pair(v.backend, sound, ctx)
        suspects_of = self._localize(items, guilty, ctx)
        for (i, v, ref), suspect in zip(guilty, suspects_of, strict=True):
            case, outcomes = items[i]
            if suspect is not None and suspect.rounding and v.symptom == "numeric":
                # The layer that introduced the difference is a sum within the error
                # bound of summing in its dtype in any order (``localize.ACCUMULATING``),
                # or a normalization within its affine form's rounding (``NORMALIZING``),
                # or a decision whose operands sit on its step or are subnormal
                # (``DECIDING``): stats threshold_rounding, subnormal_rounding.
                ctx.stats[f"{suspect.rounding}_rounding"] += 1
                continue
            f = self._finding(case, outcomes[v.backend], v, ref.method, ref.libraries, suspect)
            # Judged as filed: a model under its localized layer, which is what the
            # documented differences name (a tf-xla ReduceMax, not "model:synth").
            judged = kind_of(case).relabel(case, f.api)
            f = replace(f, details=tuple(sorted(
                f.details + judgement(judged, outcomes[v.backend], v, ctx))))
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
        dtypes = input_dtypes(case)
        msg = verdict_message(case, o.backend, verdict, method, libraries)
        extra = {}
        if suspect is not None and suspect.node:
            # LEMON's unit of a model bug: (library, layer kind).
            case = kind_of(case).relabel(case, suspect.op)
            how = "R_a" if suspect.method == "R_a" else "the first wrong model prefix"
            msg += f"; localized to {suspect.node} ({suspect.op}) by {how} vs {suspect.against}"
            extra = {"suspect_node": suspect.node, "suspect_op": suspect.op,
                     "r_a": min(suspect.ratio, 1e300), "localized_against": suspect.against,
                     "localized_by": suspect.method}
        # The signature keeps only what identifies the bug (symptom, stage, backend, API,
        # input dtypes, whether NaN went in), never values, so the same bug on other
        # inputs dedups.
        return finding(self.name, verdict.symptom, case, o.backend, o.stage, msg,
                       signature_message=f"inputs {dtypes}"
                       f"{nan_mark(case, verdict.actual, verdict.expected, verdict.bad)}",
                       method=method,
                       reference_libraries=",".join(libraries),
                       ratio=float(min(verdict.ratio, 1e300)), **extra)


def verdict_message(case: ApiCase, backend: str, verdict: Verdict, method: str,
             libraries: tuple[str, ...]) -> str:
    """One sentence a person reads at a glance: who gives what where the reference gives
    what, at which element, how many elements, and against which tolerance."""
    reference = f"the majority ({'+'.join(libraries)})" if method == "vote" else \
        f"the {method} reference of {'+'.join(libraries)}"
    first = verdict.first
    if verdict.symptom == "shape":
        return f"{backend}'s output shapes differ from {reference}"
    if first is None:
        return f"{backend} differs from {reference}"
    where = f"element {list(first.index)}" if first.index else "the scalar"
    if first.outputs > 1:
        where = f"output {first.output}, {where}"
    # -0 is in nearly every generated input; the special_values detail names it where
    # it matters.
    specials = [v for v in input_specials(case) if v != "-0"]
    if specials:
        where += f"; inputs hold {', '.join(specials)}"
    said = f"{backend} gives {fmt(first.actual)} where {reference} gives {fmt(first.expected)}"
    if first.non_finite:
        msg = f"{said} ({where})"
        if first.bad > 1:
            msg += f"; {first.bad} of {first.total} elements differ"
        return msg
    return (f"{said} ({where}); max abs diff {first.max_abs:.3g}, "
            f"{tolerance_text(first.tolerance, first.dtype)}, "
            f"{first.bad} of {first.total} elements off")


def order_dependent_only(case: ApiCase, verdict: Verdict) -> bool:
    """NaN vs ±inf is the only disagreement, on an order-dependent API whose inputs hold
    the infinities that make it so (``ieee.order_dependent``; for a product, in the
    dtype the disagreeing result was computed in). The dtype oracle's too."""
    if verdict.symptom == "shape" or not verdict.bad:
        return False
    computed = next((a.dtype.name for a, m in zip(verdict.actual, verdict.bad, strict=True)
                     if m.any()), "")
    if not ieee.order_dependent(case, input_specials(case), computed):
        return False
    return all(_nan_vs_inf(x, e, m) for x, e, m in
               zip(verdict.actual, verdict.expected, verdict.bad, strict=True))


def _nan_vs_inf(actual: np.ndarray, expected: np.ndarray, mask: np.ndarray) -> bool:
    if not mask.any():
        return True
    a, e = as_comparable(actual[mask]), as_comparable(expected[mask])
    if a.dtype.kind not in "fc":
        return False
    e = e.astype(a.dtype)
    return bool(np.all((np.isnan(a) & np.isinf(e)) | (np.isinf(a) & np.isnan(e))))


def judgement(case: ApiCase, o: Outcome, verdict: Verdict, ctx: OracleContext
              ) -> tuple[tuple[str, object], ...]:
    """The shared-contract details: special_values, ill_conditioned (with
    condition_number) and demoted, each only when it applies (the dtype oracle's too).
    A model demoted for its low precision also says so (``low_precision_model``: its
    dtype), so the model engine can judge the same model in float32."""
    out: list[tuple[str, object]] = []
    if verdict.bad:
        phrase = special_phrase(case, verdict.actual, verdict.expected, verdict.bad,
                                verdict.rules)
        if phrase:
            out.append(("special_values", phrase))
    if verdict.rules:
        out.append(("ieee_rules", " | ".join(verdict.rules)))
    dtype = o.outputs[0].dtype if o.outputs else ""
    cond = conditioning(case, dtype) if dtype else None
    if cond is not None:
        out.append(("ill_conditioned", cond.ill_conditioned))
        out.append(("condition_number", float(min(cond.condition_number, 1e300))))
    library = ctx.library_of.get(o.backend, o.backend)
    demoted = documented_difference(case, library, ctx.compiled.get(o.backend, False))
    if not demoted and not verdict.rules and _only_reference_nan(case, verdict):
        demoted = (f"the float64 reference is NaN where {o.backend} gives a number, on "
                   "inputs without NaN: the NaN comes from inf - inf or 0 * inf in one "
                   "evaluation, and no IEEE rule fixes which answer is right")
    if not demoted and not verdict.rules and not _nan_handling(case, verdict):
        demoted = _low_precision_model(case, dtype)
        if demoted:
            out.append(("low_precision_model", dtype))
    if not demoted and not verdict.rules:
        demoted = _low_precision_scalar(case, library) or _moved_bins(case, verdict) or \
            _low_precision_evaluation(case, verdict)
    if not demoted:
        demoted = _integer_overflow(case, dtype) or _wrapped(case, verdict)
    if demoted:
        out.append(("demoted", demoted))
    return tuple(out)



def _integer_overflow(case: ApiCase, dtype: str) -> str:
    """Why an integer result cannot be judged ("" when it can): an integer input at or
    above the square root of its dtype's range, so a product, a square or a negation of
    the minimum leaves the range. Libraries wrap (TF, torch), compute in float64 and
    convert (TF.js on cpu: ``square(46341)`` is 0 in int32) or saturate; no standard
    fixes the overflowed result, so such a disagreement is listed, never filed as a
    wrong result."""
    if not dtype or np.dtype(DTYPES.get(dtype, np.float64)).kind not in "iu":
        return ""
    for t in getattr(case, "tensors", ()):
        if t.dtype not in DTYPES or np.dtype(DTYPES[t.dtype]).kind not in "iu":
            continue
        arr = t.to_numpy()
        if not arr.size:
            continue
        limit = math.isqrt(int(np.iinfo(arr.dtype).max)) + 1  # its square overflows
        if int(np.abs(arr.astype(np.float64)).max()) >= limit:
            return (f"integer overflow: an {t.dtype} input reaches {limit} (its square leaves "
                    f"the dtype's range); libraries wrap, saturate or compute in floating "
                    "point there, and no standard fixes the overflowed result")
    return ""


def _wrapped(case: ApiCase, verdict: Verdict) -> str:
    """Why integer results cannot be judged ("" when they can): every disagreeing
    element is off by a non-zero multiple of 2**bits of an integer input's dtype, so one
    side wrapped around in that dtype where the other computed wider. Torch promotes
    an integer ``cumprod``, ``cumsum``, ``sum`` and ``prod`` to int64, JAX and TF keep
    int32: a ``jax.lax.cumprod`` of int32 values of a few thousand wraps in JAX and TF
    and not in torch, and no input reaches ``_integer_overflow``'s square root."""
    widths = sorted({np.dtype(DTYPES[t.dtype]).itemsize * 8 for t in getattr(case, "tensors", ())
                     if t.dtype in DTYPES and np.dtype(DTYPES[t.dtype]).kind in "iu"
                     and np.dtype(DTYPES[t.dtype]).itemsize < 8})
    off = [(a, e, bad) for a, e, bad in zip(verdict.actual, verdict.expected, verdict.bad,
                                            strict=True) if bad.shape == a.shape and bad.any()]
    if not widths or not off or any(a.dtype.kind not in "iu" for a, _, _ in off):
        return ""
    diffs = [np.abs(a[bad].astype(np.float64) - as_comparable(e[bad]).astype(np.float64))
             for a, e, bad in off]
    for bits in widths:
        if all(np.all(np.isfinite(d)) and np.all((d > 0) & (np.mod(d, 2.0 ** bits) == 0))
               for d in diffs):
            return (f"integer results off by a multiple of 2**{bits}: one side wrapped around "
                    f"in the inputs' {bits}-bit integers where the other computed wider "
                    "(torch promotes integer sums and products to int64); no standard fixes "
                    "the overflowed result")
    return ""


def call_scalars(call: Call) -> list[object]:
    """The values a call passes, positional and keyword, tuples spread."""
    values = list(call.args) + [v for _, v in call.kwargs]
    return [x for v in values for x in (v if isinstance(v, tuple) else (v,))]


def float_scalar(call: Call) -> float | None:
    """The first non-integral float scalar a call passes (``eps=0.011``), or None."""
    return next((x for x in call_scalars(call)
                 if isinstance(x, float) and not float(x).is_integer()), None)


def _low_precision_scalar(case: ApiCase, library: str) -> str:
    """Why a call on float16/bfloat16 tensors with a non-integral float scalar argument
    cannot be judged against the float64 reference ("" when it can): one library rounds
    the scalar to the tensors' dtype and computes in it (JAX's weak types), another
    keeps it in float32 or float64, and the reference keeps it whole; the input nudges
    that measure the rounding move tensors only. ``jnp.isclose`` of bfloat16 -0.418
    and -0.984 with ``rtol=0.5726`` is true (the bound rounded to bfloat16 is 0.574),
    where torch and float64 say false. The dtype oracle leaves such calls for the same
    reason."""
    if getattr(case, "kind", "api") != "api":
        return ""
    low = sorted({t.dtype for t in case.tensors if t.dtype in LOW_PRECISION})
    if not low:
        return ""
    call = next((c for lib, c in case.calls if lib == library), None)
    scalar = None if call is None else float_scalar(call)
    if scalar is None:
        return ""
    return (f"a {'/'.join(low)} call with the float argument {scalar!r}: libraries round it "
            "to the low dtype or keep it wider, the float64 reference keeps it whole, and "
            "the input nudges do not move it; a result at the edge of that rounding "
            "cannot be judged")


def within_low_evaluation(case: ApiCase, verdict: Verdict) -> bool:
    """Every disagreeing element of a case with float16/bfloat16 inputs is within what
    computing in the low dtype itself may cost (``tolerances.low_evaluation_limit``)."""
    limit = low_evaluation_limit(getattr(case, "tensors", ()))
    pairs = disagreements(verdict)
    if not limit or not pairs:
        return False
    with np.errstate(invalid="ignore"):
        return all(bool(np.all(np.abs(a - e) <= limit)) for a, e in pairs)


def _low_precision_evaluation(case: ApiCase, verdict: Verdict) -> str:
    """Why a float16/bfloat16 result a few roundings of its largest input off the
    float64 reference cannot be judged ("" when it can): the library computed in the low
    dtype, where the result cancels (``layer_norm`` of one bfloat16 element: -1.3e-05
    for 0, its two terms 462 each), which libraries do not promise to avoid. The dtype
    oracle leaves such results alone for the same reason."""
    if getattr(case, "kind", "api") != "api" or verdict.symptom != "numeric":
        return ""
    if not within_low_evaluation(case, verdict):
        return ""
    return ("a low-precision result within a few roundings of its largest input: "
            "computed in float16/bfloat16 itself, where the result cancels, it may lose "
            "that much; libraries do not promise a wider evaluation")


def _moved_bins(case: ApiCase, verdict: Verdict) -> str:
    """Why counts off the float64 reference cannot be judged ("" when they can): every
    output that disagrees holds whole numbers with the reference's total, so values
    moved between neighbouring bins, and the inputs are narrower than float64, in which
    a bin edge is computed. ``jnp.histogram`` of the float32 value -0.3926 in two bins
    counts it in the first, float64 in the second: the middle edge, x - 0.5 + 0.5,
    rounds to one ulp above x in float32."""
    narrow = sorted({t.dtype for t in getattr(case, "tensors", ())
                     if t.dtype in ("float16", "bfloat16", "float32")})
    if not narrow or not verdict.bad:
        return ""
    off = [(a, e) for a, e, bad in zip(verdict.actual, verdict.expected, verdict.bad,
                                       strict=True) if bad.shape == a.shape and bad.any()]
    if not off or not all(moved_counts(a, e) for a, e in off):
        return ""
    return (f"counts moved between bins, the total kept: a value at a bin edge, which "
            f"{'/'.join(narrow)} rounds differently from float64, lands in the neighbouring "
            "bin")


def _low_precision_model(case: ApiCase, dtype: str) -> str:
    """Why a model (not a single op) in float16/bfloat16 cannot be judged against the
    float64 reference ("" when it can). The tolerance is per operation; through several
    layers the rounding of an 8- or 11-bit mantissa accumulates past it, and libraries
    differ in where they upcast (torch normalises bfloat16 in float32, a Keras/JAX
    LayerNorm stays in bfloat16), so a deviation says nothing about a bug: a jax
    bfloat16 Tanh-Sigmoid-MaxPool-LayerNorm-ReLU model was once reported as a ReLU
    wrong result. The same model in float32 is the judge of that model's layers."""
    if getattr(case, "kind", "") != "graph" or dtype not in LOW_PRECISION:
        return ""
    return (f"a {dtype} model: rounding accumulates through its layers past the per-operation "
            "tolerance, and libraries upcast in different places; the float64 reference "
            "cannot tell a bug from accumulated rounding (judge the float32 model)")


def _nan_handling(case: ApiCase, verdict: Verdict) -> bool:
    """A NaN input, and NaN on one side only of a disagreeing element: how an op treats
    NaN, which no rounding explains (an ORT ReduceMax that drops NaN in a float16 model
    is the same defect as in a float32 one, not accumulated rounding)."""
    if "nan" not in input_specials(case):
        return False
    for actual, expected in disagreements(verdict):
        if actual.dtype.kind in "fc" and bool(np.any(np.isnan(actual) != np.isnan(expected))):
            return True
    return False


def _rounding_budget(case: ApiCase) -> int:
    """How many per-operation tolerances a model's rounding can add up to: one per
    node, and at least two."""
    return max(2, len(getattr(getattr(case, "graph", None), "nodes", ())))


def model_rounding(case: ApiCase, o: Outcome, verdict: Verdict) -> bool:
    """A model whose numbers are off by no more than its layers' rounding can make: at
    most one per-operation tolerance per node of the graph (``ratio``, the error over
    that tolerance, at most the node count). The tolerance is per operation, and each
    layer rounds; libraries upcast and order their sums in different places, so such a
    deviation says nothing.
    - float16/bfloat16: with the model's demotion alone, a torch-vs-ORT campaign of
      synthesized graphs filed a dozen of them a minute, one per layer kind, each
      1.05-1.9 tolerances off;
    - float32 too: ORT's ReduceSum of 2,770 values that cancel to -100.6 was filed at
      1.14 tolerances off (1.5 units in the last place of the sum of their magnitudes,
      what any float32 accumulation order can give).
    A larger deviation, a NaN or an infinity is judged (and demoted) as before."""
    if getattr(case, "kind", "") != "graph" or verdict.symptom != "numeric" or verdict.rules:
        return False
    dtype = o.outputs[0].dtype if o.outputs else ""
    if dtype not in FLOAT_DTYPES:
        return False
    finite = all(bool(np.all(np.isfinite(a)) and np.all(np.isfinite(e)))
                 for a, e in disagreements(verdict))
    return finite and verdict.ratio <= _rounding_budget(case)


def _only_reference_nan(case: ApiCase, verdict: Verdict) -> bool:
    """Every disagreeing element is NaN in the reference and a number (finite or
    infinite) in the guilty backend, and no input holds NaN. Such a NaN is made by the
    reference's own arithmetic on infinities (``solve`` with an infinite right-hand
    side, ``floordiv(-inf, 1)``, a series at a huge argument): the library that returns
    the limit is as likely right, so the report is demoted, never filed as its bug."""
    if "nan" in input_specials(case):
        return False
    pairs = disagreements(verdict)
    return bool(pairs) and all(
        a.dtype.kind in "fc" and bool(np.all(np.isnan(e) & ~np.isnan(a))) for a, e in pairs)


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
