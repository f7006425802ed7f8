"""Keras 3 lowering: a graph becomes a functional ``keras.Model``, one layer per node.

Each node is one ``keras.layers`` layer named after the node id and created with the
graph's dtype (so its variables and its computation use that dtype on every backend);
weights are loaded once in ``build()`` with ``layer.set_weights`` in the order the Keras
layer declares them. What Keras 3 has no layer for (ThresholdedReLU, the reductions,
Abs, Square, Clip, AddConst/MulConst, and the attribute values a Keras layer refuses,
such as a negative LeakyReLU slope) becomes a ``keras.layers.Lambda`` over ``keras.ops``,
which runs on the tensorflow, jax and torch backends alike. The other activations are
``keras.layers.Activation`` by name (Keras 3's ``hard_sigmoid`` is relu6(x + 3) / 6, the
IR's HardSigmoid, not Keras 2's 0.2 * x + 0.5). Keras picks its backend at import
(``KERAS_BACKEND``); the emitted source works under each of them. With ``probe`` the
model's outputs are every node's value, in node order.

bfloat16 weights and inputs arrive as ``ml_dtypes.bfloat16`` numpy arrays, which not
every backend converts; they pass through float32 (exact) and Keras casts them back
to the variable's (or layer's) bfloat16. A float64 graph under the jax backend needs
JAX's x64 mode, or every float64 array would silently be float32, so ``build()``
switches it on in that case.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dlfuzz.ir.graph import INT_GRAPH_DTYPES, Graph, Node, TensorType
from dlfuzz.ir.lower.context import bound
from dlfuzz.ir.ops import get_op


@dataclass(frozen=True)
class Lowered:
    """One node as Keras: the layer expression, the weight list for set_weights, and
    lines to run before the layer is made (constants converted once)."""

    layer: str
    weights: tuple[str, ...] = ()
    setup: tuple[str, ...] = ()


Emitter = Callable[[Node, list[TensorType], TensorType], Lowered]

# Kernels start as zeros, not Keras's random defaults: set_weights replaces them anyway,
# jax compiles a PRNG kernel for every new shape (most of a keras-jax build's time), and
# the orthogonal recurrent default needs a QR that jax has no float16 kernel for.
ZEROS = "zeros"


def lit(value: object) -> str:
    """A Python literal in the emitted code's style (double-quoted strings)."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, tuple | list):
        items = ", ".join(lit(v) for v in value)
        if isinstance(value, list):
            return f"[{items}]"
        return f"({items},)" if len(value) == 1 else f"({items})"
    if isinstance(value, float) and not math.isfinite(value):
        return f'float("{value}")'
    return repr(value)


def _args(*positional: object, **keywords: object) -> str:
    """Python source for a call's arguments."""
    parts = [lit(p) for p in positional]
    parts += [f"{k}={lit(v)}" for k, v in keywords.items()]
    return ", ".join(parts)


def layer(cls: str, node: Node, *positional: object, code: str = "", **keywords: object
          ) -> str:
    """``keras.layers.<cls>(..., dtype=DTYPE, name="<id>")``: every layer carries both.

    ``code`` is source for a first argument that is not a literal (a function)."""
    args = ", ".join(a for a in (code, _args(*positional, **keywords)) if a)
    return f"keras.layers.{cls}({args + ', ' if args else ''}dtype=DTYPE, name={lit(node.id)})"


def ops_layer(node: Node, body: str) -> str:
    """A Lambda over keras.ops (``t`` is its input) for what Keras has no layer for."""
    return layer("Lambda", node, code=f"lambda t: {body}")


def weight(node: Node, name: str, reshape: tuple[int, ...] | None = None) -> str:
    """A weight as numpy for set_weights (``_array`` makes bfloat16 convertible)."""
    expr = f'_array(W["{node.id}.{name}"])'
    return expr if reshape is None else f"{expr}.reshape({_args(*reshape)})"


def with_bias(node: Node, *names: str) -> tuple[str, ...]:
    """Kernel weights, then the bias when the node has one (Keras's order)."""
    names = names + (("bias",) if node.a["use_bias"] else ())
    return tuple(weight(node, n) for n in names)


# ---- dense and convolutions (kernels are already in Keras layout) -------------------------
def _conv(node: Node, ins: list[TensorType], out: TensorType) -> Lowered:
    a = node.a
    return Lowered(layer(node.op, node, a["filters"], a["kernel_size"], strides=a["strides"],
                         padding=a["padding"], dilation_rate=a["dilation_rate"],
                         use_bias=a["use_bias"], kernel_initializer=ZEROS),
                   with_bias(node, "kernel"))


def _depthwise(node: Node, ins: list[TensorType], out: TensorType) -> Lowered:
    a = node.a
    return Lowered(layer("DepthwiseConv2D", node, a["kernel_size"], strides=a["strides"],
                         padding=a["padding"], depth_multiplier=a["depth_multiplier"],
                         dilation_rate=a["dilation_rate"], use_bias=a["use_bias"],
                         depthwise_initializer=ZEROS),
                   with_bias(node, "kernel"))


def _separable(node: Node, ins: list[TensorType], out: TensorType) -> Lowered:
    a = node.a
    return Lowered(layer(node.op, node, a["filters"], a["kernel_size"], strides=a["strides"],
                         padding=a["padding"], depth_multiplier=a["depth_multiplier"],
                         dilation_rate=a["dilation_rate"], use_bias=a["use_bias"],
                         depthwise_initializer=ZEROS, pointwise_initializer=ZEROS),
                   with_bias(node, "depthwise_kernel", "pointwise_kernel"))


def _transpose_conv(node: Node, ins: list[TensorType], out: TensorType) -> Lowered:
    a = node.a
    return Lowered(layer(node.op, node, a["filters"], a["kernel_size"], strides=a["strides"],
                         padding=a["padding"], use_bias=a["use_bias"],
                         kernel_initializer=ZEROS), with_bias(node, "kernel"))


def _dense(node: Node, ins: list[TensorType], out: TensorType) -> Lowered:
    return Lowered(layer("Dense", node, node.a["units"], use_bias=node.a["use_bias"],
                         kernel_initializer=ZEROS), with_bias(node, "kernel"))


def _const(fn: str) -> Emitter:
    """AddConst/MulConst: the zero-dimensional weight becomes a backend tensor once."""
    def emit(node: Node, ins: list[TensorType], out: TensorType) -> Lowered:
        const = f"{node.id}_value"
        return Lowered(ops_layer(node, f"keras.ops.{fn}(t, {const})"), setup=(
            f"{const} = keras.ops.convert_to_tensor({weight(node, 'value')}, dtype=DTYPE)",))
    return emit


# ---- pooling ------------------------------------------------------------------------------
def _pool(node: Node, ins: list[TensorType], out: TensorType) -> Lowered:
    """MaxPool2D -> MaxPooling2D; empty strides mean Keras's default (= pool_size)."""
    a = node.a
    cls = node.op.replace("Pool", "Pooling").replace("Avg", "Average")
    return Lowered(layer(cls, node, a["pool_size"], strides=a["strides"] or None,
                         padding=a["padding"]))


def _global_pool(node: Node, ins: list[TensorType], out: TensorType) -> Lowered:
    return Lowered(layer(node.op.replace("Pool", "Pooling").replace("Avg", "Average"), node))


# ---- activations and normalizations ---------------------------------------------------------
def _relu(node: Node, ins: list[TensorType], out: TensorType) -> Lowered:
    """Keras refuses a negative cap; min(max(x, 0), cap) is then the cap everywhere."""
    cap = node.a["max_value"]
    if cap is not None and cap < 0:
        return Lowered(ops_layer(node, f"keras.ops.minimum(keras.ops.relu(t), {lit(cap)})"))
    return Lowered(layer("ReLU", node, max_value=cap))


def _leaky_relu(node: Node, ins: list[TensorType], out: TensorType) -> Lowered:
    """Keras refuses a negative slope, which the IR allows: keras.ops.where then."""
    alpha = node.a["alpha"]
    if alpha < 0:
        return Lowered(ops_layer(
            node, f"keras.ops.where(keras.ops.greater_equal(t, 0), t, {lit(alpha)} * t)"))
    return Lowered(layer("LeakyReLU", node, negative_slope=alpha))


def _prelu(node: Node, ins: list[TensorType], out: TensorType) -> Lowered:
    """One slope per channel: Keras's alpha is (1, .., 1, C), shared over the other axes."""
    rank = ins[0].rank
    shared = list(range(1, rank - 1)) or None
    shape = (1,) * (rank - 2) + (ins[0].shape[-1],)
    return Lowered(layer("PReLU", node, shared_axes=shared),
                   (weight(node, "alpha", shape),))


def _thresholded_relu(node: Node, ins: list[TensorType], out: TensorType) -> Lowered:
    """Keras 3 dropped ThresholdedReLU; x if x > theta else 0 (strict, as Keras 2 had it)."""
    theta = node.a["theta"]
    return Lowered(ops_layer(
        node, f"keras.ops.where(keras.ops.greater(t, {lit(theta)}), t, keras.ops.zeros_like(t))"))


def _gelu(node: Node, ins: list[TensorType], out: TensorType) -> Lowered:
    fn = f"lambda t: keras.activations.gelu(t, approximate={node.a['approximate']!r})"
    return Lowered(layer("Activation", node, code=fn))


def _activation(name: str) -> Emitter:
    return lambda node, ins, out: Lowered(layer("Activation", node, name))


def _clip(node: Node, ins: list[TensorType], out: TensorType) -> Lowered:
    """Keras 3 has no clipping layer: keras.ops.clip, bounds as Python floats (every
    backend converts them to a float input's dtype) or, in an integer graph, ints (a float
    bound would promote the int tensor to float)."""
    a = node.a
    return Lowered(ops_layer(node, f"keras.ops.clip(t, {bound(out.dtype, a['min_value'])}, "
                                   f"{bound(out.dtype, a['max_value'])})"))


def _batch_norm(node: Node, ins: list[TensorType], out: TensorType) -> Lowered:
    return Lowered(layer("BatchNormalization", node, axis=-1, epsilon=node.a["epsilon"]),
                   tuple(weight(node, n) for n in ("gamma", "beta", "moving_mean",
                                                   "moving_variance")))


def _layer_norm(node: Node, ins: list[TensorType], out: TensorType) -> Lowered:
    return Lowered(layer("LayerNormalization", node, axis=-1, epsilon=node.a["epsilon"]),
                   (weight(node, "gamma"), weight(node, "beta")))


# ---- shape ops and reductions ---------------------------------------------------------------
def _simple(cls: str, **attrs: str) -> Emitter:
    """A Keras layer whose keyword arguments are node attributes (keyword -> attribute)."""
    return lambda node, ins, out: Lowered(layer(cls, node, **{k: node.a[v]
                                                               for k, v in attrs.items()}))


def _spatial(cls: str, attr: str) -> Emitter:
    """ZeroPadding/Cropping/UpSampling: the 1D layers take a pair / an int, not a tuple."""
    def emit(node: Node, ins: list[TensorType], out: TensorType) -> Lowered:
        value = node.a[attr]
        return Lowered(layer(cls, node, value[0] if len(value) == 1 else value))
    return emit


def _reduce(fn: str) -> Emitter:
    """An integer graph's reduction is cast back to DTYPE: keras.ops.sum follows its
    backend's promotion (int32 sums to int64 under JAX with x64, as jnp.sum does); the
    values are the same, the graph's dtype is the contract."""
    def emit(node: Node, ins: list[TensorType], out: TensorType) -> Lowered:
        a = node.a
        call = f"keras.ops.{fn}(t, axis={lit(a['axes'])}, keepdims={a['keepdims']!r})"
        if out.dtype in INT_GRAPH_DTYPES:
            call = f"keras.ops.cast({call}, DTYPE)"
        return Lowered(ops_layer(node, call))
    return emit


def _recurrent(node: Node, ins: list[TensorType], out: TensorType) -> Lowered:
    """Keras defaults are the IR's: tanh, sigmoid gates, zero state; GRU reset_after."""
    extra: dict[str, Any] = {"reset_after": True} if node.op == "GRU" else {}
    return Lowered(layer(node.op, node, node.a["units"],
                         return_sequences=node.a["return_sequences"], **extra,
                         kernel_initializer=ZEROS, recurrent_initializer=ZEROS),
                   tuple(weight(node, n) for n in ("kernel", "recurrent_kernel", "bias")))


EMITTERS: dict[str, Emitter] = {
    "AddConst": _const("add"),
    "MulConst": _const("multiply"),
    "Dense": _dense,
    **{f"Conv{n}D": _conv for n in (1, 2, 3)},
    "DepthwiseConv2D": _depthwise,
    **{f"SeparableConv{n}D": _separable for n in (1, 2)},
    **{f"Conv{n}DTranspose": _transpose_conv for n in (2, 3)},
    **{f"{k}Pool{n}D": _pool for k in ("Max", "Avg") for n in (1, 2, 3)},
    **{f"Global{k}Pool{n}D": _global_pool for k in ("Max", "Avg") for n in (1, 2, 3)},
    "ReLU": _relu,
    "LeakyReLU": _leaky_relu,
    "PReLU": _prelu,
    "ELU": _simple("ELU", alpha="alpha"),
    "ThresholdedReLU": _thresholded_relu,
    "Softmax": _simple("Softmax", axis="axis"),
    "Sigmoid": _activation("sigmoid"),
    "Tanh": _activation("tanh"),
    "GELU": _gelu,
    "Softplus": _activation("softplus"),
    "Softsign": _activation("softsign"),
    "SELU": _activation("selu"),
    "SiLU": _activation("silu"),
    "HardSigmoid": _activation("hard_sigmoid"),  # Keras 3's: relu6(x + 3) / 6
    "Mish": _activation("mish"),
    "Abs": lambda node, ins, out: Lowered(ops_layer(node, "keras.ops.absolute(t)")),
    "Square": lambda node, ins, out: Lowered(ops_layer(node, "keras.ops.square(t)")),
    "Clip": _clip,
    "BatchNorm": _batch_norm,
    "LayerNorm": _layer_norm,
    "Add": _simple("Add"),
    "Mul": _simple("Multiply"),
    "Subtract": _simple("Subtract"),
    "Maximum": _simple("Maximum"),
    "Minimum": _simple("Minimum"),
    "MatMul": lambda node, ins, out: Lowered(layer("Dot", node, axes=(2, 1))),
    "Flatten": _simple("Flatten"),
    "Reshape": _simple("Reshape", target_shape="target_shape"),
    "Transpose": _simple("Permute", dims="dims"),
    "Concat": _simple("Concatenate", axis="axis"),
    **{f"ZeroPadding{n}D": _spatial(f"ZeroPadding{n}D", "padding") for n in (1, 2, 3)},
    **{f"Cropping{n}D": _spatial(f"Cropping{n}D", "cropping") for n in (1, 2, 3)},
    **{f"UpSampling{n}D": _spatial(f"UpSampling{n}D", "size") for n in (1, 2, 3)},
    "RepeatVector": _simple("RepeatVector", n="n"),
    "ReduceMean": _reduce("mean"),
    "ReduceMax": _reduce("max"),
    "ReduceSum": _reduce("sum"),
    "ReduceMin": _reduce("min"),
    "Identity": _simple("Identity"),
    "Dropout": _simple("Dropout", rate="rate"),
    **{name: _recurrent for name in ("SimpleRNN", "LSTM", "GRU")},
    # Keras has no layers for these: keras.ops over a list input, cast back to DTYPE.
    "Compare": lambda node, ins, out: Lowered(ops_layer(
        node, f"keras.ops.cast(keras.ops.{node.a['mode']}(t[0], t[1]), DTYPE)")),
    "Logical": lambda node, ins, out: Lowered(ops_layer(
        node, f"keras.ops.cast(keras.ops.logical_{node.a['mode']}(t[0], t[1]), DTYPE)")),
    "LogicalNot": lambda node, ins, out: Lowered(ops_layer(
        node, "keras.ops.cast(keras.ops.logical_not(t), DTYPE)")),
    "Where": lambda node, ins, out: Lowered(ops_layer(
        node, "keras.ops.where(keras.ops.cast(t[0], 'bool'), t[1], t[2])")),
}


# ---- the program ----------------------------------------------------------------------------
# The emitted program's imports (kept out of column 0 of this module: it imports no
# library itself).
_IMPORTS = "\n".join(['import keras', 'import numpy as np'])

_PRELUDE = '''\
{imports}

DTYPE = "{dtype}"


def _array(a):
    """numpy for Keras: bfloat16 goes through float32 (exact); Keras casts it back."""
    a = np.asarray(a)
    return a.astype(np.float32) if a.dtype.name == "bfloat16" else a


def _tensor(x):
    """An input as a backend tensor of the graph dtype (backend tensors pass through)."""
    if isinstance(x, np.ndarray | np.generic):
        return keras.ops.convert_to_tensor(_array(x), dtype=DTYPE)
    return x


def _run(model):
    """model(*inputs) -> tuple of outputs, in inference mode (one output comes bare)."""
    def run(*xs):
        ys = model([_tensor(x) for x in xs], training=False)
        return tuple(ys) if isinstance(ys, list | tuple) else (ys,)
    return run


def build(W, **options):
    """The graph as a Keras functional model, its weights loaded."""
'''

_X64 = '''\
    if keras.backend.backend() == "jax":  # float64 needs JAX's x64 mode
        import jax

        jax.config.update("jax_enable_x64", True)
'''


def emit_node(node: Node, types: dict[str, TensorType]) -> list[str]:
    """The few lines of ``build()`` that create, call and load one node's layer."""
    ins = [types[v] for v in node.inputs]
    lowered = EMITTERS[node.op](node, ins, types[node.id])
    many = get_op(node.op).arity[1] != 1
    args = f"[{', '.join(node.inputs)}]" if many else node.inputs[0]
    lines = [*lowered.setup]
    if lowered.weights:
        lines += [f"layer = {lowered.layer}", f"{node.id} = layer({args})",
                  f"layer.set_weights([{', '.join(lowered.weights)}])"]
    else:
        lines.append(f"{node.id} = {lowered.layer}({args})")
    lines[0] += f"  # {node.id} {node.op}"  # the tag goes on the node's first line
    return [f"    {line}" for line in lines]


def emit(graph: Graph, probe: bool = False) -> str:
    """Source defining ``build(W)``; with ``probe`` the model returns every node's value."""
    types = graph.types()
    lines = [_PRELUDE.format(imports=_IMPORTS, dtype=graph.dtype).rstrip("\n")]
    if graph.dtype == "float64":
        lines.append(_X64.rstrip("\n"))
    for name, t in zip(graph.input_names, graph.inputs, strict=True):
        lines.append(f"    {name} = keras.Input(shape={lit(t.shape[1:])}, batch_size={t.shape[0]},"
                     f" dtype=DTYPE, name={lit(name)})")
    for node in graph.nodes:
        lines += emit_node(node, types)
    outputs = [n.id for n in graph.nodes] if probe else list(graph.outputs)
    lines += [f"    model = keras.Model([{', '.join(graph.input_names)}], "
              f"[{', '.join(outputs)}])",
              "    return _run(model)",
              ""]
    return "\n".join(lines)
