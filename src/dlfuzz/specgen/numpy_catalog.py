"""The curated seed list ``numpy_like.py`` builds the numpy spec set from.

Not used at run time (``data/numpy.json`` and ``data/counterparts/numpy.json`` are the
source of truth there). Each ``seed`` names a
numpy function and says only what cannot be derived: its group, its shape rule, and
per-library differences (another target, renamed or extra keywords). Parameters are
derived from ``inspect.signature`` of the numpy function plus ``numpy_like.KIND_TABLE``
unless given explicitly; numpy_like.py then checks every keyword against each library's
own signature and calibrates the dtypes by running the libraries.
"""

from __future__ import annotations

from typing import Any

Seed = dict[str, Any]


def seed(name: str, group: str, shapes: str = "any", params: list[dict] | None = None,
         *, dtypes: tuple[str, ...] = ("all",), specials: bool = True, notes: str = "",
         unsupported: dict[str, str] | None = None, **bindings: Any) -> Seed:
    """One catalog entry; ``bindings`` maps a library to a target string or a dict."""
    return {"name": name, "group": group, "shapes": shapes, "params": params,
            "dtypes": list(dtypes), "specials": specials, "notes": notes,
            "unsupported": unsupported or {}, "bindings": bindings}


def each(args: list[str], libs: tuple[str, ...]) -> dict[str, Any]:
    """The same ``{"args": args}`` binding for each of ``libs`` (a fresh dict apiece)."""
    return {lib: {"args": list(args)} for lib in libs}


NO_XLA = "tf.function(jit_compile=True) has no XLA kernel for this op"


def T(name: str, **kw: Any) -> dict:
    return {"name": name, "kind": "tensor", **kw}


def TL(name: str, count: tuple[int, int] = (1, 3), **kw: Any) -> dict:
    return {"name": name, "kind": "tensors", "count": list(count), **kw}


def AX(name: str = "axis", of: str = "a", optional: bool = False, **kw: Any) -> dict:
    return {"name": name, "kind": "axis", "of": of, "optional": optional, **kw}


def AXES(name: str = "axis", of: str = "a", optional: bool = True, **kw: Any) -> dict:
    return {"name": name, "kind": "axes", "of": of, "optional": optional, **kw}


def I(name: str, lo: int, hi: int, optional: bool = True, default: Any = None) -> dict:  # noqa: E743
    return {"name": name, "kind": "int", "range": [lo, hi], "optional": optional,
            "default": default}


def F(name: str, lo: float, hi: float, optional: bool = True, default: Any = None) -> dict:
    return {"name": name, "kind": "float", "range": [lo, hi], "optional": optional,
            "default": default}


def B(name: str, default: bool = False) -> dict:
    return {"name": name, "kind": "bool", "optional": True, "default": default}


def R(name: str, kind: str, optional: bool = False) -> dict:
    """A parameter whose value the shape rule sets."""
    return {"name": name, "kind": kind, "optional": optional}


KEEP = B("keepdims")
DT = {"name": "dtype", "kind": "dtype"}
TFM = "tensorflow.math."
TF = "tensorflow."
POS = {"x": [0, 10]}

# Unary elementwise functions: (name, torch target or None, tf target or None, domain).
_UNARY = [
    ("abs", None, None, None), ("absolute", None, None, None), ("negative", None, None, None),
    ("positive", None, None, None), ("sign", None, None, None), ("sqrt", None, None, (0, 10)),
    ("square", None, None, None), ("exp", None, None, (-10, 10)),
    ("exp2", None, None, (-10, 10)), ("expm1", None, None, (-10, 10)),
    ("log", None, None, (0, 10)), ("log10", None, None, (0, 10)),
    ("log1p", None, None, (-1, 10)), ("log2", None, None, (0, 10)),
    ("sin", None, None, None), ("cos", None, None, None), ("tan", None, None, None),
    ("arcsin", None, None, (-1, 1)), ("arccos", None, None, (-1, 1)),
    ("arctan", None, None, None), ("sinh", None, None, (-10, 10)),
    ("cosh", None, None, (-10, 10)), ("tanh", None, None, None),
    ("arcsinh", None, None, None), ("arccosh", None, None, (1, 10)),
    ("arctanh", None, None, (-1, 1)), ("ceil", None, None, None),
    ("floor", None, None, None), ("trunc", None, "tensorflow.experimental.numpy.fix", None),
    ("rint", "torch.round", TFM + "rint", None), ("reciprocal", None, None, None),
    ("deg2rad", None, None, None), ("rad2deg", None, None, None), ("sinc", None, None, None),
    ("fabs", "torch.abs", None, None), ("conj", None, None, None), ("real", None, None, None),
    ("imag", None, None, None), ("angle", None, None, None),
    ("i0", None, TFM + "bessel_i0", None), ("invert", "torch.bitwise_not",
                                             "tensorflow.experimental.numpy.bitwise_not", None),
    ("bitwise_not", None, None, None),
]
_PREDICATES = ["isnan", "isinf", "isfinite", "isneginf", "isposinf", "signbit", "isreal",
               "logical_not"]

# Binary elementwise: (name, group, torch target, tf target, x2 domain, x2 transform).
_BINARY = [
    ("add", "math_binary", None, None, None, None),
    ("subtract", "math_binary", None, None, None, None),
    ("multiply", "math_binary", None, None, None, None),
    ("divide", "math_binary", None, None, None, None),
    ("true_divide", "math_binary", None, None, None, None),
    ("floor_divide", "math_binary", None, None, None, "nonzero"),
    ("remainder", "math_binary", None, None, None, "nonzero"),
    ("mod", "math_binary", "torch.remainder", None, None, "nonzero"),
    ("fmod", "math_binary", None, TF + "truncatemod", None, "nonzero"),
    ("power", "math_binary", "torch.pow", None, (0, 5), None),
    ("float_power", "math_binary", None, None, (0, 5), None),
    ("maximum", "math_binary", None, None, None, None),
    ("minimum", "math_binary", None, None, None, None),
    ("arctan2", "math_binary", None, None, None, None),
    ("hypot", "math_binary", None, None, None, None),
    ("logaddexp", "math_binary", None, None, None, None),
    ("logaddexp2", "math_binary", None, None, None, None),
    ("nextafter", "math_binary", None, None, None, None),
    ("heaviside", "math_binary", None, None, None, None),
    ("gcd", "math_binary", None, None, None, None),
    ("lcm", "math_binary", None, None, None, None),
    ("bitwise_and", "bitwise", None, None, None, None),
    ("bitwise_or", "bitwise", None, None, None, None),
    ("bitwise_xor", "bitwise", None, None, None, None),
    ("left_shift", "bitwise", "torch.bitwise_left_shift", TF + "bitwise.left_shift",
     (0, 7), None),
    ("right_shift", "bitwise", "torch.bitwise_right_shift", TF + "bitwise.right_shift",
     (0, 7), None),
    ("equal", "comparison", "torch.eq", None, None, None),
    ("not_equal", "comparison", None, None, None, None),
    ("greater", "comparison", None, None, None, None),
    ("greater_equal", "comparison", None, None, None, None),
    ("less", "comparison", None, None, None, None),
    ("less_equal", "comparison", None, None, None, None),
    ("logical_and", "comparison", None, None, None, None),
    ("logical_or", "comparison", None, None, None, None),
    ("logical_xor", "comparison", None, None, None, None),
]

# Reductions: (name, torch target, axis kind, extra params, torch extra, nonempty).
# torch needs dim=None spelled out when keepdim is given without a dim; numpy's keepdims
# without an axis keeps every dimension as 1.
_ALL = {"dim": None}
_KEEP_IF_AXIS = dict(KEEP, requires="axis")
_REDUCTIONS = [
    ("sum", None, "axes", [KEEP], _ALL, False),
    ("prod", None, "axis", [_KEEP_IF_AXIS], {}, False),
    ("mean", None, "axes", [KEEP], _ALL, False),
    ("std", None, "axes", [KEEP], {"correction": 0, **_ALL}, False),
    ("var", None, "axes", [KEEP], {"correction": 0, **_ALL}, False),
    ("max", "torch.amax", "axes", [KEEP], _ALL, True),
    ("min", "torch.amin", "axes", [KEEP], _ALL, True),
    ("amax", None, "axes", [KEEP], _ALL, True),
    ("amin", None, "axes", [KEEP], _ALL, True),
    ("argmax", None, "axis", [KEEP], {}, True),
    ("argmin", None, "axis", [KEEP], {}, True),
    ("all", None, "axes", [KEEP], _ALL, False),
    ("any", None, "axes", [KEEP], _ALL, False),
    ("count_nonzero", None, "axes", [KEEP], {}, False),
    ("nansum", None, "axes", [KEEP], _ALL, False),
    ("nanmean", None, "axes", [KEEP], _ALL, False),
]


def _unary() -> list[Seed]:
    out = []
    for name, torch, tf, domain in _UNARY:
        params = [T("x", domain=list(domain))] if domain else None  # None: from numpy
        dtypes = ("complex",) if name == "angle" else ("all",)
        notes = "complex only: for real -0.0 numpy gives pi, torch 0" if name == "angle" else ""
        out.append(seed(name, "math_unary", params=params, torch=torch, tf=tf, dtypes=dtypes,
                        notes=notes, unsupported={"tf-xla": NO_XLA} if name == "i0" else None))
    out.append(seed("round", "math_unary", params=[T("a"), I("decimals", -2, 4, default=0)],
                    dtypes=("float",), notes="floats only: integer rounding to negative "
                                             "decimals is not implemented in jax and torch"))
    for name in _PREDICATES:
        out.append(seed(name, "predicate"))
    return out


def _binary() -> list[Seed]:
    out = []
    for name, group, torch, tf, domain, values in _BINARY:
        x1: dict = T("x1")
        x2: dict = T("x2")
        if name == "lcm":  # no overflow: wrapped lcm results differ by evaluation order
            x1["domain"] = [-10, 10]
            domain = (-10, 10)
        if domain:
            x2["domain"] = list(domain)
        if values:
            x2["values"] = values
        specials = name not in ("left_shift", "right_shift")
        out.append(seed(name, group, "broadcast", [x1, x2], torch=torch, tf=tf,
                        specials=specials))
    tol = [F("rtol", 1e-6, 1e-2, default=1e-05), F("atol", 0.0, 1e-2, default=1e-08),
           B("equal_nan")]
    out.append(seed("isclose", "comparison", "broadcast", [T("a"), T("b")] + tol))
    out.append(seed("allclose", "comparison", "broadcast", [T("a"), T("b")] + tol))
    out.append(seed("array_equal", "comparison", "same", [T("a1"), T("a2")],
                    torch="torch.equal"))
    return out


def _reductions() -> list[Seed]:
    out = []
    for name, torch, axis_kind, extra, torch_extra, nonempty in _REDUCTIONS:
        a = T("a", nonempty=True) if nonempty else T("a")
        axis = AXES() if axis_kind == "axes" else AX(optional=True)
        tb: dict = {"target": torch or f"torch.{name}"}
        if torch_extra:
            tb["extra"] = torch_extra
        out.append(seed(name, "reduction", params=[a, axis] + extra, torch=tb))
    out += [
        seed("cumsum", "cumulative", params=[T("a"), AX()]),
        seed("cumprod", "cumulative", params=[T("a"), AX()]),
        seed("diff", "cumulative", params=[T("a", rank=[1, 5]), I("n", 0, 3, default=1),
                                           AX(optional=True)]),
    ]
    return out


def _shape() -> list[Seed]:
    split_p = [T("ary"), R("indices_or_sections", "ints")]
    pos_split = {"args": ["ary", "indices_or_sections"]}
    return [
        seed("reshape", "shape", "reshape", [T("a"), R("shape", "shape")],
             tf={"rename": {"shape": "newshape"}}),
        seed("ravel", "shape", params=[T("a")]),
        seed("transpose", "shape", params=[T("a"), {"name": "axes", "kind": "perm", "of": "a"}],
             torch={"target": "torch.permute", "rename": {"axes": "dims"}}),
        seed("swapaxes", "shape", params=[T("a"), AX("axis1"), AX("axis2")],
             torch={"rename": {"axis1": "axis0", "axis2": "axis1"}}),
        seed("moveaxis", "shape", params=[T("a"), AX("source"), AX("destination")]),
        seed("squeeze", "shape", "squeeze", [T("a"), R("axis", "axis", optional=True)]),
        seed("expand_dims", "shape", params=[T("a"), AX(insert=True)],
             torch="torch.unsqueeze"),
        seed("flip", "shape", params=[T("m"), AX(of="m")],
             torch={"rename": {"axis": "dims"}, "convert": {"axis": "tuple"}}),
        seed("fliplr", "shape", params=[T("m", rank=[2, 5])]),
        seed("flipud", "shape", params=[T("m", rank=[1, 5])]),
        seed("roll", "shape", params=[T("a"), I("shift", -10, 10, optional=False),
                                      AX(optional=True)],
             torch={"rename": {"shift": "shifts", "axis": "dims"}}),
        seed("rot90", "shape", params=[T("m", rank=[2, 5]), I("k", -4, 4, default=1),
                                       AXES("axes", of="m", size=[2, 2])],
             torch={"rename": {"axes": "dims"}}),
        seed("tile", "shape", params=[T("A", rank=[0, 4]),
                                      {"name": "reps", "kind": "ints", "range": [0, 3],
                                       "length": [1, 4]}],
             torch={"rename": {"reps": "dims"}}),
        seed("repeat", "shape", params=[T("a"), I("repeats", 0, 3, optional=False),
                                        AX(optional=True)],
             torch={"target": "torch.repeat_interleave", "rename": {"axis": "dim"}}),
        seed("broadcast_to", "shape", "broadcast_to", [T("array", rank=[0, 3]),
                                                        R("shape", "shape")],
             torch={"rename": {"shape": "size"}}),
        seed("atleast_1d", "shape", params=[T("arys")]),
        seed("atleast_2d", "shape", params=[T("arys")]),
        seed("atleast_3d", "shape", params=[T("arys")]),
        seed("concatenate", "shape", "concat", [TL("arrays", (1, 4)), R("axis", "axis")],
             torch="torch.cat"),
        seed("stack", "shape", "stack", [TL("arrays", (1, 4), rank=[0, 4]), R("axis", "axis")]),
        seed("hstack", "shape", "same_list", [TL("tup", (1, 4))]),
        seed("vstack", "shape", "same_list", [TL("tup", (1, 4))]),
        seed("dstack", "shape", "same_list", [TL("tup", (1, 4))]),
        seed("split", "shape", "split", split_p + [R("axis", "axis")],
             numpy=pos_split, jax=pos_split, tf=pos_split,
             torch={"target": "torch.tensor_split", **pos_split}),
        seed("hsplit", "shape", "hsplit", split_p, numpy=pos_split, jax=pos_split,
             tf=pos_split, torch=pos_split),
        seed("vsplit", "shape", "vsplit", split_p, numpy=pos_split, jax=pos_split,
             tf=pos_split, torch=pos_split),
        seed("dsplit", "shape", "dsplit", split_p, numpy=pos_split, jax=pos_split,
             tf=pos_split, torch=pos_split),
        seed("tril", "shape", params=[T("m", rank=[2, 5]), I("k", -3, 3, default=0)],
             torch={"rename": {"k": "diagonal"}}),
        seed("triu", "shape", params=[T("m", rank=[2, 5]), I("k", -3, 3, default=0)],
             torch={"rename": {"k": "diagonal"}}),
        seed("diag", "shape", "diag", [T("v"), I("k", -3, 3, default=0)],
             torch={"rename": {"k": "diagonal"}}),
        seed("diagflat", "shape", params=[T("v", rank=[0, 3]), I("k", -3, 3, default=0)],
             torch={"rename": {"k": "offset"}}),
        seed("diagonal", "shape", params=[T("a", rank=[2, 5]), I("offset", -3, 3, default=0),
                                          AX("axis1"), AX("axis2", distinct="axis1")]),
        seed("kron", "shape", params=[T("a", rank=[0, 2]), T("b", rank=[0, 2])],
             notes="ranks <= 2: TF's eager Mul cannot broadcast beyond 5 dimensions"),
        seed("meshgrid", "shape", "meshgrid",
             [TL("xi", (1, 3)), {"name": "indexing", "kind": "enum", "values": ["xy", "ij"],
                                 "optional": True, "default": "xy"}],
             numpy={"args": ["*xi"]}, jax={"args": ["*xi"]}, tf={"args": ["*xi"]},
             torch={"args": ["*xi"], "extra": {"indexing": "xy"}}),
        seed("vander", "shape", params=[T("x", rank=[1, 1]), I("N", 0, 6), B("increasing")]),
        seed("broadcast_arrays", "shape", "broadcast_list", [TL("args", (1, 3))],
             numpy={"args": ["*args"]}, jax={"args": ["*args"]}, tf={"args": ["*args"]},
             torch={"target": "torch.broadcast_tensors", "args": ["*args"]}),
    ]


def _indexing() -> list[Seed]:
    idx = {"role": "index"}
    return [
        seed("take", "indexing", "take", [T("a"), T("indices", rank=[0, 3], **idx)],
             notes="indices are non-negative: tnp.take clips negative indices"),
        seed("take_along_axis", "indexing", "take_along_axis",
             [T("arr", rank=[1, 5]), T("indices", **idx), R("axis", "axis")],
             torch="torch.take_along_dim"),
        seed("where", "indexing", "broadcast", [T("condition", role="bool"), T("x"), T("y")]),
        seed("clip", "indexing", "clip", [T("a"), R("a_min", "int"), R("a_max", "int")],
             **each(["a", "a_min", "a_max"], ("numpy", "jax", "tf", "torch")),
             notes="scalar bounds with a_min <= a_max: for a_min > a_max numpy and tnp "
                   "disagree by design"),
        seed("sort", "sorting", params=[T("a", rank=[1, 5]),
                                        {"name": "axis", "kind": "enum", "values": [0]}],
             torch={"target": "torch.msort", "drop": ["axis"]},
             notes="torch.sort returns (values, indices); torch.msort sorts along axis 0 "
                   "only, so the axis is pinned to 0 for every library"),
        seed("argsort", "sorting", params=[T("a", rank=[1, 5]), AX(optional=True)],
             numpy={"extra": {"kind": "stable"}}, jax={"extra": {"stable": True}},
             torch={"extra": {"stable": True}}, tf={"extra": {"kind": "stable"}},
             notes="stable everywhere: with ties an unstable sort has several right answers; "
                   "rank >= 1: numpy's argsort of a 0-d array is a 1-d quirk"),
    ]


def _linalg() -> list[Seed]:
    sq = T("a", rank=[2, 4])
    tfl = "tensorflow.linalg."
    return [
        seed("matmul", "linalg", "matmul", [T("x1"), T("x2")]),
        seed("dot", "linalg", "vectors", [T("a"), T("b")]),
        seed("vdot", "linalg", "vectors", [T("a"), T("b")]),
        seed("inner", "linalg", "inner", [T("a", rank=[1, 3]), T("b", rank=[1, 3])]),
        seed("outer", "linalg", "outer", [T("a"), T("b")]),
        seed("tensordot", "linalg", "tensordot", [T("a"), T("b"), R("axes", "int")],
             torch={"rename": {"axes": "dims"}}),
        seed("einsum", "linalg", "einsum", [R("subscripts", "str"), TL("operands", (1, 3))],
             numpy={"args": ["subscripts", "*operands"]},
             jax={"args": ["subscripts", "*operands"]},
             tf={"args": ["subscripts", "*operands"]},
             torch={"args": ["subscripts", "*operands"]}),
        seed("cross", "linalg", "cross", [T("a"), T("b")], torch="torch.linalg.cross"),
        seed("trace", "linalg", params=[T("a", rank=[2, 2])]),
        seed("linalg.det", "linalg", "square", [sq], tf=tfl + "det", specials=False,
             unsupported={"tf-xla": NO_XLA}),
        seed("linalg.inv", "linalg", "square", [sq], tf=tfl + "inv", specials=False),
        seed("linalg.slogdet", "linalg", "square", [sq], tf=tfl + "slogdet", specials=False,
             unsupported={"tf-xla": NO_XLA}),
        seed("linalg.solve", "linalg", "solve", [sq, T("b", rank=[2, 4])],
             tf=tfl + "solve", specials=False),
        seed("linalg.cholesky", "linalg", "square", [T("a", rank=[2, 4], values="spd")],
             tf=tfl + "cholesky", specials=False),
        seed("linalg.eigvalsh", "linalg", "square", [T("a", rank=[2, 4], values="symmetric")],
             tf=tfl + "eigvalsh", specials=False),
        seed("linalg.svdvals", "linalg", params=[T("x", rank=[2, 4])],
             tf={"target": tfl + "svd", "extra": {"compute_uv": False}}, specials=False),
        seed("linalg.pinv", "linalg", params=[T("a", rank=[2, 4])], tf=tfl + "pinv",
             specials=False),
        seed("linalg.norm", "linalg", params=[T("x"), AX(of="x", optional=True), KEEP],
             tf="tensorflow.norm"),
        seed("linalg.vector_norm", "linalg", params=[T("x"), AX(of="x", optional=True), KEEP],
             tf="tensorflow.norm"),
        seed("linalg.matrix_norm", "linalg", params=[T("x", rank=[2, 4]), KEEP],
             tf={"target": "tensorflow.norm", "extra": {"ord": "fro", "axis": [-2, -1]}}),
        seed("linalg.diagonal", "linalg", params=[T("x", rank=[2, 4])],
             tf=tfl + "diag_part",
             notes="no offset: tf.linalg.diag_part rejects offsets beyond the matrix, numpy "
                   "returns an empty diagonal"),
        seed("linalg.matrix_transpose", "linalg", params=[T("x", rank=[2, 5])],
             torch={"target": "torch.transpose", "extra": {"dim0": -2, "dim1": -1}},
             tf=tfl + "matrix_transpose"),
    ]


def _creation() -> list[Seed]:
    shp = {"name": "shape", "kind": "shape", "rank": [0, 3]}
    fill = I("fill_value", 0, 10, optional=False)
    return [
        seed("zeros", "creation", "none", [shp, DT], numpy={"args": ["shape"]},
             jax={"args": ["shape"]}, tf={"args": ["shape"]}, torch={"args": ["shape"]}),
        seed("ones", "creation", "none", [shp, DT], numpy={"args": ["shape"]},
             jax={"args": ["shape"]}, tf={"args": ["shape"]}, torch={"args": ["shape"]}),
        seed("full", "creation", "none", [shp, fill, DT],
             **each(["shape", "fill_value"], ("numpy", "jax", "tf", "torch"))),
        seed("eye", "creation", "none", [I("N", 0, 6, optional=False), I("M", 1, 6), DT],
             **each(["N", "M"], ("numpy", "jax", "tf", "torch"))),
        seed("identity", "creation", "none", [I("n", 0, 6, optional=False), DT],
             torch={"target": "torch.eye", "args": ["n"]},
             **each(["n"], ("numpy", "jax", "tf"))),
        seed("arange", "creation", "arange", [R("start", "int"), R("stop", "int"),
                                              R("step", "int"), DT],
             **each(["start", "stop", "step"], ("numpy", "jax", "tf", "torch"))),
        seed("linspace", "creation", "none", [F("start", -5, 5, optional=False),
                                              F("stop", -5, 5, optional=False),
                                              I("num", 0, 10, optional=False), DT],
             **each(["start", "stop", "num"], ("numpy", "jax", "tf", "torch"))),
        seed("logspace", "creation", "none", [F("start", -3, 3, optional=False),
                                              F("stop", -3, 3, optional=False),
                                              I("num", 0, 10, optional=False),
                                              F("base", 1.5, 10.0, default=10.0), DT],
             **each(["start", "stop", "num"], ("numpy", "jax", "tf", "torch"))),
        seed("zeros_like", "creation", params=[T("a")]),
        seed("ones_like", "creation", params=[T("a")]),
        seed("full_like", "creation", params=[T("a"), fill],
             **each(["a", "fill_value"], ("numpy", "jax", "tf", "torch"))),
    ]


def catalog() -> list[Seed]:
    """Every seed, in the order the JSON lists them."""
    return _unary() + _binary() + _reductions() + _shape() + _indexing() + _linalg() \
        + _creation()
