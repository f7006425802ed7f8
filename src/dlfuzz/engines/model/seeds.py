"""Seed models: small, randomly initialized copies of the architectures LEMON starts from.

LEMON mutates LeNet-5, AlexNet, ResNet, MobileNet, VGG and LSTM models; what makes those
seeds useful is their *structure* (conv stacks, pooling, skip connections, depthwise
separable blocks, BatchNorm, recurrent layers), not their size or training. So each
builder keeps the layer sequence of the original and shrinks channels and inputs until a
forward pass takes tens of milliseconds on a CPU. Weights come from ``weights.init_model``
and are deterministic per ``rng``.

``load_seed`` also accepts a model file (Keras ``.keras``/``.h5``, ONNX ``.onnx``, or a
dlfuzz ``.json`` written by ``dlfuzz.ir.serialize.save_model``); the result is always
rebatched to ``batch`` and converted to ``dtype`` so every seed of a campaign shares them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from dlfuzz.errors import UsageError
from dlfuzz.ir.graph import FLOAT_GRAPH_DTYPES, GraphBuilder, TensorType
from dlfuzz.ir.model import Model
from dlfuzz.ir.weights import init_model

SeedBuilder = Callable[..., Model]

SAME3 = {"kernel_size": (3, 3), "padding": "same"}


def _lenet5(rng: np.random.Generator, batch: int = 2, dtype: str = "float32") -> Model:
    """LeNet-5 on 28x28x1 digits, with its original filter and unit counts (6/16/120/84/10)."""
    b = GraphBuilder((batch, 28, 28, 1), dtype=dtype)
    x = b.add("Conv2D", "x0", filters=6, kernel_size=(5, 5), padding="same")
    x = b.add("ReLU", x)
    x = b.add("AvgPool2D", x, pool_size=(2, 2))
    x = b.add("Conv2D", x, filters=16, kernel_size=(5, 5), padding="valid")
    x = b.add("ReLU", x)
    x = b.add("MaxPool2D", x, pool_size=(2, 2))
    x = b.add("Flatten", x)
    for units in (120, 84):
        x = b.add("Dense", x, units=units)
        x = b.add("ReLU", x)
    x = b.add("Dense", x, units=10)
    b.add("Softmax", x)
    return init_model(b.build(), rng)


def _alexnet(rng: np.random.Generator, batch: int = 2, dtype: str = "float32") -> Model:
    """AlexNet's layout (two conv-relu-pool, three convs, pool, two dense+dropout) on 32x32."""
    b = GraphBuilder((batch, 32, 32, 3), dtype=dtype)
    x = b.add("Conv2D", "x0", filters=16, kernel_size=(5, 5), padding="same")
    x = b.add("ReLU", x)
    x = b.add("MaxPool2D", x, pool_size=(3, 3), strides=(2, 2), padding="same")
    x = b.add("Conv2D", x, filters=24, **SAME3)
    x = b.add("ReLU", x)
    x = b.add("MaxPool2D", x, pool_size=(3, 3), strides=(2, 2), padding="same")
    for filters in (32, 32, 24):
        x = b.add("Conv2D", x, filters=filters, **SAME3)
        x = b.add("ReLU", x)
    x = b.add("MaxPool2D", x, pool_size=(2, 2))
    x = b.add("Flatten", x)
    for _ in range(2):
        x = b.add("Dense", x, units=64)
        x = b.add("ReLU", x)
        x = b.add("Dropout", x, rate=0.5)
    x = b.add("Dense", x, units=10)
    b.add("Softmax", x)
    return init_model(b.build(), rng)


def _conv_bn(b: GraphBuilder, x: str, filters: int, kernel: int, strides: int = 1,
             relu: bool = True) -> str:
    """ResNet's conv (no bias: BatchNorm follows) + BN (+ ReLU)."""
    x = b.add("Conv2D", x, filters=filters, kernel_size=(kernel, kernel),
              strides=(strides, strides), padding="same", use_bias=False)
    x = b.add("BatchNorm", x, epsilon=1.001e-5)
    return b.add("ReLU", x) if relu else x


def _resnet(rng: np.random.Generator, batch: int = 2, dtype: str = "float32") -> Model:
    """Stem, an identity residual block and a strided block whose skip is a 1x1 projection."""
    b = GraphBuilder((batch, 16, 16, 3), dtype=dtype)
    stem = _conv_bn(b, "x0", 8, 3)
    y = _conv_bn(b, stem, 8, 3)
    y = _conv_bn(b, y, 8, 3, relu=False)
    x = b.add("ReLU", b.add("Add", stem, y))
    shortcut = _conv_bn(b, x, 16, 1, strides=2, relu=False)
    y = _conv_bn(b, x, 16, 3, strides=2)
    y = _conv_bn(b, y, 16, 3, relu=False)
    x = b.add("ReLU", b.add("Add", shortcut, y))
    x = b.add("GlobalAvgPool2D", x)
    x = b.add("Dense", x, units=10)
    b.add("Softmax", x)
    return init_model(b.build(), rng)


def _dw_block(b: GraphBuilder, x: str, filters: int, strides: int) -> str:
    """MobileNet v1 block: depthwise 3x3 + BN + ReLU6, pointwise 1x1 + BN + ReLU6.

    As in keras.applications.MobileNet, a strided block pads (0, 1) explicitly and uses a
    'valid' depthwise conv.
    """
    if strides > 1:
        x = b.add("ZeroPadding2D", x, padding=((0, 1), (0, 1)))
    x = b.add("DepthwiseConv2D", x, kernel_size=(3, 3), strides=(strides, strides),
              padding="same" if strides == 1 else "valid", use_bias=False)
    x = b.add("BatchNorm", x)
    x = b.add("ReLU", x, max_value=6.0)
    x = b.add("Conv2D", x, filters=filters, kernel_size=(1, 1), use_bias=False)
    x = b.add("BatchNorm", x)
    return b.add("ReLU", x, max_value=6.0)


def _mobilenet(rng: np.random.Generator, batch: int = 2, dtype: str = "float32") -> Model:
    b = GraphBuilder((batch, 32, 32, 3), dtype=dtype)
    x = b.add("Conv2D", "x0", filters=8, kernel_size=(3, 3), strides=(2, 2), padding="same",
              use_bias=False)
    x = b.add("BatchNorm", x)
    x = b.add("ReLU", x, max_value=6.0)
    x = _dw_block(b, x, 16, 1)
    x = _dw_block(b, x, 32, 2)
    x = _dw_block(b, x, 32, 1)
    x = b.add("GlobalAvgPool2D", x)
    x = b.add("Dropout", x, rate=1e-3)
    x = b.add("Dense", x, units=10)
    b.add("Softmax", x)
    return init_model(b.build(), rng)


def _vgg(rng: np.random.Generator, batch: int = 2, dtype: str = "float32") -> Model:
    """Two VGG blocks (conv3x3-relu twice, maxpool), then the dense head."""
    b = GraphBuilder((batch, 32, 32, 3), dtype=dtype)
    x = "x0"
    for filters in (8, 16):
        for _ in range(2):
            x = b.add("Conv2D", x, filters=filters, **SAME3)
            x = b.add("ReLU", x)
        x = b.add("MaxPool2D", x, pool_size=(2, 2))
    x = b.add("Flatten", x)
    x = b.add("Dense", x, units=64)
    x = b.add("ReLU", x)
    x = b.add("Dense", x, units=10)
    b.add("Softmax", x)
    return init_model(b.build(), rng)


def _recurrent(cell: str) -> SeedBuilder:
    def build(rng: np.random.Generator, batch: int = 2, dtype: str = "float32") -> Model:
        b = GraphBuilder((batch, 10, 8), dtype=dtype)
        x = b.add(cell, "x0", units=16, return_sequences=True)
        x = b.add(cell, x, units=8)
        x = b.add("Dense", x, units=5)
        b.add("Softmax", x)
        return init_model(b.build(), rng)

    build.__name__ = f"_{cell.lower()}"
    build.__doc__ = f"Two stacked {cell} layers (16 units over 10 steps, then 8) and a classifier."
    return build


def _identity(rng: np.random.Generator, batch: int = 2, dtype: str = "float32") -> Model:
    """DLJSFuzzer's initial seed: a chain of 10 Identity ops on an (N, 8, 8, 3) input."""
    from dlfuzz.engines.model.dljs_rules import identity_chain

    return identity_chain(10, (batch, 8, 8, 3), dtype)


SEEDS: dict[str, SeedBuilder] = {
    "identity": _identity,
    "lenet5": _lenet5,
    "alexnet": _alexnet,
    "resnet": _resnet,
    "mobilenet": _mobilenet,
    "vgg": _vgg,
    "lstm": _recurrent("LSTM"),
    "gru": _recurrent("GRU"),
}


def _from_json(path: Path, batch: int) -> Model:
    from dlfuzz.ir.serialize import load_model

    return load_model(path)


def _from_keras(path: Path, batch: int) -> Model:
    from dlfuzz.engines.model.importers import from_keras

    return from_keras(path, batch=batch)


def _from_onnx(path: Path, batch: int) -> Model:
    from dlfuzz.engines.model.importers import from_onnx

    return from_onnx(path, batch=batch)


LOADERS: dict[str, Callable[[Path, int], Model]] = {
    ".keras": _from_keras, ".h5": _from_keras, ".onnx": _from_onnx, ".json": _from_json,
}


def _rebatch(model: Model, batch: int) -> Model:
    """The same model with every input's batch dim set to ``batch`` (weights never
    depend on it, and the IR's ops never read across the batch axis)."""
    g = model.graph
    if all(t.shape[0] == batch for t in g.inputs):
        return model
    inputs = [TensorType((batch, *t.shape[1:]), t.dtype) for t in g.inputs]
    return Model(g.with_nodes(g.nodes, inputs=inputs), model.weights).check()


def _usage(spec: str, why: str) -> UsageError:
    return UsageError(f"seed model {spec!r}: {why}; give one of the seed names "
                      f"{', '.join(SEEDS)} or the path of an existing "
                      f"{'/'.join(LOADERS)} model file")


def load_seed(spec: str, rng: np.random.Generator, batch: int = 2,
              dtype: str = "float32") -> Model:
    """A seed by name (built with ``rng``) or from a model file, with ``batch`` and ``dtype``."""
    if batch < 1:
        raise UsageError(f"seed batch size {batch} must be >= 1")
    if dtype not in FLOAT_GRAPH_DTYPES:
        raise UsageError(f"seed dtype {dtype!r} is not one of {', '.join(FLOAT_GRAPH_DTYPES)}")
    if spec in SEEDS:
        return SEEDS[spec](rng, batch=batch, dtype=dtype)
    path = Path(spec)
    loader = LOADERS.get(path.suffix.lower())
    if loader is None:
        raise _usage(spec, "not a seed name and not a model file name")
    if not path.is_file():
        raise _usage(spec, f"the file {path} does not exist")
    try:
        model = _rebatch(loader(path, batch), batch)
        return model if model.graph.dtype == dtype else model.astype(dtype)
    except UsageError:
        raise
    except Exception as exc:  # a corrupt file: the library's own error, named
        raise _usage(spec, f"cannot read {path} ({type(exc).__name__}: {exc})") from None
