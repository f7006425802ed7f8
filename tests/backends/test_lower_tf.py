"""The TensorFlow lowering emits, builds and runs every IR sample, and computes docs/ir.md.

Each sample of ``all_samples`` (plus a few graphs that take the lowering's float64
detours: unequal depthwise strides) is emitted, built with seeded weights and run eagerly
in every dtype. Values are checked against ``REFERENCE``, a numpy implementation of the
IR written here independently of TensorFlow: float64 to ~1e-9 relative, float32 to ~1e-4,
float16/bfloat16 near the float64 value of the same rounded weights and inputs. TensorFlow
has no CPU float16 MaxPool3D/AvgPool3D kernel; those raise, which is an accepted result.
A few models (recurrent, transposed and depthwise convolutions, the float64 3D pooling)
also run under ``tf.function(jit_compile=True)``, as the tf-xla backend runs them; and a
subprocess checks the output dtypes under TensorFlow's numpy behaviour, which the tf
worker enables.
"""

from __future__ import annotations

import ast
import functools
import math
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from model_support import LOGIC_OPS, logic_reference

from dlfuzz.cases import DTYPES
from dlfuzz.ir.graph import Graph, GraphBuilder
from dlfuzz.ir.lower import build, emit
from dlfuzz.ir.lower.tf_lower_ops import EMITTERS
from dlfuzz.ir.ops import CATALOG
from dlfuzz.ir.ops.base import same_pads
from dlfuzz.ir.samples import all_samples
from dlfuzz.ir.weights import init_model, random_inputs

tf = pytest.importorskip("tensorflow")

W = dict[str, np.ndarray]
TOLERANCE = {"float64": 1e-9, "float32": 1e-4, "float16": 2e-2, "bfloat16": 1e-1}
# TensorFlow's CPU kernels that do not exist for a dtype: raising is the expected result.
NO_KERNEL = {("float16", "MaxPool3D"), ("float16", "AvgPool3D")}


# ---- the numpy reference (channels-last, TensorFlow 'same' padding) -----------------------
def _windows(x: np.ndarray, a: dict[str, Any], k: tuple[int, ...], s: tuple[int, ...],
             d: tuple[int, ...], fill: float = 0.0) -> Iterator[tuple[tuple[int, ...], np.ndarray]]:
    """(kernel offset, the input elements it meets at every output position) pairs."""
    n = len(k)
    pads = [same_pads(x.shape[1 + i], k[i], s[i], d[i]) if a["padding"] == "same" else (0, 0)
            for i in range(n)]
    xp = np.pad(x, [(0, 0), *pads, (0, 0)], constant_values=fill)
    out = [(xp.shape[1 + i] - (k[i] - 1) * d[i] - 1) // s[i] + 1 for i in range(n)]
    for off in np.ndindex(*k):
        spans = [slice(o * d[i], o * d[i] + (out[i] - 1) * s[i] + 1, s[i])
                 for i, o in enumerate(off)]
        yield off, xp[(slice(None), *spans)]


def _geometry(a: dict[str, Any]) -> tuple[tuple[int, ...], ...]:
    k = a["kernel_size"]
    return k, a["strides"], a.get("dilation_rate", (1,) * len(k))


def _bias(y: np.ndarray, w: W) -> np.ndarray:
    return y + w["bias"] if "bias" in w else y


def _conv(a: dict[str, Any], xs: list[np.ndarray], w: W) -> np.ndarray:
    return _bias(sum(win @ w["kernel"][off] for off, win in _windows(xs[0], a, *_geometry(a))),
                 w)


def _depthwise_only(a: dict[str, Any], x: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    y = sum(win[..., :, None] * kernel[off] for off, win in _windows(x, a, *_geometry(a)))
    return y.reshape(*y.shape[:-2], -1)  # channel c * multiplier + m


def _depthwise(a: dict[str, Any], xs: list[np.ndarray], w: W) -> np.ndarray:
    return _bias(_depthwise_only(a, xs[0], w["kernel"]), w)


def _separable(a: dict[str, Any], xs: list[np.ndarray], w: W) -> np.ndarray:
    pw = w["pointwise_kernel"]
    y = _depthwise_only(a, xs[0], w["depthwise_kernel"]) @ pw.reshape(pw.shape[-2:])
    return _bias(y, w)


def _conv_transpose(a: dict[str, Any], xs: list[np.ndarray], w: W) -> np.ndarray:
    """Scatter every input element through the kernel, then crop 'same' to in * s."""
    x, kernel, (k, s, _) = xs[0], w["kernel"], _geometry(a)
    n, size = len(k), x.shape[1:-1]
    full = np.zeros((x.shape[0], *[(size[i] - 1) * s[i] + k[i] for i in range(n)],
                     kernel.shape[-2]))
    for off in np.ndindex(*k):
        idx = tuple(slice(off[i], off[i] + (size[i] - 1) * s[i] + 1, s[i]) for i in range(n))
        full[(slice(None), *idx)] += x @ kernel[off].T
    if a["padding"] == "same":
        crop = [((k[i] - s[i]) // 2, (k[i] - s[i]) // 2 + size[i] * s[i]) for i in range(n)]
        full = full[(slice(None), *[slice(lo, hi) for lo, hi in crop])]
    return _bias(full, w)


def _pool(kind: str, a: dict[str, Any], xs: list[np.ndarray], w: W) -> np.ndarray:
    k = a["pool_size"]
    geo = (k, a["strides"] or k, (1,) * len(k))
    if kind == "max":
        return np.max([win for _, win in _windows(xs[0], a, *geo, fill=-np.inf)], axis=0)
    total = sum(win for _, win in _windows(xs[0], a, *geo))
    count = sum(win for _, win in _windows(np.ones_like(xs[0]), a, *geo))
    return total / count  # only real elements count


def _rnn(op: str, a: dict[str, Any], xs: list[np.ndarray], w: W) -> np.ndarray:
    x, k, r, b = xs[0], w["kernel"], w["recurrent_kernel"], w["bias"]
    u = r.shape[0]
    h = c = np.zeros((x.shape[0], u))
    hs = []
    for t in range(x.shape[1]):
        if op == "SimpleRNN":
            h = np.tanh(x[:, t] @ k + h @ r + b)
        elif op == "LSTM":
            z = x[:, t] @ k + h @ r + b
            i, f, g, o = (z[:, j * u:(j + 1) * u] for j in range(4))
            c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
            h = _sigmoid(o) * np.tanh(c)
        else:
            xm, hm = x[:, t] @ k + b[0], h @ r + b[1]
            z = _sigmoid(xm[:, :u] + hm[:, :u])
            rr = _sigmoid(xm[:, u:2 * u] + hm[:, u:2 * u])
            h = z * h + (1 - z) * np.tanh(xm[:, 2 * u:] + rr * hm[:, 2 * u:])
        hs.append(h)
    return np.stack(hs, axis=1) if a["return_sequences"] else h


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def _f32(v: float) -> float:
    return float(np.float32(v))


def _gelu(a: dict[str, Any], xs: list[np.ndarray], w: W) -> np.ndarray:
    """docs/ir.md's GELU with the constants rounded as tf.nn.gelu rounds them (see TF_QUIRKS)."""
    x = xs[0]
    if a["approximate"]:
        inner = math.sqrt(2 / math.pi) * (x + _f32(0.044715) * x ** 3)
        return 0.5 * x * (1 + np.tanh(inner))
    return 0.5 * x * np.vectorize(math.erfc)(-x * _f32(1 / math.sqrt(2)))


SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _softplus(x: np.ndarray) -> np.ndarray:
    """log(1 + exp(x)) without overflow: max(x, 0) + log1p(exp(-|x|))."""
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


def _selu(a: dict[str, Any], xs: list[np.ndarray], w: W) -> np.ndarray:
    x = xs[0]
    return SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(np.minimum(x, 0)))


def _softmax(a: dict[str, Any], xs: list[np.ndarray], w: W) -> np.ndarray:
    e = np.exp(xs[0] - xs[0].max(axis=a["axis"], keepdims=True))
    return e / e.sum(axis=a["axis"], keepdims=True)


def _layer_norm(a: dict[str, Any], xs: list[np.ndarray], w: W) -> np.ndarray:
    x = xs[0]
    mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    return w["gamma"] * (x - mean) / np.sqrt(var + a["epsilon"]) + w["beta"]


def _crop(a: dict[str, Any], xs: list[np.ndarray], w: W) -> np.ndarray:
    x = xs[0]
    return x[(slice(None), *[slice(lo, x.shape[1 + i] - hi)
                             for i, (lo, hi) in enumerate(a["cropping"])])]


def _upsample(a: dict[str, Any], xs: list[np.ndarray], w: W) -> np.ndarray:
    y = xs[0]
    for axis, n in enumerate(a["size"], start=1):
        y = np.repeat(y, n, axis=axis)
    return y


def _fold(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable[..., np.ndarray]:
    def run(a: dict[str, Any], xs: list[np.ndarray], w: W) -> np.ndarray:
        y = xs[0]
        for x in xs[1:]:
            y = fn(y, x)
        return y
    return run


Ref = Callable[[dict[str, Any], list[np.ndarray], W], np.ndarray]
# TensorFlow's float64 arithmetic that departs from docs/ir.md by float32-rounding a
# constant (~1e-9 relative). The lowering keeps the natural call, so a campaign keeps
# seeing these; the reference reproduces them so the rest is checked to 1e-9:
# * tf.nn.leaky_relu: LeakyRelu's ``alpha`` is a 32-bit float attribute (by design).
# * tf.nn.gelu: ``math_ops.cast(0.044715, dtype)`` and ``cast(0.7071067811865476, dtype)``
#   convert the Python float to a float32 tensor first, so float64 GELU uses float32
#   constants (a TensorFlow 2.21 precision bug).
TF_QUIRKS = ("LeakyReLU", "GELU")
REFERENCE: dict[str, Ref] = {
    "Dense": lambda a, xs, w: _bias(xs[0] @ w["kernel"], w),
    **{f"Conv{n}D": _conv for n in (1, 2, 3)},
    "DepthwiseConv2D": _depthwise,
    "SeparableConv1D": _separable, "SeparableConv2D": _separable,
    "Conv2DTranspose": _conv_transpose, "Conv3DTranspose": _conv_transpose,
    **{f"{k}Pool{n}D": functools.partial(_pool, k.lower()) for k in ("Max", "Avg")
       for n in (1, 2, 3)},
    **{f"GlobalMaxPool{n}D": lambda a, xs, w: xs[0].max(tuple(range(1, xs[0].ndim - 1)))
       for n in (1, 2, 3)},
    **{f"GlobalAvgPool{n}D": lambda a, xs, w: xs[0].mean(tuple(range(1, xs[0].ndim - 1)))
       for n in (1, 2, 3)},
    "AddConst": lambda a, xs, w: xs[0] + w["value"],
    "MulConst": lambda a, xs, w: xs[0] * w["value"],
    "ReLU": lambda a, xs, w: np.minimum(np.maximum(xs[0], 0), np.inf if a["max_value"] is None
                                        else a["max_value"]),
    "LeakyReLU": lambda a, xs, w: np.where(xs[0] >= 0, xs[0], _f32(a["alpha"]) * xs[0]),
    "PReLU": lambda a, xs, w: np.where(xs[0] >= 0, xs[0], w["alpha"] * xs[0]),
    "ELU": lambda a, xs, w: np.where(xs[0] > 0, xs[0], a["alpha"] * np.expm1(xs[0])),
    "ThresholdedReLU": lambda a, xs, w: np.where(xs[0] > a["theta"], xs[0], 0.0),
    "Softmax": _softmax,
    "Sigmoid": lambda a, xs, w: _sigmoid(xs[0]),
    "Tanh": lambda a, xs, w: np.tanh(xs[0]),
    "GELU": _gelu,
    "Softplus": lambda a, xs, w: _softplus(xs[0]),
    "Softsign": lambda a, xs, w: xs[0] / (1 + np.abs(xs[0])),
    "SELU": _selu,
    "SiLU": lambda a, xs, w: xs[0] * _sigmoid(xs[0]),
    "HardSigmoid": lambda a, xs, w: np.clip(xs[0] / 6 + 0.5, 0.0, 1.0),
    "Mish": lambda a, xs, w: xs[0] * np.tanh(_softplus(xs[0])),
    "Abs": lambda a, xs, w: np.abs(xs[0]),
    "Square": lambda a, xs, w: xs[0] * xs[0],
    "Clip": lambda a, xs, w: np.minimum(np.maximum(xs[0], a["min_value"]), a["max_value"]),
    "BatchNorm": lambda a, xs, w: (w["gamma"] * (xs[0] - w["moving_mean"])
                                   / np.sqrt(w["moving_variance"] + a["epsilon"]) + w["beta"]),
    "LayerNorm": _layer_norm,
    "Add": _fold(np.add), "Mul": _fold(np.multiply), "Subtract": _fold(np.subtract),
    "Maximum": _fold(np.maximum), "Minimum": _fold(np.minimum), "MatMul": _fold(np.matmul),
    "Flatten": lambda a, xs, w: xs[0].reshape(xs[0].shape[0], -1),
    "Reshape": lambda a, xs, w: xs[0].reshape(xs[0].shape[0], *a["target_shape"]),
    "Transpose": lambda a, xs, w: xs[0].transpose(0, *a["dims"]),
    "Concat": lambda a, xs, w: np.concatenate(xs, axis=a["axis"]),
    **{f"ZeroPadding{n}D": lambda a, xs, w: np.pad(xs[0], [(0, 0), *a["padding"], (0, 0)])
       for n in (1, 2, 3)},
    **{f"Cropping{n}D": _crop for n in (1, 2, 3)},
    **{f"UpSampling{n}D": _upsample for n in (1, 2, 3)},
    "RepeatVector": lambda a, xs, w: np.repeat(xs[0][:, None, :], a["n"], axis=1),
    "ReduceMean": lambda a, xs, w: xs[0].mean(tuple(a["axes"]), keepdims=a["keepdims"]),
    "ReduceMax": lambda a, xs, w: xs[0].max(tuple(a["axes"]), keepdims=a["keepdims"]),
    "ReduceSum": lambda a, xs, w: xs[0].sum(tuple(a["axes"]), keepdims=a["keepdims"]),
    "ReduceMin": lambda a, xs, w: xs[0].min(tuple(a["axes"]), keepdims=a["keepdims"]),
    "Identity": lambda a, xs, w: xs[0],
    "Dropout": lambda a, xs, w: xs[0],
    **{op: functools.partial(_rnn, op) for op in ("SimpleRNN", "LSTM", "GRU")},
    **{op: lambda a, xs, w, op=op: logic_reference(op, a, xs) for op in LOGIC_OPS},
}


def reference(g: Graph, weights: W, inputs: list[np.ndarray]) -> dict[str, np.ndarray]:
    """Every value of ``g`` in float64 (weights and inputs taken exactly as given)."""
    vals = {name: np.asarray(x, np.float64) for name, x in zip(g.input_names, inputs,
                                                               strict=True)}
    for n in g.nodes:
        w = {k.split(".", 1)[1]: np.asarray(v, np.float64) for k, v in weights.items()
             if k.startswith(n.id + ".")}
        vals[n.id] = REFERENCE[n.op](n.a, [vals[v] for v in n.inputs], w)
    return vals


# ---- the cases ----------------------------------------------------------------------------
def _extra(dtype: str) -> list[tuple[str, Graph]]:
    """Graphs that take the float64 detours: depthwise kernels with unequal strides."""
    out = []
    for op, extra in (("DepthwiseConv2D", {"depth_multiplier": 2}),
                      ("SeparableConv2D", {"filters": 3})):
        for padding in ("same", "valid"):
            b = GraphBuilder((2, 7, 8, 3), dtype=dtype)
            b.add(op, "x0", kernel_size=(3, 2), strides=(1, 2), padding=padding, **extra)
            out.append((op, b.build()))
    b = GraphBuilder((2, 4, 3), dtype=dtype)  # a small chain: probe sees every node
    lstm = b.add("LSTM", "x0", units=3, return_sequences=True)
    b.add("Dense", b.add("GELU", b.add("AddConst", lstm)), units=2)
    out.append(("LSTM", b.build()))
    return out


SAMPLES = all_samples("float64")
CASES = SAMPLES + _extra("float64")
IDS = [f"{i}-{op}" for i, (op, _) in enumerate(CASES)]


def _model(g: Graph, seed: int) -> tuple[W, list[np.ndarray]]:
    m = init_model(g, np.random.default_rng(seed))
    return dict(m.weights), random_inputs(g, np.random.default_rng(seed))


def _run(g: Graph, weights: W, inputs: list[np.ndarray], probe: bool = False,
         wrap: Callable[[Any], Any] = lambda f: f) -> list[np.ndarray]:
    model = wrap(build(emit("tf", g, probe=probe), weights))
    return [y.numpy() for y in model(*[tf.constant(x) for x in inputs])]


def _close(got: np.ndarray, want: np.ndarray, dtype: str, what: str) -> None:
    scale = max(float(np.max(np.abs(want))), 1.0)
    err = float(np.max(np.abs(got.astype(np.float64) - want)))
    assert err <= TOLERANCE[dtype] * scale, f"{what}: max error {err:.3g} (scale {scale:.3g})"


@pytest.mark.parametrize("seed", range(len(CASES)), ids=IDS)
def test_sample_runs_and_agrees(seed: int) -> None:
    op, g = CASES[seed]
    weights, inputs = _model(g, seed)
    want = reference(g, weights, inputs)
    types = g.types()
    got = _run(g, weights, inputs)
    assert len(got) == len(g.outputs)
    for y, name in zip(got, g.outputs, strict=True):
        assert y.shape == types[name].shape and y.dtype == np.float64
        _close(y, want[name], "float64", f"{op} output {name}")
    probed = _run(g, weights, inputs, probe=True)
    assert [p.shape for p in probed] == [types[n.id].shape for n in g.nodes]
    for p, n in zip(probed, g.nodes, strict=True):
        _close(p, want[n.id], "float64", f"{op} probe {n.id}")


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_lower_dtypes_compute_in_their_dtype(dtype: str) -> None:
    """Each sample in ``dtype``: runs (or lacks a CPU kernel), keeps its dtype, is close."""
    failures = []
    for seed, (op, g64) in enumerate(CASES):
        g = g64.with_dtype(dtype)
        weights, inputs = _model(g, seed)
        want = reference(g, weights, inputs)
        try:
            got = _run(g, weights, inputs)
        except tf.errors.NotFoundError:
            if (dtype, op) not in NO_KERNEL:
                failures.append(f"{seed}-{op}: no kernel")
            continue
        for y, name in zip(got, g.outputs, strict=True):
            if y.dtype.name != dtype:
                failures.append(f"{seed}-{op}: computed in {y.dtype}")
            try:
                _close(y, want[name], dtype, f"{seed}-{op}")
            except AssertionError as exc:
                failures.append(str(exc))
    assert not failures, failures


def _spec_value(op: str, a: dict[str, Any], x: np.ndarray) -> np.ndarray:
    """docs/ir.md exactly, for the ops of TF_QUIRKS."""
    if op == "LeakyReLU":
        return np.where(x >= 0, x, a["alpha"] * x)
    if a["approximate"]:
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


@pytest.mark.parametrize("seed", [i for i, (op, _) in enumerate(SAMPLES) if op in TF_QUIRKS],
                         ids=lambda i: IDS[i])
def test_tf_quirks_stay_within_float32_rounding_of_a_constant(seed: int) -> None:
    op, g = SAMPLES[seed]
    weights, inputs = _model(g, seed)
    got = _run(g, weights, inputs)[0]
    want = _spec_value(op, g.nodes[0].a, inputs[0])
    assert 0 < np.max(np.abs(got - want)) <= 1e-8 * max(1.0, float(np.max(np.abs(want))))


def test_tf_bfloat16_softplus_is_x_above_its_cutoff() -> None:
    """A TensorFlow difference the bfloat16 tolerance absorbs (the lowering is the plain
    ``tf.math.softplus``): TF's Softplus kernel returns x itself for
    x > -(log(epsilon) + 2), assuming log1p(exp(-x)) is then below the dtype's epsilon.
    For bfloat16 (epsilon 2**-7) the cutoff is x > 2.85, where log1p(exp(-x)) is still
    up to 0.056 (about 3 bfloat16 ulps): torch and JAX give softplus(2.90625) = 2.953,
    TensorFlow 2.90625. Below the cutoff TF computes log1p(exp(x))."""
    b = GraphBuilder((1, 3), dtype="bfloat16")
    b.add("Softplus", "x0")
    g = b.build()
    x = np.array([[2.0, 2.90625, 3.5]], DTYPES["bfloat16"])
    got = _run(g, {}, [x])[0].astype(np.float64)[0]
    want = REFERENCE["Softplus"]({}, [x.astype(np.float64)], {})[0]
    assert got[1] == 2.90625 and got[2] == 3.5  # x itself above the cutoff
    assert 0.04 < want[1] - got[1] < 0.06
    assert abs(got[0] - want[0]) < 0.01  # computed below it


XLA_OPS = ("LSTM", "GRU", "SimpleRNN", "Conv2DTranspose", "Conv3DTranspose",
           "DepthwiseConv2D", "SeparableConv1D", "MaxPool3D", "AvgPool3D", "Conv3D")


def _xla_cases() -> list[int]:
    """The first sample of each op in XLA_OPS, and every extra graph."""
    first: dict[str, int] = {}
    for seed, (op, _) in enumerate(SAMPLES):
        if op in XLA_OPS:
            first.setdefault(op, seed)
    return sorted(first.values()) + list(range(len(SAMPLES), len(CASES)))


@pytest.mark.parametrize("seed", _xla_cases(), ids=lambda i: IDS[i])
def test_model_compiles_with_xla(seed: int) -> None:
    """The model is a plain function of tensors: tf-xla compiles it as the backend does."""
    op, g = CASES[seed]
    weights, inputs = _model(g, seed)
    want = reference(g, weights, inputs)
    got = _run(g, weights, inputs, wrap=lambda f: tf.function(f, jit_compile=True,
                                                                 autograph=False))
    for y, name in zip(got, g.outputs, strict=True):
        _close(y, want[name], "float64", f"xla {op}")


NUMPY_BEHAVIOUR = """
import numpy as np, tensorflow as tf
from dlfuzz.ir.lower import build, emit
from dlfuzz.ir.lower.tf_lower_ops import EMITTERS
from dlfuzz.ir.ops import CATALOG
from dlfuzz.ir.samples import all_samples
from dlfuzz.ir.weights import init_model, random_inputs
tf.experimental.numpy.experimental_enable_numpy_behavior(prefer_float32=False)
for dtype in ("float64", "float32", "float16", "bfloat16"):
    for seed, (op, g) in enumerate(all_samples(dtype)):
        m = init_model(g, np.random.default_rng(seed))
        xs = [tf.constant(x) for x in random_inputs(g, np.random.default_rng(seed))]
        try:
            ys = build(emit("tf", g), dict(m.weights))(*xs)
        except tf.errors.NotFoundError:
            continue
        bad = [y.dtype.name for y in ys if y.dtype.name != dtype]
        if bad:
            print(dtype, op, bad[0])
"""
# tf.nn.gelu multiplies by Python floats, which numpy behaviour promotes to float64 for
# bfloat16 (float16 stays): a TensorFlow quirk, not the lowering's arithmetic.
NUMPY_BEHAVIOUR_KNOWN = {"bfloat16 GELU float64"}


def test_dtypes_hold_under_numpy_behaviour() -> None:
    """The tf worker enables numpy behaviour; the emitted arithmetic must not promote."""
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3",
           "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[2] / "src"),
                                          os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", NUMPY_BEHAVIOUR], capture_output=True,
                          text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    promoted = set(proc.stdout.splitlines()) - NUMPY_BEHAVIOUR_KNOWN
    assert not promoted, promoted


def test_every_catalog_op_has_an_emitter() -> None:
    assert set(EMITTERS) == set(CATALOG)


def test_lowering_is_library_free_source() -> None:
    """The lowering modules build strings only: they never import TensorFlow."""
    here = Path(__file__).parents[2] / "src" / "dlfuzz" / "ir" / "lower"
    for name in ("tf_lower.py", "tf_lower_ops.py"):
        tree = ast.parse((here / name).read_text())
        modules = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                   for alias in node.names}
        modules |= {node.module or "" for node in ast.walk(tree)
                    if isinstance(node, ast.ImportFrom)}
        assert not {m for m in modules if m.split(".")[0] in ("tensorflow", "numpy")}


def test_emitted_source_reads_as_tensorflow() -> None:
    """Imports only numpy and TensorFlow; every model line carries its node tag."""
    g = _extra("float64")[-1][1]
    src = emit("tf", g)
    imports = [line for line in src.splitlines() if line.startswith(("import ", "from "))]
    assert imports == ["import numpy as np", "import tensorflow as tf"]
    for n in g.nodes:
        assert f"# {n.id} {n.op}" in src
    assert src.count("def _lstm(") == 1


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_integer_samples_are_exact_in_their_dtype(dtype: str) -> None:
    """Every integer-capable sample runs in its int dtype, eager and under XLA, and equals
    the reference exactly (TensorFlow refuses a float clip bound for an int tensor)."""
    for seed, (op, g) in enumerate(all_samples(dtype)):
        weights, inputs = _model(g, seed)
        want = reference(g, weights, inputs)
        for n, y in zip(g.nodes, _run(g, weights, inputs, probe=True), strict=True):
            assert y.dtype == np.dtype(dtype), (op, n.id, y.dtype)
            assert np.array_equal(y.astype(np.float64), want[n.id]), (op, n.a)
        xla = _run(g, weights, inputs, wrap=lambda f: tf.function(f, jit_compile=True))
        for y, name in zip(xla, g.outputs, strict=True):
            assert y.dtype == np.dtype(dtype) and np.array_equal(y.astype(np.float64),
                                                                 want[name]), (op, "xla")
