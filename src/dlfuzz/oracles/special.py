"""Whether a disagreement involves IEEE special values, in a short phrase.

The shared ``special_values`` detail: non-empty when the case's inputs hold NaN or
infinities (or a -0 where the disagreement is about the sign of zero or infinities),
when the expected value is NaN/inf at a disagreeing element, when the result leaves the
output dtype's range, or when an input reaches the top of its dtype's range (beyond
1/tiny: its reciprocal is subnormal, which XLA and TensorFlow flush to zero by design, so
``x / y`` computed as ``x * (1/y)`` gives -0 or NaN for ``y`` near the largest float). Such a finding is a special-value one, never a wrong result: on
those inputs the float64 re-run is not a trustworthy truth unless an IEEE rule
(``ieee.py``) fixes the answer, and then the phrase cites the rule.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from dlfuzz.cases import ApiCase, Finding
from dlfuzz.cases.core import DTYPES, FLOAT_DTYPES


def _wide(a: np.ndarray) -> np.ndarray | None:
    if a.dtype.kind == "c":
        return a.astype(np.complex128)
    if a.dtype.kind == "f" or a.dtype.name == "bfloat16":
        return a.astype(np.float64)
    return None


def input_specials(case: ApiCase) -> list[str]:
    """The special values the case's floating inputs hold, in a fixed order."""
    found: set[str] = set()
    weights = [t for _, t in getattr(case, "weights", ())]  # a model's weights count too
    for t in (*case.tensors, *weights):
        w = _wide(t.to_numpy())
        if w is None or not w.size:
            continue
        parts = [w.real, w.imag] if w.dtype.kind == "c" else [w]
        for p in parts:
            if np.isnan(p).any():
                found.add("nan")
            if np.isposinf(p).any():
                found.add("inf")
            if np.isneginf(p).any():
                found.add("-inf")
            if ((p == 0) & np.signbit(p)).any():
                found.add("-0")
    return [s for s in ("nan", "inf", "-inf", "-0") if s in found]


NAN_MARK = " holding nan"
NAN_HANDLING = "NaN inputs handled differently"


def nan_handling(case: ApiCase, actuals: tuple[np.ndarray, ...],
                 expecteds: tuple[np.ndarray, ...], masks: tuple[np.ndarray, ...]) -> bool:
    """Whether a disagreement is about NaN handling: the inputs hold NaN and no
    infinity, and at some disagreeing element one side is NaN and the other is not
    (torch's ``gammainc(nan, 0)`` is 1 where the reference is NaN). A NaN elsewhere in
    the inputs while the disagreement is between two numbers (a float16 cumsum that
    stalls at 2048) is not: that is another mechanism, which the NaN only sits beside.
    Infinities and NaN together say nothing of which path is wrong."""
    held = input_specials(case)
    if "nan" not in held or "inf" in held or "-inf" in held:
        return False
    return any(bool(np.any(np.isnan(x) != np.isnan(e)))
               for x, e in _disagreeing(actuals, expecteds, masks))


def _disagreeing(actuals: tuple[np.ndarray, ...], expecteds: tuple[np.ndarray, ...],
                 masks: tuple[np.ndarray, ...]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per output with disagreeing elements: (actual, expected) widened, at those
    elements only."""
    out = []
    for x, e, m in zip(actuals, expecteds, masks, strict=True):
        if m.shape != x.shape or not m.any():
            continue
        xw, ew = _wide(x), _wide(e)
        if xw is not None and ew is not None:
            out.append((xw[m], ew[m]))
    return out


def nan_mark(case: ApiCase, actuals: tuple[np.ndarray, ...],
             expecteds: tuple[np.ndarray, ...], masks: tuple[np.ndarray, ...]) -> str:
    """What a numeric finding's signature adds when NaN handling is what differs
    (``nan_handling``): its own mechanism (``triage.root_cause.about_nan_handling``), so
    such a finding must not dedup into one seen on infinite inputs of the same API and
    dtypes."""
    return NAN_MARK if nan_handling(case, actuals, expecteds, masks) else ""


def same_finding(found: Finding, original: Finding) -> bool:
    """Whether ``found`` (on a reduction candidate) is still ``original``: the same
    signature, or the same less the NaN mark when no special value is involved any more.
    Reduction replaces NaN inputs by finite values; a wrong result on ordinary inputs
    behind the NaN is the better report (re-keyed by what the reduced case shows). A
    special-value disagreement left without the NaN (a -0, an overflow) is not: it would
    turn the NaN bug into another mechanism of the same op."""
    if found.signature == original.signature:
        return True
    return (found.signature.replace(NAN_MARK, "") == original.signature.replace(NAN_MARK, "")
            and not found.detail("special_values"))


def _holds(values: np.ndarray) -> list[str]:
    w = _wide(values)
    if w is None or not w.size:
        return []
    out = []
    if np.isnan(w).any():
        out.append("nan")
    if (np.isinf(w.real) & (w.real > 0)).any():
        out.append("inf")
    if (np.isinf(w.real) & (w.real < 0)).any():
        out.append("-inf")
    return out


def range_edge_inputs(case: ApiCase) -> bool:
    """Whether a floating input holds a finite value beyond 1/tiny of its dtype (about
    8.5e37 in float32 and bfloat16, 16384 in float16): the edge of the range, where a
    correct implementation may overflow or flush an intermediate (a reciprocal, a
    square) as its dtype allows. ``jnp.linalg.tensorsolve(3.4e38, -3.4e38)`` gives -0
    rather than -1 for that reason."""
    for t in case.tensors:
        if t.dtype not in FLOAT_DTYPES:
            continue
        w = _wide(t.to_numpy())
        if w is None or not w.size:
            continue
        edge = 1.0 / float(ml_dtypes.finfo(DTYPES[t.dtype]).tiny)
        with np.errstate(invalid="ignore"):
            if bool(np.any(np.isfinite(w) & (np.abs(w) >= edge))):
                return True
    return False


def _max_of(dtype: np.dtype) -> float | None:
    try:
        return float(ml_dtypes.finfo(dtype).max)
    except (TypeError, ValueError):
        return None


def special_phrase(case: ApiCase, actuals: tuple[np.ndarray, ...],
                   expecteds: tuple[np.ndarray, ...], masks: tuple[np.ndarray, ...],
                   rules: tuple[str, ...] = ()) -> str:
    """The ``special_values`` phrase of one guilty backend's disagreement ("" if none)."""
    parts: list[str] = list(rules)
    inputs = input_specials(case)
    # a -0 matters where infinities are involved or both sides are zeros (their sign
    # differs); a finite non-zero value where 0 is expected is an ordinary wrong one
    kinds_differ = any(bool(np.any(~np.isfinite(x) | ~np.isfinite(e) | ((e == 0) & (x == 0))))
                       for x, e in _disagreeing(actuals, expecteds, masks))
    nonzero_inputs = [s for s in inputs if s != "-0"]
    shown = nonzero_inputs + (["-0"] if "-0" in inputs and kinds_differ else [])
    if shown:
        parts.append("inputs hold " + ", ".join(shown))
    held: list[str] = []
    for e, m in zip(expecteds, masks, strict=True):
        if m.shape == e.shape and m.any():
            held += [h for h in _holds(e[m]) if h not in held]
    if held:
        parts.append("reference holds " + ", ".join(held))
    if nan_handling(case, actuals, expecteds, masks):
        parts.append(NAN_HANDLING)
    if range_edge_inputs(case):
        parts.append("inputs reach the top of their dtype's range")
    for x, e, m in zip(actuals, expecteds, masks, strict=True):
        top = _max_of(x.dtype) if (x.dtype.kind == "f" or x.dtype.name == "bfloat16") else None
        ew, xw = _wide(e), _wide(x)
        if top is None or ew is None or xw is None or m.shape != x.shape or not m.any():
            continue
        with np.errstate(invalid="ignore"):
            near = np.isinf(xw[m]) & np.isfinite(ew[m]) & (np.abs(ew[m]) > top / 4)
        if near.any():
            parts.append(f"overflow in {x.dtype.name}")
            break
    return "; ".join(parts)
