"""The expectation of a reproducer for cases with tensors (API calls and models).

Shared by the api and graph kinds: both judge outputs against the same float64 reference
the differential oracle used, with the same per-element allowance.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dlfuzz.cases import ApiCase, Expectation, Finding, Outcome
from dlfuzz.oracles.canonical import modes_for, spectrum_floor
from dlfuzz.oracles.compare import round_to
from dlfuzz.oracles.tolerances import LOW_PRECISION, reference_resolution, tolerance_for

# The symptoms where the process, not the call, failed: their reproducers check that it
# survives. Not "oom": a huge allocation often shows as the library's MemoryError (or
# RESOURCE_EXHAUSTED) outside the worker's limits, so there the exception is the bug.
PROCESS_FAILURES = ("crash", "timeout")


def symptom_expectation(finding: Finding, case: Any, outcomes: dict[str, Outcome],
                        judge: Any, reference_backend: str = "") -> Expectation:
    """What a reproducer of a case with tensors checks, from the finding's symptom.

    A boundary finding's input must be rejected, a nondeterministic one's result must
    repeat; a crash or hang must not happen, where a clean exception is
    as good a fix as a result (the input may be one the library rightly refuses: a rank
    outside its bound, an integer extreme); a numeric, NaN or shape finding's outputs
    must lie within the per-element allowance of the float64 reference ``judge`` (an
    ``oracles.reference.Judge``) computes, which is the oracle's own judgement; anything
    else must simply run.
    ``reference_backend``: the one backend whose float64 result is the reference (a
    gradient backed by its finite differences, where no other reference library has
    the call).
    """
    if finding.symptom == "boundary":
        return Expectation("rejects", note=finding.message)
    if finding.symptom == "nondeterministic":
        return Expectation("repeatable", note=finding.message)
    if finding.symptom in PROCESS_FAILURES:
        return Expectation("survives", note=finding.message)
    if finding.symptom not in ("numeric", "nan", "shape"):
        return Expectation("runs", note=finding.message)
    if finding.oracle == "dtype":  # judged against the same library in float64
        ref = judge.own_references([(case, finding.guilty_backend)])[0]
    elif reference_backend:
        ref = judge.own_references([(case, reference_backend)])[0]
    else:
        ref = judge.reference(case, outcomes)
    guilty = outcomes.get(finding.guilty_backend)
    if ref is None or guilty is None or not guilty.ok:
        return Expectation("runs", note=finding.message)
    expected, allowed = [], []
    outs = [t.to_numpy() for t in guilty.outputs]
    floors: dict[tuple[int, ...], float] = {}  # per output shape (thousands of outputs)
    modes = modes_for(case) if isinstance(case, ApiCase) else {}
    # Where an IEEE rule fixes an element, the rule's value is what the oracle expected.
    for i, r in enumerate(judge.expected_outputs(case, finding.guilty_backend, ref)):
        like = outs[i] if i < len(outs) and outs[i].shape == r.shape else r
        e = round_to(r, like)
        tol = tolerance_for(like.dtype.name)
        wide = np.abs(e.astype(np.complex128)) if e.dtype.kind == "c" else \
            np.abs(e.astype(np.float64))
        with np.errstate(invalid="ignore"):
            w = tol.atol + tol.rtol * np.where(np.isfinite(wide), wide, 0.0)
        if ref.sensitivity is not None and ref.sensitivity[i].shape == w.shape:
            w = w + judge.settings.sensitivity_factor * np.where(
                np.isfinite(ref.sensitivity[i]), ref.sensitivity[i], 0.0)
        if ref.method != "vote":  # what the float64 reference cannot resolve (as judged)
            if w.shape not in floors:
                floors[w.shape] = reference_resolution(getattr(case, "tensors", ()), w.shape)
            w = w + floors[w.shape]
        if modes:  # what the dtype promises a spectrum (as judged)
            w = w + spectrum_floor(case, len(outs), i, r, like.dtype.name, modes)
        if finding.oracle == "dtype" and like.dtype.name not in LOW_PRECISION:
            w = np.full(w.shape, np.inf)  # the dtype oracle judged low-precision outputs only
        expected.append(e)
        allowed.append(w.astype(np.float64))
    source = (f"float64 result of {ref.libraries[0]}, backed by its finite differences"
              if reference_backend else
              f"float64 result of the same call in {ref.libraries[0]}"
              if ref.method == "own float64" else
              f"float64 result agreed by {', '.join(ref.libraries)} ({ref.method})")
    note = (f"EXPECTED: {source}; ALLOWED: per-element dtype tolerance + input-rounding "
            "sensitivity")
    return Expectation("values", tuple(expected), tuple(allowed), note)
