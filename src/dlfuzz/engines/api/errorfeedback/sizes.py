"""Size and value rules: k <= size, divisibility, element counts,
positive/nonzero/non-negative scalars, bad enum strings (``RULES``, tried last by ``engine``)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from dlfuzz.engines.api.errorfeedback.context import Ctx
from dlfuzz.engines.api.errorfeedback.registry import Rule, adder
from dlfuzz.engines.api.errorfeedback.vocabulary import SHAPE, shape_of

RULES: list[Rule] = []
rule = adder(RULES)

M = re.Match[str]


def _dim_expr(ctx: Ctx, d: int | None, default: int = -1) -> str:
    """The index to use for dimension ``d``: the dim/axis parameter holding it, else d."""
    for name in ("dim", "axis", "dimension"):
        v = ctx.values.get(name)
        if name in ctx.names and isinstance(v, int) and not isinstance(v, bool) and (
                d is None or v == d):
            return name
    return str(default if d is None else d)


def _named_or_value(ctx: Ctx, name: str, value: int) -> str | None:
    v = ctx.values.get(name)
    if name in ctx.names and isinstance(v, int) and not isinstance(v, bool) and v == value:
        return name
    got = ctx.ints(value, names_like=(name,))
    return got[0] if got else None


@rule("torch", r"selected (?:index|number) (k) out of range(?: for dimension (\d+))?")
def _torch_k(m: M, ctx: Ctx) -> Iterator[str]:
    d = int(m.group(2)) if m.group(2) else None
    if "k" in ctx.names and ctx.tensors:
        yield f"k <= {ctx.tensors[0]}.shape[{_dim_expr(ctx, d)}]"


@rule("tf", r"input must have at least k columns\. Had (\d+), needed (\d+)",
       r"input must have last dimension >= k = (\d+) but is (\d+)")
def _tf_k(m: M, ctx: Ctx) -> Iterator[str]:
    needed = int(m.group(2) if m.group(0).startswith("input must have at") else m.group(1))
    k = _named_or_value(ctx, "k", needed)
    if k and ctx.tensors:
        yield f"{ctx.tensors[0]}.shape[-1] >= {k}"


@rule("jax", r"k argument to top_k must be no larger than size along axis; got k=(\d+) with "
       r"shape=\[[\d, ]*\] and axis=(-?\d+)")
def _jax_k(m: M, ctx: Ctx) -> Iterator[str]:
    k = _named_or_value(ctx, "k", int(m.group(1)))
    if k and ctx.tensors:
        yield f"{k} <= {ctx.tensors[0]}.shape[{_dim_expr(ctx, int(m.group(2)))}]"


@rule("torch", r"index (-?\d+) out of range for tensor of size \[[\d, ]*\] at dimension (\d+)")
def _torch_select(m: M, ctx: Ctx) -> Iterator[str]:
    p = _named_or_value(ctx, "index", int(m.group(1)))
    if p and ctx.tensors:
        size = f"{ctx.tensors[0]}.shape[{_dim_expr(ctx, int(m.group(2)))}]"
        yield f"-{size} <= {p} < {size}"


@rule("torch", r"start \((-?\d+)\) \+ length \((\d+)\) exceeds dimension size \((\d+)\)")
def _torch_narrow(m: M, ctx: Ctx) -> Iterator[str]:
    start = _named_or_value(ctx, "start", int(m.group(1)))
    length = _named_or_value(ctx, "length", int(m.group(2)))
    if start and length and ctx.tensors:
        yield f"{start} + {length} <= {ctx.tensors[0]}.shape[{_dim_expr(ctx, None, 0)}]"


@rule("torch", r"maximum size for tensor at dimension (\d+) is (\d+) but size is (\d+)")
def _torch_unfold(m: M, ctx: Ctx) -> Iterator[str]:
    p = _named_or_value(ctx, "size", int(m.group(3)))
    if p and ctx.tensors:
        yield f"{p} <= {ctx.tensors[0]}.shape[{_dim_expr(ctx, int(m.group(1)))}]"


@rule("jax", r"slice_sizes must be less than or equal to operand shape, got slice_sizes "
       r"(\([^)]*\)) for operand shape (" + SHAPE + ")",
       r"(update) shape must be smaller than operand shape, got update shape (" + SHAPE
       + r") for operand shape (" + SHAPE + ")")
def _jax_slices(m: M, ctx: Ctx) -> Iterator[str]:
    if m.group(1) == "update":
        small, big = shape_of(m.group(2)), shape_of(m.group(3))
        u = ctx.by_shape(small)
        o = ctx.by_shape(big, exclude=(u,) if u else ())
        for i, (a, b) in enumerate(zip(small, big, strict=False)):
            if u and o and a > b:
                yield f"{u}.shape[{i}] <= {o}.shape[{i}]"
        return
    sizes = tuple(int(x) for x in re.findall(r"\d+(?=\)?[,)])", m.group(1)))
    big = shape_of(m.group(2))
    o = ctx.by_shape(big)
    lists = [p for p in ctx.lists() if tuple(ctx.values[p]) == sizes]
    for i, (a, b) in enumerate(zip(sizes, big, strict=False)):
        if o and lists and a > b:
            yield f"{lists[0]}[{i}] <= {o}.shape[{i}]"


@rule("tf", r"Expected size\[(\d+)\] in \[0, (\d+)\], but got (\d+)")
def _tf_slice(m: M, ctx: Ctx) -> Iterator[str]:
    i, got = int(m.group(1)), int(m.group(3))
    items = [p for p in ctx.ints(got) if p.endswith(f"[{i}]")]
    if items and ctx.tensors:
        yield f"{items[0]} <= {ctx.tensors[0]}.shape[{i}]"


@rule("tf jax", r"Can not squeeze dim\[(\d+)\], expected a dimension of 1",
       r"size not equal to one, got shape=(" + SHAPE + r") and dimensions=\((-?\d+),?\)")
def _squeeze(m: M, ctx: Ctx) -> Iterator[str]:
    d = int(m.group(m.lastindex or 1))
    axis = ctx.ints(d, names_like=("axis", "dim"))
    if axis and ctx.tensors:
        yield f"{ctx.tensors[0]}.shape[{axis[0]}] == 1"


@rule("tf", r"indices\[[\d,]+\] = (-?\d+) is not in \[0, (\d+)\)")
def _tf_indices(m: M, ctx: Ctx) -> Iterator[str]:
    bad, size = int(m.group(1)), int(m.group(2))
    idx = next((t for t in ctx.tensors if ctx.dtype(t).startswith(("int", "uint"))
                and ctx.values[t].size and bad in (ctx.values[t].min(), ctx.values[t].max())),
               None)
    where = ctx.with_dim(size, prefer=(0,), exclude=(idx,) if idx else ())
    if idx and where:
        yield f"{idx}.min >= 0 and {idx}.max < {where[0]}.shape[{where[1]}]"


# ---- divisibility -----------------------------------------------------------------------
def _square_param(ctx: Ctx, n: int) -> str | None:
    for p in ctx.order:
        v = ctx.values.get(p)
        if isinstance(v, int) and not isinstance(v, bool) and v > 1 and v * v == n:
            return f"({p} * {p})"
    got = ctx.ints(n)
    return got[0] if got else None


@rule("tf torch", r"Input depth dimension (\d+) should be divisible by: (\d+)",
       r"input\.size\((-?\d+)\)=(\d+) is not divisible by (\d+)")
def _divisible(m: M, ctx: Ctx) -> Iterator[str]:
    if m.lastindex == 3:
        where = ctx.with_dim(int(m.group(2)), prefer=(int(m.group(1)),))
        div = _square_param(ctx, int(m.group(3)))
    else:
        where = ctx.with_dim(int(m.group(1)), prefer=(-1, 1))
        div = _square_param(ctx, int(m.group(2)))
    if where and div:
        yield f"{where[0]}.shape[{where[1]}] % {div} == 0"


@rule("torch", r"input\.size\((\d+)\)=(\d+) and kernel_size=\((\d+), (\d+)\)")
def _torch_fold(m: M, ctx: Ctx) -> Iterator[str]:
    where = ctx.with_dim(int(m.group(2)), prefer=(int(m.group(1)),))
    ks = ctx.values.get("kernel_size")
    if where and "kernel_size" in ctx.names:
        prod = "kernel_size[0] * kernel_size[1]" if isinstance(ks, list | tuple) \
            else "kernel_size * kernel_size"
        yield f"{where[0]}.shape[{where[1]}] % ({prod}) == 0"


@rule("tf jax", r"split_dim (-?\d+) \(size = (\d+)\) and num_split (\d+)",
       r"array split does not result in an equal division()()()")
def _split(m: M, ctx: Ctx) -> Iterator[str]:
    if not ctx.tensors:
        return
    axis = _dim_expr(ctx, int(m.group(1)) if m.group(1) else None, 0)
    if m.group(3):
        n = ctx.ints(int(m.group(3)))
    else:
        n = [p for p in ctx.order if p not in ("axis", "dim") and isinstance(
            ctx.values.get(p), int) and not isinstance(ctx.values[p], bool)]
    if n:
        yield f"{ctx.tensors[0]}.shape[{axis}] % {n[0]} == 0"


# ---- element counts and batch sizes -------------------------------------------------------
@rule("torch", r"(\w+) should contain (\d+) elements not (\d+)")
def _torch_elements(m: M, ctx: Ctx) -> Iterator[str]:
    p = m.group(1)
    where = ctx.with_dim(int(m.group(2)), prefer=(1,), exclude=(p,))
    if p in ctx.names and where:
        yield f"{p}.num_element == {where[0]}.shape[{where[1]}]"


@rule("torch", r"Given normalized_shape=(\[[\d, ]*\]), expected input with shape",
       r"weight of shape (\[[\d, ]*\]) and normalized_shape = (\[[\d, ]*\])")
def _torch_normalized(m: M, ctx: Ctx) -> Iterator[str]:
    shape = shape_of(m.group(m.lastindex or 1))
    lists = [p for p in ctx.lists() if tuple(ctx.values[p]) == shape]
    if not lists:
        return
    p, n = lists[0], len(shape)
    if m.lastindex == 2 and "weight" in ctx.names:
        yield f"weight.ndims == len({p})"
        for i in range(n):
            yield f"len({p}) <= {i} or weight.shape[{i}] == {p}[{i}]"
        return
    x = next((t for t in ctx.tensors if t != "weight"), None)
    if x:
        yield f"{x}.ndims >= len({p})"
        for i in range(n):
            index = f"{i} - len({p})" if i else f"-len({p})"
            yield f"len({p}) <= {i} or {x}.shape[{index}] == {p}[{i}]"


@rule("torch", r"Expected input batch_size \((\d+)\) to match target batch_size \((\d+)\)")
def _torch_batch(m: M, ctx: Ctx) -> Iterator[str]:
    if {"input", "target"} <= ctx.names:
        yield "input.shape[0] == target.shape[0]"


@rule("torch", r"X1 and X2 must have the same number of columns\. X1: (\d+) X2: (\d+)",
       r"size mismatch, got input \(\d+\), mat \(\d+x(\d+)\), vec \((\d+)\)")
def _torch_columns(m: M, ctx: Ctx) -> Iterator[str]:
    a = ctx.with_dim(int(m.group(1)), prefer=(-1,))
    b = ctx.with_dim(int(m.group(2)), prefer=(-1,), exclude=(a[0],) if a else ())
    if a and b:
        yield f"{a[0]}.shape[{a[1]}] == {b[0]}.shape[{b[1]}]"


@rule("torch", r"expected tensor \[[\d, ]*\] and src \[[\d, ]*\] to have the same number of "
       r"elements")
def _torch_numel(m: M, ctx: Ctx) -> Iterator[str]:
    if len(ctx.tensors) >= 2:
        yield f"{ctx.tensors[0]}.num_element == {ctx.tensors[1]}.num_element"


@rule("torch", r"Found parameter numbers = (\d+) and channel size = (\d+)")
def _torch_prelu(m: M, ctx: Ctx) -> Iterator[str]:
    w = next((t for t in ctx.tensors if ctx.values[t].size == int(m.group(1))), None)
    x = ctx.with_dim(int(m.group(2)), prefer=(1,), exclude=(w,) if w else ())
    if w and x:
        yield f"{w}.num_element == 1 or {w}.num_element == {x[0]}.shape[{x[1]}]"


@rule("tf", r"Must provide as many biases as the last dimension of the input tensor: "
       r"(\[[\d, ]*\]) vs\. (\[[\d, ]*\])")
def _tf_bias(m: M, ctx: Ctx) -> Iterator[str]:
    b = ctx.by_shape(shape_of(m.group(1)))
    v = ctx.by_shape(shape_of(m.group(2)), exclude=(b,) if b else ())
    if b and v:
        yield f"{b}.shape[0] == {v}.shape[-1]"


@rule("tf", r"segment_ids should be the same size as dimension 0 of input",
       r"does not start with segment_ids\.shape")
def _tf_segments(m: M, ctx: Ctx) -> Iterator[str]:
    data = next((t for t in ctx.tensors if t != "segment_ids"), None)
    if "segment_ids" in ctx.tensors and data:
        yield f"segment_ids.ndims == 1 and segment_ids.shape[0] == {data}.shape[0]"


@rule("tf", r"The first dimension of paddings must be the rank of inputs")
def _tf_paddings(m: M, ctx: Ctx) -> Iterator[str]:
    x = next((t for t in ctx.tensors if t != "paddings"), None)
    if "paddings" in ctx.names and x:
        length = "paddings.shape[0]" if "paddings" in ctx.tensors else "len(paddings)"
        yield f"{length} == {x}.ndims"


@rule("jax", r"clamp requires (min|max)\.shape == operand\.shape or \w+\.shape == \(\), got "
       r"\w+\.shape=(" + SHAPE + r"), operand\.shape=(" + SHAPE + ")")
def _jax_clamp(m: M, ctx: Ctx) -> Iterator[str]:
    b = m.group(1) if m.group(1) in ctx.tensors else ctx.by_shape(shape_of(m.group(2)))
    x = ctx.by_shape(shape_of(m.group(3)), exclude=(b,) if b else ())
    if b and x:
        yield f"{b}.ndims == 0 or ({b}.ndims == {x}.ndims and {b}.num_element == " \
              f"{x}.num_element)"


@rule("tf torch", r"Negative dimension size caused by subtracting (\d+) from (\d+)",
       r"Calculated padded input size per channel: \((\d+)(?: x \d+)*\)\. Kernel size: \((\d+)")
def _window(m: M, ctx: Ctx) -> Iterator[str]:
    tf = m.group(0).startswith("Negative")
    win, size = (int(m.group(1)), int(m.group(2))) if tf else (int(m.group(2)), int(m.group(1)))
    x = ctx.with_dim(size, prefer=(-2, 1, -1) if tf else (-1,))
    if not x:
        return
    p = ctx.ints(win, names_like=("ksize", "kernel", "window", "size"))
    if p:
        yield f"{x[0]}.shape[{x[1]}] >= {p[0]}"
        return
    w = ctx.with_dim(win, prefer=(0, -1) if tf else (-1,), exclude=(x[0],))
    if w:
        yield f"{x[0]}.shape[{x[1]}] >= {w[0]}.shape[{w[1]}]"


@rule("torch", r"Given input size: \((\d+)x(\d+)x(\d+)\)\. Calculated output size: .* Output "
       r"size is too small")
def _torch_pool(m: M, ctx: Ctx) -> Iterator[str]:
    sizes = [int(m.group(i)) for i in (1, 2, 3)]
    x = next((t for t in ctx.tensors if list(ctx.shape(t)[-3:]) == sizes), None)
    for p in ("kernel_size", "output_size"):
        v = ctx.values.get(p)
        if x and isinstance(v, int) and not isinstance(v, bool) and v > min(sizes[1:]):
            yield f"{x}.shape[-1] >= {p} and {x}.shape[-2] >= {p}"


@rule("torch", r"pad should be at most half of effective kernel size, but got pad=(\d+), "
       r"kernel_size=(\d+)")
def _torch_pad_half(m: M, ctx: Ctx) -> Iterator[str]:
    pad = _named_or_value(ctx, "padding", int(m.group(1)))
    ks = _named_or_value(ctx, "kernel_size", int(m.group(2)))
    if pad and ks and "[" not in pad + ks:
        yield f"{pad} * 2 <= {ks}"


@rule("torch", r"Padding length must be divisible by 2")
def _torch_pad_len(m: M, ctx: Ctx) -> Iterator[str]:
    for p in ctx.lists():
        if len(ctx.values[p]) % 2:
            yield f"len({p}) % 2 == 0"


# ---- scalars ------------------------------------------------------------------------------
def _scalar(ctx: Ctx, name: str, op: str, bound: int) -> Iterator[str]:
    v = ctx.values.get(name)
    if name not in ctx.names:
        return
    if isinstance(v, int | float) and not isinstance(v, bool):
        yield f"{name}.type not in ('int', 'float') or {name} {op} {bound}"
    elif isinstance(v, list | tuple) and v and all(isinstance(x, int | float) for x in v):
        yield f"{name}.type not in ('ints', 'floats') or min({name}) {op} {bound}"


@rule("torch tf", r"`?(\w+)`? (?:to be|must be|should be) greater than (-?\d+)",
       r"non-positive (\w+) is not supported()", r"(\w+) must be nonzero()",
       r"Requires (\w+) != 0()")
def _positive(m: M, ctx: Ctx) -> Iterator[str]:
    name = m.group(1)
    if m.group(2):
        yield from _scalar(ctx, name, ">", int(m.group(2)))
    elif "non-positive" in m.group(0):
        yield from _scalar(ctx, name, ">", 0)
    elif name in ctx.names:
        yield f"{name} != 0"


@rule("torch jax", r"(?:must be non-negative|negative dimensions are not allowed|"
       r"Invalid number of data points \((-?\d+)\))")
def _non_negative(m: M, ctx: Ctx) -> Iterator[str]:
    op = ">" if m.group(1) else ">="
    for p in ctx.order:
        v = ctx.values.get(p)
        vals = v if isinstance(v, list | tuple) else [v]
        if all(isinstance(x, int) and not isinstance(x, bool) for x in vals) and vals and \
                min(vals) < (1 if op == ">" else 0):
            yield from _scalar(ctx, p, op, 0)


@rule("torch", r"Invalid number of data points \(0\)")
def _empty(m: M, ctx: Ctx) -> Iterator[str]:
    if not any(isinstance(v, int) and not isinstance(v, bool) and v <= 0
               for v in ctx.values.values()):
        for t in ctx.tensors:
            if 0 in ctx.shape(t):
                yield f"{t}.num_element > 0"


@rule("torch", r"Number of indices \((\d+)\) should be equal to (\w+)\.size\((\w+)\)")
def _torch_indices(m: M, ctx: Ctx) -> Iterator[str]:
    idx = next((t for t in ctx.tensors if t == "index"), None)
    src, dim = m.group(2), m.group(3)
    if idx and src in ctx.tensors and dim in ctx.names:
        yield f"{idx}.num_element == {src}.shape[{dim}]"


@rule("torch", r"^(None|-?\d+|'\w+') is not a valid value for (\w+)")
def _not_valid(m: M, ctx: Ctx) -> Iterator[str]:
    name = m.group(2)
    if name in ctx.names:
        yield f"{name} is not None" if m.group(1) == "None" else f"{name} != {m.group(1)}"


@rule("torch", r"expects '(\w+)' to be less than '(\w+)', but got \w+=(-?\d+) >= \w+=(-?\d+)")
def _less(m: M, ctx: Ctx) -> Iterator[str]:
    a = _named_or_value(ctx, m.group(1), int(m.group(3)))
    b = _named_or_value(ctx, m.group(2), int(m.group(4)))
    if a and b and a != b:
        yield f"{a} < {b}"


@rule("torch tf jax", r"(?:Invalid|Unknown|Unsupported|unsupported|not supported|"
       r"unrecognized|not a valid)[^'\"]{0,60}['\"]([\w\-. ]{1,40})['\"]")
def _bad_string(m: M, ctx: Ctx) -> Iterator[str]:
    for p in ctx.order:
        v = ctx.values.get(p)
        if isinstance(v, str) and v == m.group(1):
            yield f"{p} != {m.group(1)!r}"
