"""The dtype and shape rules of ``feedback`` (registered on import; see feedback.py).

Each handler reads one real message format (the unit tests hold them verbatim) and maps
it to the failing draw's parameters by value: the tensor of the named dtype or of the
printed shape, the dimension equal to the printed size, the parameter equal to the
printed number.
"""

from __future__ import annotations

import collections
import re
from collections.abc import Iterator

from dlfuzz.cases import COMPLEX_DTYPES, FLOAT_DTYPES, INT_DTYPES
from dlfuzz.engines.api.errorfeedback.ranks import (
    _FAMILY_WORDS,
    _SHAPE,
    _Ctx,
    _dtypes,
    _rank,
    _rule,
    dtype_of,
    shape_of,
)

M = re.Match[str]


# ---- dtypes -----------------------------------------------------------------------------
def _pair_equal(ctx: _Ctx, a: str | None, b: str | None) -> Iterator[str]:
    """The tensor of dtype ``b`` must have the dtype of the one of dtype ``a``."""
    first = ctx.by_dtype(a)
    second = [t for t in ctx.by_dtype(b) if t not in first[:1]]
    if first and second:
        yield f"{second[0]}.dtype == {first[0]}.dtype"


@_rule("torch", r"expected scalar type (\w+) but found (\w+)",
       r"have the same dtype, but got: (\w+) != (\w+)")
def _torch_same(m: M, ctx: _Ctx) -> Iterator[str]:
    yield from _pair_equal(ctx, dtype_of(m.group(1)), dtype_of(m.group(2)))


@_rule("torch", r"to have the same dtype, but found \w+ of type (\w+) and \w+ of type (\w+)",
       r"\w+ \((\w+)\) and \w+ \((\w+)\) must have the same (?:scalar type|dtype)")
def _torch_same_found(m: M, ctx: _Ctx) -> Iterator[str]:
    yield from _pair_equal(ctx, dtype_of(m.group(1)), dtype_of(m.group(2)))


@_rule("torch", r"(?:must have the same dtype|to have the same dtype|with different dtypes)")
def _torch_all_same(m: M, ctx: _Ctx) -> Iterator[str]:
    """"All tensors must have the same dtype, got input1: float, input2: double", "not yet
    implemented for tensors with different dtypes": the odd ones match the majority."""
    named = dict(re.findall(r"(\w+)(?:\.dtype)?: (?:c10::)?(\w+)", ctx.message))
    among = [t for t in ctx.tensors if t in named] or ctx.tensors
    dts = {t: ctx.dtype(t) for t in among}
    if len(set(dts.values())) < 2:
        return
    common = collections.Counter(dts.values()).most_common(1)[0][0]
    ref = next(t for t in among if dts[t] == common)
    for t in among:
        if dts[t] != common:
            yield f"{t}.dtype == {ref}.dtype"


@_rule("torch", r"Expected both inputs to be ((?:\w+, )*\w+ or \w+) tensors but got (\w+) and "
       r"(\w+)")
def _torch_both(m: M, ctx: _Ctx) -> Iterator[str]:
    ok = [w for w in re.split(r", | or ", m.group(1))]
    for got in {m.group(2), m.group(3)}:
        yield from _allowed(ctx, dtype_of(got), ok)


@_rule("jax", r"requires arguments to have the same dtypes, got (\w+), (\w+)")
def _jax_same(m: M, ctx: _Ctx) -> Iterator[str]:
    yield from _pair_equal(ctx, dtype_of(m.group(1)), dtype_of(m.group(2)))


@_rule("torch", r"expected dtype (\w+) for `(\w+)` but got dtype (\w+)")
def _torch_named_same(m: M, ctx: _Ctx) -> Iterator[str]:
    named = m.group(2)
    ref = [t for t in ctx.by_dtype(dtype_of(m.group(1))) if t != named]
    if named in ctx.names and ref:
        yield f"{named}.dtype == {ref[0]}.dtype"


@_rule("tf", r"was expected to be a (\w+) tensor but is a (\w+) tensor")
def _tf_same(m: M, ctx: _Ctx) -> Iterator[str]:
    want, got = dtype_of(m.group(1)), dtype_of(m.group(2))
    bad = ctx.by_dtype(got)
    ref = [t for t in ctx.by_dtype(want) if t not in bad]
    if bad:
        yield f"{bad[0]}.dtype == {ref[0]}.dtype" if ref else _dtypes(bad[0], [want or ""])


def _allowed(ctx: _Ctx, got: str | None, allowed: list[str], named: str | None = None
             ) -> Iterator[str]:
    names = [named] if named in ctx.names else ctx.by_dtype(got)
    ok = [d for d in (dtype_of(w) for w in allowed) if d]
    for t in names[:2]:
        if ok:
            yield _dtypes(t, ok)


@_rule("tf", r"Value for attr '\w+' of (\w+) is not in the list of allowed values: ([\w, ]+)")
def _tf_attr(m: M, ctx: _Ctx) -> Iterator[str]:
    yield from _allowed(ctx, dtype_of(m.group(1)), m.group(2).split(","))


@_rule("tf", r"Value passed to parameter '(\w+)' has DataType (\w+) not in list of allowed "
       r"values: ([\w, ]+)")
def _tf_param(m: M, ctx: _Ctx) -> Iterator[str]:
    yield from _allowed(ctx, dtype_of(m.group(2)), m.group(3).split(","), m.group(1))


@_rule("torch", r"Expected tensor for argument #\d+ '(\w+)' to have one of the following "
       r"scalar types: ([\w, ]+); but got (\S+) instead")
def _torch_arg_types(m: M, ctx: _Ctx) -> Iterator[str]:
    yield from _allowed(ctx, dtype_of(m.group(3)), m.group(2).split(","), m.group(1))


@_rule("torch", r"expected (\w+) to be a boolean tensor, but got a tensor with dtype (\w+)",
       r"Expected dtype ((?:\w+ or )*\w+) for (\w+)()",
       r"expected (\w+) dtype to be ((?:\w+ or )*\w+), but got (\w+)")
def _torch_named_types(m: M, ctx: _Ctx) -> Iterator[str]:
    if "boolean" in m.group(0):
        yield from _allowed(ctx, dtype_of(m.group(2)), ["bool"], m.group(1))
    elif m.group(0).startswith("Expected dtype"):
        yield from _allowed(ctx, None, m.group(1).split(" or "), m.group(2))
    else:
        yield from _allowed(ctx, dtype_of(m.group(3)), m.group(2).split(" or "), m.group(1))


def _exclude(ctx: _Ctx, dtypes: tuple[str, ...]) -> Iterator[str]:
    for t in ctx.tensors:
        if ctx.dtype(t) in dtypes:
            yield f"{t}.dtype not in {dtypes!r}" if len(dtypes) > 1 else \
                f"{t}.dtype != {dtypes[0]!r}"


@_rule("torch", r"not implemented for '(\w+)'", r"Low precision dtypes not supported\. Got (\w+)")
def _torch_not_implemented(m: M, ctx: _Ctx) -> Iterator[str]:
    d = dtype_of(m.group(1))
    if d:
        yield from _exclude(ctx, (d,))


@_rule("tf", r"\bT=DT_(\w+)")
def _tf_no_kernel(m: M, ctx: _Ctx) -> Iterator[str]:
    if "Could not find device for node" in ctx.message or "No registered" in ctx.message:
        d = dtype_of(m.group(1))
        if d:
            yield from _exclude(ctx, (d,))


@_rule("torch tf jax", r"(?:does not support complex|not compatible with complex|only real "
       r"valued inputs|expects a real input tensor)")
def _no_complex(m: M, ctx: _Ctx) -> Iterator[str]:
    yield from _exclude(ctx, COMPLEX_DTYPES)


@_rule("torch", r"(?:two bool tensors|on a bool tensor) is not supported")
def _no_bool(m: M, ctx: _Ctx) -> Iterator[str]:
    yield from _exclude(ctx, ("bool",))


@_rule("torch", r"(?:floating point or complex (?:tensor as input|dtype)\.? Got:? (\w+)|"
       r"only support floating point and complex dtypes())")
def _torch_inexact(m: M, ctx: _Ctx) -> Iterator[str]:
    got = dtype_of(m.group(1)) if m.group(1) else None
    for t in ctx.tensors:
        if (ctx.dtype(t) == got) if got else ctx.dtype(t) not in FLOAT_DTYPES + COMPLEX_DTYPES:
            yield _dtypes(t, FLOAT_DTYPES + COMPLEX_DTYPES)
            return


@_rule("jax", r"\w+ does not accept dtype (\w+)(?: at position (\d+))?\. Accepted dtypes"
       r"(?: at position \d+)? are subtypes of ([\w, ]+)\.",
       r"`?\w+`? must be (boolean|integer|floating)(?: or (boolean|integer|floating))? type, "
       r"got (\w+)")
def _jax_families(m: M, ctx: _Ctx) -> Iterator[str]:
    if m.group(0).endswith("."):
        got, words = dtype_of(m.group(1)), m.group(3).split(",")
        pos = int(m.group(2)) if m.group(2) else None
    else:
        got, words, pos = dtype_of(m.group(3)), [m.group(1), m.group(2) or ""], None
    ok = tuple(d for w in words for d in _FAMILY_WORDS.get(w.strip(), ()))
    names = ctx.by_dtype(got)
    if pos is not None and pos < len(ctx.tensors) and ctx.tensors[pos] in names:
        names = [ctx.tensors[pos]]
    if names and ok:
        yield _dtypes(names[0], ok)


@_rule("tf", r"requires tf\.(\w+) or tf\.(\w+) inputs, got: .*?dtype=(\w+)")
def _tf_requires(m: M, ctx: _Ctx) -> Iterator[str]:
    yield from _allowed(ctx, dtype_of(m.group(3)), [m.group(1), m.group(2)])


@_rule("torch", r"only supports boolean \w+, but got (\w+) with dtype (\w+)")
def _bool_mask(m: M, ctx: _Ctx) -> Iterator[str]:
    yield from _allowed(ctx, dtype_of(m.group(2)), ["bool"], m.group(1))


@_rule("torch", r"(vector|matrix) \+ (vector|matrix) @ (vector|matrix) expected, got (\d+), "
       r"(\d+), (\d+)")
def _torch_addmv(m: M, ctx: _Ctx) -> Iterator[str]:
    want = [1 if w == "vector" else 2 for w in m.groups()[:3]]
    got = [int(g) for g in m.groups()[3:]]
    for t, w, g in zip(ctx.tensors, want, got, strict=False):
        if len(ctx.shape(t)) == g and g != w:
            yield _rank(t, w, w)


@_rule("torch", r"only applicable to index tensor of type LongTensor")
def _long_index(m: M, ctx: _Ctx) -> Iterator[str]:
    for t in ctx.tensors:
        if ctx.dtype(t) != "int64":
            yield f"{t}.dtype == 'int64'"
            return


@_rule("torch", r"tensors used as indices must be long, int, byte or bool tensors")
def _index_dtypes(m: M, ctx: _Ctx) -> Iterator[str]:
    for t in ctx.tensors[1:]:
        if ctx.dtype(t) not in ("int64", "int32", "uint8", "bool"):
            yield _dtypes(t, ("int64", "int32", "uint8", "bool"))


@_rule("torch", r"only integer tensors of a single element can be converted to an index")
def _index_scalar(m: M, ctx: _Ctx) -> Iterator[str]:
    for t in ctx.tensors[1:]:
        yield (f"{t}.type != 'tensor' or ({t}.num_element == 1 and "
               f"{_dtypes(t, INT_DTYPES)})")


# ---- shape relations --------------------------------------------------------------------
def _mm(ctx: _Ctx, a: tuple[int, int], b: tuple[int, int]) -> Iterator[str]:
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


@_rule("torch", r"mat1 and mat2 shapes cannot be multiplied \((\d+)x(\d+) and (\d+)x(\d+)\)")
def _torch_mm(m: M, ctx: _Ctx) -> Iterator[str]:
    n = [int(g) for g in m.groups()]
    yield from _mm(ctx, (n[0], n[1]), (n[2], n[3]))


@_rule("tf", r"Matrix size-incompatible: In\[0\]: \[(\d+),(\d+)\], In\[1\]: \[(\d+),(\d+)\]")
def _tf_mm(m: M, ctx: _Ctx) -> Iterator[str]:
    n = [int(g) for g in m.groups()]
    yield from _mm(ctx, (n[0], n[1]), (n[2], n[3]))


@_rule("jax", r"contracting dimensions to have the same shape, got \((\d+),\) and \((\d+),\)")
def _jax_contract(m: M, ctx: _Ctx) -> Iterator[str]:
    a = ctx.with_dim(int(m.group(1)), prefer=(-1,))
    if a:
        b = ctx.with_dim(int(m.group(2)), prefer=(-2, -1), exclude=(a[0],))
        if b:
            yield f"{a[0]}.shape[{a[1]}] == {b[0]}.shape[{b[1]}]"


def _broadcast(ctx: _Ctx, a: str, b: str, k: int) -> str:
    return (f"{a}.ndims < {-k} or {b}.ndims < {-k} or {a}.shape[{k}] == {b}.shape[{k}] or "
            f"{a}.shape[{k}] == 1 or {b}.shape[{k}] == 1")


@_rule("torch", r"The size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\) at "
       r"non-singleton dimension (\d+)")
def _torch_broadcast(m: M, ctx: _Ctx) -> Iterator[str]:
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


@_rule("tf jax", r"Incompatible shapes: (\[[\d, ]*\]) vs\. (\[[\d, ]*\])",
       r"Incompatible shapes for broadcasting: (?:shapes=\[)?(" + _SHAPE + r"),? (?:and )?("
       + _SHAPE + ")")
def _shapes_broadcast(m: M, ctx: _Ctx) -> Iterator[str]:
    sa, sb = shape_of(m.group(1)), shape_of(m.group(2))
    a = ctx.by_shape(sa)
    b = ctx.by_shape(sb, exclude=(a,) if a else ())
    for k in range(-1, -min(len(sa), len(sb)) - 1, -1):
        if sa[k] != sb[k] and 1 not in (sa[k], sb[k]) and a and b:
            yield _broadcast(ctx, a, b, k)
            return


@_rule("tf", r"Dimensions must be equal, but are (\d+) and (\d+) for '\{\{node [\w/]+\}\} = "
       r"(\w+)[^']*' with input shapes: (\[[\d,]*\]), (\[[\d,]*\])")
def _tf_dims_equal(m: M, ctx: _Ctx) -> Iterator[str]:
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


@_rule("torch", r"Given groups=(\d+), weight of size (\[[\d, ]*\]), expected input(\[[\d, ]*\]) "
       r"to have (\d+) channels",
       r"Given (transposed)=1, weight of size (\[[\d, ]*\]), expected input(\[[\d, ]*\]) to "
       r"have (\d+) channels")
def _torch_channels(m: M, ctx: _Ctx) -> Iterator[str]:
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


@_rule("torch", r"Given groups=\d+, expected weight to be divisible by \d+ at dimension 0")
def _torch_groups(m: M, ctx: _Ctx) -> Iterator[str]:
    w = next((t for t in ctx.tensors if "weight" in t), None) or (
        ctx.tensors[1] if len(ctx.tensors) > 1 else None)
    if w and "groups" in ctx.names:
        yield f"{w}.shape[0] % groups == 0"


@_rule("tf", r"input depth must be evenly divisible by filter depth: (\d+) vs (\d+)",
       r"Depth of input \((\d+)\) is not a multiple of input depth of filter \((\d+)\)")
def _tf_depth(m: M, ctx: _Ctx) -> Iterator[str]:
    x = ctx.with_dim(int(m.group(1)), prefer=(-1, 1))
    f = ctx.with_dim(int(m.group(2)), prefer=(-2,), exclude=(x[0],) if x else ())
    if x and f:
        yield f"{x[0]}.shape[{x[1]}] % {f[0]}.shape[{f[1]}] == 0"


@_rule("jax", r"divided by feature_group_count must equal the rhs input feature dimension size,"
       r" but (\d+) // (\d+) != (\d+)",
       r"feature_group_count must divide lhs feature dimension size, but (\d+) does not "
       r"divide (\d+)()")
def _jax_groups(m: M, ctx: _Ctx) -> Iterator[str]:
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


@_rule("torch jax tf", r"must be batches of square matrices, but they are (\d+) by (\d+)",
       r"Argument to \S+ must have shape \[\.\.\., n, n\], got (" + _SHAPE + ")",
       r"Input matrix must be square()")
def _square(m: M, ctx: _Ctx) -> Iterator[str]:
    for t in ctx.tensors:
        s = ctx.shape(t)
        if len(s) < 2 or s[-1] != s[-2]:
            yield f"{t}.ndims >= 2 and {t}.shape[-1] == {t}.shape[-2]"
            return


@_rule("torch tf jax", r"must have length 3\. Got \d+ and \d+", r"only defined for 3-element",
       r"Dimension must be either (2) or 3 for cross product")
def _cross(m: M, ctx: _Ctx) -> Iterator[str]:
    lo = 2 if m.lastindex else 3
    for t in ctx.tensors:
        s = ctx.shape(t)
        if not s or not lo <= s[-1] <= 3:
            yield (f"{t}.shape[-1] == 3" if lo == 3 else
                   f"{t}.shape[-1] >= 2 and {t}.shape[-1] <= 3")


@_rule("torch", r"Halving dimension must be even, but dimension (-?\d+) is size (\d+)")
def _halving(m: M, ctx: _Ctx) -> Iterator[str]:
    d, size = int(m.group(1)), int(m.group(2))
    dim = ctx.ints(d, names_like=("dim",))
    for t in ctx.tensors:
        s = ctx.shape(t)
        if -len(s) <= d < len(s) and s[d] == size:
            yield f"{t}.shape[{dim[0] if dim else d}] % 2 == 0"
            return


@_rule("tf jax torch", r"Expected multiples argument to be a vector of length (\d+) but got "
       r"length (\d+)",
       r"transpose expects a vector of size (\d+)\. But input\(1\) is a vector of size (\d+)",
       r"input\.dim\(\) = (\d+) is not equal to len\(\w+\) = (\d+)")
def _list_len(m: M, ctx: _Ctx) -> Iterator[str]:
    t = ctx.by_ndims(int(m.group(1)))
    lists = [p for p in ctx.lists() if len(ctx.values[p]) == int(m.group(2))]
    if t and lists:
        yield f"len({ctx.mentioned(lists)[0]}) == {t}.ndims"


@_rule("jax", r"permutation of operand dimensions, got permutation (" + _SHAPE + r") for "
       r"operand shape (" + _SHAPE + ")",
       r"length of (\w+) must equal the number of axes of operand, got \w+ .* for operand "
       r"shape (" + _SHAPE + ")")
def _jax_list_len(m: M, ctx: _Ctx) -> Iterator[str]:
    t = ctx.by_shape(shape_of(m.group(2)))
    lists = [m.group(1)] if m.group(1) in ctx.names else [
        p for p in ctx.lists() if tuple(ctx.values[p]) == shape_of(m.group(1))]
    if t and lists:
        yield f"len({lists[0]}) == {t}.ndims"


from dlfuzz.engines.api.errorfeedback import sizes as _sizes  # noqa: E402,F401
