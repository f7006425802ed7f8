"""The PyTorch lowering: every sample emits, builds, runs and matches a numpy reference.

The reference below is written from the IR docstrings (channels-last, Keras kernel
layouts, TensorFlow 'same' padding with the extra element after, GRU reset_after, LSTM
gates i, f, c, o), independently of torch: convolutions and pools are sliding windows,
transposed convolutions a scatter, recurrent layers a plain loop. float64 must agree to
~1e-9; float32, float16 and bfloat16 are checked against it at their own precision;
``torch.compile`` runs on a few samples including an LSTM.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from dlfuzz.ir.graph import Graph
from dlfuzz.ir.lower import build
from dlfuzz.ir.lower.torch_lower import emit
from dlfuzz.ir.ops.base import same_pads
from dlfuzz.ir.samples import all_samples
from dlfuzz.ir.weights import init_model, random_inputs

torch = pytest.importorskip("torch")

A = np.ndarray
SAMPLES = all_samples("float64")
IDS = [f"{i}-{op}" for i, (op, _) in enumerate(SAMPLES)]


# ---- numpy reference -----------------------------------------------------------------------
def _pad_same(x: A, k: tuple[int, ...], s: tuple[int, ...], d: tuple[int, ...],
              padding: str, value: float = 0.0) -> A:
    if padding != "same":
        return x
    pads = [same_pads(x.shape[1 + i], k[i], s[i], d[i]) for i in range(len(k))]
    return np.pad(x, [(0, 0), *pads, (0, 0)], constant_values=value)


def _windows(x: A, k: tuple[int, ...], s: tuple[int, ...], d: tuple[int, ...]) -> A:
    """(N, *S, C) -> (N, *O, C, *k): every strided, dilated window."""
    n = len(k)
    span = [(k[i] - 1) * d[i] + 1 for i in range(n)]
    w = np.lib.stride_tricks.sliding_window_view(x, span, axis=tuple(range(1, n + 1)))
    idx = (slice(None), *[slice(None, None, st) for st in s], slice(None),
           *[slice(None, None, dl) for dl in d])
    return w[idx]


def _conv_geometry(a: dict[str, Any]) -> tuple[tuple[int, ...], ...]:
    k = a["kernel_size"]
    return k, a["strides"], a.get("dilation_rate", (1,) * len(k))


def _depthwise(x: A, kernel: A, a: dict[str, Any]) -> A:
    k, s, d = _conv_geometry(a)
    win = _windows(_pad_same(x, k, s, d, a["padding"]), k, s, d)  # (N, *O, C, *k)
    n = len(k)
    kern = np.moveaxis(kernel, n, 0)  # (C, *k, m)
    out = np.einsum(win, [0, *range(1, n + 1), 10, *range(20, 20 + n)],
                    kern, [10, *range(20, 20 + n), 30], [0, *range(1, n + 1), 10, 30])
    return out.reshape(*out.shape[:-2], -1)  # channel c * m + j


def ref_conv(x: A, w: dict[str, A], a: dict[str, Any]) -> A:
    k, s, d = _conv_geometry(a)
    n = len(k)
    win = _windows(_pad_same(x, k, s, d, a["padding"]), k, s, d)
    kern = np.moveaxis(w["kernel"], n, 0)  # (C, *k, f)
    out = np.tensordot(win, kern, axes=(list(range(n + 1, 2 * n + 2)), list(range(n + 1))))
    return out + w["bias"] if "bias" in w else out


def ref_depthwise(x: A, w: dict[str, A], a: dict[str, Any]) -> A:
    out = _depthwise(x, w["kernel"], a)
    return out + w["bias"] if "bias" in w else out


def ref_separable(x: A, w: dict[str, A], a: dict[str, Any]) -> A:
    out = _depthwise(x, w["depthwise_kernel"], a) @ w["pointwise_kernel"].reshape(
        w["pointwise_kernel"].shape[-2:])
    return out + w["bias"] if "bias" in w else out


def ref_conv_transpose(x: A, w: dict[str, A], a: dict[str, Any]) -> A:
    k, s = a["kernel_size"], a["strides"]
    kern = w["kernel"]  # (*k, f, cin)
    n, size = len(k), x.shape[1:-1]
    full = np.zeros((x.shape[0], *[(size[i] - 1) * s[i] + k[i] for i in range(n)],
                     kern.shape[-2]))
    for off in itertools.product(*[range(v) for v in k]):
        idx = tuple(slice(off[i], off[i] + (size[i] - 1) * s[i] + 1, s[i]) for i in range(n))
        full[(slice(None), *idx)] += x @ kern[off].T
    if a["padding"] == "same":
        full = full[(slice(None), *[slice((k[i] - s[i]) // 2, (k[i] - s[i]) // 2
                                          + size[i] * s[i]) for i in range(n)])]
    return full + w["bias"] if "bias" in w else full


def ref_pool(kind: str) -> Callable[[A, dict[str, A], dict[str, Any]], A]:
    """Windows over a NaN-padded input: max/mean ignore the padded positions."""
    def f(x: A, w: dict[str, A], a: dict[str, Any]) -> A:
        k = a["pool_size"]
        s, d = a["strides"] or k, (1,) * len(k)
        win = _windows(_pad_same(x, k, s, d, a["padding"], np.nan), k, s, d)
        axes = tuple(range(-len(k), 0))
        return np.nanmax(win, axis=axes) if kind == "max" else np.nanmean(win, axis=axes)
    return f


def _sigmoid(v: A) -> A:
    return 1.0 / (1.0 + np.exp(-v))


def ref_rnn(op: str) -> Callable[[A, dict[str, A], dict[str, Any]], A]:
    return lambda x, w, a: _rnn(x, w, a, op)


def _rnn(x: A, w: dict[str, A], a: dict[str, Any], op: str) -> A:
    u = a["units"]
    h = np.zeros((x.shape[0], u))
    c = np.zeros_like(h)
    seq = []
    for t in range(x.shape[1]):
        if op == "SimpleRNN":
            h = np.tanh(x[:, t] @ w["kernel"] + w["bias"] + h @ w["recurrent_kernel"])
        elif op == "LSTM":
            zz = x[:, t] @ w["kernel"] + w["bias"] + h @ w["recurrent_kernel"]
            i, f, g, o = (zz[:, j * u:(j + 1) * u] for j in range(4))
            c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
            h = _sigmoid(o) * np.tanh(c)
        else:
            xw = x[:, t] @ w["kernel"] + w["bias"][0]
            hu = h @ w["recurrent_kernel"] + w["bias"][1]
            z = _sigmoid(xw[:, :u] + hu[:, :u])
            r = _sigmoid(xw[:, u:2 * u] + hu[:, u:2 * u])
            hh = np.tanh(xw[:, 2 * u:] + r * hu[:, 2 * u:])
            h = z * h + (1 - z) * hh
        seq.append(h)
    return np.stack(seq, 1) if a["return_sequences"] else h


_erf = np.vectorize(math.erf)


def _gelu(x: A, a: dict[str, Any]) -> A:
    if a["approximate"]:
        return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + _erf(x / np.sqrt(2)))


SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _softplus(x: A) -> A:
    """log(1 + exp(x)) without overflow: max(x, 0) + log1p(exp(-|x|))."""
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


def _softmax(x: A, axis: int) -> A:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _crop(x: A, a: dict[str, Any]) -> A:
    return x[(slice(None), *[slice(lo, x.shape[1 + i] - hi)
                             for i, (lo, hi) in enumerate(a["cropping"])])]


def _upsample(x: A, a: dict[str, Any]) -> A:
    for i, s in enumerate(a["size"]):
        x = np.repeat(x, s, axis=1 + i)
    return x


def _norm(x: A, mean: A, var: A, w: dict[str, A], eps: float) -> A:
    return w["gamma"] * (x - mean) / np.sqrt(var + eps) + w["beta"]


ONE: dict[str, Callable[[A, dict[str, A], dict[str, Any]], A]] = {
    "Dense": lambda x, w, a: x @ w["kernel"] + w.get("bias", 0.0),
    "DepthwiseConv2D": ref_depthwise,
    "ReLU": lambda x, w, a: np.clip(x, 0, a["max_value"]),
    "LeakyReLU": lambda x, w, a: np.where(x >= 0, x, a["alpha"] * x),
    "PReLU": lambda x, w, a: np.where(x >= 0, x, w["alpha"] * x),
    "ELU": lambda x, w, a: np.where(x > 0, x, a["alpha"] * (np.exp(x) - 1)),
    "ThresholdedReLU": lambda x, w, a: np.where(x > a["theta"], x, 0.0),
    "Softmax": lambda x, w, a: _softmax(x, a["axis"]),
    "Sigmoid": lambda x, w, a: _sigmoid(x),
    "Tanh": lambda x, w, a: np.tanh(x),
    "GELU": lambda x, w, a: _gelu(x, a),
    "Softplus": lambda x, w, a: _softplus(x),
    "Softsign": lambda x, w, a: x / (1 + np.abs(x)),
    "SELU": lambda x, w, a: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(
        np.minimum(x, 0))),
    "SiLU": lambda x, w, a: x * _sigmoid(x),
    "HardSigmoid": lambda x, w, a: np.maximum(0, np.minimum(1, x / 6 + 0.5)),
    "Mish": lambda x, w, a: x * np.tanh(_softplus(x)),
    "Abs": lambda x, w, a: np.abs(x),
    "Square": lambda x, w, a: x * x,
    "Clip": lambda x, w, a: np.minimum(np.maximum(x, a["min_value"]), a["max_value"]),
    "BatchNorm": lambda x, w, a: _norm(x, w["moving_mean"], w["moving_variance"], w,
                                       a["epsilon"]),
    "LayerNorm": lambda x, w, a: _norm(x, x.mean(-1, keepdims=True), x.var(-1, keepdims=True),
                                       w, a["epsilon"]),
    "AddConst": lambda x, w, a: x + w["value"],
    "MulConst": lambda x, w, a: x * w["value"],
    "Flatten": lambda x, w, a: x.reshape(x.shape[0], -1),
    "Reshape": lambda x, w, a: x.reshape(x.shape[0], *a["target_shape"]),
    "Transpose": lambda x, w, a: x.transpose(0, *a["dims"]),
    "RepeatVector": lambda x, w, a: np.repeat(x[:, None], a["n"], axis=1),
    "ReduceMean": lambda x, w, a: x.mean(axis=a["axes"], keepdims=a["keepdims"]),
    "ReduceMax": lambda x, w, a: x.max(axis=a["axes"], keepdims=a["keepdims"]),
    "ReduceSum": lambda x, w, a: x.sum(axis=a["axes"], keepdims=a["keepdims"]),
    "ReduceMin": lambda x, w, a: x.min(axis=a["axes"], keepdims=a["keepdims"]),
    "Identity": lambda x, w, a: x,
    "Dropout": lambda x, w, a: x,
    **{f"Conv{n}D": ref_conv for n in (1, 2, 3)},
    **{f"SeparableConv{n}D": ref_separable for n in (1, 2)},
    **{f"Conv{n}DTranspose": ref_conv_transpose for n in (2, 3)},
    **{f"MaxPool{n}D": ref_pool("max") for n in (1, 2, 3)},
    **{f"AvgPool{n}D": ref_pool("avg") for n in (1, 2, 3)},
    **{f"GlobalMaxPool{n}D": lambda x, w, a: x.max(axis=tuple(range(1, x.ndim - 1)))
       for n in (1, 2, 3)},
    **{f"GlobalAvgPool{n}D": lambda x, w, a: x.mean(axis=tuple(range(1, x.ndim - 1)))
       for n in (1, 2, 3)},
    **{f"ZeroPadding{n}D": lambda x, w, a: np.pad(x, [(0, 0), *a["padding"], (0, 0)])
       for n in (1, 2, 3)},
    **{f"Cropping{n}D": lambda x, w, a: _crop(x, a) for n in (1, 2, 3)},
    **{f"UpSampling{n}D": lambda x, w, a: _upsample(x, a) for n in (1, 2, 3)},
    **{op: ref_rnn(op) for op in ("SimpleRNN", "LSTM", "GRU")},
    "LogicalNot": lambda x, w, a: (x == 0).astype(np.float64),
}
MANY: dict[str, Callable[[list[A], dict[str, Any]], A]] = {
    "Add": lambda xs, a: sum(xs[1:], xs[0]),
    "Mul": lambda xs, a: np.prod(np.stack(xs), axis=0),
    "Subtract": lambda xs, a: xs[0] - xs[1],
    "Maximum": lambda xs, a: np.maximum.reduce(xs),
    "Minimum": lambda xs, a: np.minimum.reduce(xs),
    "MatMul": lambda xs, a: xs[0] @ xs[1],
    "Concat": lambda xs, a: np.concatenate(xs, axis=a["axis"]),
    "Compare": lambda xs, a: getattr(np, a["mode"])(xs[0], xs[1]).astype(np.float64),
    "Logical": lambda xs, a: getattr(np, f"logical_{a['mode']}")(xs[0], xs[1]).astype(
        np.float64),
    "Where": lambda xs, a: np.where(xs[0] != 0, xs[1], xs[2]),
}


def reference(g: Graph, weights: dict[str, A], xs: list[A]) -> dict[str, A]:
    """Every value of ``g`` computed in float64 numpy."""
    env = {name: x.astype(np.float64) for name, x in zip(g.input_names, xs, strict=True)}
    for n in g.nodes:
        w = {k.split(".", 1)[1]: v.astype(np.float64) for k, v in weights.items()
             if k.split(".", 1)[0] == n.id}
        args = [env[v] for v in n.inputs]
        env[n.id] = (MANY[n.op](args, n.a) if n.op in MANY else ONE[n.op](args[0], w, n.a))
    return env


# ---- the tests -----------------------------------------------------------------------------
def _setup(i: int, g: Graph, dtype: str = "float64") -> tuple[Graph, dict[str, A], list[A]]:
    g = g.with_dtype(dtype)
    model = init_model(g, np.random.default_rng(i))
    return g, dict(model.weights), random_inputs(g, np.random.default_rng(1000 + i))


def _to_torch(x: A) -> Any:
    if x.dtype.name == "bfloat16":
        return torch.from_numpy(x.astype(np.float32)).to(torch.bfloat16)
    return torch.from_numpy(x)


def _rel(out: Any, want: A) -> float:
    got = out.to(torch.float64).numpy()
    return float(np.max(np.abs(got - want))) / max(float(np.max(np.abs(want))), 1.0)


@pytest.mark.parametrize("i", range(len(SAMPLES)), ids=IDS)
def test_float64_sample_matches_reference(i: int) -> None:
    _, g = SAMPLES[i]
    g, weights, xs = _setup(i, g)
    types = g.types()
    ref = reference(g, weights, xs)
    outs = build(emit(g), weights)(*map(_to_torch, xs))
    assert isinstance(outs, tuple) and len(outs) == len(g.outputs)
    for name, out in zip(g.outputs, outs, strict=True):
        assert tuple(out.shape) == types[name].shape and out.dtype == torch.float64
        assert _rel(out, ref[name]) < 1e-9, name
    probes = build(emit(g, probe=True), weights)(*map(_to_torch, xs))
    assert len(probes) == len(g.nodes)
    for node, out in zip(g.nodes, probes, strict=True):
        assert tuple(out.shape) == types[node.id].shape
        assert _rel(out, ref[node.id]) < 1e-9, node.id


TOLERANCE = {"float32": 1e-5, "float16": 5e-3, "bfloat16": 3e-2}


@pytest.mark.parametrize("dtype", list(TOLERANCE))
def test_low_precision_samples_compute_in_their_dtype(dtype: str) -> None:
    """Every sample runs in the dtype (no upcast) and stays near the float64 reference."""
    torch_dtype = getattr(torch, dtype)
    bad = []
    for i, (op, g) in enumerate(SAMPLES):
        g, weights, xs = _setup(i, g, dtype)
        ref = reference(g, weights, xs)
        for node, out in zip(g.nodes, build(emit(g, probe=True), weights)(
                *map(_to_torch, xs)), strict=True):
            assert out.dtype == torch_dtype, (op, node.id, out.dtype)
            if not _rel(out, ref[node.id]) < TOLERANCE[dtype]:
                bad.append((i, op, node.id, _rel(out, ref[node.id])))
    assert not bad


@pytest.mark.parametrize("op", ["LSTM", "Conv2D", "AvgPool2D"])
def test_torch_compile_runs_the_model(op: str) -> None:
    """Compiled agrees with eager, and Dynamo really traced the frame (RNNs included)."""
    from torch._dynamo.testing import CompileCounter

    i = next(i for i, (o, g) in enumerate(SAMPLES) if o == op and g.nodes[0].a.get(
        "padding", "same") == "same")
    g, weights, xs = _setup(i, SAMPLES[i][1])
    inputs = list(map(_to_torch, xs))
    eager = build(emit(g), weights)(*inputs)
    compiled = build(emit(g), weights, compile=True)(*inputs)
    for want, got in zip(eager, compiled, strict=True):
        assert torch.allclose(want, got, rtol=1e-9, atol=1e-12)
    counter = CompileCounter()
    torch._dynamo.reset()
    torch.compile(build(emit(g), weights), backend=counter)(*inputs)
    assert counter.frame_count >= 1 and counter.op_count >= 1


@pytest.mark.parametrize("seed", ["lenet5", "resnet", "mobilenet", "lstm", "gru"])
def test_seed_models_match_reference(seed: str) -> None:
    """Multi-node graphs: naming, fan-out and layout changes between nodes compose."""
    from dlfuzz.engines.model.seeds import load_seed

    model = load_seed(seed, np.random.default_rng(0), dtype="float64")
    g, weights = model.graph, dict(model.weights)
    xs = random_inputs(g, np.random.default_rng(1))
    ref = reference(g, weights, xs)
    probes = build(emit(g, probe=True), weights)(*map(_to_torch, xs))
    for node, out in zip(g.nodes, probes, strict=True):
        assert _rel(out, ref[node.id]) < 1e-9, node.id


def test_emitted_source_is_plain_tagged_torch() -> None:
    b = next(g for op, g in SAMPLES if op == "GRU")
    src = emit(b)
    assert "import torch\n" in src and "import torch.nn.functional as F" in src
    assert "tensorflow" not in src and "jax" not in src
    assert all("# n0 GRU" in line for line in src.splitlines() if "rnn_n0" in line)


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool"])
def test_integer_samples_are_exact_in_their_dtype(dtype: str) -> None:
    """Every sample of every kind that allows integers (or bools) runs in that dtype
    (torch.sum would widen int32 to int64, a float clamp bound would make it float) and
    equals the reference exactly (small whole numbers: float64 holds every value)."""
    torch_dtype = getattr(torch, dtype)
    for i, (op, g) in enumerate(all_samples(dtype)):
        g, weights, xs = _setup(i, g, dtype)
        ref = reference(g, weights, xs)
        for node, out in zip(g.nodes, build(emit(g, probe=True), weights)(
                *map(_to_torch, xs)), strict=True):
            assert out.dtype == torch_dtype, (op, node.id, out.dtype)
            assert np.array_equal(out.numpy().astype(np.float64), ref[node.id]), (op, node.a)
