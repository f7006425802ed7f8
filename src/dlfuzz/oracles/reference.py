"""Who is wrong: a float64 reference agreed on by independent libraries.

When backends disagree on a case, the case is re-run with its floating inputs upcast to
float64 (exactly: every float16/bfloat16/float32 value is a float64 value) on every eager
reference library at hand, and twice more with those inputs nudged by one rounding of
their original dtype. Two or more libraries whose float64 results agree form the
reference; the nudged runs measure how much the true result can move under the rounding
any implementation of the original dtype must do (the sensitivity). A backend is guilty
when it is further from the reference than its dtype's tolerance plus that sensitivity,
and further than its same-dtype peers by a clear margin. Without an agreeing reference,
the backends vote (LEMON): a clear majority of libraries outvotes the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from dlfuzz.cases import COMPLEX_DTYPES, DTYPES, FLOAT_DTYPES, ApiCase, Outcome, Tensor, kind_of
from dlfuzz.oracles import ieee
from dlfuzz.oracles.canonical import canonical_outcomes, modes_for, spectrum_floor
from dlfuzz.oracles.compare import (
    Deviation,
    agree,
    bad_elements,
    deviation,
    round_to,
    structure,
)
from dlfuzz.oracles.discrepancy import Discrepancy, first_discrepancy
from dlfuzz.oracles.tolerances import (
    Tolerance,
    as_comparable,
    epsilon,
    reference_resolution,
    tolerance_for,
)

REFERENCE_PREFERENCE = ("numpy", "jax", "torch", "tf")
Runner = Callable[[Sequence[ApiCase], Sequence[str]], list[dict[str, Outcome]]]


@dataclass(frozen=True)
class JudgeSettings:
    """Named, documented knobs of the judge (see docs/oracles.md)."""

    sensitivity_factor: float = 4.0  # allowed += factor * observed sensitivity
    outlier_factor: float = 10.0  # guilty only if this many times worse than same-dtype peers
    consensus_rtol: float = 1e-6  # float64 results of two libraries agree within this
    nudges: int = 2  # nudged reference runs for the sensitivity estimate


@dataclass
class Reference:
    outputs: tuple[np.ndarray, ...]
    libraries: tuple[str, ...]
    sensitivity: tuple[np.ndarray, ...] | None
    method: str  # "float64" | "vote"
    backend_outputs: dict[str, tuple[np.ndarray, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Verdict:
    backend: str
    deviations: tuple[Deviation, ...]
    guilty: bool
    ratio: float
    symptom: str  # numeric | nan | shape
    # Per output: what was expected of this backend (the reference rounded to its dtype,
    # with IEEE-fixed elements put in), where it is off, and what it gave. Empty for
    # shape verdicts.
    expected: tuple[np.ndarray, ...] = ()
    bad: tuple[np.ndarray, ...] = ()
    actual: tuple[np.ndarray, ...] = ()
    # Citations of the IEEE rules that fix some element this backend got wrong.
    rules: tuple[str, ...] = ()
    first: Discrepancy | None = None


def disagreements(verdict: Verdict) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per output with disagreeing elements: (actual, expected) at those elements only,
    widened to float64/complex128 (``as_comparable``). What the oracles' rules about a
    verdict (NaN on one side only, within a rounding budget) look at."""
    out = []
    for actual, expected, bad in zip(verdict.actual, verdict.expected, verdict.bad,
                                     strict=True):
        if bad.shape != actual.shape or not bad.any():
            continue
        out.append((as_comparable(actual[bad]), as_comparable(expected[bad])))
    return out


def upcast(case: ApiCase) -> ApiCase:
    """The case with floating inputs in float64 (complex in complex128)."""
    tensors = []
    for t in case.tensors:
        if t.dtype in FLOAT_DTYPES:
            tensors.append(Tensor.from_numpy(t.to_numpy().astype(np.float64)))
        elif t.dtype in COMPLEX_DTYPES:
            tensors.append(Tensor.from_numpy(t.to_numpy().astype(np.complex128)))
        else:
            tensors.append(t)
    return case.with_tensors(tuple(tensors))


def nudge(case: ApiCase, rng: np.random.Generator) -> ApiCase:
    """Upcast, then move each floating input by up to one epsilon of its own dtype, and
    what the case's kind rounds inside (a model's layers) by one epsilon of the first
    input's dtype (``CaseKind.rounding_nudged``)."""
    inner_eps = epsilon(case.tensors[0].dtype) if case.tensors else 0.0
    tensors = []
    for t in case.tensors:
        eps = epsilon(t.dtype)
        arr = t.to_numpy()
        if eps and arr.size:
            wide = arr.astype(np.complex128 if t.dtype in COMPLEX_DTYPES else np.float64)
            factor = 1.0 + eps * rng.uniform(-1.0, 1.0, size=arr.shape)
            with np.errstate(invalid="ignore", over="ignore"):
                tensors.append(Tensor.from_numpy(wide * factor))
        else:
            tensors.append(upcast(case.with_tensors((t,))).tensors[0])
    return kind_of(case).rounding_nudged(case.with_tensors(tuple(tensors)), inner_eps, rng)


def _outputs(outcome: Outcome) -> tuple[np.ndarray, ...]:
    return tuple(t.to_numpy() for t in outcome.outputs)


def _sensitivity(base: tuple[np.ndarray, ...], nudged: list[tuple[np.ndarray, ...]]
                 ) -> tuple[np.ndarray, ...] | None:
    """Per element, the largest move of the float64 result under the nudges."""
    if not nudged or any(structure(n) != structure(base) for n in nudged):
        return None
    out = []
    for i, b in enumerate(base):
        bb = b.astype(np.complex128 if b.dtype.kind == "c" else np.float64)
        moves = []
        for n in nudged:
            nn = n[i].astype(bb.dtype)
            with np.errstate(invalid="ignore", over="ignore"):
                m = np.abs(nn - bb)
            # A nudge that flips finiteness means the result is unstable here.
            m = np.where(np.isfinite(nn) != np.isfinite(bb), np.inf, m)
            # NaN under every nudge, or the same infinity, is a stable result (inf - inf
            # is NaN, which must not read as "moved without bound").
            m = np.where((np.isnan(nn) & np.isnan(bb)) | (np.isinf(nn) & (nn == bb)), 0.0, m)
            moves.append(np.where(np.isnan(m), np.inf, m))
        out.append(np.max(np.stack(moves), axis=0) if moves else np.zeros(b.shape))
    return tuple(out)


class Judge:
    """Computes references (lazily, only on disagreement) and verdicts per backend."""

    def __init__(self, runner: Runner, eager_backends: Sequence[str],
                 library_of: dict[str, str], settings: JudgeSettings | None = None,
                 seed: int = 0, preference: Sequence[str] = REFERENCE_PREFERENCE,
                 first: int = 0) -> None:
        """``preference`` orders the reference libraries (the cheapest first, for models);
        with ``first`` > 0 only that many reference backends run a suspicious case at
        first, and the rest only for a case they leave without consensus (a torch bug
        that its float64 run shares leaves torch and TF apart; JAX then settles it)."""
        self.runner = runner
        self.library_of = library_of
        order = {lib: i for i, lib in enumerate(preference)}
        self.reference_backends = sorted(
            (b for b in eager_backends if library_of.get(b) in order),
            key=lambda b: order[library_of[b]])
        self.first = first
        self.settings = settings or JudgeSettings()
        self.rng = np.random.default_rng(seed)
        self.reference_runs = 0
        self.tie_breaks = 0  # cases the later reference backends were run for

    # ---- reference -----------------------------------------------------------------
    def reference(self, case: ApiCase, outcomes: dict[str, Outcome]) -> Reference | None:
        return self.references([(case, outcomes)])[0]

    def references(self, items: Sequence[tuple[ApiCase, dict[str, Outcome]]]
                   ) -> list[Reference | None]:
        """References for many cases with one round trip to the workers."""
        variants: list[ApiCase] = []
        spans: list[tuple[int, int, list[str]]] = []
        for case, _ in items:
            backends = [b for b in self.reference_backends
                        if case.call_for(self.library_of[b]) is not None]
            start = len(variants)
            if len(backends) >= 2:
                variants.extend(self._wide_runs(case))
            spans.append((start, len(variants), backends))
        early = self.reference_backends[:self.first] if self.first else self.reference_backends
        runs = self._run(variants, early)
        refs = [self._consensus(runs[start:stop], [b for b in backends if b in early])
                if stop > start else None for start, stop, backends in spans]
        later = [b for b in self.reference_backends if b not in early]
        # Cases the first backends left without consensus, where a later one can run.
        open_ = [k for k, (ref, (start, stop, backends)) in enumerate(zip(refs, spans,
                                                                           strict=True))
                 if ref is None and stop > start and any(b in later for b in backends)]
        if open_:
            self.tie_breaks += len(open_)
            again = self._run([v for k in open_ for v in variants[spans[k][0]:spans[k][1]]],
                              later)
            at = 0
            for k in open_:
                start, stop, backends = spans[k]
                for j in range(start, stop):
                    runs[j] = {**runs[j], **again[at]}
                    at += 1
                refs[k] = self._consensus(runs[start:stop], backends)
        out: list[Reference | None] = []
        for (_case, outcomes), ref in zip(items, refs, strict=True):
            out.append(ref if ref is not None else self._vote(outcomes))
        return out

    def _run(self, variants: list[ApiCase], backends: Sequence[str]
             ) -> list[dict[str, Outcome]]:
        """The variants on ``backends``, outputs in canonical form (unordered outputs as
        the differential oracle has them)."""
        if not variants:
            return []
        runs = self.runner(variants, list(backends))
        self.reference_runs += len(variants)
        return [canonical_outcomes(v, r) for v, r in zip(variants, runs, strict=True)]

    def _wide_runs(self, case: ApiCase, nudges: int | None = None) -> list[ApiCase]:
        """The case upcast to float64, then ``nudges`` copies nudged by one rounding of
        their dtype (the sensitivity): what a float64 reference is computed from."""
        count = self.settings.nudges if nudges is None else nudges
        return [upcast(case)] + [nudge(case, self.rng) for _ in range(count)]

    def own_references(self, requests: Sequence[tuple[ApiCase, str]], with_nudges: bool = True
                       ) -> list[Reference | None]:
        """Per (case, backend): the float64 reference that backend's own library computes
        (the case upcast, plus the nudged runs for the sensitivity), one round trip per
        backend. What the dtype oracle judges a float16/bfloat16 result against: the same
        implementation in the wide dtype, for APIs no other library has.

        ``with_nudges`` False: the upcast run alone, with no sensitivity (a reference that
        allows only the dtype's tolerance). The sensitivity only ever widens what a
        verdict allows, so a result within that reference needs no nudged runs."""
        out: list[Reference | None] = [None] * len(requests)
        per_backend: dict[str, list[int]] = {}
        for i, (_case, backend) in enumerate(requests):
            per_backend.setdefault(backend, []).append(i)
        nudges = self.settings.nudges if with_nudges else 0
        width = 1 + nudges
        for backend, index in per_backend.items():
            variants: list[ApiCase] = []
            for i in index:
                variants.extend(self._wide_runs(requests[i][0], nudges))
            runs = self.runner(variants, [backend])
            runs = [canonical_outcomes(v, r) for v, r in zip(variants, runs, strict=True)]
            self.reference_runs += len(variants)
            for k, i in enumerate(index):
                group = runs[k * width:(k + 1) * width]
                first = group[0].get(backend)
                if first is None or not first.ok:
                    continue
                base = _outputs(first)
                nudged = [_outputs(r[backend]) for r in group[1:] if backend in r
                          and r[backend].ok]
                out[i] = Reference(base, (self.library_of.get(backend, backend),),
                                   _sensitivity(base, nudged), "own float64", {backend: base})
        return out

    def _consensus(self, runs: list[dict[str, Outcome]], backends: list[str]
                   ) -> Reference | None:
        base: dict[str, tuple[np.ndarray, ...]] = {}
        sens: dict[str, tuple[np.ndarray, ...] | None] = {}
        for b in backends:
            first = runs[0].get(b)
            if first is None or not first.ok:
                continue
            base[b] = _outputs(first)
            nudged = [_outputs(r[b]) for r in runs[1:] if b in r and r[b].ok]
            sens[b] = _sensitivity(base[b], nudged)
        tol = Tolerance(self.settings.consensus_rtol, 1e-12)
        names = list(base)
        libraries = {self.library_of[b] for b in names}
        best: list[str] = []
        for a in names:
            agreeing = [a] + [b for b in names if b != a and self.library_of[b] !=
                              self.library_of[a] and
                              agree(base[a], base[b], tol, _max_sens(sens.get(a), sens.get(b)))]
            if len(agreeing) > len(best):
                best = agreeing
        # A strict majority of the libraries that computed the case, and at least two:
        # a 2-2 split says the semantics differ, not who is wrong.
        if len(best) >= 2 and 2 * len(best) > len(libraries):
            a = best[0]
            return Reference(base[a], tuple(self.library_of[x] for x in best), sens.get(a),
                             "float64", base)
        return None

    def _vote(self, outcomes: dict[str, Outcome]) -> Reference | None:
        """LEMON's voting: the output a strict majority of distinct libraries agree on."""
        ok = {b: _outputs(o) for b, o in outcomes.items() if o.ok}
        libraries = {self.library_of.get(b, b) for b in ok}
        for out in ok.values():
            agreeing = {self.library_of.get(x, x) for x, other in ok.items()
                        if agree(out, other)}
            if len(agreeing) >= 2 and len(agreeing) * 2 > len(libraries):
                return Reference(out, tuple(sorted(agreeing)), None, "vote", ok)
        return None

    # ---- verdicts ------------------------------------------------------------------
    def _fixed(self, case: ApiCase | None, backend: str, ref: Reference) -> ieee.Fixed | None:
        """Where IEEE rules fix the (single, floating) output of ``backend``'s call."""
        if case is None or len(ref.outputs) != 1 or ref.outputs[0].dtype.kind != "f":
            return None
        return ieee.fixed_results(case, self.library_of.get(backend, backend),
                                  ref.outputs[0].shape)

    def expected_outputs(self, case: ApiCase, backend: str, ref: Reference
                         ) -> tuple[np.ndarray, ...]:
        """The reference as ``backend`` is judged against it: elements an IEEE rule fixes
        hold the rule's value (what a reproducer must check too)."""
        fixed = self._fixed(case, backend, ref)
        if fixed is None:
            return ref.outputs
        return (np.where(fixed.mask, fixed.values, ref.outputs[0]),)

    def verdicts(self, outcomes: dict[str, Outcome], ref: Reference,
                 case: ApiCase | None = None) -> list[Verdict]:
        """Per backend: how far from the reference, and whether guilty.

        With ``case``, elements whose result an IEEE rule fixes (``ieee.py``) are judged
        against the rule's value instead of the float64 re-run, for every backend.
        """
        raw: dict[str, Verdict] = {}
        inputs = getattr(case, "tensors", ()) if case is not None else ()
        # Per case, not per output: a call may return thousands of outputs (unbind
        # along a stretched axis: 33,093), and the floor reads every input.
        floors: dict[tuple[int, ...], float] = {}
        modes = modes_for(case) if isinstance(case, ApiCase) else {}
        for b, o in outcomes.items():
            if not o.ok:
                continue
            outs = _in_model_dtype(_outputs(o), case)
            if structure(outs) != structure(ref.outputs):
                raw[b] = Verdict(b, (), False, float("inf"), "shape")
                continue
            devs, expecteds, masks, tols = [], [], [], []
            rules: list[str] = []
            fixed = self._fixed(case, b, ref)
            for i, (x, r) in enumerate(zip(outs, ref.outputs, strict=True)):
                s = None
                if ref.sensitivity is not None:
                    s = ref.sensitivity[i] * self.settings.sensitivity_factor
                if fixed is not None:
                    r = np.where(fixed.mask, fixed.values, r)
                    if s is not None:
                        s = np.where(fixed.mask, 0.0, s)  # a rule's value is exact
                # What the float64 reference itself cannot resolve there.
                if inputs and x.shape not in floors:
                    floors[x.shape] = reference_resolution(inputs, x.shape)
                floor = floors.get(x.shape, 0.0)
                if floor and ref.method != "vote":
                    s = np.full(x.shape, floor) if s is None else s + floor
                # What the output's dtype promises a spectrum (eigen/singular values).
                spectral = spectrum_floor(case, len(outs), i, r, _dtype_name(x), modes) \
                    if modes and isinstance(case, ApiCase) else 0.0
                if np.any(spectral):
                    s = np.array(spectral) if s is None else s + spectral
                expected = round_to(r, x)
                if _overflows(r, expected):
                    # The true result leaves the output dtype's range here: intermediate
                    # overflow (inf * 0 -> NaN downstream, say) is the dtype's limit, not
                    # a bug, so this output promises nothing.
                    s = np.full(x.shape, np.inf)
                tol = tolerance_for(_dtype_name(x))
                devs.append(deviation(x, expected, tol, s))
                mask = bad_elements(x, expected, tol, s)
                if fixed is not None:
                    for k in sorted({int(w) for w in fixed.which[mask & fixed.mask]}):
                        if fixed.citations[k] not in rules:
                            rules.append(fixed.citations[k])
                expecteds.append(expected)
                masks.append(mask)
                tols.append(tol)
            ratio = max((d.ratio for d in devs), default=0.0)
            symptom = "nan" if any(d.non_finite for d in devs) else "numeric"
            first = first_discrepancy(outs, tuple(expecteds), tuple(masks), tuple(devs),
                                      tuple(tols))
            raw[b] = Verdict(b, tuple(devs), False, ratio, symptom, tuple(expecteds),
                             tuple(masks), outs, tuple(rules), first)
        out = []
        for b, v in raw.items():
            guilty = v.ratio > 1.0
            if guilty and v.symptom != "shape":
                # Peers are backends of other libraries with the same output dtype: a
                # compiled mode shares its eager sibling's kernels, so the sibling is no
                # independent evidence that the dtype cannot do better.
                dtype = _out_dtype(v)
                lib = self.library_of.get(b, b)
                peers = [p.ratio for p in raw.values()
                         if p.backend != b and self.library_of.get(p.backend, p.backend) != lib
                         and _out_dtype(p) == dtype]
                if peers:
                    guilty = v.ratio > self.settings.outlier_factor * max(
                        float(np.median(peers)), 1e-12)
            out.append(replace(v, guilty=guilty))
        return out


def _overflows(reference: np.ndarray, rounded: np.ndarray) -> bool:
    """Finite float64 values that become infinite in the output's dtype."""
    if rounded.dtype.kind not in "fc" and rounded.dtype.name != "bfloat16":
        return False
    with np.errstate(invalid="ignore"):
        wide = rounded.astype(np.complex128 if rounded.dtype.kind == "c" else np.float64)
        return bool(np.any(np.isinf(wide) & np.isfinite(reference)))


def _max_sens(a: tuple[np.ndarray, ...] | None, b: tuple[np.ndarray, ...] | None
              ) -> tuple[np.ndarray, ...] | None:
    if a is None or b is None:
        return a if b is None else b
    return tuple(np.maximum(x, y) if x.shape == y.shape else x for x, y in zip(a, b, strict=True))


def _dtype_name(array: np.ndarray) -> str:
    return array.dtype.name


def _out_dtype(verdict: Verdict) -> str:
    """The output dtypes a verdict judged (after ``_in_model_dtype``)."""
    return ",".join(_dtype_name(a) for a in verdict.actual)


def _in_model_dtype(outputs: tuple[np.ndarray, ...], case: object
                    ) -> tuple[np.ndarray, ...]:
    """A model's outputs as the model's own floating dtype holds them.

    A backend that hands back a wider float than the model's dtype (float64 out of a
    bfloat16 graph, as TF's NumPy-style promotion can do) still computed the model's
    intermediates in the narrow dtype: judged in the wide dtype, ordinary bfloat16
    rounding reads as a float64 error thousands of tolerances off. Narrowing it puts it
    under the model dtype's tolerance, beside its peers. API cases have no model dtype
    and are judged in the dtype they return.
    """
    model_dtype = getattr(getattr(case, "graph", None), "dtype", None)
    if model_dtype not in FLOAT_DTYPES:
        return outputs
    target = np.dtype(DTYPES[model_dtype])
    out = []
    for a in outputs:
        wider = (a.dtype.kind == "f" and a.dtype != target
                 and a.dtype.itemsize > target.itemsize)
        out.append(a.astype(target) if wider else a)
    return tuple(out)
