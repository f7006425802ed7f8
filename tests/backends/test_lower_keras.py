"""The Keras 3 lowering builds and runs every IR sample on all three Keras backends.

Keras fixes its backend at import, so each backend (tensorflow, jax, torch) runs in its
own subprocess: this file, run as a script, is that helper. It emits every sample of
``all_samples`` (plain and probe), builds it with seeded weights, runs it and saves the
outputs to an ``.npz`` plus a JSON summary (errors, output dtypes). The test process then
checks output counts and shapes against the inferred types, dtypes against the graph's,
and values against ``REFERENCE``, a numpy implementation of docs/ir.md written here
independently of Keras: float64 to 1e-9 of the value's scale, bfloat16 (the dtype whose
weights and inputs need converting) to 1e-1. ``python test_lower_keras.py OUT float32``
runs any other dtypes by hand.

Integer graphs (int32, int64: the samples of every integer-capable kind, ``all_samples``
of that dtype) run in a second set of helpers and must be exact, in the graph's dtype, on
the random inputs (-10..10) and, for int64, also on ``WIDE_INPUTS`` data that holds
values beyond int32, so an int64 graph computed in int32 cannot pass by value either.
``INT_BUGS`` are the Keras bugs found so; they are strict xfails (they fail the test once
Keras fixes them) and the lowering does not work around them: dlfuzz must report them.

Where Keras (or the engine under it) itself departs from docs/ir.md, ``KNOWN`` says
how and why; those are library bugs and limitations the fuzzer should report, not
lowering errors, so the test relaxes exactly that check for exactly those cases.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from model_support import LOGIC_OPS, logic_reference

from dlfuzz.ir.graph import Graph
from dlfuzz.ir.ops.base import same_pads
from dlfuzz.ir.samples import all_samples
from dlfuzz.ir.weights import init_model, random_inputs

BACKENDS = ("tensorflow", "jax", "torch")
DTYPES = ("float64", "bfloat16")
INT_DTYPES = ("int32", "int64")
SAMPLES = all_samples("float64")
INT_SAMPLES = {dtype: all_samples(dtype) for dtype in INT_DTYPES}
# int64 graphs also run on the same inputs with one element beyond int32 in each input
# (x0 gets +WIDE, x1 -WIDE; the reference computes integer graphs in int64, exactly).
WIDE = 3_000_000_000
WIDE_INPUTS = "int64-wide"
# value tolerance relative to the reference's largest magnitude (at least 1), per dtype
TOLERANCE = {"float64": 1e-9, "float32": 1e-4, "float16": 2e-2, "bfloat16": 1e-1}
FLOAT32_ACCURATE = 1e-6  # float64 results that went through float32 somewhere

Arrays = list[np.ndarray]
Weights = dict[str, np.ndarray]


def _asymmetric_same(graph: Graph) -> bool:
    """A 'same' pooling window whose padding is uneven on some axis."""
    node, x = graph.nodes[0], graph.inputs[0]
    a = node.a
    if a.get("padding") != "same":
        return False
    strides = a["strides"] or a["pool_size"]
    return any(len(set(same_pads(x.shape[1 + i], k, strides[i]))) > 1
               for i, k in enumerate(a["pool_size"]))


@dataclass(frozen=True)
class Known:
    """A departure of Keras itself from docs/ir.md, and what the test relaxes for it.

    effect: ``imprecise`` (values to float32 accuracy), ``downcast`` (a float32 result
    from a float64 graph, to float32 accuracy), ``wrong`` (values not compared),
    ``fails`` (building or running may raise).
    """

    backends: tuple[str, ...]
    dtypes: tuple[str, ...]
    ops: tuple[str, ...]
    effect: str
    why: str
    when: Callable[[Graph], bool] = lambda graph: True


_MEANS = ("GlobalAvgPool1D", "GlobalAvgPool2D", "GlobalAvgPool3D", "ReduceMean",
          "BatchNorm", "LayerNorm")
_RESULT_TYPE = ("keras.backend.result_type maps float64 to float32 on the jax and torch "
                "backends (keras#23223), so ops that use it compute float64 in float32")
KNOWN: tuple[Known, ...] = (
    Known(("jax", "torch"), ("float64",), _MEANS, "imprecise",
          f"keras.ops.mean/moments: {_RESULT_TYPE}"),
    Known(("jax",), ("float64",), ("LSTM", "GRU"), "imprecise",
          f"keras.ops.tanh: {_RESULT_TYPE}; LSTM/GRU promote the result back"),
    Known(("jax",), ("float64",), ("Tanh",), "downcast", f"keras.ops.tanh: {_RESULT_TYPE}"),
    Known(("jax",), ("float64",), ("SimpleRNN",), "fails",
          "keras.ops.tanh returns float32 inside lax.scan, whose carry is float64: "
          "TypeError 'scan body function carry input and carry output must have equal "
          "types'"),
    Known(("torch",), ("float64",), ("Dense", "SimpleRNN"), "imprecise",
          f"keras.ops.matmul: {_RESULT_TYPE}"),
    Known(("torch",), ("float64",), ("Dense", "MatMul", "Maximum", "Minimum"), "downcast",
          f"keras.ops.matmul/maximum/minimum: {_RESULT_TYPE}",
          lambda graph: graph.nodes[0].op != "Dense" or graph.inputs[0].rank > 2),
    Known(("torch",), tuple(TOLERANCE), ("AvgPool1D", "AvgPool2D", "AvgPool3D"), "wrong",
          "uneven 'same' padding: the torch backend pads evenly and counts the padded "
          "zeros (keras#19721, fixed after 3.15 by keras#23233)", _asymmetric_same),
    Known(("torch",), ("float16", "bfloat16"), ("AvgPool3D",), "fails",
          "torch has no half-precision avg_pool3d on CPU"),
    Known(("tensorflow",), ("float64", "float16"), ("MaxPool3D", "AvgPool3D"), "fails",
          "TensorFlow registers no float64/float16 MaxPool3D/AvgPool3D CPU kernel"),
    Known(("tensorflow",), ("float64",), ("LeakyReLU",), "imprecise",
          "tf.nn.leaky_relu takes alpha as a float32 attribute"),
    Known(("tensorflow",), ("float64",), ("GELU",), "imprecise",
          "tf.nn.gelu(approximate=False) is ~5e-9 off in float64"),
)


def known_effects(backend: str, dtype: str, graph: Graph) -> set[str]:
    return {k.effect for k in KNOWN if backend in k.backends and dtype in k.dtypes
            and graph.nodes[0].op in k.ops and k.when(graph)}


# (backend, kind, dtype) -> the Keras bug that makes the integer sample fail; each is a
# strict xfail of test_integer_sample_is_exact.
_INT64_TO_INT32 = ("keras.ops.maximum/minimum (which the Maximum/Minimum layers call) on "
                   "the torch backend convert both operands to keras.backend.result_type, "
                   "which maps int64 to int32: of int64 [3000000000, -5] and [1, 2], "
                   "keras.ops.maximum gives int32 [1, 2] and keras.ops.minimum int32 "
                   "[-1294967296, -5] (keras 3.15.1, torch 2.13)")
INT_BUGS: dict[tuple[str, str, str], str] = {
    ("torch", "Maximum", "int64"): _INT64_TO_INT32,
    ("torch", "Minimum", "int64"): _INT64_TO_INT32,
}


# ---- the numpy reference (channels-last, TensorFlow 'same' padding) -----------------------
def _pads(x: np.ndarray, a: dict[str, Any], k: tuple[int, ...], s: tuple[int, ...],
          d: tuple[int, ...]) -> list[tuple[int, int]]:
    if a["padding"] != "same":
        return [(0, 0)] * len(k)
    return [same_pads(x.shape[1 + i], k[i], s[i], d[i]) for i in range(len(k))]


def _windows(x: np.ndarray, a: dict[str, Any], k: tuple[int, ...], s: tuple[int, ...],
             d: tuple[int, ...], fill: float = 0.0) -> list[tuple[tuple[int, ...], np.ndarray]]:
    """(kernel offset, the input elements it meets at every output position) pairs."""
    pads = _pads(x, a, k, s, d)
    xp = np.pad(x, [(0, 0), *pads, (0, 0)], constant_values=fill)
    out = [(xp.shape[1 + i] - (k[i] - 1) * d[i] - 1) // s[i] + 1 for i in range(len(k))]
    return [(off, xp[(slice(None), *[slice(o * d[i], o * d[i] + (out[i] - 1) * s[i] + 1, s[i])
                                     for i, o in enumerate(off)])])
            for off in np.ndindex(*k)]


def _geometry(a: dict[str, Any]) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    k = a.get("kernel_size") or a["pool_size"]
    return k, a["strides"] or k, a.get("dilation_rate") or (1,) * len(k)


def _bias(y: np.ndarray, w: Weights) -> np.ndarray:
    return y + w["bias"] if "bias" in w else y


def _depthwise(x: np.ndarray, a: dict[str, Any], kernel: np.ndarray) -> np.ndarray:
    wins = _windows(x, a, *_geometry(a))
    y = sum(win[..., None] * kernel[off] for off, win in wins)
    return y.reshape(*y.shape[:-2], -1)  # channel c * multiplier + m


def conv(x: np.ndarray, a: dict[str, Any], w: Weights) -> np.ndarray:
    return _bias(sum(win @ w["kernel"][off] for off, win in _windows(x, a, *_geometry(a))), w)


def separable(x: np.ndarray, a: dict[str, Any], w: Weights) -> np.ndarray:
    y = _depthwise(x, a, w["depthwise_kernel"])
    return _bias(y @ w["pointwise_kernel"].reshape(y.shape[-1], -1), w)


def conv_transpose(x: np.ndarray, a: dict[str, Any], w: Weights) -> np.ndarray:
    """Scatter each input position through the kernel, then crop 'same' to in * s."""
    k, s, n = a["kernel_size"], a["strides"], len(a["kernel_size"])
    size = [(x.shape[1 + i] - 1) * s[i] + k[i] for i in range(n)]
    y = np.zeros((x.shape[0], *size, w["kernel"].shape[-2]))
    for off in np.ndindex(*k):
        y[(slice(None), *[slice(o, o + (x.shape[1 + i] - 1) * s[i] + 1, s[i])
                          for i, o in enumerate(off)])] += x @ w["kernel"][off].T
    if a["padding"] == "same":
        y = y[(slice(None), *[slice((k[i] - s[i]) // 2, (k[i] - s[i]) // 2 + x.shape[1 + i] * s[i])
                              for i in range(n)])]
    return _bias(y, w)


def pool(x: np.ndarray, a: dict[str, Any], kind: str) -> np.ndarray:
    geo = _geometry(a)
    if kind == "Max":
        return np.max([win for _, win in _windows(x, a, *geo, fill=-np.inf)], axis=0)
    total = sum(win for _, win in _windows(x, a, *geo))
    count = sum(win for _, win in _windows(np.ones_like(x), a, *geo))
    return total / count


def recurrent(x: np.ndarray, a: dict[str, Any], w: Weights, op: str) -> np.ndarray:
    def sig(v: np.ndarray) -> np.ndarray:
        return 1 / (1 + np.exp(-v))
    u, kern, rec = a["units"], w["kernel"], w["recurrent_kernel"]
    h = np.zeros((x.shape[0], u))
    c = np.zeros_like(h)
    seq = []
    for t in range(x.shape[1]):
        if op == "SimpleRNN":
            h = np.tanh(x[:, t] @ kern + h @ rec + w["bias"])
        elif op == "LSTM":
            z = x[:, t] @ kern + h @ rec + w["bias"]
            i, f, g, o = (z[:, j * u:(j + 1) * u] for j in range(4))
            c = sig(f) * c + sig(i) * np.tanh(g)
            h = sig(o) * np.tanh(c)
        else:
            xz = x[:, t] @ kern + w["bias"][0]
            hz = h @ rec + w["bias"][1]
            z, r = sig(xz[:, :u] + hz[:, :u]), sig(xz[:, u:2 * u] + hz[:, u:2 * u])
            hh = np.tanh(xz[:, 2 * u:] + r * hz[:, 2 * u:])
            h = z * h + (1 - z) * hh
        seq.append(h)
    return np.stack(seq, axis=1) if a["return_sequences"] else h


def _erf(v: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf)(v)


def _gelu(x: np.ndarray, a: dict[str, Any]) -> np.ndarray:
    if a["approximate"]:
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


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
    return (x - mean) / np.sqrt(var + a["epsilon"]) * w["gamma"] + w["beta"]


def _batch_norm(x: np.ndarray, a: dict[str, Any], w: Weights) -> np.ndarray:
    scale = w["gamma"] / np.sqrt(w["moving_variance"] + a["epsilon"])
    return (x - w["moving_mean"]) * scale + w["beta"]


def _crop(x: np.ndarray, a: dict[str, Any]) -> np.ndarray:
    return x[(slice(None), *[slice(b, x.shape[1 + i] - e) for i, (b, e) in
                             enumerate(a["cropping"])])]


def _upsample(x: np.ndarray, a: dict[str, Any]) -> np.ndarray:
    for i, s in enumerate(a["size"]):
        x = np.repeat(x, s, axis=1 + i)
    return x


def _pad(x: np.ndarray, a: dict[str, Any]) -> np.ndarray:
    return np.pad(x, [(0, 0), *a["padding"], (0, 0)])


def _merge(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable[..., np.ndarray]:
    def run(xs: Arrays, a: dict[str, Any], w: Weights) -> np.ndarray:
        out = xs[0]
        for x in xs[1:]:
            out = fn(out, x)
        return out
    return run


def _one(fn: Callable[[np.ndarray, dict[str, Any], Weights], np.ndarray]
         ) -> Callable[[Arrays, dict[str, Any], Weights], np.ndarray]:
    return lambda xs, a, w: fn(xs[0], a, w)


REFERENCE: dict[str, Callable[[Arrays, dict[str, Any], Weights], np.ndarray]] = {
    "AddConst": _one(lambda x, a, w: x + w["value"]),
    "MulConst": _one(lambda x, a, w: x * w["value"]),
    "Dense": _one(lambda x, a, w: _bias(x @ w["kernel"], w)),
    **{f"Conv{n}D": _one(conv) for n in (1, 2, 3)},
    "DepthwiseConv2D": _one(lambda x, a, w: _bias(_depthwise(x, a, w["kernel"]), w)),
    **{f"SeparableConv{n}D": _one(separable) for n in (1, 2)},
    **{f"Conv{n}DTranspose": _one(conv_transpose) for n in (2, 3)},
    **{f"{k}Pool{n}D": _one(lambda x, a, w, k=k: pool(x, a, k))
       for k in ("Max", "Avg") for n in (1, 2, 3)},
    **{f"GlobalMaxPool{n}D": _one(lambda x, a, w: x.max(axis=tuple(range(1, x.ndim - 1))))
       for n in (1, 2, 3)},
    **{f"GlobalAvgPool{n}D": _one(lambda x, a, w: x.mean(axis=tuple(range(1, x.ndim - 1))))
       for n in (1, 2, 3)},
    "ReLU": _one(lambda x, a, w: np.maximum(x, 0) if a["max_value"] is None
                 else np.minimum(np.maximum(x, 0), a["max_value"])),
    "LeakyReLU": _one(lambda x, a, w: np.where(x >= 0, x, a["alpha"] * x)),
    "PReLU": _one(lambda x, a, w: np.where(x >= 0, x, w["alpha"] * x)),
    "ELU": _one(lambda x, a, w: np.where(x > 0, x, a["alpha"] * np.expm1(np.minimum(x, 0)))),
    "ThresholdedReLU": _one(lambda x, a, w: np.where(x > a["theta"], x, 0.0)),
    "Softmax": _one(lambda x, a, w: _softmax(x, a["axis"])),
    "Sigmoid": _one(lambda x, a, w: 1 / (1 + np.exp(-x))),
    "Tanh": _one(lambda x, a, w: np.tanh(x)),
    "GELU": _one(lambda x, a, w: _gelu(x, a)),
    "Softplus": _one(lambda x, a, w: _softplus(x)),
    "Softsign": _one(lambda x, a, w: x / (1 + np.abs(x))),
    "SELU": _one(lambda x, a, w: SELU_SCALE * np.where(
        x > 0, x, SELU_ALPHA * np.expm1(np.minimum(x, 0)))),
    "SiLU": _one(lambda x, a, w: x / (1 + np.exp(-x))),
    "HardSigmoid": _one(lambda x, a, w: np.clip(x / 6 + 0.5, 0, 1)),
    "Mish": _one(lambda x, a, w: x * np.tanh(_softplus(x))),
    "Abs": _one(lambda x, a, w: np.abs(x)),
    "Square": _one(lambda x, a, w: x * x),
    "Clip": _one(lambda x, a, w: np.minimum(np.maximum(x, a["min_value"]), a["max_value"])),
    "BatchNorm": _one(_batch_norm),
    "LayerNorm": _one(_layer_norm),
    "Add": _merge(np.add),
    "Mul": _merge(np.multiply),
    "Subtract": _merge(np.subtract),
    "Maximum": _merge(np.maximum),
    "Minimum": _merge(np.minimum),
    "MatMul": _merge(np.matmul),
    "Flatten": _one(lambda x, a, w: x.reshape(x.shape[0], -1)),
    "Reshape": _one(lambda x, a, w: x.reshape(x.shape[0], *a["target_shape"])),
    "Transpose": _one(lambda x, a, w: x.transpose(0, *a["dims"])),
    "Concat": lambda xs, a, w: np.concatenate(xs, axis=a["axis"]),
    **{f"ZeroPadding{n}D": _one(lambda x, a, w: _pad(x, a)) for n in (1, 2, 3)},
    **{f"Cropping{n}D": _one(lambda x, a, w: _crop(x, a)) for n in (1, 2, 3)},
    **{f"UpSampling{n}D": _one(lambda x, a, w: _upsample(x, a)) for n in (1, 2, 3)},
    "RepeatVector": _one(lambda x, a, w: np.repeat(x[:, None], a["n"], axis=1)),
    "ReduceMean": _one(lambda x, a, w: x.mean(axis=a["axes"], keepdims=a["keepdims"])),
    "ReduceMax": _one(lambda x, a, w: x.max(axis=a["axes"], keepdims=a["keepdims"])),
    "ReduceSum": _one(lambda x, a, w: x.sum(axis=a["axes"], keepdims=a["keepdims"])),
    "ReduceMin": _one(lambda x, a, w: x.min(axis=a["axes"], keepdims=a["keepdims"])),
    "Identity": _one(lambda x, a, w: x),
    "Dropout": _one(lambda x, a, w: x),
    **{op: _one(lambda x, a, w, op=op: recurrent(x, a, w, op))
       for op in ("SimpleRNN", "LSTM", "GRU")},
    **{op: lambda xs, a, w, op=op: logic_reference(op, a, xs) for op in LOGIC_OPS},
}


def reference(graph: Graph, weights: Weights, inputs: Arrays) -> dict[str, np.ndarray]:
    """Every value of the graph, computed in float64 from the (possibly rounded) data, or
    in int64 for an integer graph (WIDE squared is exact in int64, not in float64)."""
    dt = np.int64 if graph.dtype in INT_DTYPES else np.float64
    values = {n: np.asarray(x, dt) for n, x in zip(graph.input_names, inputs, strict=True)}
    for node in graph.nodes:
        w = {k.split(".", 1)[1]: np.asarray(v, dt) for k, v in weights.items()
             if k.split(".", 1)[0] == node.id}
        values[node.id] = REFERENCE[node.op]([values[v] for v in node.inputs], node.a, w)
    return values


def samples_of(dtype: str) -> list[tuple[str, Graph]]:
    """The samples a dtype runs: the float64 ones (any float dtype) or the integer ones."""
    dtype = dtype.removesuffix("-wide")
    return INT_SAMPLES[dtype] if dtype in INT_SAMPLES else SAMPLES


def sample_data(index: int, dtype: str) -> tuple[Graph, Weights, Arrays]:
    """Sample ``index`` of ``samples_of(dtype)`` in ``dtype``, seeded weights and inputs;
    ``WIDE_INPUTS`` is the int64 graph with +WIDE in x0 and -WIDE in x1."""
    wide = dtype == WIDE_INPUTS
    dtype = dtype.removesuffix("-wide")
    graph = samples_of(dtype)[index][1].with_dtype(dtype)
    rng = np.random.default_rng(index)
    model = init_model(graph, rng)
    inputs = random_inputs(graph, rng)
    if wide:  # at different positions, so Maximum keeps +WIDE and Minimum -WIDE
        for x, (position, value) in zip(inputs, ((0, WIDE), (1, -WIDE)), strict=False):
            x.flat[position] = value
    return graph, dict(model.weights), inputs


# ---- the helper: one Keras backend per process --------------------------------------------
def run_backend(out_dir: Path, dtypes: tuple[str, ...] = DTYPES) -> None:
    """Run every sample in ``dtypes`` on this process's Keras backend; save the results."""
    if os.environ["KERAS_BACKEND"] == "jax":
        import jax

        jax.config.update("jax_enable_x64", True)
    import keras

    from dlfuzz.ir.lower import build, emit

    results: dict[str, np.ndarray] = {}
    summary: dict[str, Any] = {"errors": {}, "dtypes": {}}
    for dtype in dtypes:
        for i in range(len(samples_of(dtype))):
            graph, weights, inputs = sample_data(i, dtype)
            for probe in (False, True):
                key = f"{dtype}/{i}/{'probe' if probe else 'out'}"
                try:
                    model = build(emit("keras", graph, probe=probe), weights, name=key)
                    outs = model(*inputs)
                except Exception as exc:  # noqa: BLE001 - reported by the test
                    summary["errors"][key] = f"{type(exc).__name__}: {exc}"[:2000]
                    continue
                summary["dtypes"][key] = sorted({keras.backend.standardize_dtype(o.dtype)
                                                 for o in outs})
                for j, o in enumerate(outs):
                    if samples_of(dtype) is not SAMPLES:  # integers: kept as they came
                        results[f"{key}/{j}"] = np.asarray(keras.ops.convert_to_numpy(o))
                        continue
                    results[f"{key}/{j}"] = np.asarray(keras.ops.convert_to_numpy(
                        keras.ops.cast(o, "float64") if dtype == "bfloat16" else o),
                        np.float64)
    np.savez(out_dir / "outputs.npz", **results)
    (out_dir / "summary.json").write_text(json.dumps(summary))


# ---- the tests ------------------------------------------------------------------------------
Results = dict[str, tuple[dict[str, Any], dict[str, np.ndarray]]]


def run_helpers(tmp_path_factory: pytest.TempPathFactory, dtypes: tuple[str, ...]
                ) -> Results:
    """Start the three backend subprocesses at once, then collect their results."""
    src = str(Path(__file__).resolve().parents[2] / "src")
    procs = {}
    for backend in BACKENDS:
        out = tmp_path_factory.mktemp(backend)
        env = {**os.environ, "KERAS_BACKEND": backend, "CUDA_VISIBLE_DEVICES": "",
               "JAX_PLATFORMS": "cpu", "TF_CPP_MIN_LOG_LEVEL": "3",
               "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
        procs[backend] = (out, subprocess.Popen(
            [sys.executable, __file__, str(out), ",".join(dtypes)], env=env,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    results = {}
    for backend, (out, proc) in procs.items():
        _, err = proc.communicate(timeout=900)
        assert proc.returncode == 0, f"{backend} helper failed:\n{err[-3000:]}"
        with np.load(out / "outputs.npz") as data:
            results[backend] = (json.loads((out / "summary.json").read_text()), dict(data))
    return results


@pytest.fixture(scope="module")
def backend_results(tmp_path_factory: pytest.TempPathFactory) -> Results:
    return run_helpers(tmp_path_factory, DTYPES)


@pytest.fixture(scope="module")
def integer_results(tmp_path_factory: pytest.TempPathFactory) -> Results:
    return run_helpers(tmp_path_factory, (*INT_DTYPES, WIDE_INPUTS))


def check_sample(backend: str, summary: dict[str, Any], data: dict[str, np.ndarray],
                 index: int, dtype: str) -> None:
    """One sample's plain and probe runs: count, shapes, dtypes, values (see KNOWN)."""
    graph, weights, inputs = sample_data(index, dtype)
    effects = known_effects(backend, dtype, graph)
    types, ref = graph.types(), reference(graph, weights, inputs)
    dtypes = [dtype] + (["float32"] if "downcast" in effects else [])
    tol = TOLERANCE[dtype]
    if effects & {"imprecise", "downcast"}:
        tol = max(tol, FLOAT32_ACCURATE)
    for probe, names in ((False, list(graph.outputs)), (True, [n.id for n in graph.nodes])):
        key = f"{dtype}/{index}/{'probe' if probe else 'out'}"
        where = f"keras-{backend} {graph.nodes[0].op} {key}"
        if key in summary["errors"]:
            assert "fails" in effects, f"{where}: {summary['errors'][key]}"
            continue
        assert set(summary["dtypes"][key]) <= set(dtypes), f"{where}: {summary['dtypes'][key]}"
        assert f"{key}/{len(names)}" not in data, f"{where}: more than {len(names)} values"
        for j, name in enumerate(names):
            value = data[f"{key}/{j}"]
            assert value.shape == types[name].shape, f"{where} {name}: shape {value.shape}"
            if "wrong" in effects:
                continue
            scale = max(1.0, float(np.abs(ref[name]).max()))
            err = float(np.abs(value - ref[name]).max())
            assert err <= tol * scale, f"{where} {name}: error {err:.3g}, scale {scale:.3g}"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("index", range(len(SAMPLES)),
                         ids=[f"{op}-{i}" for i, (op, _) in enumerate(SAMPLES)])
def test_sample_runs_and_agrees(backend_results: dict[str, Any], backend: str,
                                index: int) -> None:
    summary, data = backend_results[backend]
    for dtype in DTYPES:
        check_sample(backend, summary, data, index, dtype)


def _integer_params() -> list[Any]:
    params = []
    for backend in BACKENDS:
        for dtype in INT_DTYPES:
            for index, (op, _) in enumerate(INT_SAMPLES[dtype]):
                bug = INT_BUGS.get((backend, op, dtype))
                marks = [pytest.mark.xfail(strict=True, reason=bug)] if bug else []
                params.append(pytest.param(backend, dtype, index,
                                           id=f"{backend}-{dtype}-{op}-{index}", marks=marks))
    return params


@pytest.mark.parametrize(("backend", "dtype", "index"), _integer_params())
def test_integer_sample_is_exact(integer_results: Results, backend: str, dtype: str,
                                 index: int) -> None:
    """Plain and probe runs of an integer sample: every value in the graph's dtype and
    equal to the reference (int64 also on the WIDE_INPUTS data)."""
    summary, data = integer_results[backend]
    for data_set in (dtype, WIDE_INPUTS) if dtype == "int64" else (dtype,):
        graph, weights, inputs = sample_data(index, data_set)
        types, ref = graph.types(), reference(graph, weights, inputs)
        for probe, names in ((False, list(graph.outputs)),
                             (True, [n.id for n in graph.nodes])):
            key = f"{data_set}/{index}/{'probe' if probe else 'out'}"
            where = f"keras-{backend} {graph.nodes[0].op} {graph.nodes[0].a} {key}"
            assert key not in summary["errors"], f"{where}: {summary['errors'].get(key)}"
            assert summary["dtypes"][key] == [dtype], f"{where}: {summary['dtypes'][key]}"
            assert f"{key}/{len(names)}" not in data, f"{where}: more than {len(names)} values"
            for j, name in enumerate(names):
                value = data[f"{key}/{j}"]
                assert value.dtype == np.dtype(dtype), f"{where} {name}: {value.dtype}"
                assert value.shape == types[name].shape, f"{where} {name}: {value.shape}"
                assert np.array_equal(value, ref[name]), \
                    f"{where} {name}: {value.ravel()[:6]} != {ref[name].ravel()[:6]}"


def test_wide_inputs_leave_int32() -> None:
    """The WIDE_INPUTS data is int64 beyond int32, as are the Maximum/Minimum references."""
    for index, (op, _) in enumerate(INT_SAMPLES["int64"]):
        graph, weights, inputs = sample_data(index, WIDE_INPUTS)
        assert all(x.dtype == np.int64 for x in inputs), op
        assert inputs[0].max() == WIDE and (len(inputs) == 1 or inputs[1].min() == -WIDE), op
        ref = reference(graph, weights, inputs)[graph.nodes[0].id]
        if op == "Maximum":
            assert ref.dtype == np.int64 and ref.max() == WIDE
        if op == "Minimum":
            assert ref.dtype == np.int64 and ref.min() == -WIDE


def test_emitter_covers_the_catalog_without_importing_keras() -> None:
    """Emitting never imports Keras (workers pick the backend first); all ops emit."""
    code = ("import sys\n"
            "from dlfuzz.ir.lower import keras_lower\n"
            "from dlfuzz.ir.ops import CATALOG\n"
            "from dlfuzz.ir.samples import all_samples\n"
            "assert set(keras_lower.EMITTERS) == set(CATALOG)\n"
            "for _, g in all_samples('bfloat16'):\n"
            "    keras_lower.emit(g)\n"
            "    keras_lower.emit(g, probe=True)\n"
            "assert 'keras' not in sys.modules, 'emitting imported keras'\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_emitted_source_is_tagged_plain_keras() -> None:
    from dlfuzz.ir.lower import keras_lower

    for _, graph in SAMPLES:
        source = keras_lower.emit(graph, probe=True)
        assert source.startswith("import keras\nimport numpy as np\n")
        assert all(f"  # {n.id} {n.op}" in source for n in graph.nodes)
        assert source.count("keras.Model(") == 1
        compile(source, "<keras>", "exec")


if __name__ == "__main__":
    run_backend(Path(sys.argv[1]), tuple(sys.argv[2].split(",")) if len(sys.argv) > 2 else DTYPES)
