"""The ONNX lowering builds and runs every IR sample on ONNX Runtime, and computes docs/ir.md.

Each sample of ``all_samples`` is emitted, built with seeded weights (optimizer on and
off) and run. Shapes must equal the inferred types, ``probe=True`` must return every
node's value, and values must match ``REFERENCE``, a numpy implementation of the IR
written here independently of ONNX: float64 to ~1e-9 relative, float32 to ~1e-4 (of the
reference's largest magnitude). ONNX Runtime's CPU provider has no float64 kernel for
several ops (``F64_MISSING``): those must fail with its NOT_IMPLEMENTED answer, and their
values are checked through float32. Gelu's tanh form does run in float64, but ONNX defines
it with float32 constants, hence a looser bound (``F64_LOOSE``). float16 must run
everything; bfloat16 must run the data-movement ops (``BF16_RUNS``) and may otherwise
only fail inside ONNX Runtime. The activations of ``F64_COMPOSED`` have no float64 kernel
either, so a float64 graph spells them with primitives; the last test checks that this
is still needed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import reduce
from typing import Any

import numpy as np
import pytest
from model_support import LOGIC_OPS, logic_reference

from dlfuzz.cases import DTYPES
from dlfuzz.ir.graph import Graph, Node
from dlfuzz.ir.lower import build, emit
from dlfuzz.ir.ops.base import same_pads
from dlfuzz.ir.samples import all_samples
from dlfuzz.ir.weights import init_model, random_inputs

ort = pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

SAMPLES = all_samples("float64")
TOLERANCE = {"float64": 1e-9, "float32": 1e-4, "float16": 3e-2, "bfloat16": 5e-2}
# ops ONNX Runtime 1.31's CPU provider has no float64 kernel for (Erf under Gelu, Resize...)
F64_MISSING = {
    "Conv1D", "Conv2D", "Conv3D", "DepthwiseConv2D", "SeparableConv1D", "SeparableConv2D",
    "Conv2DTranspose", "Conv3DTranspose", "AvgPool1D", "AvgPool2D", "AvgPool3D",
    "GlobalMaxPool1D", "GlobalMaxPool2D", "GlobalMaxPool3D", "GlobalAvgPool1D",
    "GlobalAvgPool2D", "GlobalAvgPool3D", "LeakyReLU", "PReLU", "ELU", "ThresholdedReLU",
    "GELU", "UpSampling1D", "UpSampling2D", "UpSampling3D", "SimpleRNN", "LSTM", "GRU"}
# ONNX's Gelu function body holds its constants (sqrt(2/pi), 0.044715) as float32
F64_LOOSE = {"GELU": 1e-7}
BF16_RUNS = {"Concat", "Cropping1D", "Cropping2D", "Cropping3D", "Flatten", "Identity",
             "Reshape", "Transpose"}

Arrays = list[np.ndarray]
Weights = dict[str, np.ndarray]


# ---- numpy reference: channels-last, TensorFlow 'same' padding, Keras semantics ----------
def _patches(x: np.ndarray, k: tuple[int, ...], s: tuple[int, ...], d: tuple[int, ...],
             padding: str, fill: float = 0.0) -> np.ndarray:
    """Every window of x as ``(N, *out, C, *k)``: strides s, dilation d, 'same' pads."""
    n = len(k)
    pads = [same_pads(x.shape[1 + i], k[i], s[i], d[i]) if padding == "same" else (0, 0)
            for i in range(n)]
    xp = np.pad(x, [(0, 0), *pads, (0, 0)], constant_values=fill)
    span = [(k[i] - 1) * d[i] + 1 for i in range(n)]
    v = np.lib.stride_tricks.sliding_window_view(xp, span, axis=tuple(range(1, n + 1)))
    return v[(slice(None), *[slice(None, None, si) for si in s], slice(None),
              *[slice(None, None, di) for di in d])]


def _window(a: dict[str, Any]) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    k = a.get("kernel_size") or a["pool_size"]
    return k, a["strides"] or k, a.get("dilation_rate") or (1,) * len(k)


def _plus_bias(y: np.ndarray, w: Weights) -> np.ndarray:
    return y + w["bias"] if "bias" in w else y


def _conv(x: np.ndarray, a: dict[str, Any], w: Weights) -> np.ndarray:
    k = _window(a)[0]
    p = _patches(x, *_window(a), a["padding"])  # (N, *out, C, *k) . (*k, C, F)
    n = len(k)
    y = np.tensordot(p, w["kernel"], axes=([n + 1, *range(n + 2, 2 * n + 2)], [n, *range(n)]))
    return _plus_bias(y, w)


def _depthwise(x: np.ndarray, a: dict[str, Any], kernel: np.ndarray) -> np.ndarray:
    n = len(a["kernel_size"])
    p = _patches(x, *_window(a), a["padding"])  # (N, *out, C, *k), kernel (*k, C, M)
    letters = "ijk"[:n]
    y = np.einsum(f"...c{letters},{letters}cm->...cm", p, kernel)
    return y.reshape(*y.shape[:-2], -1)


def _separable(x: np.ndarray, a: dict[str, Any], w: Weights) -> np.ndarray:
    y = _depthwise(x, a, w["depthwise_kernel"])
    return _plus_bias(y @ w["pointwise_kernel"].reshape(y.shape[-1], -1), w)


def _conv_transpose(x: np.ndarray, a: dict[str, Any], w: Weights) -> np.ndarray:
    """Scatter: input position i meets output ``s*i + offset``; 'same' crops k - s."""
    k, s = a["kernel_size"], a["strides"]
    n, kernel = len(k), w["kernel"]  # (*k, F, C)
    full = [(x.shape[1 + i] - 1) * s[i] + k[i] for i in range(n)]
    y = np.zeros((x.shape[0], *full, kernel.shape[-2]))
    for off in np.ndindex(*k):
        idx = tuple(slice(off[i], off[i] + s[i] * (x.shape[1 + i] - 1) + 1, s[i])
                    for i in range(n))
        y[(slice(None), *idx)] += x @ kernel[off].T
    if a["padding"] == "same":
        crop = [(k[i] - s[i]) // 2 for i in range(n)]
        y = y[(slice(None), *[slice(crop[i], crop[i] + x.shape[1 + i] * s[i])
                              for i in range(n)])]
    return _plus_bias(y, w)


def _pool(kind: str) -> Callable[[np.ndarray, dict[str, Any], Weights], np.ndarray]:
    def run(x: np.ndarray, a: dict[str, Any], w: Weights) -> np.ndarray:
        k, s, d = _window(a)
        axes = tuple(range(-len(k), 0))
        if kind == "max":
            return _patches(x, k, s, d, a["padding"], -np.inf).max(axis=axes)
        total = _patches(x, k, s, d, a["padding"]).sum(axis=axes)
        return total / _patches(np.ones_like(x), k, s, d, a["padding"]).sum(axis=axes)
    return run


def _rnn(x: np.ndarray, a: dict[str, Any], w: Weights, op: str) -> np.ndarray:
    u = a["units"]
    h = np.zeros((x.shape[0], u))
    c = np.zeros_like(h)
    seq = []
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    for t in range(x.shape[1]):
        xt = x[:, t] @ w["kernel"]
        if op == "SimpleRNN":
            h = np.tanh(xt + h @ w["recurrent_kernel"] + w["bias"])
        elif op == "LSTM":
            i, f, g, o = np.split(xt + h @ w["recurrent_kernel"] + w["bias"], 4, axis=-1)
            c = sig(f) * c + sig(i) * np.tanh(g)
            h = sig(o) * np.tanh(c)
        else:  # GRU, reset_after
            xz, xr, xh = np.split(xt + w["bias"][0], 3, axis=-1)
            hz, hr, hh = np.split(h @ w["recurrent_kernel"] + w["bias"][1], 3, axis=-1)
            z, r = sig(xz + hz), sig(xr + hr)
            h = z * h + (1 - z) * np.tanh(xh + r * hh)
        seq.append(h)
    return np.stack(seq, axis=1) if a["return_sequences"] else h


def _gelu(x: np.ndarray, approximate: bool) -> np.ndarray:
    if approximate:
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _softplus(x: np.ndarray) -> np.ndarray:
    """log(1 + exp(x)) without overflow: max(x, 0) + log1p(exp(-|x|))."""
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _layer_norm(x: np.ndarray, a: dict[str, Any], w: Weights) -> np.ndarray:
    mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    return w["gamma"] * (x - mean) / np.sqrt(var + a["epsilon"]) + w["beta"]


def _batch_norm(x: np.ndarray, a: dict[str, Any], w: Weights) -> np.ndarray:
    scale = w["gamma"] / np.sqrt(w["moving_variance"] + a["epsilon"])
    return (x - w["moving_mean"]) * scale + w["beta"]


def _crop(x: np.ndarray, crop: tuple[tuple[int, int], ...]) -> np.ndarray:
    return x[(slice(None), *[slice(b, x.shape[1 + i] - e) for i, (b, e) in enumerate(crop)])]


def _upsample(x: np.ndarray, size: tuple[int, ...]) -> np.ndarray:
    for i, s in enumerate(size):
        x = np.repeat(x, s, axis=1 + i)
    return x


One = Callable[[np.ndarray, dict[str, Any], Weights], np.ndarray]
ELEMENTWISE: dict[str, One] = {
    "Dense": lambda x, a, w: _plus_bias(x @ w["kernel"], w),
    "AddConst": lambda x, a, w: x + w["value"],
    "MulConst": lambda x, a, w: x * w["value"],
    "ReLU": lambda x, a, w: np.maximum(x, 0) if a["max_value"] is None
    else np.minimum(np.maximum(x, 0), a["max_value"]),
    "LeakyReLU": lambda x, a, w: np.where(x >= 0, x, a["alpha"] * x),
    "PReLU": lambda x, a, w: np.where(x >= 0, x, w["alpha"] * x),
    "ELU": lambda x, a, w: np.where(x > 0, x, a["alpha"] * (np.exp(np.minimum(x, 0)) - 1)),
    "ThresholdedReLU": lambda x, a, w: np.where(x > a["theta"], x, 0.0),
    "Softmax": lambda x, a, w: _softmax(x, a["axis"]),
    "Sigmoid": lambda x, a, w: 1 / (1 + np.exp(-x)),
    "Tanh": lambda x, a, w: np.tanh(x),
    "GELU": lambda x, a, w: _gelu(x, a["approximate"]),
    "Softplus": lambda x, a, w: _softplus(x),
    "Softsign": lambda x, a, w: x / (1 + np.abs(x)),
    "SELU": lambda x, a, w: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(
        np.minimum(x, 0))),
    "SiLU": lambda x, a, w: x / (1 + np.exp(-x)),
    "HardSigmoid": lambda x, a, w: np.maximum(0, np.minimum(1, x / 6 + 0.5)),
    "Mish": lambda x, a, w: x * np.tanh(_softplus(x)),
    "Abs": lambda x, a, w: np.abs(x),
    "Square": lambda x, a, w: x * x,
    "Clip": lambda x, a, w: np.minimum(np.maximum(x, a["min_value"]), a["max_value"]),
    "BatchNorm": _batch_norm,
    "LayerNorm": _layer_norm,
    "Flatten": lambda x, a, w: x.reshape(x.shape[0], -1),
    "Reshape": lambda x, a, w: x.reshape(x.shape[0], *a["target_shape"]),
    "Transpose": lambda x, a, w: np.transpose(x, (0, *a["dims"])),
    "RepeatVector": lambda x, a, w: np.repeat(x[:, None], a["n"], axis=1),
    "ReduceMean": lambda x, a, w: x.mean(axis=a["axes"], keepdims=a["keepdims"]),
    "ReduceMax": lambda x, a, w: x.max(axis=a["axes"], keepdims=a["keepdims"]),
    "ReduceSum": lambda x, a, w: x.sum(axis=a["axes"], keepdims=a["keepdims"]),
    "ReduceMin": lambda x, a, w: x.min(axis=a["axes"], keepdims=a["keepdims"]),
    "Identity": lambda x, a, w: x,
    "Dropout": lambda x, a, w: x,
    "DepthwiseConv2D": lambda x, a, w: _plus_bias(_depthwise(x, a, w["kernel"]), w),
}
MERGES: dict[str, Callable[..., np.ndarray]] = {
    "Add": np.add, "Mul": np.multiply, "Subtract": np.subtract, "Maximum": np.maximum,
    "Minimum": np.minimum, "MatMul": np.matmul}
REFERENCE: dict[str, One] = dict(ELEMENTWISE)
for _d in (1, 2, 3):
    REFERENCE.update({
        f"Conv{_d}D": _conv, f"MaxPool{_d}D": _pool("max"), f"AvgPool{_d}D": _pool("avg"),
        f"GlobalMaxPool{_d}D": lambda x, a, w: x.max(axis=tuple(range(1, x.ndim - 1))),
        f"GlobalAvgPool{_d}D": lambda x, a, w: x.mean(axis=tuple(range(1, x.ndim - 1))),
        f"ZeroPadding{_d}D": lambda x, a, w: np.pad(x, [(0, 0), *a["padding"], (0, 0)]),
        f"Cropping{_d}D": lambda x, a, w: _crop(x, a["cropping"]),
        f"UpSampling{_d}D": lambda x, a, w: _upsample(x, a["size"])})
REFERENCE.update({f"SeparableConv{d}D": _separable for d in (1, 2)})
REFERENCE.update({f"Conv{d}DTranspose": _conv_transpose for d in (2, 3)})
REFERENCE.update({op: lambda x, a, w, op=op: _rnn(x, a, w, op)
                  for op in ("SimpleRNN", "LSTM", "GRU")})


def reference(g: Graph, weights: Weights, inputs: Arrays) -> dict[str, np.ndarray]:
    """Every value of the graph, computed in float64."""
    vals = {name: x.astype(np.float64) for name, x in zip(g.input_names, inputs, strict=True)}
    for n in g.nodes:
        ins = [vals[v] for v in n.inputs]
        if n.op in MERGES:
            vals[n.id] = reduce(MERGES[n.op], ins)
        elif n.op in LOGIC_OPS:
            vals[n.id] = logic_reference(n.op, n.a, ins)
        elif n.op == "Concat":
            vals[n.id] = np.concatenate(ins, axis=n.a["axis"])
        else:
            vals[n.id] = REFERENCE[n.op](ins[0], n.a, _node_weights(weights, n))
    return vals


def _node_weights(weights: Weights, n: Node) -> Weights:
    return {k.split(".", 1)[1]: v.astype(np.float64) for k, v in weights.items()
            if k.split(".", 1)[0] == n.id}


# ---- the test -----------------------------------------------------------------------------
def _close(got: np.ndarray, want: np.ndarray, dtype: str, what: str, tol: float = 0.0
           ) -> None:
    assert got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape}"
    err = np.max(np.abs(got.astype(np.float64) - want)) / max(np.max(np.abs(want)), 1e-30)
    tol = max(tol, TOLERANCE[dtype])
    assert err <= tol, f"{what}: relative error {err:.3g} in {dtype}"


def _run(g: Graph, weights: Weights, inputs: Arrays, optimize: bool, probe: bool = False
         ) -> tuple[np.ndarray, ...]:
    return build(emit("onnx", g, probe=probe), dict(weights), optimize=optimize)(*inputs)


def test_reference_covers_the_catalog() -> None:
    from dlfuzz.ir.lower.onnx_lower_ops import EMITTERS
    from dlfuzz.ir.ops import CATALOG

    assert set(EMITTERS) == set(CATALOG)
    assert set(REFERENCE) | set(MERGES) | {"Concat"} | set(LOGIC_OPS) >= set(CATALOG)


@pytest.mark.parametrize("index", range(len(SAMPLES)),
                         ids=[f"{i}-{op}" for i, (op, _) in enumerate(SAMPLES)])
def test_sample(index: int) -> None:
    op, g64 = SAMPLES[index]
    model64 = init_model(g64, np.random.default_rng(index))
    inputs64 = random_inputs(g64, np.random.default_rng(1000 + index))
    types = g64.types()
    for dtype in ("float64", "float32", "float16", "bfloat16"):
        model = model64.astype(dtype)
        inputs = [x.astype(DTYPES[dtype]) for x in inputs64]
        want = reference(model.graph, model.weights, inputs)
        for optimize in (True, False):
            what = f"{op} {dtype} optimize={optimize}"
            try:
                outs = _run(model.graph, model.weights, inputs, optimize)
            except Exception as exc:  # noqa: BLE001 - the test sorts out which are allowed
                _allowed_failure(op, dtype, exc, what)
                continue
            assert len(outs) == len(g64.outputs), what
            for v, out in zip(g64.outputs, outs, strict=True):
                assert str(out.dtype) == dtype, f"{what}: output dtype {out.dtype}"
                assert out.shape == types[v].shape, f"{what}: shape {out.shape}"
                _close(out, want[v], dtype, what,
                       F64_LOOSE.get(op, 0.0) if dtype == "float64" else 0.0)
    # probe: every node's value in node order, checked through float32
    model = model64.astype("float32")
    inputs = [x.astype(np.float32) for x in inputs64]
    want = reference(model.graph, model.weights, inputs)
    for optimize in (True, False):
        outs = _run(model.graph, model.weights, inputs, optimize, probe=True)
        assert len(outs) == len(g64.nodes)
        for n, out in zip(g64.nodes, outs, strict=True):
            assert out.shape == types[n.id].shape
            _close(out, want[n.id], "float32", f"{op} probe {n.id}")


def _allowed_failure(op: str, dtype: str, exc: Exception, what: str) -> None:
    """float64: only F64_MISSING ops, with ONNX Runtime's own 'no kernel' answer."""
    text = str(exc)
    if dtype == "float64" and op in F64_MISSING:
        assert "NOT_IMPLEMENTED" in text or "does not support double" in text, f"{what}: {text}"
        return
    if dtype == "bfloat16" and op not in BF16_RUNS:
        assert type(exc).__module__.startswith("onnxruntime"), f"{what}: {exc!r}"
        return
    raise AssertionError(f"{what} failed: {exc!r}") from exc


# The native op per IR kind that ONNX Runtime has no float64 CPU kernel for, so a float64
# graph spells the formula with primitives (onnx_lower_ops); other dtypes use the op.
F64_COMPOSED = {"Softplus": "Softplus", "Softsign": "Softsign", "SELU": "Selu",
                "HardSigmoid": "HardSigmoid", "Mish": "Mish"}


@pytest.mark.parametrize("op", sorted(F64_COMPOSED))
def test_float64_composes_only_what_onnxruntime_lacks(op: str) -> None:
    """float32 emits the native op; float64 does not, because ONNX Runtime still refuses
    it (if a release adds the kernel, this fails and the composition can go)."""
    from onnx import TensorProto, helper
    from onnxruntime.capi.onnxruntime_pybind11_state import NotImplemented as NoKernel

    native = F64_COMPOSED[op]
    g64 = next(g for name, g in SAMPLES if name == op)
    assert f"node({native!r}," in emit("onnx", g64.with_dtype("float32"))
    assert f"node({native!r}," not in emit("onnx", g64)
    x = helper.make_tensor_value_info("x", TensorProto.DOUBLE, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.DOUBLE, [2, 3])
    graph = helper.make_graph([helper.make_node(native, ["x"], ["y"])], "g", [x], [y])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)],
                              ir_version=10)
    with pytest.raises(NoKernel, match="NOT_IMPLEMENTED"):
        ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_integer_samples_are_exact_in_their_dtype(dtype: str) -> None:
    """Every integer-capable sample runs in its int dtype, with and without graph
    optimizations, and equals the reference exactly (int64 ReLU and UpSampling are
    spelled without Relu and Resize, which ONNX Runtime 1.31 has no int64 kernel for)."""
    for index, (op, g) in enumerate(all_samples(dtype)):
        weights = dict(init_model(g, np.random.default_rng(index)).weights)
        inputs = random_inputs(g, np.random.default_rng(1000 + index))
        want = reference(g, weights, inputs)
        for optimize in (True, False):
            got = _run(g, weights, inputs, optimize, probe=True)
            for n, y in zip(g.nodes, got, strict=True):
                assert y.dtype == np.dtype(dtype), (op, n.id, y.dtype)
                assert np.array_equal(y.astype(np.float64), want[n.id]), (op, n.a, optimize)
