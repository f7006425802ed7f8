"""DLJSFuzzer's Random Operator Replace (ROR): which attributes make an op kind fit a slot.

ROR puts op kind ``Y`` where the graph needs a value of type ``want`` computed from a
value ``x`` of type ``t``: ``t == want`` when ROR inserts (the paper's "replace None by
an op"), ``want`` = the old node's type when it replaces a node (``x`` is that node's
first input). For each op kind a *proposer* lists candidate (extra inputs, attributes)
pairs; ``fits`` keeps those whose shape rule really yields ``want``, so a proposer may be
generous. Ops with a second operand (merges, MatMul, Concat) take it from ``partners``:
values defined before the slot, so the graph stays acyclic.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np

from dlfuzz.ir.graph import InvalidGraph, TensorType
from dlfuzz.ir.ops import CATALOG, get_op

# (extra input values after x, attributes)
Proposal = tuple[tuple[str, ...], dict[str, Any]]
Partners = list[tuple[str, TensorType]]
Proposer = Callable[[str, TensorType, TensorType, Partners, np.random.Generator],
                    list[Proposal]]

# Window search bounds for conv/pool replacements: kernels 1..MAX_KERNEL (plus the one
# 'valid' kernel that maps the sizes exactly), strides 1..MAX_STRIDE.
MAX_KERNEL = 5
MAX_STRIDE = 3
# Transpose and Reduce enumerate axis permutations/subsets; beyond this many non-batch
# axes they refuse rather than enumerate thousands.
MAX_ENUM_AXES = 6


def _act_attrs(op: str, t: TensorType, rng: np.random.Generator) -> dict[str, Any] | None:
    """A random attribute setting for an activation (None when it cannot apply)."""
    if op == "ReLU":
        return {"max_value": None if rng.random() < 0.5 else 6.0}
    if op in ("LeakyReLU", "ELU"):
        return {"alpha": round(float(rng.uniform(0.05, 1.0)), 3)}
    if op == "ThresholdedReLU":
        return {"theta": round(float(rng.uniform(0.0, 1.0)), 3)}
    if op == "GELU":
        return {"approximate": bool(rng.random() < 0.5)}
    if op == "Softmax":  # over the channels; a rank-1 softmax would mix the batch
        return {"axis": -1} if t.rank >= 2 else None
    return {}


def _p_same(op: str, t: TensorType, want: TensorType, partners: Partners,
            rng: np.random.Generator) -> list[Proposal]:
    """Activations, scalar constants, norms, Identity, Dropout: type in = type out."""
    if want != t:
        return []
    if get_op(op).family == "activation":
        attrs = _act_attrs(op, t, rng)
        return [] if attrs is None else [((), attrs)]
    if op == "Dropout":
        return [((), {"rate": round(float(rng.uniform(0.1, 0.5)), 2)})]
    return [((), {})]


def _p_dense(op: str, t: TensorType, want: TensorType, partners: Partners,
             rng: np.random.Generator) -> list[Proposal]:
    return [((), {"units": want.shape[-1], "use_bias": bool(rng.random() < 0.8)})]


def _dim_windows(sin: int, sout: int, padding: str, transpose: bool) -> list[tuple[int, int]]:
    """(kernel, stride) pairs mapping length ``sin`` to ``sout`` on one spatial axis."""
    kernels = set(range(1, MAX_KERNEL + 1))
    kernels.add(sout - sin + 1 if transpose else sin - sout + 1)
    out = []
    for k in sorted(x for x in kernels if x >= 1):
        for s in range(1, MAX_STRIDE + 1):
            if transpose:
                if padding == "same":
                    o = sin * s if k >= s else -1
                else:
                    o = (sin - 1) * s + k
            elif padding == "same":
                o = -(-sin // s)
            else:
                o = (sin - k) // s + 1 if k <= sin else -1
            if o == sout:
                out.append((k, s))
    return out


def _windows(t: TensorType, want: TensorType, n: int, transpose: bool,
             rng: np.random.Generator) -> list[dict[str, Any]]:
    """Window attributes (kernel/pool size, strides, padding) giving ``want``'s spatial dims."""
    if t.rank != n + 2 or want.rank != n + 2 or t.shape[0] != want.shape[0]:
        return []
    out = []
    for padding in ("same", "valid"):
        per_dim = [_dim_windows(t.shape[1 + i], want.shape[1 + i], padding, transpose)
                   for i in range(n)]
        if all(per_dim):
            picks = [choices[rng.integers(len(choices))] for choices in per_dim]
            out.append({"kernel_size": tuple(k for k, _ in picks),
                        "strides": tuple(s for _, s in picks), "padding": padding})
    return out


def _p_conv(op: str, t: TensorType, want: TensorType, partners: Partners,
            rng: np.random.Generator) -> list[Proposal]:
    kind = get_op(op)
    names = {a.name for a in kind.attrs}
    out: list[Proposal] = []
    for w in _windows(t, want, kind.spatial, "Transpose" in op, rng):
        attrs = dict(w, use_bias=bool(rng.random() < 0.8))
        if "filters" in names:
            attrs["filters"] = want.shape[-1]
        elif want.shape[-1] % t.shape[-1] == 0:  # DepthwiseConv2D: channels * multiplier
            attrs["depth_multiplier"] = want.shape[-1] // t.shape[-1]
        else:
            continue
        out.append(((), attrs))
    return out


def _p_pool(op: str, t: TensorType, want: TensorType, partners: Partners,
            rng: np.random.Generator) -> list[Proposal]:
    if t.shape[-1] != want.shape[-1]:
        return []
    out: list[Proposal] = []
    for w in _windows(t, want, get_op(op).spatial, False, rng):
        out.append(((), {"pool_size": w["kernel_size"], "strides": w["strides"],
                         "padding": w["padding"]}))
    return out


def _p_plain(op: str, t: TensorType, want: TensorType, partners: Partners,
             rng: np.random.Generator) -> list[Proposal]:
    """Attribute-free ops whose shape rule decides alone (Flatten, global pooling)."""
    return [((), {})]


def _p_reshape(op: str, t: TensorType, want: TensorType, partners: Partners,
               rng: np.random.Generator) -> list[Proposal]:
    return [((), {"target_shape": want.shape[1:]})]


def _p_transpose(op: str, t: TensorType, want: TensorType, partners: Partners,
                 rng: np.random.Generator) -> list[Proposal]:
    """Non-identity permutations giving ``want`` (for an insertion: equal-size axes swap)."""
    axes = list(range(1, t.rank))
    if t.rank != want.rank or len(axes) > MAX_ENUM_AXES:
        return []
    return [((), {"dims": p}) for p in itertools.permutations(axes)
            if list(p) != axes and tuple(t.shape[a] for a in p) == want.shape[1:]]


def _spatial_diff(op: str, t: TensorType, want: TensorType) -> list[int] | None:
    n = get_op(op).spatial
    if t.rank != n + 2 or want.rank != n + 2 or t.shape[0] != want.shape[0] \
            or t.shape[-1] != want.shape[-1]:
        return None
    return [want.shape[1 + i] - t.shape[1 + i] for i in range(n)]


def _split(total: int, rng: np.random.Generator) -> tuple[int, int]:
    before = int(rng.integers(0, total + 1))
    return before, total - before


def _p_pad(op: str, t: TensorType, want: TensorType, partners: Partners,
           rng: np.random.Generator) -> list[Proposal]:
    diff = _spatial_diff(op, t, want)
    if diff is None or any(d < 0 for d in diff) or not any(diff):
        return []
    return [((), {"padding": tuple(_split(d, rng) for d in diff)})]


def _p_crop(op: str, t: TensorType, want: TensorType, partners: Partners,
            rng: np.random.Generator) -> list[Proposal]:
    diff = _spatial_diff(op, t, want)
    if diff is None or any(d > 0 for d in diff) or not any(diff):
        return []
    return [((), {"cropping": tuple(_split(-d, rng) for d in diff)})]


def _p_upsample(op: str, t: TensorType, want: TensorType, partners: Partners,
                rng: np.random.Generator) -> list[Proposal]:
    if _spatial_diff(op, t, want) is None:
        return []
    n = get_op(op).spatial
    size = [want.shape[1 + i] // t.shape[1 + i] for i in range(n)]
    if any(want.shape[1 + i] != t.shape[1 + i] * size[i] for i in range(n)) \
            or all(s == 1 for s in size):
        return []
    return [((), {"size": tuple(size)})]


def _p_repeat(op: str, t: TensorType, want: TensorType, partners: Partners,
              rng: np.random.Generator) -> list[Proposal]:
    return [((), {"n": want.shape[1]})] if want.rank == 3 else []


def _p_reduce(op: str, t: TensorType, want: TensorType, partners: Partners,
              rng: np.random.Generator) -> list[Proposal]:
    axes = list(range(1, t.rank))
    if len(axes) > MAX_ENUM_AXES:
        return []
    return [((), {"axes": sub, "keepdims": keep})
            for r in range(1, len(axes) + 1) for sub in itertools.combinations(axes, r)
            for keep in (True, False)]


def _p_merge(op: str, t: TensorType, want: TensorType, partners: Partners,
             rng: np.random.Generator) -> list[Proposal]:
    """Add/Mul/... of ``x`` with an earlier value of the same type (``x`` itself counts,
    except for Subtract: ``fits`` drops x - x); a Compare or Logical with a drawn mode; a
    Where selecting, by ``x``, between two such values."""
    if want != t:
        return []
    same = [name for name, pt in partners if pt == t]
    kind = get_op(op)
    modes = [a.choices for a in kind.attrs if a.name == "mode"]
    attrs = {"mode": modes[0][int(rng.integers(len(modes[0])))]} if modes else {}
    if kind.arity[0] == 3:
        return [((name, same[int(rng.integers(len(same)))]), {}) for name in same]
    return [((name,), attrs) for name in same]


def _p_matmul(op: str, t: TensorType, want: TensorType, partners: Partners,
              rng: np.random.Generator) -> list[Proposal]:
    if t.rank != 3:
        return []
    return [((name,), {}) for name, pt in partners
            if pt.rank == 3 and pt.dtype == t.dtype and pt.shape[:2] == (t.shape[0], t.shape[2])
            and (t.shape[0], t.shape[1], pt.shape[2]) == want.shape]


def _p_concat(op: str, t: TensorType, want: TensorType, partners: Partners,
              rng: np.random.Generator) -> list[Proposal]:
    return [((name,), {"axis": axis}) for name, pt in partners for axis in range(1, t.rank)
            if pt.rank == t.rank and pt.dtype == t.dtype]


def _p_recurrent(op: str, t: TensorType, want: TensorType, partners: Partners,
                 rng: np.random.Generator) -> list[Proposal]:
    return [((), {"units": want.shape[-1], "return_sequences": want.rank == 3})]


_BY_NAME: dict[str, Proposer] = {
    "Flatten": _p_plain, "Reshape": _p_reshape, "Transpose": _p_transpose,
    "Concat": _p_concat, "MatMul": _p_matmul, "RepeatVector": _p_repeat,
    **{f"ZeroPadding{n}D": _p_pad for n in (1, 2, 3)},
    **{f"Cropping{n}D": _p_crop for n in (1, 2, 3)},
    **{f"UpSampling{n}D": _p_upsample for n in (1, 2, 3)},
}
_BY_FAMILY: dict[str, Proposer] = {
    "activation": _p_same, "elementwise_const": _p_same, "norm": _p_same, "misc": _p_same,
    "dense": _p_dense, "conv": _p_conv, "pool": _p_pool, "global_pool": _p_plain,
    "reduce": _p_reduce, "merge": _p_merge, "recurrent": _p_recurrent,
}


def proposer(op: str) -> Proposer | None:
    return _BY_NAME.get(op) or _BY_FAMILY.get(CATALOG[op].family)


def insertable_ops() -> list[str]:
    """Every op kind ROR knows how to place (in catalog order)."""
    return [op for op in CATALOG if proposer(op) is not None]


def fits(op: str, x: str, t: TensorType, want: TensorType, partners: Partners,
         rng: np.random.Generator) -> list[Proposal]:
    """The proposals for ``op`` at this slot that really compute a value of type ``want``."""
    propose = proposer(op)
    if propose is None:
        return []
    types = dict(partners)
    types[x] = t
    kind = get_op(op)
    ok = []
    for extra, attrs in propose(op, t, want, partners, rng):
        if op == "Subtract" and extra == (x,):  # x - x is a constant zero: a dead model
            continue
        try:
            if kind.infer_node([t, *(types[v] for v in extra)], attrs) == want:
                ok.append((extra, attrs))
        except InvalidGraph:
            continue
    return ok


# ---- detours: a shape-changing op followed by the ops that restore the type --------------

# (op, extra inputs, attributes); the first step reads x, each later one the step before.
Step = tuple[str, tuple[str, ...], dict[str, Any]]


def _pairs(sizes: tuple[int, ...], rng: np.random.Generator, most: int
           ) -> tuple[tuple[int, int], ...]:
    """Random (before, after) amounts per axis, each at most ``most``, not all zero."""
    while True:
        pairs = tuple((int(rng.integers(0, most + 1)), int(rng.integers(0, most + 1)))
                      for _ in sizes)
        if any(sum(p) for p in pairs):
            return pairs


def _d_flatten(op: str, t: TensorType, partners: Partners, rng: np.random.Generator
               ) -> list[list[Step]]:
    return [[(op, (), {}), ("Reshape", (), {"target_shape": t.shape[1:]})]]


def _d_global(op: str, t: TensorType, partners: Partners, rng: np.random.Generator
              ) -> list[list[Step]]:
    """Global pooling, then broadcast back: Reshape to (1,..,1,C) and UpSampling."""
    n = get_op(op).spatial
    if t.rank != n + 2:
        return []
    return [[(op, (), {}), ("Reshape", (), {"target_shape": (1,) * n + (t.shape[-1],)}),
             (f"UpSampling{n}D", (), {"size": t.shape[1:-1]})]]


def _d_pad(op: str, t: TensorType, partners: Partners, rng: np.random.Generator
           ) -> list[list[Step]]:
    n = get_op(op).spatial
    if t.rank != n + 2:
        return []
    p = _pairs(t.shape[1:-1], rng, 2)
    return [[(op, (), {"padding": p}), (f"Cropping{n}D", (), {"cropping": p})]]


def _d_crop(op: str, t: TensorType, partners: Partners, rng: np.random.Generator
            ) -> list[list[Step]]:
    n = get_op(op).spatial
    if t.rank != n + 2:
        return []
    c = []
    for d in t.shape[1:-1]:  # keep at least one element per axis
        before = int(rng.integers(0, min(2, d - 1) + 1))
        c.append((before, int(rng.integers(0, min(2, d - 1 - before) + 1))))
    if not any(sum(p) for p in c):
        return []
    return [[(op, (), {"cropping": tuple(c)}),
             (f"ZeroPadding{n}D", (), {"padding": tuple(c)})]]


def _d_upsample(op: str, t: TensorType, partners: Partners, rng: np.random.Generator
                ) -> list[list[Step]]:
    """UpSampling by s, then a pool of window and stride s (max or average) back."""
    n = get_op(op).spatial
    if t.rank != n + 2:
        return []
    size = tuple(int(rng.integers(1, 3)) for _ in range(n))
    if all(s == 1 for s in size):
        size = (2,) * n
    pool = "MaxPool" if rng.random() < 0.5 else "AvgPool"
    return [[(op, (), {"size": size}),
             (f"{pool}{n}D", (), {"pool_size": size, "strides": size, "padding": "valid"})]]


def _d_repeat(op: str, t: TensorType, partners: Partners, rng: np.random.Generator
              ) -> list[list[Step]]:
    if t.rank != 2:
        return []
    return [[(op, (), {"n": int(rng.integers(2, 4))}), ("GlobalAvgPool1D", (), {})]]


def _d_concat(op: str, t: TensorType, partners: Partners, rng: np.random.Generator
              ) -> list[list[Step]]:
    """Concat with an earlier value along the channels, then Dense back to C channels."""
    if t.rank < 2:
        return []
    return [[(op, (name,), {"axis": t.rank - 1}), ("Dense", (), {"units": t.shape[-1]})]
            for name, pt in partners if pt.rank == t.rank and pt.shape[:-1] == t.shape[:-1]]


def _d_reduce(op: str, t: TensorType, partners: Partners, rng: np.random.Generator
              ) -> list[list[Step]]:
    """Reduce some spatial axes (keepdims), then UpSampling back (like HWR)."""
    n = t.rank - 2
    if not 1 <= n <= 3:
        return []
    axes = tuple(a for a in range(1, n + 1) if rng.random() < 0.5) or (1,)
    size = tuple(t.shape[a] if a in axes else 1 for a in range(1, n + 1))
    return [[(op, (), {"axes": axes, "keepdims": True}),
             (f"UpSampling{n}D", (), {"size": size})]]


_DETOURS: dict[str, Callable[[str, TensorType, Partners, np.random.Generator],
                             list[list[Step]]]] = {
    "Flatten": _d_flatten, "Concat": _d_concat, "RepeatVector": _d_repeat,
    **{f"Reduce{k}": _d_reduce for k in ("Mean", "Max", "Sum", "Min")},
    **{f"Global{k}Pool{n}D": _d_global for k in ("Max", "Avg") for n in (1, 2, 3)},
    **{f"ZeroPadding{n}D": _d_pad for n in (1, 2, 3)},
    **{f"Cropping{n}D": _d_crop for n in (1, 2, 3)},
    **{f"UpSampling{n}D": _d_upsample for n in (1, 2, 3)},
}


def detours(op: str, x: str, t: TensorType, partners: Partners, rng: np.random.Generator
            ) -> list[list[Step]]:
    """Chains that start with ``op`` on ``x`` and end with a value of type ``t`` again."""
    make = _DETOURS.get(op)
    if make is None:
        return []
    types = dict(partners)
    types[x] = t
    ok = []
    for chain in make(op, t, partners, rng):
        cur = t
        try:
            for step_op, extra, attrs in chain:
                cur = get_op(step_op).infer_node([cur, *(types[v] for v in extra)], attrs)
        except InvalidGraph:
            continue
        if cur == t:
            ok.append(chain)
    return ok
