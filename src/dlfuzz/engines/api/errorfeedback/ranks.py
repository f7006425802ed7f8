"""Rank and axis rules: "expected 4D input", "Dimension out of range", "axis 3 is out of
bounds" -> ``t.ndims`` bounds and axis ranges over the draw's parameters."""

from __future__ import annotations

import re
from collections.abc import Iterator

from dlfuzz.engines.api.errorfeedback.context import Ctx, rank_text
from dlfuzz.engines.api.errorfeedback.registry import Rule, adder
from dlfuzz.engines.api.errorfeedback.vocabulary import SHAPE, shape_of

RULES: list[Rule] = []
rule = adder(RULES)


# ---- ranks ------------------------------------------------------------------------------
def _rank_target(ctx: Ctx, lo: int, hi: int | None, got: int | None = None,
                 shape: tuple[int, ...] | None = None) -> str | None:
    if shape is not None and ctx.by_shape(shape):
        return ctx.by_shape(shape)
    if got is not None and ctx.by_ndims(got):
        return ctx.by_ndims(got)
    outside = [t for t in ctx.tensors if len(ctx.shape(t)) < lo
               or (hi is not None and len(ctx.shape(t)) > hi)]
    return ctx.mentioned(outside)[0] if outside else None


def _ints(m: re.Match[str], *groups: int) -> list[int | None]:
    return [int(m.group(g)) if m.group(g) is not None else None for g in groups]


@rule("torch", r"Expected (\d)D \(unbatched\) or (\d)D \(batched\) input to \w+, but got "
       r"input of size: (\[[\d, ]*\])")
def _torch_conv_rank(m: re.Match[str], ctx: Ctx) -> Iterator[str]:
    t = _rank_target(ctx, int(m.group(1)), int(m.group(2)), shape=shape_of(m.group(3)))
    if t:
        yield rank_text(t, int(m.group(1)), int(m.group(2)))


@rule("tf", r"Shape must be rank (\d+) but is rank (\d+)",
       r"(?:at least rank|rank >=) ?(\d+)(?:,| but is rank) (?:got )?(\d+)")
def _tf_rank(m: re.Match[str], ctx: Ctx) -> Iterator[str]:
    want, got = int(m.group(1)), int(m.group(2))
    exact = m.group(0).startswith("Shape must be rank")
    t = _rank_target(ctx, want, want if exact else None, got=got)
    if t:
        yield rank_text(t, want, want if exact else None)


@rule("torch tf jax",
       r"(?:at least|>=) (?:a )?(\d+)(?:D|-D|-dim|\s+dimensions|-dimensional)\b"
       r"(?:[^\[(.]{0,20}?(\[[\d, ]*\]))?",
       r"at least (two) dimensions()", r"ndims must be >= (\d+)()")
def _at_least(m: re.Match[str], ctx: Ctx) -> Iterator[str]:
    lo = 2 if m.group(1) == "two" else int(m.group(1))
    shape = shape_of(m.group(2)) if m.group(2) else None
    t = _rank_target(ctx, lo, None, shape=shape)
    if t:
        yield rank_text(t, lo, None)


@rule("torch tf jax", r"must be (\d+) or (\d+)-dimensional",
       r"non-empty (\d)D or (\d)D \(batch mode\) tensor expected",
       r"Supports (\d)D or (\d)D tensors\. Got (\d)D")
def _two_ranks(m: re.Match[str], ctx: Ctx) -> Iterator[str]:
    lo, hi = int(m.group(1)), int(m.group(2))
    got = int(m.group(3)) if m.lastindex and m.lastindex >= 3 else None
    t = _rank_target(ctx, lo, hi, got=got)
    if t:
        yield rank_text(t, lo, hi)


@rule("torch tf jax", r"must be (\d+)-dimensional\s*(\[[\d, ]*\])?",
       r"must be a (\d)D tensor()", r"only supports (\d)D tensors, got: (\d)D",
       r"expected a matrix(), but got tensor with dim (\d+)")
def _one_rank(m: re.Match[str], ctx: Ctx) -> Iterator[str]:
    want = int(m.group(1)) if m.group(1) else 2
    tail = m.group(2) or ""
    shape = shape_of(tail) if tail.startswith("[") else None
    got = int(tail) if tail.isdigit() else None
    t = _rank_target(ctx, want, want, got=got, shape=shape)
    if t:
        yield rank_text(t, want, want)


@rule("torch", r"(\w+) has to be a (\d)D Tensor", r"only supports a (\d)-dimensional (\w+) tensor",
       r"Expect a (\d)D (vector), but got shape (\[[\d, ]*\])",
       r"Expected (\d+) to (\d+) dimensions, but got (\d+)-dimensional tensor")
def _named_rank(m: re.Match[str], ctx: Ctx) -> Iterator[str]:
    g = m.groups()
    if len(g) == 4 or (len(g) == 3 and g[2].isdigit()):  # "Expected 2 to 3 dimensions"
        t = _rank_target(ctx, int(g[0]), int(g[1]), got=int(g[2]))
        if t:
            yield rank_text(t, int(g[0]), int(g[1]))
        return
    n, name = (int(g[1]), g[0]) if g[1].isdigit() else (int(g[0]), g[1])
    if len(g) == 3:
        t = _rank_target(ctx, n, n, shape=shape_of(g[2]))
    else:
        t = name if name in ctx.tensors else _rank_target(ctx, n, n)
    if t:
        yield rank_text(t, n, n)


@rule("torch", r"Dimension specified as -?\d+ but tensor has no dimensions",
       r"cannot be applied to a 0-dim tensor")
def _no_dims(m: re.Match[str], ctx: Ctx) -> Iterator[str]:
    for t in ctx.tensors:
        if not ctx.shape(t):
            yield f"{t}.ndims >= 1"
            return


@rule("torch", r"(\w+) must be a (matrix)")
def _matrix(m: re.Match[str], ctx: Ctx) -> Iterator[str]:
    named = m.group(1)
    if named in ctx.tensors:
        yield rank_text(named, 2, 2)
    else:
        t = _rank_target(ctx, 2, 2)
        if t:
            yield rank_text(t, 2, 2)


@rule("torch", r"(\d)D tensors expected, but got (\d)D and (\d)D tensors")
def _all_rank(m: re.Match[str], ctx: Ctx) -> Iterator[str]:
    want = int(m.group(1))
    for t in ctx.tensors:
        if len(ctx.shape(t)) != want:
            yield rank_text(t, want, want)


@rule("torch", r"Got (\d)D input, but ([\w-]+) mode needs (\d)D input")
def _mode_rank(m: re.Match[str], ctx: Ctx) -> Iterator[str]:
    t = ctx.by_ndims(int(m.group(1)))
    for p in ctx.order:
        if isinstance(ctx.values.get(p), str) and ctx.values[p] == m.group(2) and t:
            yield f"{p} != {m.group(2)!r} or {rank_text(t, int(m.group(3)), int(m.group(3)))}"


@rule("jax torch tf", r"must have the same number of dimensions[;,]? (?:got )?\{?(\d+)"
       r"(?:,| vs\.?| and) (\d+)", r"input dimensions do not match: got (\d+) and (\d+)",
       r"requires lhs and rhs ndim to be equal, got (\d+) and (\d+)",
       r"(I)ndex tensor must have the same number of dimensions as (i)nput tensor")
def _same_rank(m: re.Match[str], ctx: Ctx) -> Iterator[str]:
    if m.group(1) == "I":
        pair = [n for n in ("index", "input") if n in ctx.names]
        if len(pair) == 2:
            yield "index.ndims == input.ndims"
        return
    a = ctx.by_ndims(int(m.group(1)))
    b = ctx.by_ndims(int(m.group(2)), exclude=(a,) if a else ())
    if a and b:
        yield f"{a}.ndims == {b}.ndims"


# ---- axes -------------------------------------------------------------------------------
def _axis(ctx: Ctx, got: int, n_eff: int) -> Iterator[str]:
    """``got`` is an axis out of range for rank ``n_eff`` (the range's own rank)."""
    tensors = sorted(ctx.mentioned(ctx.tensors),
                     key=lambda t: (abs(n_eff - len(ctx.shape(t))), n_eff < len(ctx.shape(t))))
    tensors = [t for t in tensors if 0 <= n_eff - len(ctx.shape(t)) <= 1]
    if not tensors:
        return
    t = tensors[0]
    k = n_eff - len(ctx.shape(t))
    # a scalar's axes are those of a vector (torch, numpy); otherwise the range is one
    # wider than the rank (unsqueeze, expand_dims)
    rank = f"max({t}.ndims, 1)" if k == 1 and n_eff == 1 else f"{t}.ndims" + (
        f" + {k}" if k else "")
    params = ctx.ints(got, names_like=("dim", "axis", "axes"))
    if params:
        p = params[0]
        guard = f"len({p.split('[')[0]}) <= {p.split('[')[1][:-1]} or " if "[" in p else ""
        yield f"{guard}-({rank}) <= {p} < {rank}"
    elif got >= 0:
        yield f"{t}.ndims > {got - k}"
    else:
        yield f"{t}.ndims >= {-got - k}"


@rule("torch", r"Dimension out of range \(expected to be in range of \[(-?\d+), (-?\d+)\], "
       r"but got (-?\d+)\)")
def _torch_dim(m: re.Match[str], ctx: Ctx) -> Iterator[str]:
    yield from _axis(ctx, int(m.group(3)), int(m.group(2)) + 1)


@rule("jax", r"axis (-?\d+) is out of bounds for array of dimension (\d+)")
def _jax_axis(m: re.Match[str], ctx: Ctx) -> Iterator[str]:
    yield from _axis(ctx, int(m.group(1)), int(m.group(2)))


@rule("jax", r"(?:axis|Invalid axis) (-?\d+) (?:is out of bounds for array of shape|for "
       r"operand shape) (" + SHAPE + ")")
def _jax_axis_shape(m: re.Match[str], ctx: Ctx) -> Iterator[str]:
    yield from _axis(ctx, int(m.group(1)), len(shape_of(m.group(2))))


@rule("tf", r"Invalid reduction dimension \(?(-?\d+),? for input with (\d+) dimension",
       r"Tried to expand dim index (-?\d+) for tensor with (\d+) dimensions()",
       r"in the range \[(-?\d+), (-?\d+)\), but got (-?\d+)")
def _tf_axis(m: re.Match[str], ctx: Ctx) -> Iterator[str]:
    if m.lastindex == 3 and m.group(3):
        yield from _axis(ctx, int(m.group(3)), int(m.group(2)))
    else:
        extra = 1 if m.group(0).startswith("Tried to expand") else 0
        yield from _axis(ctx, int(m.group(1)), int(m.group(2)) + extra)
