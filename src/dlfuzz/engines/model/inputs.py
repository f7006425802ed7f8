"""Input sets for models: three profiles, and the rescaling search that keeps them finite.

Standard-normal inputs exercise one decade of magnitudes. Kernels go wrong elsewhere
too: at large magnitudes (float16 accumulation, saturating activations), at tiny ones
(subnormals), and at IEEE special values. So each input set is drawn from a profile:

* ``normal``: standard normal values, the bulk;
* ``wide``: standard normal times ``10**u``, ``u`` uniform in ``WIDE_DECADES`` (clipped
  so the largest input stays a thousandth of the dtype's range);
* ``special``: a normal set with one to three elements replaced by NaN, ±Inf, ±0 or the
  dtype's smallest subnormal: their own share, judged under the special-value severity
  rules like any input that holds them.

A model is only a test where its outputs are numbers: an output that overflows to Inf or
turns NaN compares nothing (every library agrees on Inf) or compares evaluation orders
(Inf - Inf). The search (the model engine's ``feedback``) re-runs a ``normal`` or
``wide`` set whose outputs hold NaN or Inf with its inputs divided by ``RESCALE``, up to
``MAX_RESCALES`` times: the black-box counterpart of NNSmith's gradient search, for an
op catalog without domain restrictions (no log or sqrt), where overflow is the one way a
finite input gives a non-finite output.

Integer graphs (int32, int64) take whole numbers in the same three profiles:
``normal`` uniform in -10..10, ``wide`` the same times ``10**u`` (``u`` uniform in
``INT_WIDE_DECADES``, so up to about ±1,000; for int64, half of them around int32's
edge, up to about ±2.8e9) and ``special`` a normal set with 0, -1 or 1
put in. Overflow is not avoided outright (three Squares in a row take 10 past int32), and
need not be: every library and the reference judge run an integer graph in its own dtype
(``oracles.reference.upcast`` widens floats only), where a product that leaves the range
wraps the same way everywhere, and integer outputs are compared exactly. The bounds keep
the bulk of the values meaningful: a normal input needs two Squares or a product of four
values to pass 10^4, three Squares to pass int32. Integer outputs are always "finite", so
the rescaling search never starts for them.

Bool graphs take random bools: true with probability 1/2 (``normal``), with a drawn
probability (``wide``: mostly true or mostly false), or with one input all true or all
false (``special``).
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np

from dlfuzz.cases import DTYPES
from dlfuzz.ir.graph import BOOL_GRAPH_DTYPES, INT_GRAPH_DTYPES, Graph

# Profile -> share of input sets.
PROFILES: tuple[tuple[str, float], ...] = (("normal", 0.6), ("wide", 0.3), ("special", 0.1))
WIDE_DECADES = (-3.0, 3.0)
# The largest wide input, as a share of the dtype's largest finite value: a layer or two
# of sums must still fit.
WIDE_HEADROOM = 1 / 16
RESCALE = 8.0
MAX_RESCALES = 4
SPECIAL_ELEMENTS = (1, 3)  # how many elements a special set replaces, inclusive
# Integer graphs: the normal range (inclusive), the wide scale's decades, the specials.
INT_NORMAL = (-10, 10)
INT_WIDE_DECADES = (0.0, 2.0)
INT_SPECIALS = (0, -1, 1)
BOOL_WIDE_P = (0.02, 0.98)  # a wide bool set's share of true elements is drawn in this
# int64: this share of the wide sets sits around int32's edge instead (normal values
# times ``INT32_EDGE_STEP`` plus an offset below it: up to about 2.8e9, under the square
# root of int64's range, so a square still fits). An int64 kernel that compares or
# computes in int32 shows only there: ONNX Runtime 1.31's int64 Max, Min, Clip and
# ReduceMax, and Keras' torch backend's int64 maximum/minimum, give int32-truncated
# answers on such values and right ones on small values.
INT64_EDGE_SHARE = 0.5
INT32_EDGE_STEP = 1 << 28


@dataclass(frozen=True)
class InputSet:
    """One input set of a model and how it was drawn."""

    arrays: tuple[np.ndarray, ...]
    profile: str  # normal | wide | special
    scale: float = 1.0  # what the standard-normal values were multiplied by

    @property
    def label(self) -> str:
        """What a report shows of it: the profile, and the scale where it is not 1."""
        return self.profile if self.scale == 1.0 else f"{self.profile} x{self.scale:.3g}"


def _finfo(dtype: str) -> ml_dtypes.finfo:
    return ml_dtypes.finfo(DTYPES[dtype])  # numpy's finfo lacks bfloat16


def special_values(dtype: str) -> tuple[float, ...]:
    """The IEEE specials a ``special`` set draws from, for ``dtype``. Not the dtype's
    largest finite value: through a model's layers it overflows a sum or a product in
    one library and not in another that accumulates wider (a float16 ORT GRU fed 65504,
    a float32 torch LayerNorm of 3.4e38), the dtype's limit rather than a bug; the API
    engine tests the extremes op by op, where the true result is known to fit.

    An integer dtype's specials are 0, -1 and 1 (the values where Abs, ReLU, Square and
    products turn), not INT_MIN/INT_MAX: those overflow at the first Abs, Square or sum
    (abs(INT_MIN) is INT_MIN), which through a model's layers tests the dtype's limit
    rather than a layer, and the API engine tests the extremes op by op."""
    if dtype in INT_GRAPH_DTYPES:
        return tuple(float(v) for v in INT_SPECIALS)
    return (float("nan"), float("inf"), float("-inf"), 0.0, -0.0,
            float(_finfo(dtype).smallest_subnormal))


def draw_input_set(graph: Graph, rng: np.random.Generator, profile: str | None = None
                   ) -> InputSet:
    """One input set for ``graph``: ``profile`` or one drawn by ``PROFILES``' shares."""
    if profile is None:
        shares = np.array([share for _, share in PROFILES])
        profile = PROFILES[int(rng.choice(len(PROFILES), p=shares / shares.sum()))][0]
    dt = DTYPES[graph.dtype]
    if graph.dtype in INT_GRAPH_DTYPES:
        return _int_input_set(graph, rng, profile)
    if graph.dtype in BOOL_GRAPH_DTYPES:
        return _bool_input_set(graph, rng, profile)
    normal = [rng.standard_normal(t.shape) for t in graph.inputs]
    if profile == "wide":
        scale = float(10.0 ** rng.uniform(*WIDE_DECADES))
        largest = max((float(np.abs(a).max()) for a in normal if a.size), default=1.0)
        scale = min(scale, WIDE_HEADROOM * float(_finfo(graph.dtype).max) / max(largest, 1.0))
        return InputSet(tuple((a * scale).astype(dt) for a in normal), "wide", scale)
    return _normal_or_special([a.astype(dt) for a in normal], graph.dtype, profile, rng)


def _int_input_set(graph: Graph, rng: np.random.Generator, profile: str) -> InputSet:
    """An integer graph's set: whole numbers in ``INT_NORMAL``, times a wide scale (the
    product rounded to an integer; for int64 half the time around int32's edge) or with
    ``INT_SPECIALS`` put in."""
    dt = DTYPES[graph.dtype]
    low, high = INT_NORMAL
    normal = [rng.integers(low, high + 1, size=t.shape) for t in graph.inputs]
    if profile == "wide" and graph.dtype == "int64" and rng.random() < INT64_EDGE_SHARE:
        step = INT32_EDGE_STEP
        return InputSet(tuple((a * step + rng.integers(-step // 2, step // 2, size=a.shape))
                              .astype(dt) for a in normal), "wide", float(step))
    if profile == "wide":
        scale = float(10.0 ** rng.uniform(*INT_WIDE_DECADES))
        return InputSet(tuple(np.rint(a * scale).astype(dt) for a in normal), "wide", scale)
    return _normal_or_special([a.astype(dt) for a in normal], graph.dtype, profile, rng)


def _bool_input_set(graph: Graph, rng: np.random.Generator, profile: str) -> InputSet:
    """A bool graph's set: each element true with probability 1/2 (``normal``), with a
    probability ``p`` drawn uniformly in ``BOOL_WIDE_P`` (``wide``, its scale), or a
    normal set with one input all true or all false (``special``)."""
    p = float(rng.uniform(*BOOL_WIDE_P)) if profile == "wide" else 0.5
    arrays = [rng.random(t.shape) < p for t in graph.inputs]
    if profile == "special":
        which = int(rng.integers(len(arrays)))
        arrays[which] = np.full(arrays[which].shape, bool(rng.integers(2)))
    elif profile not in ("normal", "wide"):
        raise ValueError(f"unknown input profile {profile!r}")
    return InputSet(tuple(arrays), profile, p if profile == "wide" else 1.0)


def _normal_or_special(arrays: list[np.ndarray], dtype: str, profile: str,
                       rng: np.random.Generator) -> InputSet:
    """A ``normal`` set as it is, a ``special`` one with special values put in."""
    if profile == "special":
        arrays = _with_specials(arrays, dtype, rng)
    elif profile != "normal":
        raise ValueError(f"unknown input profile {profile!r}")
    return InputSet(tuple(arrays), profile)


def _with_specials(arrays: list[np.ndarray], dtype: str, rng: np.random.Generator
                   ) -> list[np.ndarray]:
    """``arrays`` with a few elements of one input replaced by special values."""
    sized = [i for i, a in enumerate(arrays) if a.size]
    if not sized:
        return arrays
    which = sized[int(rng.integers(len(sized)))]
    target = arrays[which].copy()
    flat = target.reshape(-1)
    count = min(int(rng.integers(SPECIAL_ELEMENTS[0], SPECIAL_ELEMENTS[1] + 1)), flat.size)
    values = special_values(dtype)
    for position in rng.choice(flat.size, count, replace=False):
        flat[int(position)] = values[int(rng.integers(len(values)))]
    out = list(arrays)
    out[which] = target
    return out


def rescaled(inputs: InputSet) -> InputSet:
    """The set with its values divided by ``RESCALE``: the next step of the search (an
    integer set, which the search never needs, is divided and rounded toward zero)."""
    arrays = tuple((a.astype(np.float64) / RESCALE).astype(a.dtype) for a in inputs.arrays)
    return InputSet(arrays, inputs.profile, inputs.scale / RESCALE)


def all_finite(arrays: tuple[np.ndarray, ...] | list[np.ndarray]) -> bool:
    """Whether every floating element is a number (integer arrays always are)."""
    for a in arrays:
        kind = "f" if a.dtype.name == "bfloat16" else a.dtype.kind
        if kind in "fc" and not np.all(np.isfinite(a.astype(np.float64)
                                                   if kind == "f" else a)):
            return False
    return True
