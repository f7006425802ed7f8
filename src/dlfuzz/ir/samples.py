"""Small graphs exercising every op kind and its attribute variants (lowering self-tests).

``op_samples(op)`` gives graphs of one node (two for merges) whose attributes cover the
cases a lowering can get wrong: 'same' vs 'valid', strides, dilation, odd sizes,
asymmetric padding, multipliers, keepdims, return_sequences. Every op of the catalog has
at least one sample; ``tests/backends/test_lowering.py`` runs them all on every backend.
"""

from __future__ import annotations

from typing import Any

from dlfuzz.ir.graph import BOOL_GRAPH_DTYPES, INT_GRAPH_DTYPES, Graph, GraphBuilder
from dlfuzz.ir.ops import CATALOG
from dlfuzz.ir.ops.logic import BOOL_COMPARISONS, COMPARISONS, LOGICAL

_SPATIAL_SHAPE = {1: (2, 9, 3), 2: (2, 7, 8, 3), 3: (2, 5, 6, 7, 2)}


def _one(shape: tuple[int, ...], op: str, dtype: str, **attrs: Any) -> Graph:
    b = GraphBuilder(shape, dtype=dtype)
    b.add(op, "x0", **attrs)
    return b.build()


def _window_variants(n: int) -> list[dict[str, Any]]:
    return [
        {"kernel_size": (3,) * n, "padding": "valid"},
        {"kernel_size": (2,) * n, "strides": (2,) * n, "padding": "same"},
        {"kernel_size": (3,) * n, "strides": (2,) * n, "padding": "same"},
        {"kernel_size": (1,) + (2,) * (n - 1), "padding": "same"},
    ]


def op_samples(op: str, dtype: str = "float64") -> list[Graph]:
    """The samples of ``op`` in ``dtype`` (a dtype the kind allows: ``OpKind.dtypes``).
    Integer samples take whole-number bounds (Clip, ReLU's cap), as integer graphs must."""
    kind = CATALOG[op]
    if dtype not in kind.dtypes:
        raise ValueError(f"{op} does not compute in {dtype}")
    integer = dtype in INT_GRAPH_DTYPES
    n = kind.spatial
    shape = _SPATIAL_SHAPE.get(n, (2, 5, 6))
    out: list[Graph] = []
    if op in ("Compare", "Logical", "LogicalNot", "Where"):
        out += _logic_samples(op, dtype)
    elif kind.name == "Dense":
        out += [_one((3, 5), op, dtype, units=4), _one((2, 3, 5), op, dtype, units=3,
                                                       use_bias=False)]
    elif kind.name.startswith("Conv") and "Transpose" in kind.name:
        out += [_one(shape, op, dtype, filters=3, kernel_size=(3,) * n, strides=(2,) * n,
                     padding=p) for p in ("valid", "same")]
        out.append(_one(shape, op, dtype, filters=2, kernel_size=(2,) * n, padding="valid",
                        use_bias=False))
    elif kind.name.startswith(("Conv", "SeparableConv", "DepthwiseConv")):
        extra = {"filters": 4} if "filters" in {a.name for a in kind.attrs} else {}
        if "depth_multiplier" in {a.name for a in kind.attrs}:
            extra["depth_multiplier"] = 2
        for v in _window_variants(n):
            out.append(_one(shape, op, dtype, **extra, **v))
        out.append(_one(shape, op, dtype, **extra, kernel_size=(2,) * n,
                        dilation_rate=(2,) * n, padding="same", use_bias=False))
    elif kind.family == "pool":
        out += [_one(shape, op, dtype),
                _one(shape, op, dtype, pool_size=(3,) * n, strides=(2,) * n, padding="same"),
                _one(shape, op, dtype, pool_size=(2,) * n, strides=(1,) * n, padding="valid")]
    elif kind.family == "global_pool":
        out.append(_one(shape, op, dtype))
    elif kind.family == "activation":
        variants: list[dict[str, Any]] = [{}]
        if op == "ReLU":
            variants = [{}, {"max_value": 2.0 if integer else 0.5}]
        elif op == "LeakyReLU":
            variants = [{"alpha": 0.1}]
        elif op == "ELU":
            variants = [{"alpha": 0.7}]
        elif op == "ThresholdedReLU":
            variants = [{"theta": 0.25}]
        elif op == "GELU":
            variants = [{}, {"approximate": True}]
        elif op == "Softmax":
            variants = [{}, {"axis": 1}]
        elif op == "Clip":  # asymmetric bounds, exact in every float dtype
            variants = [{}, {"min_value": -2.0, "max_value": 3.0} if integer
                        else {"min_value": -0.5, "max_value": 1.25}]
        out += [_one((2, 4, 5), op, dtype, **v) for v in variants]
        if op == "HardSigmoid":  # 1,024 normal inputs: a few reach the flat parts, |x| > 3
            out.append(_one((4, 256), op, dtype))
    elif kind.family == "norm":
        out += [_one((3, 4, 5), op, dtype, epsilon=1e-3), _one((4, 6), op, dtype)]
    elif kind.family == "merge" and op not in ("Concat", "MatMul"):
        b = GraphBuilder((2, 3, 4), (2, 3, 4), dtype=dtype)
        b.add(op, "x0", "x1")
        out.append(b.build())
    elif op == "MatMul":
        b = GraphBuilder((2, 3, 4), (2, 4, 5), dtype=dtype)
        b.add(op, "x0", "x1")
        out.append(b.build())
    elif op == "Concat":
        b = GraphBuilder((2, 3, 4), (2, 3, 2), dtype=dtype)
        b.add(op, "x0", "x1", axis=2)
        out.append(b.build())
        b = GraphBuilder((2, 3, 4), (2, 1, 4), dtype=dtype)
        b.add(op, "x0", "x1", axis=1)
        out.append(b.build())
    elif op == "Flatten":
        out.append(_one((2, 3, 4, 5), op, dtype))
    elif op == "Reshape":
        out.append(_one((2, 3, 4), op, dtype, target_shape=(2, 6)))
    elif op == "Transpose":
        out += [_one((2, 3, 4, 5), op, dtype, dims=(3, 1, 2)),
                _one((2, 3, 4), op, dtype, dims=(2, 1))]
    elif op.startswith("ZeroPadding"):
        out.append(_one(shape, op, dtype, padding=((1, 2),) + ((0, 1),) * (n - 1)))
    elif op.startswith("Cropping"):
        out.append(_one(shape, op, dtype, cropping=((1, 0),) + ((0, 1),) * (n - 1)))
    elif op.startswith("UpSampling"):
        out.append(_one(shape, op, dtype, size=(2,) + (3,) * (n - 1)))
    elif op == "RepeatVector":
        out.append(_one((2, 5), op, dtype, n=3))
    elif kind.family == "reduce":
        out += [_one((2, 3, 4, 5), op, dtype, axes=(1, 2)),
                _one((2, 3, 4), op, dtype, axes=(2,), keepdims=True)]
    elif kind.family == "elementwise_const":
        out.append(_one((2, 3, 4), op, dtype))
    elif op in ("Identity",):
        out.append(_one((2, 3), op, dtype))
    elif op == "Dropout":
        out.append(_one((2, 3), op, dtype, rate=0.3))
    elif kind.family == "recurrent":
        out += [_one((2, 4, 3), op, dtype, units=5),
                _one((2, 4, 3), op, dtype, units=2, return_sequences=True)]
    if not out:
        raise AssertionError(f"no sample for op {op}")
    return out


def _logic_samples(op: str, dtype: str) -> list[Graph]:
    """Float operands go through a ReLU, so some are zero and some pairs equal (both
    clipped to 0): random normal operands would make every comparison for equality false
    and every truth value true. Integer inputs (-10..10) have zeros and equal pairs
    already, and are compared as they are (int64 values beyond int32 among them); so are
    bools (compared for equality only)."""
    exact = dtype in INT_GRAPH_DTYPES or dtype in BOOL_GRAPH_DTYPES

    def operand(b: GraphBuilder, name: str) -> str:
        return name if exact else b.add("ReLU", name)

    if op == "Where":
        b = GraphBuilder((2, 3, 4), (2, 3, 4), (2, 3, 4), dtype=dtype)
        b.add(op, operand(b, "x0"), "x1", "x2")
        return [b.build()]
    if op == "LogicalNot":
        b = GraphBuilder((2, 3, 4), dtype=dtype)
        b.add(op, operand(b, "x0"))
        return [b.build()]
    out = []
    modes = BOOL_COMPARISONS if dtype in BOOL_GRAPH_DTYPES else COMPARISONS
    for v in modes if op == "Compare" else LOGICAL:
        b = GraphBuilder((2, 3, 4), (2, 3, 4), dtype=dtype)
        b.add(op, operand(b, "x0"), operand(b, "x1"), mode=v)
        out.append(b.build())
    return out


def all_samples(dtype: str = "float64") -> list[tuple[str, Graph]]:
    """Every sample of every kind that allows ``dtype`` (all kinds for the floats)."""
    return [(op, g) for op, kind in CATALOG.items() if dtype in kind.dtypes
            for g in op_samples(op, dtype)]
