"""Dtype rules: "expected scalar type Float but found Double", "not implemented for
'Half'", "Value for attr 'T' of int32 is not in the list of allowed values" -> dtype
equalities and allowed dtype sets, mapped to the tensor of the named dtype.
"""

from __future__ import annotations

import collections
import re
from collections.abc import Iterator

from dlfuzz.cases import COMPLEX_DTYPES, FLOAT_DTYPES, INT_DTYPES
from dlfuzz.engines.api.errorfeedback.context import Ctx, dtype_text, rank_text
from dlfuzz.engines.api.errorfeedback.registry import Rule, adder
from dlfuzz.engines.api.errorfeedback.vocabulary import FAMILY_WORDS, dtype_of

RULES: list[Rule] = []
rule = adder(RULES)

M = re.Match[str]


# ---- dtypes -----------------------------------------------------------------------------
def _pair_equal(ctx: Ctx, a: str | None, b: str | None) -> Iterator[str]:
    """The tensor of dtype ``b`` must have the dtype of the one of dtype ``a``."""
    first = ctx.by_dtype(a)
    second = [t for t in ctx.by_dtype(b) if t not in first[:1]]
    if first and second:
        yield f"{second[0]}.dtype == {first[0]}.dtype"


@rule("torch", r"expected scalar type (\w+) but found (\w+)",
       r"have the same dtype, but got: (\w+) != (\w+)")
def _torch_same(m: M, ctx: Ctx) -> Iterator[str]:
    yield from _pair_equal(ctx, dtype_of(m.group(1)), dtype_of(m.group(2)))


@rule("torch", r"to have the same dtype, but found \w+ of type (\w+) and \w+ of type (\w+)",
       r"\w+ \((\w+)\) and \w+ \((\w+)\) must have the same (?:scalar type|dtype)")
def _torch_same_found(m: M, ctx: Ctx) -> Iterator[str]:
    yield from _pair_equal(ctx, dtype_of(m.group(1)), dtype_of(m.group(2)))


@rule("torch", r"(?:must have the same dtype|to have the same dtype|with different dtypes)")
def _torch_all_same(m: M, ctx: Ctx) -> Iterator[str]:
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


@rule("torch", r"Expected both inputs to be ((?:\w+, )*\w+ or \w+) tensors but got (\w+) and "
       r"(\w+)")
def _torch_both(m: M, ctx: Ctx) -> Iterator[str]:
    ok = [w for w in re.split(r", | or ", m.group(1))]
    for got in {m.group(2), m.group(3)}:
        yield from _allowed(ctx, dtype_of(got), ok)


@rule("jax", r"requires arguments to have the same dtypes, got (\w+), (\w+)")
def _jax_same(m: M, ctx: Ctx) -> Iterator[str]:
    yield from _pair_equal(ctx, dtype_of(m.group(1)), dtype_of(m.group(2)))


@rule("torch", r"expected dtype (\w+) for `(\w+)` but got dtype (\w+)")
def _torch_named_same(m: M, ctx: Ctx) -> Iterator[str]:
    named = m.group(2)
    ref = [t for t in ctx.by_dtype(dtype_of(m.group(1))) if t != named]
    if named in ctx.names and ref:
        yield f"{named}.dtype == {ref[0]}.dtype"


@rule("tf", r"was expected to be a (\w+) tensor but is a (\w+) tensor")
def _tf_same(m: M, ctx: Ctx) -> Iterator[str]:
    want, got = dtype_of(m.group(1)), dtype_of(m.group(2))
    bad = ctx.by_dtype(got)
    ref = [t for t in ctx.by_dtype(want) if t not in bad]
    if bad:
        yield f"{bad[0]}.dtype == {ref[0]}.dtype" if ref else dtype_text(bad[0], [want or ""])


def _allowed(ctx: Ctx, got: str | None, allowed: list[str], named: str | None = None
             ) -> Iterator[str]:
    names = [named] if named in ctx.names else ctx.by_dtype(got)
    ok = [d for d in (dtype_of(w) for w in allowed) if d]
    for t in names[:2]:
        if ok:
            yield dtype_text(t, ok)


@rule("tf", r"Value for attr '\w+' of (\w+) is not in the list of allowed values: ([\w, ]+)")
def _tf_attr(m: M, ctx: Ctx) -> Iterator[str]:
    yield from _allowed(ctx, dtype_of(m.group(1)), m.group(2).split(","))


@rule("tf", r"Value passed to parameter '(\w+)' has DataType (\w+) not in list of allowed "
       r"values: ([\w, ]+)")
def _tf_param(m: M, ctx: Ctx) -> Iterator[str]:
    yield from _allowed(ctx, dtype_of(m.group(2)), m.group(3).split(","), m.group(1))


@rule("torch", r"Expected tensor for argument #\d+ '(\w+)' to have one of the following "
       r"scalar types: ([\w, ]+); but got (\S+) instead")
def _torch_arg_types(m: M, ctx: Ctx) -> Iterator[str]:
    yield from _allowed(ctx, dtype_of(m.group(3)), m.group(2).split(","), m.group(1))


@rule("torch", r"expected (\w+) to be a boolean tensor, but got a tensor with dtype (\w+)",
       r"Expected dtype ((?:\w+ or )*\w+) for (\w+)()",
       r"expected (\w+) dtype to be ((?:\w+ or )*\w+), but got (\w+)")
def _torch_named_types(m: M, ctx: Ctx) -> Iterator[str]:
    if "boolean" in m.group(0):
        yield from _allowed(ctx, dtype_of(m.group(2)), ["bool"], m.group(1))
    elif m.group(0).startswith("Expected dtype"):
        yield from _allowed(ctx, None, m.group(1).split(" or "), m.group(2))
    else:
        yield from _allowed(ctx, dtype_of(m.group(3)), m.group(2).split(" or "), m.group(1))


def _exclude(ctx: Ctx, dtypes: tuple[str, ...]) -> Iterator[str]:
    for t in ctx.tensors:
        if ctx.dtype(t) in dtypes:
            yield f"{t}.dtype not in {dtypes!r}" if len(dtypes) > 1 else \
                f"{t}.dtype != {dtypes[0]!r}"


@rule("torch", r"not implemented for '(\w+)'", r"Low precision dtypes not supported\. Got (\w+)")
def _torch_not_implemented(m: M, ctx: Ctx) -> Iterator[str]:
    d = dtype_of(m.group(1))
    if d:
        yield from _exclude(ctx, (d,))


@rule("tf", r"\bT=DT_(\w+)")
def _tf_no_kernel(m: M, ctx: Ctx) -> Iterator[str]:
    if "Could not find device for node" in ctx.message or "No registered" in ctx.message:
        d = dtype_of(m.group(1))
        if d:
            yield from _exclude(ctx, (d,))


@rule("torch tf jax", r"(?:does not support complex|not compatible with complex|only real "
       r"valued inputs|expects a real input tensor)")
def _no_complex(m: M, ctx: Ctx) -> Iterator[str]:
    yield from _exclude(ctx, COMPLEX_DTYPES)


@rule("torch", r"(?:two bool tensors|on a bool tensor) is not supported")
def _no_bool(m: M, ctx: Ctx) -> Iterator[str]:
    yield from _exclude(ctx, ("bool",))


@rule("torch", r"(?:floating point or complex (?:tensor as input|dtype)\.? Got:? (\w+)|"
       r"only support floating point and complex dtypes())")
def _torch_inexact(m: M, ctx: Ctx) -> Iterator[str]:
    got = dtype_of(m.group(1)) if m.group(1) else None
    for t in ctx.tensors:
        if (ctx.dtype(t) == got) if got else ctx.dtype(t) not in FLOAT_DTYPES + COMPLEX_DTYPES:
            yield dtype_text(t, FLOAT_DTYPES + COMPLEX_DTYPES)
            return


@rule("jax", r"\w+ does not accept dtype (\w+)(?: at position (\d+))?\. Accepted dtypes"
       r"(?: at position \d+)? are subtypes of ([\w, ]+)\.",
       r"`?\w+`? must be (boolean|integer|floating)(?: or (boolean|integer|floating))? type, "
       r"got (\w+)")
def _jax_families(m: M, ctx: Ctx) -> Iterator[str]:
    if m.group(0).endswith("."):
        got, words = dtype_of(m.group(1)), m.group(3).split(",")
        pos = int(m.group(2)) if m.group(2) else None
    else:
        got, words, pos = dtype_of(m.group(3)), [m.group(1), m.group(2) or ""], None
    ok = tuple(d for w in words for d in FAMILY_WORDS.get(w.strip(), ()))
    names = ctx.by_dtype(got)
    if pos is not None and pos < len(ctx.tensors) and ctx.tensors[pos] in names:
        names = [ctx.tensors[pos]]
    if names and ok:
        yield dtype_text(names[0], ok)


@rule("tf", r"requires tf\.(\w+) or tf\.(\w+) inputs, got: .*?dtype=(\w+)")
def _tf_requires(m: M, ctx: Ctx) -> Iterator[str]:
    yield from _allowed(ctx, dtype_of(m.group(3)), [m.group(1), m.group(2)])


@rule("torch", r"only supports boolean \w+, but got (\w+) with dtype (\w+)")
def _bool_mask(m: M, ctx: Ctx) -> Iterator[str]:
    yield from _allowed(ctx, dtype_of(m.group(2)), ["bool"], m.group(1))


@rule("torch", r"(vector|matrix) \+ (vector|matrix) @ (vector|matrix) expected, got (\d+), "
       r"(\d+), (\d+)")
def _torch_addmv(m: M, ctx: Ctx) -> Iterator[str]:
    want = [1 if w == "vector" else 2 for w in m.groups()[:3]]
    got = [int(g) for g in m.groups()[3:]]
    for t, w, g in zip(ctx.tensors, want, got, strict=False):
        if len(ctx.shape(t)) == g and g != w:
            yield rank_text(t, w, w)


@rule("torch", r"only applicable to index tensor of type LongTensor")
def _long_index(m: M, ctx: Ctx) -> Iterator[str]:
    for t in ctx.tensors:
        if ctx.dtype(t) != "int64":
            yield f"{t}.dtype == 'int64'"
            return


@rule("torch", r"tensors used as indices must be long, int, byte or bool tensors")
def _index_dtypes(m: M, ctx: Ctx) -> Iterator[str]:
    for t in ctx.tensors[1:]:
        if ctx.dtype(t) not in ("int64", "int32", "uint8", "bool"):
            yield dtype_text(t, ("int64", "int32", "uint8", "bool"))


@rule("torch", r"only integer tensors of a single element can be converted to an index")
def _index_scalar(m: M, ctx: Ctx) -> Iterator[str]:
    for t in ctx.tensors[1:]:
        yield (f"{t}.type != 'tensor' or ({t}.num_element == 1 and "
               f"{dtype_text(t, INT_DTYPES)})")
