"""Shape-relation rules: matmul sizes, broadcasting, channels and groups, square
matrices, list lengths -> equalities between the dimensions the message printed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from dlfuzz.engines.api.errorfeedback.context import Ctx
from dlfuzz.engines.api.errorfeedback.registry import Rule, adder
from dlfuzz.engines.api.errorfeedback.vocabulary import SHAPE, shape_of

RULES: list[Rule] = []
rule = adder(RULES)

M = re.Match[str]


# ---- shape relations --------------------------------------------------------------------
def _mm(ctx: Ctx, a: tuple[int, int], b: tuple[int, int]) -> Iterator[str]:
    """mat1 (a) times mat2 (b) failed: a's columns must equal b's rows."""
    left = None
    for t in ctx.tensors:
        s = ctx.shape(t)
        if s and s[-1] == a[1] and (s[-2:] == a or int(_prod(s[:-1])) == a[0]):
            left = t
            break
    if left is None:
        return
    for t in ctx.tensors:
        s = ctx.shape(t)
        if t == left or len(s) < 1:
            continue
        if s[-2:] == b or (len(s) == 1 and s[0] == b[0]):
            yield f"{left}.shape[-1] == {t}.shape[{-2 if len(s) >= 2 else -1}]"
            return
        if s[-2:] == (b[1], b[0]):
            yield f"{left}.shape[-1] == {t}.shape[-1]"
            return


def _prod(s: tuple[int, ...]) -> int:
    out = 1
    for d in s:
        out *= d
    return out


@rule("torch", r"mat1 and mat2 shapes cannot be multiplied \((\d+)x(\d+) and (\d+)x(\d+)\)")
def _torch_mm(m: M, ctx: Ctx) -> Iterator[str]:
    n = [int(g) for g in m.groups()]
    yield from _mm(ctx, (n[0], n[1]), (n[2], n[3]))


@rule("tf", r"Matrix size-incompatible: In\[0\]: \[(\d+),(\d+)\], In\[1\]: \[(\d+),(\d+)\]")
def _tf_mm(m: M, ctx: Ctx) -> Iterator[str]:
    n = [int(g) for g in m.groups()]
    yield from _mm(ctx, (n[0], n[1]), (n[2], n[3]))


@rule("jax", r"contracting dimensions to have the same shape, got \((\d+),\) and \((\d+),\)")
def _jax_contract(m: M, ctx: Ctx) -> Iterator[str]:
    a = ctx.with_dim(int(m.group(1)), prefer=(-1,))
    if a:
        b = ctx.with_dim(int(m.group(2)), prefer=(-2, -1), exclude=(a[0],))
        if b:
            yield f"{a[0]}.shape[{a[1]}] == {b[0]}.shape[{b[1]}]"


def _broadcast(ctx: Ctx, a: str, b: str, k: int) -> str:
    return (f"{a}.ndims < {-k} or {b}.ndims < {-k} or {a}.shape[{k}] == {b}.shape[{k}] or "
            f"{a}.shape[{k}] == 1 or {b}.shape[{k}] == 1")


@rule("torch", r"The size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\) at "
       r"non-singleton dimension (\d+)")
def _torch_broadcast(m: M, ctx: Ctx) -> Iterator[str]:
    size_a, size_b, d = (int(g) for g in m.groups())
    if not ctx.tensors:
        return
    k = d - max(len(ctx.shape(t)) for t in ctx.tensors)
    a = next((t for t in ctx.tensors if len(ctx.shape(t)) >= -k
              and ctx.shape(t)[k] == size_a), None)
    b = next((t for t in ctx.tensors if t != a and len(ctx.shape(t)) >= -k
              and ctx.shape(t)[k] == size_b), None)
    if a and b:
        yield _broadcast(ctx, a, b, k)


@rule("tf jax", r"Incompatible shapes: (\[[\d, ]*\]) vs\. (\[[\d, ]*\])",
       r"Incompatible shapes for broadcasting: (?:shapes=\[)?(" + SHAPE + r"),? (?:and )?("
       + SHAPE + ")")
def _shapes_broadcast(m: M, ctx: Ctx) -> Iterator[str]:
    sa, sb = shape_of(m.group(1)), shape_of(m.group(2))
    a = ctx.by_shape(sa)
    b = ctx.by_shape(sb, exclude=(a,) if a else ())
    for k in range(-1, -min(len(sa), len(sb)) - 1, -1):
        if sa[k] != sb[k] and 1 not in (sa[k], sb[k]) and a and b:
            yield _broadcast(ctx, a, b, k)
            return


@rule("tf", r"Dimensions must be equal, but are (\d+) and (\d+) for '\{\{node [\w/]+\}\} = "
       r"(\w+)[^']*' with input shapes: (\[[\d,]*\]), (\[[\d,]*\])")
def _tf_dims_equal(m: M, ctx: Ctx) -> Iterator[str]:
    va, vb, op = int(m.group(1)), int(m.group(2)), m.group(3)
    a = ctx.by_shape(shape_of(m.group(4)))
    b = ctx.by_shape(shape_of(m.group(5)), exclude=(a,) if a else ())
    if not (a and b):
        return
    sa, sb = ctx.shape(a), ctx.shape(b)
    if "MatMul" in op and len(sa) >= 2 and len(sb) >= 2:
        yield f"{a}.shape[-1] == {b}.shape[-2]"
        return
    for k in range(-1, -min(len(sa), len(sb)) - 1, -1):
        if sa[k] == va and sb[k] == vb:
            yield f"{a}.shape[{k}] == {b}.shape[{k}]"
            return


@rule("torch", r"Given groups=(\d+), weight of size (\[[\d, ]*\]), expected input(\[[\d, ]*\]) "
       r"to have (\d+) channels",
       r"Given (transposed)=1, weight of size (\[[\d, ]*\]), expected input(\[[\d, ]*\]) to "
       r"have (\d+) channels")
def _torch_channels(m: M, ctx: Ctx) -> Iterator[str]:
    w = ctx.by_shape(shape_of(m.group(2)))
    x = ctx.by_shape(shape_of(m.group(3)), exclude=(w,) if w else ())
    if not (w and x):
        return
    k = -(len(ctx.shape(w)) - 1)
    if m.group(1) == "transposed":
        yield f"{x}.shape[{k}] == {w}.shape[0]"
    else:
        groups = " * groups" if "groups" in ctx.names else ""
        yield f"{x}.shape[{k}] == {w}.shape[1]{groups}"


@rule("torch", r"Given groups=\d+, expected weight to be divisible by \d+ at dimension 0")
def _torch_groups(m: M, ctx: Ctx) -> Iterator[str]:
    w = next((t for t in ctx.tensors if "weight" in t), None) or (
        ctx.tensors[1] if len(ctx.tensors) > 1 else None)
    if w and "groups" in ctx.names:
        yield f"{w}.shape[0] % groups == 0"


@rule("tf", r"input depth must be evenly divisible by filter depth: (\d+) vs (\d+)",
       r"Depth of input \((\d+)\) is not a multiple of input depth of filter \((\d+)\)")
def _tf_depth(m: M, ctx: Ctx) -> Iterator[str]:
    x = ctx.with_dim(int(m.group(1)), prefer=(-1, 1))
    f = ctx.with_dim(int(m.group(2)), prefer=(-2,), exclude=(x[0],) if x else ())
    if x and f:
        yield f"{x[0]}.shape[{x[1]}] % {f[0]}.shape[{f[1]}] == 0"


@rule("jax", r"divided by feature_group_count must equal the rhs input feature dimension size,"
       r" but (\d+) // (\d+) != (\d+)",
       r"feature_group_count must divide lhs feature dimension size, but (\d+) does not "
       r"divide (\d+)()")
def _jax_groups(m: M, ctx: Ctx) -> Iterator[str]:
    fgc = "feature_group_count" if "feature_group_count" in ctx.names else "1"
    if m.group(3):
        lhs = ctx.with_dim(int(m.group(1)), prefer=(1, -1))
        rhs = ctx.with_dim(int(m.group(3)), prefer=(1, -2), exclude=(lhs[0],) if lhs else ())
        if lhs and rhs:
            div = "" if fgc == "1" else f" // {fgc}"
            yield f"{lhs[0]}.shape[{lhs[1]}]{div} == {rhs[0]}.shape[{rhs[1]}]"
    elif fgc != "1":
        lhs = ctx.with_dim(int(m.group(2)), prefer=(1, -1))
        if lhs:
            yield f"{lhs[0]}.shape[{lhs[1]}] % {fgc} == 0"


@rule("torch jax tf", r"must be batches of square matrices, but they are (\d+) by (\d+)",
       r"Argument to \S+ must have shape \[\.\.\., n, n\], got (" + SHAPE + ")",
       r"Input matrix must be square()")
def _square(m: M, ctx: Ctx) -> Iterator[str]:
    for t in ctx.tensors:
        s = ctx.shape(t)
        if len(s) < 2 or s[-1] != s[-2]:
            yield f"{t}.ndims >= 2 and {t}.shape[-1] == {t}.shape[-2]"
            return


@rule("torch tf jax", r"must have length 3\. Got \d+ and \d+", r"only defined for 3-element",
       r"Dimension must be either (2) or 3 for cross product")
def _cross(m: M, ctx: Ctx) -> Iterator[str]:
    lo = 2 if m.lastindex else 3
    for t in ctx.tensors:
        s = ctx.shape(t)
        if not s or not lo <= s[-1] <= 3:
            yield (f"{t}.shape[-1] == 3" if lo == 3 else
                   f"{t}.shape[-1] >= 2 and {t}.shape[-1] <= 3")


@rule("torch", r"Halving dimension must be even, but dimension (-?\d+) is size (\d+)")
def _halving(m: M, ctx: Ctx) -> Iterator[str]:
    d, size = int(m.group(1)), int(m.group(2))
    dim = ctx.ints(d, names_like=("dim",))
    for t in ctx.tensors:
        s = ctx.shape(t)
        if -len(s) <= d < len(s) and s[d] == size:
            yield f"{t}.shape[{dim[0] if dim else d}] % 2 == 0"
            return


@rule("tf jax torch", r"Expected multiples argument to be a vector of length (\d+) but got "
       r"length (\d+)",
       r"transpose expects a vector of size (\d+)\. But input\(1\) is a vector of size (\d+)",
       r"input\.dim\(\) = (\d+) is not equal to len\(\w+\) = (\d+)")
def _list_len(m: M, ctx: Ctx) -> Iterator[str]:
    t = ctx.by_ndims(int(m.group(1)))
    lists = [p for p in ctx.lists() if len(ctx.values[p]) == int(m.group(2))]
    if t and lists:
        yield f"len({ctx.mentioned(lists)[0]}) == {t}.ndims"


@rule("jax", r"permutation of operand dimensions, got permutation (" + SHAPE + r") for "
       r"operand shape (" + SHAPE + ")",
       r"length of (\w+) must equal the number of axes of operand, got \w+ .* for operand "
       r"shape (" + SHAPE + ")")
def _jax_list_len(m: M, ctx: Ctx) -> Iterator[str]:
    t = ctx.by_shape(shape_of(m.group(2)))
    lists = [m.group(1)] if m.group(1) in ctx.names else [
        p for p in ctx.lists() if tuple(ctx.values[p]) == shape_of(m.group(1))]
    if t and lists:
        yield f"len({lists[0]}) == {t}.ndims"
