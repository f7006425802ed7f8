"""Keras 3 model files (``.keras``/``.h5``) as IR models (``importers.from_keras``).

Each layer of the functional graph, in topological order, maps to IR ops through a
registry of handlers keyed by the layer class; the trained weights are copied into the
IR's weight names. Only channels-last layers are accepted: the IR is channels-last, as
Keras is by default.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dlfuzz.engines.model.import_net import (
    DEFAULT_BATCH,
    ImportNet,
    Unsupported,
    ir_axis,
    require,
)
from dlfuzz.errors import UsageError
from dlfuzz.ir.graph import FLOAT_GRAPH_DTYPES, InvalidGraph, TensorType
from dlfuzz.ir.model import Model


def _ints(value: Any, n: int) -> tuple[int, ...]:
    return (int(value),) * n if isinstance(value, int) else tuple(int(v) for v in value)


def _pairs(value: Any, n: int) -> tuple[tuple[int, ...], ...]:
    """Keras padding/cropping: an int, a (before, after) pair (1D) or n pairs."""
    if isinstance(value, int):
        return ((value, value),) * n
    if n == 1 and len(value) == 2 and all(isinstance(v, int) for v in value):
        return ((int(value[0]), int(value[1])),)
    return tuple(_ints(p, 2) if not isinstance(p, int) else (p, p) for p in value)


KERAS_ACTIVATIONS: dict[str, tuple[str, dict[str, Any]] | None] = {
    "linear": None, "relu": ("ReLU", {}), "relu6": ("ReLU", {"max_value": 6.0}),
    "sigmoid": ("Sigmoid", {}), "tanh": ("Tanh", {}), "softmax": ("Softmax", {}),
    "gelu": ("GELU", {"approximate": False}), "elu": ("ELU", {"alpha": 1.0}),
}

KerasHandler = Callable[[ImportNet, Any, dict[str, Any], list[str]], str]


def _k_activation(net: ImportNet, name: Any, x: str) -> str:
    require(isinstance(name, str) and name in KERAS_ACTIVATIONS,
            f"activation {name!r} is not one of {', '.join(KERAS_ACTIVATIONS)}")
    spec = KERAS_ACTIVATIONS[name]
    return x if spec is None else net.add(spec[0], x, **spec[1])


def _k_weights(layer: Any, names: Sequence[str]) -> dict[str, np.ndarray]:
    arrays = layer.get_weights()
    require(len(arrays) == len(names), f"has {len(arrays)} weights, expected {list(names)}")
    return dict(zip(names, arrays, strict=True))


def _k_channels_last(cfg: dict[str, Any]) -> None:
    require(cfg.get("data_format", "channels_last") == "channels_last",
            "only data_format='channels_last' is supported")


def _k_window(cfg: dict[str, Any], n: int, dilation: bool = True) -> dict[str, Any]:
    _k_channels_last(cfg)
    require(cfg["padding"] in ("valid", "same"), f"padding {cfg['padding']!r} is not valid/same")
    attrs = {"kernel_size": _ints(cfg["kernel_size"], n), "strides": _ints(cfg["strides"], n),
             "padding": cfg["padding"], "use_bias": bool(cfg["use_bias"])}
    dil = _ints(cfg.get("dilation_rate", 1), n)
    if dilation:
        attrs["dilation_rate"] = dil
    else:
        require(all(d == 1 for d in dil), "dilated transposed convolutions are not supported")
    return attrs


def _bias(cfg: dict[str, Any], *names: str) -> tuple[str, ...]:
    return names + (("bias",) if cfg["use_bias"] else ())


def _k_dense(net: ImportNet, layer: Any, cfg: dict[str, Any], ins: list[str]) -> str:
    x = net.add("Dense", ins[0], units=cfg["units"], use_bias=bool(cfg["use_bias"]),
                weights=_k_weights(layer, _bias(cfg, "kernel")))
    return _k_activation(net, cfg["activation"], x)


def _k_conv(op: str, n: int, names: tuple[str, ...], filters: bool = True,
            multiplier: bool = False, dilation: bool = True) -> KerasHandler:
    def handler(net: ImportNet, layer: Any, cfg: dict[str, Any], ins: list[str]) -> str:
        require(cfg.get("groups", 1) == 1, "grouped convolutions (groups > 1) are not supported")
        require(cfg.get("output_padding") is None, "output_padding is not supported")
        attrs = _k_window(cfg, n, dilation)
        if filters:
            attrs["filters"] = cfg["filters"]
        if multiplier:
            attrs["depth_multiplier"] = cfg["depth_multiplier"]
        x = net.add(op, ins[0], weights=_k_weights(layer, _bias(cfg, *names)), **attrs)
        return _k_activation(net, cfg["activation"], x)
    return handler


def _k_pool(op: str, n: int) -> KerasHandler:
    def handler(net: ImportNet, layer: Any, cfg: dict[str, Any], ins: list[str]) -> str:
        _k_channels_last(cfg)
        strides = cfg.get("strides")
        return net.add(op, ins[0], pool_size=_ints(cfg["pool_size"], n),
                       strides=() if strides is None else _ints(strides, n),
                       padding=cfg["padding"])
    return handler


def _k_global_pool(op: str) -> KerasHandler:
    def handler(net: ImportNet, layer: Any, cfg: dict[str, Any], ins: list[str]) -> str:
        _k_channels_last(cfg)
        require(not cfg.get("keepdims", False), "keepdims=True is not supported")
        return net.add(op, ins[0])
    return handler


def _k_norm(op: str, names: tuple[str, ...]) -> KerasHandler:
    """BatchNormalization / LayerNormalization over the last axis; absent gamma/beta
    (scale=False / center=False) become ones / zeros."""
    def handler(net: ImportNet, layer: Any, cfg: dict[str, Any], ins: list[str]) -> str:
        rank = len(net.shape(ins[0]))
        axis = cfg["axis"]
        axes = [axis] if isinstance(axis, int) else list(axis)
        require(len(axes) == 1 and axes[0] in (-1, rank - 1), f"axis {axis} is not the last")
        require(not cfg.get("rms_scaling", False) and not cfg.get("renorm", False),
                "rms_scaling / renorm are not supported")
        present = [n for n, flag in (("gamma", "scale"), ("beta", "center")) if cfg[flag]]
        w = _k_weights(layer, tuple(present) + names[2:])
        c = net.shape(ins[0])[-1]
        w.setdefault("gamma", np.ones(c))
        w.setdefault("beta", np.zeros(c))
        return net.add(op, ins[0], epsilon=float(cfg["epsilon"]), weights=w)
    return handler


def _k_relu(net: ImportNet, layer: Any, cfg: dict[str, Any], ins: list[str]) -> str:
    require(cfg.get("negative_slope", 0.0) == 0 and cfg.get("threshold", 0.0) == 0,
            "negative_slope and threshold must be 0")
    mx = cfg.get("max_value")
    return net.add("ReLU", ins[0], max_value=None if mx is None else float(mx))


def _k_prelu(net: ImportNet, layer: Any, cfg: dict[str, Any], ins: list[str]) -> str:
    (alpha,) = layer.get_weights()
    require(all(d == 1 for d in alpha.shape[:-1]),
            f"alpha of shape {alpha.shape}: only one slope per channel (shared_axes = every "
            "axis but the last) is supported")
    return net.add("PReLU", ins[0], weights={"alpha": alpha.reshape(-1)})


def _k_simple(op: str, **fixed: Any) -> KerasHandler:
    def handler(net: ImportNet, layer: Any, cfg: dict[str, Any], ins: list[str]) -> str:
        return net.add(op, *ins, **fixed)
    return handler


def _k_reshape(net: ImportNet, layer: Any, cfg: dict[str, Any], ins: list[str]) -> str:
    shape = net.shape(ins[0])
    target = [int(d) for d in cfg["target_shape"]]
    if -1 in target:
        known = int(np.prod([d for d in target if d != -1]))
        target[target.index(-1)] = int(np.prod(shape[1:])) // max(known, 1)
    return net.add("Reshape", ins[0], target_shape=tuple(target))


def _k_concat(net: ImportNet, layer: Any, cfg: dict[str, Any], ins: list[str]) -> str:
    rank = len(net.shape(ins[0]))
    axis = ir_axis(cfg["axis"], rank)
    return net.add("Concat", *ins, axis=rank - 1 if axis == -1 else axis)


def _k_padding(op: str, n: int, key: str) -> KerasHandler:
    def handler(net: ImportNet, layer: Any, cfg: dict[str, Any], ins: list[str]) -> str:
        _k_channels_last(cfg)
        attrs: dict[str, Any] = {key: _pairs(cfg[key], n)}
        return net.add(op, ins[0], **attrs)
    return handler


def _k_upsampling(n: int) -> KerasHandler:
    def handler(net: ImportNet, layer: Any, cfg: dict[str, Any], ins: list[str]) -> str:
        _k_channels_last(cfg)
        require(cfg.get("interpolation", "nearest") == "nearest", "only nearest interpolation")
        return net.add(f"UpSampling{n}D", ins[0], size=_ints(cfg["size"], n))
    return handler


def _k_recurrent(op: str) -> KerasHandler:
    """Keras defaults only: tanh activation, sigmoid gates, forward, stateless, GRU
    reset_after; a layer without bias gets a zero bias (same function)."""
    def handler(net: ImportNet, layer: Any, cfg: dict[str, Any], ins: list[str]) -> str:
        require(len(ins) == 1, "initial states and masks are not supported")
        require(cfg["activation"] == "tanh", f"activation {cfg['activation']!r} is not tanh")
        require(cfg.get("recurrent_activation", "sigmoid") == "sigmoid",
                "recurrent_activation must be sigmoid")
        for flag in ("go_backwards", "return_state", "stateful"):
            require(not cfg.get(flag, False), f"{flag}=True is not supported")
        require(cfg.get("reset_after", True), "GRU needs reset_after=True")
        w = _k_weights(layer, _bias(cfg, "kernel", "recurrent_kernel"))
        gates = w["kernel"].shape[1]
        w.setdefault("bias", np.zeros((2, gates) if op == "GRU" else (gates,)))
        return net.add(op, ins[0], units=cfg["units"],
                       return_sequences=bool(cfg["return_sequences"]), weights=w)
    return handler


def _k_flatten(net: ImportNet, layer: Any, cfg: dict[str, Any], ins: list[str]) -> str:
    _k_channels_last(cfg)  # channels_first Flatten transposes first
    return net.add("Flatten", ins[0])


def _k_softmax(net: ImportNet, layer: Any, cfg: dict[str, Any], ins: list[str]) -> str:
    require(isinstance(cfg["axis"], int), f"axis {cfg['axis']} must be one axis")
    return net.add("Softmax", ins[0], axis=ir_axis(cfg["axis"], len(net.shape(ins[0]))))


def _k_layer_activation(net: ImportNet, layer: Any, cfg: dict[str, Any], ins: list[str]) -> str:
    return _k_activation(net, cfg["activation"], ins[0])


KERAS_LAYERS: dict[str, KerasHandler] = {
    "Dense": _k_dense,
    **{f"Conv{n}D": _k_conv(f"Conv{n}D", n, ("kernel",)) for n in (1, 2, 3)},
    "DepthwiseConv2D": _k_conv("DepthwiseConv2D", 2, ("kernel",), filters=False,
                               multiplier=True),
    **{f"SeparableConv{n}D": _k_conv(f"SeparableConv{n}D", n,
                                     ("depthwise_kernel", "pointwise_kernel"),
                                     multiplier=True) for n in (1, 2)},
    **{f"Conv{n}DTranspose": _k_conv(f"Conv{n}DTranspose", n, ("kernel",), dilation=False)
       for n in (2, 3)},
    **{f"MaxPooling{n}D": _k_pool(f"MaxPool{n}D", n) for n in (1, 2, 3)},
    **{f"AveragePooling{n}D": _k_pool(f"AvgPool{n}D", n) for n in (1, 2, 3)},
    **{f"GlobalMaxPooling{n}D": _k_global_pool(f"GlobalMaxPool{n}D") for n in (1, 2, 3)},
    **{f"GlobalAveragePooling{n}D": _k_global_pool(f"GlobalAvgPool{n}D") for n in (1, 2, 3)},
    "BatchNormalization": _k_norm("BatchNorm", ("gamma", "beta", "moving_mean",
                                                "moving_variance")),
    "LayerNormalization": _k_norm("LayerNorm", ("gamma", "beta")),
    "ReLU": _k_relu,
    "LeakyReLU": lambda net, layer, cfg, ins: net.add(
        "LeakyReLU", ins[0], alpha=float(cfg["negative_slope"] if "negative_slope" in cfg
                                         else cfg.get("alpha", 0.3))),
    "PReLU": _k_prelu,
    "ELU": lambda net, layer, cfg, ins: net.add("ELU", ins[0], alpha=float(cfg["alpha"])),
    "Softmax": _k_softmax,
    "Activation": _k_layer_activation,
    "Flatten": _k_flatten,
    "Reshape": _k_reshape,
    "Permute": lambda net, layer, cfg, ins: net.add("Transpose", ins[0],
                                                    dims=_ints(cfg["dims"], 0)),
    "Concatenate": _k_concat,
    "Add": _k_simple("Add"), "Multiply": _k_simple("Mul"), "Subtract": _k_simple("Subtract"),
    "Maximum": _k_simple("Maximum"), "Minimum": _k_simple("Minimum"),
    **{f"ZeroPadding{n}D": _k_padding(f"ZeroPadding{n}D", n, "padding") for n in (1, 2, 3)},
    **{f"Cropping{n}D": _k_padding(f"Cropping{n}D", n, "cropping") for n in (1, 2, 3)},
    **{f"UpSampling{n}D": _k_upsampling(n) for n in (1, 2, 3)},
    "RepeatVector": lambda net, layer, cfg, ins: net.add("RepeatVector", ins[0], n=cfg["n"]),
    "SimpleRNN": _k_recurrent("SimpleRNN"), "LSTM": _k_recurrent("LSTM"),
    "GRU": _k_recurrent("GRU"),
    "Dropout": lambda net, layer, cfg, ins: net.add("Dropout", ins[0],
                                                    rate=float(cfg["rate"])),
    "Identity": _k_simple("Identity"),
}


def _k_input_type(tensor: Any, index: int, batch: int) -> TensorType:
    shape = tuple(tensor.shape)
    dtype = str(tensor.dtype)
    if any(d is None for d in shape[1:]):
        raise Unsupported(f"input {index} has shape {shape}: every dim but the batch must "
                          "be known")
    require(dtype in FLOAT_GRAPH_DTYPES, f"input {index} is {dtype}, not a float dtype")
    return TensorType((batch if shape[0] is None else int(shape[0]),
                       *(int(d) for d in shape[1:])), dtype)


def _k_order(outputs: Sequence[Any]) -> list[tuple[Any, Any]]:
    """(operation, call node) pairs in topological order, from the output tensors back."""
    order: list[tuple[Any, Any]] = []
    seen: set[int] = set()
    stack: list[tuple[Any, bool]] = [(t, False) for t in reversed(outputs)]
    while stack:
        tensor, expanded = stack.pop()
        op, node_index, _ = tensor._keras_history
        node = op._inbound_nodes[node_index]
        if id(node) in seen:
            continue
        if expanded:
            seen.add(id(node))
            order.append((op, node))
            continue
        stack.append((tensor, True))
        stack.extend((t, False) for t in reversed(node.input_tensors)
                     if id(t._keras_history.operation._inbound_nodes[
                         t._keras_history.node_index]) not in seen)
    return order


def import_keras(path: str | Path, batch: int = DEFAULT_BATCH) -> Model:
    """A Keras 3 model file as an IR model (batch: the model's static one, else ``batch``)."""
    import keras

    path = Path(path)
    kmodel = keras.saving.load_model(path, compile=False)
    supported = ", ".join(sorted(KERAS_LAYERS))
    try:
        net = ImportNet([_k_input_type(t, i, batch) for i, t in enumerate(kmodel.inputs)])
    except Unsupported as exc:
        raise UsageError(f"{path}: {exc}; only statically shaped float inputs can be "
                         "imported") from None
    values = {id(t): f"x{i}" for i, t in enumerate(kmodel.inputs)}
    for op, node in _k_order(kmodel.outputs):
        if isinstance(op, keras.layers.InputLayer):
            continue
        cls = type(op).__name__
        try:
            require(isinstance(op, keras.layers.Layer) and cls in KERAS_LAYERS,
                    "this layer class cannot be imported")
            require(len(node.output_tensors) == 1, "layers with several outputs are not supported")
            ins = [values[id(t)] for t in node.input_tensors]
            out = KERAS_LAYERS[cls](net, op, op.get_config(), ins)
        except (Unsupported, InvalidGraph, KeyError) as exc:
            raise UsageError(f"{path}: layer {op.name!r} ({cls}) cannot be imported: {exc}; "
                             f"supported layers: {supported}") from None
        values[id(node.output_tensors[0])] = out
    return net.model([values[id(t)] for t in kmodel.outputs])
