"""The JAX lowering against a hand-written numpy reference of docs/ir.md.

Every sample graph of every op must emit, build and run; its outputs must have the
inferred shapes and the graph's dtype, ``probe=True`` must return every node's value,
and float64 results must agree with the numpy reference below to ~1e-9 (float32 to
~1e-4). The reference is written from the op docstrings (TF 'same' padding, Keras kernel
layouts, reset_after GRU...) without JAX, so a wrong lowering cannot agree with it by
construction. The model must also compile under ``jax.jit``.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from model_support import LOGIC_OPS, logic_reference

from dlfuzz.ir.graph import Graph, GraphBuilder, Node, TensorType
from dlfuzz.ir.lower import build, emit
from dlfuzz.ir.lower import jax_lower as module
from dlfuzz.ir.ops import CATALOG
from dlfuzz.ir.ops.base import same_pads
from dlfuzz.ir.samples import all_samples
from dlfuzz.ir.weights import init_model, random_inputs

pytest.importorskip("jax")

A = np.ndarray
SAMPLES = all_samples("float64")
IDS = [f"{i}-{op}" for i, (op, _) in enumerate(SAMPLES)]


# ---- numpy reference -------------------------------------------------------------------
def _pads(x: A, a: dict[str, Any], k: tuple[int, ...], s: tuple[int, ...],
          d: tuple[int, ...]) -> list[tuple[int, int]]:
    if a["padding"] == "valid":
        return [(0, 0)] * len(k)
    return [same_pads(x.shape[1 + i], k[i], s[i], d[i]) for i in range(len(k))]


def _windows(x: A, k: tuple[int, ...], s: tuple[int, ...], d: tuple[int, ...]):
    """(kernel offset, strided view (N, *out, C)) for every offset of the window."""
    n = len(k)
    out = [(x.shape[1 + i] - (k[i] - 1) * d[i] - 1) // s[i] + 1 for i in range(n)]
    for off in np.ndindex(*k):
        idx = tuple(slice(off[i] * d[i], off[i] * d[i] + (out[i] - 1) * s[i] + 1, s[i])
                    for i in range(n))
        yield off, x[(slice(None), *idx)]


def _conv_in(x: A, a: dict[str, Any], fill: float = 0.0):
    k, s = a["kernel_size"], a["strides"]
    d = a.get("dilation_rate", (1,) * len(k))
    pads = [(0, 0), *_pads(x, a, k, s, d), (0, 0)]
    return np.pad(x, pads, constant_values=fill), k, s, d


def conv(x: A, kernel: A, a: dict[str, Any]) -> A:
    xp, k, s, d = _conv_in(x, a)
    return sum(win @ kernel[off] for off, win in _windows(xp, k, s, d))


def depthwise(x: A, kernel: A, a: dict[str, Any]) -> A:
    """Output channel c * multiplier + m = input channel c times kernel[..., c, m]."""
    xp, k, s, d = _conv_in(x, a)
    parts = [(win[..., :, None] * kernel[off]) for off, win in _windows(xp, k, s, d)]
    total = sum(parts)
    return total.reshape(*total.shape[:-2], -1)


def conv_transpose(x: A, kernel: A, a: dict[str, Any]) -> A:
    """Scatter each input position into the full output (in-1)*s + k, crop for 'same'."""
    k, s, n = a["kernel_size"], a["strides"], len(a["kernel_size"])
    full = [(x.shape[1 + i] - 1) * s[i] + k[i] for i in range(n)]
    out = np.zeros((x.shape[0], *full, kernel.shape[-2]))
    for off in np.ndindex(*k):
        idx = tuple(slice(off[i], off[i] + (x.shape[1 + i] - 1) * s[i] + 1, s[i])
                    for i in range(n))
        out[(slice(None), *idx)] += x @ kernel[off].T
    if a["padding"] == "same":
        crop = []
        for i in range(n):
            before = (k[i] - s[i]) // 2
            crop.append(slice(before, before + x.shape[1 + i] * s[i]))
        out = out[(slice(None), *crop)]
    return out


def pool(x: A, a: dict[str, Any], reduce: Callable[..., A]) -> A:
    """Padded positions are NaN, so nanmax / nanmean see only the real elements."""
    window = {"kernel_size": a["pool_size"], "strides": a["strides"] or a["pool_size"],
              "padding": a["padding"]}
    xp, k, s, d = _conv_in(x, window, np.nan)
    return reduce(np.stack([w for _, w in _windows(xp, k, s, d)]), axis=0)


def rnn(op: str, x: A, w: dict[str, A], a: dict[str, Any]) -> A:
    def sig(v: A) -> A:
        return 1 / (1 + np.exp(-v))

    u, (n, steps, _) = a["units"], x.shape
    h, c, seq = np.zeros((n, u)), np.zeros((n, u)), []
    k, rk, b = w["kernel"], w["recurrent_kernel"], w["bias"]
    for t in range(steps):
        xt = x[:, t]
        if op == "SimpleRNN":
            h = np.tanh(xt @ k + h @ rk + b)
        elif op == "LSTM":
            z = xt @ k + h @ rk + b
            i, f, g, o = (z[:, j * u:(j + 1) * u] for j in range(4))
            c = sig(f) * c + sig(i) * np.tanh(g)
            h = sig(o) * np.tanh(c)
        else:
            xz, hz = xt @ k + b[0], h @ rk + b[1]
            z = sig(xz[:, :u] + hz[:, :u])
            r = sig(xz[:, u:2 * u] + hz[:, u:2 * u])
            h = z * h + (1 - z) * np.tanh(xz[:, 2 * u:] + r * hz[:, 2 * u:])
        seq.append(h)
    return np.stack(seq, axis=1) if a["return_sequences"] else h


def _bias(w: dict[str, A]) -> A | float:
    return w.get("bias", 0.0)


def _erf(v: A) -> A:
    return np.vectorize(math.erf)(v)


SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _softplus(x: A) -> A:
    """log(1 + exp(x)), stable: max(x, 0) + log1p(exp(-|x|))."""
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


def _norm(x: A, mean: A, var: A, w: dict[str, A], eps: float) -> A:
    return w["gamma"] * (x - mean) / np.sqrt(var + eps) + w["beta"]


def _spatial(x: A) -> tuple[int, ...]:
    return tuple(range(1, x.ndim - 1))


Ref = Callable[[dict[str, Any], list[A], dict[str, A]], A]
REF: dict[str, Ref] = {
    "Dense": lambda a, xs, w: xs[0] @ w["kernel"] + _bias(w),
    "DepthwiseConv2D": lambda a, xs, w: depthwise(xs[0], w["kernel"], a) + _bias(w),
    "ReLU": lambda a, xs, w: np.minimum(
        np.maximum(xs[0], 0), np.inf if a["max_value"] is None else a["max_value"]),
    "LeakyReLU": lambda a, xs, w: np.where(xs[0] >= 0, xs[0], a["alpha"] * xs[0]),
    "PReLU": lambda a, xs, w: np.where(xs[0] >= 0, xs[0], w["alpha"] * xs[0]),
    "ELU": lambda a, xs, w: np.where(xs[0] > 0, xs[0], a["alpha"] * np.expm1(xs[0])),
    "ThresholdedReLU": lambda a, xs, w: np.where(xs[0] > a["theta"], xs[0], 0.0),
    "Softmax": lambda a, xs, w: (lambda e: e / e.sum(a["axis"], keepdims=True))(
        np.exp(xs[0] - xs[0].max(a["axis"], keepdims=True))),
    "Sigmoid": lambda a, xs, w: 1 / (1 + np.exp(-xs[0])),
    "Tanh": lambda a, xs, w: np.tanh(xs[0]),
    "GELU": lambda a, xs, w: (
        0.5 * xs[0] * (1 + np.tanh(np.sqrt(2 / np.pi) * (xs[0] + 0.044715 * xs[0] ** 3)))
        if a["approximate"] else 0.5 * xs[0] * (1 + _erf(xs[0] / np.sqrt(2)))),
    "Softplus": lambda a, xs, w: _softplus(xs[0]),
    "Softsign": lambda a, xs, w: xs[0] / (1 + np.abs(xs[0])),
    "SELU": lambda a, xs, w: SELU_SCALE * np.where(
        xs[0] > 0, xs[0], SELU_ALPHA * np.expm1(np.minimum(xs[0], 0))),
    "SiLU": lambda a, xs, w: xs[0] / (1 + np.exp(-xs[0])),
    "HardSigmoid": lambda a, xs, w: np.clip(xs[0] / 6 + 0.5, 0, 1),
    "Mish": lambda a, xs, w: xs[0] * np.tanh(_softplus(xs[0])),
    "Abs": lambda a, xs, w: np.abs(xs[0]),
    "Square": lambda a, xs, w: xs[0] * xs[0],
    "Clip": lambda a, xs, w: np.minimum(np.maximum(xs[0], a["min_value"]), a["max_value"]),
    "BatchNorm": lambda a, xs, w: _norm(xs[0], w["moving_mean"], w["moving_variance"], w,
                                        a["epsilon"]),
    "LayerNorm": lambda a, xs, w: _norm(xs[0], xs[0].mean(-1, keepdims=True),
                                        xs[0].var(-1, keepdims=True), w, a["epsilon"]),
    "Add": lambda a, xs, w: sum(xs),
    "Mul": lambda a, xs, w: math.prod(xs),
    "Subtract": lambda a, xs, w: xs[0] - xs[1],
    "Maximum": lambda a, xs, w: np.maximum.reduce(xs),
    "Minimum": lambda a, xs, w: np.minimum.reduce(xs),
    "MatMul": lambda a, xs, w: xs[0] @ xs[1],
    "AddConst": lambda a, xs, w: xs[0] + w["value"],
    "MulConst": lambda a, xs, w: xs[0] * w["value"],
    "Flatten": lambda a, xs, w: xs[0].reshape(xs[0].shape[0], -1),
    "Reshape": lambda a, xs, w: xs[0].reshape(xs[0].shape[0], *a["target_shape"]),
    "Transpose": lambda a, xs, w: xs[0].transpose(0, *a["dims"]),
    "Concat": lambda a, xs, w: np.concatenate(xs, a["axis"]),
    "RepeatVector": lambda a, xs, w: np.stack([xs[0]] * a["n"], axis=1),
    "ReduceMean": lambda a, xs, w: xs[0].mean(a["axes"], keepdims=a["keepdims"]),
    "ReduceMax": lambda a, xs, w: xs[0].max(a["axes"], keepdims=a["keepdims"]),
    "ReduceSum": lambda a, xs, w: xs[0].sum(a["axes"], keepdims=a["keepdims"]),
    "ReduceMin": lambda a, xs, w: xs[0].min(a["axes"], keepdims=a["keepdims"]),
    "Identity": lambda a, xs, w: xs[0],
    "Dropout": lambda a, xs, w: xs[0],
    **{op: lambda a, xs, w, op=op: logic_reference(op, a, xs) for op in LOGIC_OPS},
}
for _n in (1, 2, 3):
    REF[f"Conv{_n}D"] = lambda a, xs, w: conv(xs[0], w["kernel"], a) + _bias(w)
    REF[f"MaxPool{_n}D"] = lambda a, xs, w: pool(xs[0], a, np.nanmax)
    REF[f"AvgPool{_n}D"] = lambda a, xs, w: pool(xs[0], a, np.nanmean)
    REF[f"GlobalMaxPool{_n}D"] = lambda a, xs, w: xs[0].max(_spatial(xs[0]))
    REF[f"GlobalAvgPool{_n}D"] = lambda a, xs, w: xs[0].mean(_spatial(xs[0]))
    REF[f"ZeroPadding{_n}D"] = lambda a, xs, w: np.pad(xs[0], [(0, 0), *a["padding"], (0, 0)])
    REF[f"Cropping{_n}D"] = lambda a, xs, w: xs[0][(slice(None), *[
        slice(lo, xs[0].shape[1 + i] - hi) for i, (lo, hi) in enumerate(a["cropping"])])]
    REF[f"UpSampling{_n}D"] = lambda a, xs, w: _upsample(xs[0], a["size"])
for _n in (1, 2):
    REF[f"SeparableConv{_n}D"] = lambda a, xs, w: conv(
        depthwise(xs[0], w["depthwise_kernel"], a), w["pointwise_kernel"],
        {"kernel_size": (1,) * len(a["kernel_size"]), "strides": (1,) * len(a["strides"]),
         "padding": "valid"}) + _bias(w)
for _n in (2, 3):
    REF[f"Conv{_n}DTranspose"] = lambda a, xs, w: conv_transpose(xs[0], w["kernel"], a) \
        + _bias(w)
for _op in ("SimpleRNN", "LSTM", "GRU"):
    REF[_op] = lambda a, xs, w, op=_op: rnn(op, xs[0], w, a)


def _upsample(x: A, size: tuple[int, ...]) -> A:
    for axis, s in enumerate(size, start=1):
        x = np.repeat(x, s, axis=axis)
    return x


def reference(g: Graph, weights: dict[str, A], xs: list[A]) -> dict[str, A]:
    vals = {name: x.astype(np.float64) for name, x in zip(g.input_names, xs, strict=True)}
    for n in g.nodes:
        w = {k.split(".", 1)[1]: v.astype(np.float64) for k, v in weights.items()
             if k.split(".", 1)[0] == n.id}
        vals[n.id] = np.asarray(REF[n.op](n.a, [vals[v] for v in n.inputs], w))
    return vals


# ---- tests -----------------------------------------------------------------------------
def _case(i: int, g: Graph) -> tuple[dict[str, A], list[A]]:
    return (dict(init_model(g, np.random.default_rng(i)).weights),
            random_inputs(g, np.random.default_rng(1000 + i)))


def _run(g: Graph, w: dict[str, A], xs: list[A], probe: bool = False, **opts: Any):
    return build(emit("jax", g, probe=probe), w, **opts)(*xs)


def test_every_op_has_an_emitter_and_a_reference() -> None:
    assert set(module.EMITTERS) == set(CATALOG) == set(REF)


@pytest.mark.parametrize("i", range(len(SAMPLES)), ids=IDS)
def test_float64_sample_agrees_with_numpy(i: int) -> None:
    _, g = SAMPLES[i]
    w, xs = _case(i, g)
    types, want = g.types(), reference(g, w, xs)
    outs = _run(g, w, xs)
    assert len(outs) == len(g.outputs)
    for v, got in zip(g.outputs, outs, strict=True):
        assert got.shape == types[v].shape and str(got.dtype) == "float64"
        np.testing.assert_allclose(np.asarray(got), want[v], rtol=1e-9, atol=1e-12)
    probe = _run(g, w, xs, probe=True)
    assert [p.shape for p in probe] == [types[n.id].shape for n in g.nodes]


def _middle_sample_per_op(samples: list[tuple[str, Graph]]) -> list[tuple[int, str, Graph]]:
    """One sample per op kind (the middle variant: 'same' with strides where there is one)."""
    by_op: dict[str, list[int]] = {}
    for i, (op, _) in enumerate(samples):
        by_op.setdefault(op, []).append(i)
    return [(idx[len(idx) // 2], op, samples[idx[len(idx) // 2]][1]) for op, idx in by_op.items()]


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_low_precision_samples_run_in_their_dtype(dtype: str) -> None:
    """float32: every sample; float16 and bfloat16 (slow eager compiles): one per op."""
    tol = {"float32": 1e-4, "float16": 3e-2, "bfloat16": 2e-1}[dtype]
    samples = all_samples(dtype)
    cases = ([(i, op, g) for i, (op, g) in enumerate(samples)] if dtype == "float32"
             else _middle_sample_per_op(samples))
    for i, op, g in cases:
        w, xs = _case(i, g)
        want = reference(g, w, xs)
        for v, got in zip(g.outputs, _run(g, w, xs), strict=True):
            assert got.shape == g.type_of(v).shape and str(got.dtype) == dtype, op
            np.testing.assert_allclose(np.asarray(got, np.float64), want[v], rtol=tol,
                                       atol=tol, err_msg=f"{i} {op} {dtype}")


@pytest.mark.parametrize("op", ["LSTM", "GRU", "MaxPool2D", "AvgPool3D", "Conv2DTranspose",
                                "SeparableConv2D"])
def test_jit_compiles_and_agrees(op: str) -> None:
    import jax

    for i, (name, g) in enumerate(SAMPLES):
        if name != op:
            continue
        w, xs = _case(i, g)
        model = build(emit("jax", g), w)
        for eager, jitted in zip(model(*xs), jax.jit(model)(*xs), strict=True):
            np.testing.assert_allclose(np.asarray(jitted), np.asarray(eager), rtol=1e-12)
        assert len(_run(g, w, xs, jit=True)) == len(g.outputs)


def test_source_is_plain_tagged_jax() -> None:
    b = GraphBuilder((2, 7, 8, 3), dtype="float64")
    h = b.add("Conv2D", "x0", filters=4, kernel_size=(3, 3), padding="same")
    h = b.add("MaxPool2D", b.add("ReLU", h), padding="same", pool_size=(3, 3), strides=(2, 2))
    g = b.build(b.add("Dense", b.add("Flatten", h), units=5), h)
    src = emit("jax", g)
    tree = ast.parse(src)
    imports = [s for s in tree.body if isinstance(s, ast.Import | ast.ImportFrom)]
    assert all(s.names[0].name.split(".")[0] in ("jax", "numpy") or
               getattr(s, "module", "") in ("jax",) for s in imports)
    first = tree.body[len(imports)]
    assert ast.unparse(first) == "jax.config.update('jax_enable_x64', True)"
    for n in g.nodes:
        assert f"# {n.id} {n.op}" in src
    w, xs = _case(0, g)
    want = reference(g, w, xs)
    for v, got in zip(g.outputs, _run(g, w, xs), strict=True):
        np.testing.assert_allclose(np.asarray(got), want[v], rtol=1e-9, atol=1e-12)


def test_value_names_that_clash_with_the_program_are_renamed() -> None:
    nodes = (Node("jnp", "ReLU", ("x0",), (("max_value", None),)),
             Node("model", "Add", ("jnp", "x0")),
             Node("2bad-name", "MulConst", ("model",)))
    g = Graph((TensorType((2, 3), "float64"),), nodes, ("2bad-name", "jnp")).check()
    w = {"2bad-name.value": np.array(1.5)}
    xs = [np.arange(6.0).reshape(2, 3) - 3]
    want = reference(g, w, xs)
    outs = _run(g, w, xs)
    np.testing.assert_allclose(np.asarray(outs[0]), want["2bad-name"])
    np.testing.assert_allclose(np.asarray(outs[1]), want["jnp"])


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_integer_samples_are_exact_in_their_dtype(dtype: str) -> None:
    """Every integer-capable sample stays in its int dtype (jnp.sum of int32 under x64
    would give int64; a float clip bound a float) and equals numpy exactly."""
    for i, (op, g) in enumerate(all_samples(dtype)):
        w, xs = _case(i, g)
        want = reference(g, w, xs)
        for node, got in zip(g.nodes, _run(g, w, xs, probe=True), strict=True):
            assert str(got.dtype) == dtype, (op, node.id, got.dtype)
            assert np.array_equal(np.asarray(got).astype(np.float64), want[node.id]), op
        jitted = _run(g, w, xs, jit=True)
        for v, got in zip(g.outputs, jitted, strict=True):
            assert str(got.dtype) == dtype
            assert np.array_equal(np.asarray(got).astype(np.float64), want[v]), (op, "jit")
