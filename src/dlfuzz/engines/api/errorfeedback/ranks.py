"""Error-feedback constraints (DLLens §III-C): what a library's error message implies.

DLLens reads "Dimension out of range (expected to be in range of [#1, #2], but got #3)"
with a regular expression, looks for the tensor argument whose ndims fits #1..#3 and
adds a constraint on it. We do the same for the message formats torch, TensorFlow and
JAX really produce (collected by running each library on bad inputs; the unit tests
hold them verbatim): a table of patterns, each with a handler that maps the numbers,
shapes and dtype names in the message back to the draw's parameters (the tensor of that
shape, the dims that equal the reported sizes, the parameter whose value is the bad
axis, the tensor of the named dtype) and writes constraints over them.

Every constraint must parse over the API's parameters and must be *violated* by the
draw that failed (otherwise it does not explain the failure); ``refine`` additionally
keeps only those that hold on every draw that ran.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from dlfuzz.cases import COMPLEX_DTYPES, FLOAT_DTYPES, INT_DTYPES
from dlfuzz.engines.api.constraints import ConstraintError, Env, holds, parse
from dlfuzz.specgen.docstrings import dtype_names

_TORCH_DTYPES = {"complexfloat": "complex64", "complexdouble": "complex128",
                 "floattensor": "float32", "doubletensor": "float64", "longtensor": "int64",
                 "inttensor": "int32", "halftensor": "float16", "booltensor": "bool",
                 "bytetensor": "uint8", "uint16": "uint16", "uint32": "uint32",
                 "uint64": "uint64", "bfloat16": "bfloat16"}
_FAMILY_WORDS = {"floating": FLOAT_DTYPES, "float": FLOAT_DTYPES, "integer": INT_DTYPES,
                 "int": INT_DTYPES, "bool": ("bool",), "boolean": ("bool",),
                 "complexfloating": COMPLEX_DTYPES, "complex": COMPLEX_DTYPES,
                 "inexact": FLOAT_DTYPES + COMPLEX_DTYPES,
                 "signedinteger": INT_DTYPES[:4], "unsignedinteger": INT_DTYPES[4:]}
_SHAPE = r"[\[(][\d, ]*[\])]"


def dtype_of(word: str) -> str | None:
    """A dtype as any of the libraries spells it in messages: Float, DT_HALF, int32,
    torch.FloatTensor, ComplexFloat, tf.float32 -> dlfuzz names."""
    w = word.strip("'\"`.,").lower().split(".")[-1].removeprefix("dt_")
    if w in _TORCH_DTYPES:
        return _TORCH_DTYPES[w]
    got = dtype_names([w])
    return got[0] if got else None


def shape_of(text: str) -> tuple[int, ...]:
    """(2, 3) from "[2, 3]", "[2,3]", "(2, 3)", "(2,)", "2x3", "[]"."""
    return tuple(int(n) for n in re.findall(r"-?\d+", text))


@dataclass
class _Ctx:
    """The failing draw, as the handlers need it."""

    names: frozenset[str]
    order: list[str]                 # parameters in spec order
    values: dict[str, Any]           # passed values plus defaults of optional ones
    env: Env
    message: str

    @property
    def tensors(self) -> list[str]:
        return [n for n in self.order if _is_tensor(self.values.get(n))]

    def shape(self, name: str) -> tuple[int, ...]:
        return tuple(int(d) for d in self.values[name].shape)

    def dtype(self, name: str) -> str:
        v = self.values[name]
        return str(getattr(v.dtype, "name", v.dtype))

    def mentioned(self, names: list[str]) -> list[str]:
        """``names`` reordered: those the message names first."""
        said = [n for n in names if re.search(rf"(?<![\w.]){re.escape(n)}(?!\w)",
                                              self.message)]
        return said + [n for n in names if n not in said]

    def by_shape(self, shape: tuple[int, ...], exclude: tuple[str, ...] = ()) -> str | None:
        cands = [t for t in self.tensors if self.shape(t) == shape and t not in exclude]
        return self.mentioned(cands)[0] if cands else None

    def by_ndims(self, n: int, exclude: tuple[str, ...] = ()) -> str | None:
        cands = [t for t in self.tensors if len(self.shape(t)) == n and t not in exclude]
        return self.mentioned(cands)[0] if cands else None

    def by_dtype(self, dtype: str | None) -> list[str]:
        return self.mentioned([t for t in self.tensors if self.dtype(t) == dtype])

    def with_dim(self, size: int, prefer: tuple[int, ...] = (), exclude: tuple[str, ...] = ()
                 ) -> tuple[str, int] | None:
        """(tensor, axis) whose dimension has ``size``: a preferred axis as given (dim 1
        stays 1 whatever the rank), else the last such axis counted from the end."""
        for t in self.mentioned([t for t in self.tensors if t not in exclude]):
            shape = self.shape(t)
            for a in prefer:
                if -len(shape) <= a < len(shape) and shape[a] == size:
                    return t, a
            for a in range(-1, -len(shape) - 1, -1):
                if shape[a] == size:
                    return t, a
        return None

    def ints(self, value: int, names_like: tuple[str, ...] = ()) -> list[str]:
        """Scalar int parameters (or list items ``p[i]``) equal to ``value``."""
        out = []
        for n in self.order:
            v = self.values.get(n)
            if isinstance(v, int) and not isinstance(v, bool) and v == value:
                out.append(n)
            elif isinstance(v, list | tuple) and v and all(
                    isinstance(x, int) and not isinstance(x, bool) for x in v):
                out += [f"{n}[{i}]" for i, x in enumerate(v) if x == value]
        liked = [o for o in out if any(k in o for k in names_like)]
        return liked + [o for o in out if o not in liked]

    def lists(self) -> list[str]:
        return [n for n in self.order if isinstance(self.values.get(n), list | tuple)
                and not any(_is_tensor(x) for x in self.values[n])]


def _is_tensor(v: Any) -> bool:
    return isinstance(v, np.ndarray) or (hasattr(v, "shape") and hasattr(v, "dtype")
                                         and not isinstance(v, type))


Handler = Callable[[re.Match[str], _Ctx], Iterator[str]]
_RULES: list[tuple[frozenset[str], re.Pattern[str], Handler]] = []


def _rule(libraries: str, *patterns: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        for p in patterns:
            _RULES.append((frozenset(libraries.split()), re.compile(p, re.S), fn))
        return fn
    return register


def constraints_from_error(library: str, exc_type: str, message: str, draw: Any
                           ) -> list[str]:
    """Constraint texts over the draw's API parameters that ``message`` implies and the
    draw violates. ``draw``: anything with ``.spec`` (a LibSpec) and ``.values``."""
    from dlfuzz.engines.api.libdraw import env_of

    spec = draw.spec
    structures = getattr(draw, "structures", None)
    env = env_of(spec, draw.values, structures)
    text = re.sub(r"\{\{function_node [^}]*\}\}\s*|\s*\[Op:[^\]]*\].*$", "", message or "",
                  flags=re.S)
    ctx = _Ctx(spec.names, [p.name for p in spec.params], dict(env.values), env,
               " ".join(text.split()))
    out: list[str] = []
    for libs, pattern, handler in _RULES:
        if library not in libs:
            continue
        for m in pattern.finditer(ctx.message):
            for c in handler(m, ctx):
                if c in out:
                    continue
                try:
                    tree = parse(c, ctx.names)
                    explains = not holds(tree, env)  # it must say why this draw failed
                except (ConstraintError, TypeError, ValueError, ArithmeticError):
                    continue
                if explains:
                    out.append(c)
    return out


# ---- text helpers -----------------------------------------------------------------------
def _rank(t: str, lo: int, hi: int | None) -> str:
    if hi == lo:
        return f"{t}.ndims == {lo}"
    return f"{t}.ndims >= {lo}" + ("" if hi is None else f" and {t}.ndims <= {hi}")


def _dtypes(t: str, dtypes: tuple[str, ...] | list[str]) -> str:
    ds = tuple(dict.fromkeys(dtypes))
    return f"{t}.dtype == {ds[0]!r}" if len(ds) == 1 else f"{t}.dtype in {ds!r}"


def _neg_index(i: int, ndims: int) -> int:
    return i - ndims if i >= 0 else i


# ---- ranks ------------------------------------------------------------------------------
def _rank_target(ctx: _Ctx, lo: int, hi: int | None, got: int | None = None,
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


@_rule("torch", r"Expected (\d)D \(unbatched\) or (\d)D \(batched\) input to \w+, but got "
       r"input of size: (\[[\d, ]*\])")
def _torch_conv_rank(m: re.Match[str], ctx: _Ctx) -> Iterator[str]:
    t = _rank_target(ctx, int(m.group(1)), int(m.group(2)), shape=shape_of(m.group(3)))
    if t:
        yield _rank(t, int(m.group(1)), int(m.group(2)))


@_rule("tf", r"Shape must be rank (\d+) but is rank (\d+)",
       r"(?:at least rank|rank >=) ?(\d+)(?:,| but is rank) (?:got )?(\d+)")
def _tf_rank(m: re.Match[str], ctx: _Ctx) -> Iterator[str]:
    want, got = int(m.group(1)), int(m.group(2))
    exact = m.group(0).startswith("Shape must be rank")
    t = _rank_target(ctx, want, want if exact else None, got=got)
    if t:
        yield _rank(t, want, want if exact else None)


@_rule("torch tf jax",
       r"(?:at least|>=) (?:a )?(\d+)(?:D|-D|-dim|\s+dimensions|-dimensional)\b"
       r"(?:[^\[(.]{0,20}?(\[[\d, ]*\]))?",
       r"at least (two) dimensions()", r"ndims must be >= (\d+)()")
def _at_least(m: re.Match[str], ctx: _Ctx) -> Iterator[str]:
    lo = 2 if m.group(1) == "two" else int(m.group(1))
    shape = shape_of(m.group(2)) if m.group(2) else None
    t = _rank_target(ctx, lo, None, shape=shape)
    if t:
        yield _rank(t, lo, None)


@_rule("torch tf jax", r"must be (\d+) or (\d+)-dimensional",
       r"non-empty (\d)D or (\d)D \(batch mode\) tensor expected",
       r"Supports (\d)D or (\d)D tensors\. Got (\d)D")
def _two_ranks(m: re.Match[str], ctx: _Ctx) -> Iterator[str]:
    lo, hi = int(m.group(1)), int(m.group(2))
    got = int(m.group(3)) if m.lastindex and m.lastindex >= 3 else None
    t = _rank_target(ctx, lo, hi, got=got)
    if t:
        yield _rank(t, lo, hi)


@_rule("torch tf jax", r"must be (\d+)-dimensional\s*(\[[\d, ]*\])?",
       r"must be a (\d)D tensor()", r"only supports (\d)D tensors, got: (\d)D",
       r"expected a matrix(), but got tensor with dim (\d+)")
def _one_rank(m: re.Match[str], ctx: _Ctx) -> Iterator[str]:
    want = int(m.group(1)) if m.group(1) else 2
    tail = m.group(2) or ""
    shape = shape_of(tail) if tail.startswith("[") else None
    got = int(tail) if tail.isdigit() else None
    t = _rank_target(ctx, want, want, got=got, shape=shape)
    if t:
        yield _rank(t, want, want)


@_rule("torch", r"(\w+) has to be a (\d)D Tensor", r"only supports a (\d)-dimensional (\w+) tensor",
       r"Expect a (\d)D (vector), but got shape (\[[\d, ]*\])",
       r"Expected (\d+) to (\d+) dimensions, but got (\d+)-dimensional tensor")
def _named_rank(m: re.Match[str], ctx: _Ctx) -> Iterator[str]:
    g = m.groups()
    if len(g) == 4 or (len(g) == 3 and g[2].isdigit()):  # "Expected 2 to 3 dimensions"
        t = _rank_target(ctx, int(g[0]), int(g[1]), got=int(g[2]))
        if t:
            yield _rank(t, int(g[0]), int(g[1]))
        return
    n, name = (int(g[1]), g[0]) if g[1].isdigit() else (int(g[0]), g[1])
    if len(g) == 3:
        t = _rank_target(ctx, n, n, shape=shape_of(g[2]))
    else:
        t = name if name in ctx.tensors else _rank_target(ctx, n, n)
    if t:
        yield _rank(t, n, n)


@_rule("torch", r"Dimension specified as -?\d+ but tensor has no dimensions",
       r"cannot be applied to a 0-dim tensor")
def _no_dims(m: re.Match[str], ctx: _Ctx) -> Iterator[str]:
    for t in ctx.tensors:
        if not ctx.shape(t):
            yield f"{t}.ndims >= 1"
            return


@_rule("torch", r"(\w+) must be a (matrix)")
def _matrix(m: re.Match[str], ctx: _Ctx) -> Iterator[str]:
    named = m.group(1)
    if named in ctx.tensors:
        yield _rank(named, 2, 2)
    else:
        t = _rank_target(ctx, 2, 2)
        if t:
            yield _rank(t, 2, 2)


@_rule("torch", r"(\d)D tensors expected, but got (\d)D and (\d)D tensors")
def _all_rank(m: re.Match[str], ctx: _Ctx) -> Iterator[str]:
    want = int(m.group(1))
    for t in ctx.tensors:
        if len(ctx.shape(t)) != want:
            yield _rank(t, want, want)


@_rule("torch", r"Got (\d)D input, but ([\w-]+) mode needs (\d)D input")
def _mode_rank(m: re.Match[str], ctx: _Ctx) -> Iterator[str]:
    t = ctx.by_ndims(int(m.group(1)))
    for p in ctx.order:
        if isinstance(ctx.values.get(p), str) and ctx.values[p] == m.group(2) and t:
            yield f"{p} != {m.group(2)!r} or {_rank(t, int(m.group(3)), int(m.group(3)))}"


@_rule("jax torch tf", r"must have the same number of dimensions[;,]? (?:got )?\{?(\d+)"
       r"(?:,| vs\.?| and) (\d+)", r"input dimensions do not match: got (\d+) and (\d+)",
       r"requires lhs and rhs ndim to be equal, got (\d+) and (\d+)",
       r"(I)ndex tensor must have the same number of dimensions as (i)nput tensor")
def _same_rank(m: re.Match[str], ctx: _Ctx) -> Iterator[str]:
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
def _axis(ctx: _Ctx, got: int, n_eff: int) -> Iterator[str]:
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


@_rule("torch", r"Dimension out of range \(expected to be in range of \[(-?\d+), (-?\d+)\], "
       r"but got (-?\d+)\)")
def _torch_dim(m: re.Match[str], ctx: _Ctx) -> Iterator[str]:
    yield from _axis(ctx, int(m.group(3)), int(m.group(2)) + 1)


@_rule("jax", r"axis (-?\d+) is out of bounds for array of dimension (\d+)")
def _jax_axis(m: re.Match[str], ctx: _Ctx) -> Iterator[str]:
    yield from _axis(ctx, int(m.group(1)), int(m.group(2)))


@_rule("jax", r"(?:axis|Invalid axis) (-?\d+) (?:is out of bounds for array of shape|for "
       r"operand shape) (" + _SHAPE + ")")
def _jax_axis_shape(m: re.Match[str], ctx: _Ctx) -> Iterator[str]:
    yield from _axis(ctx, int(m.group(1)), len(shape_of(m.group(2))))


@_rule("tf", r"Invalid reduction dimension \(?(-?\d+),? for input with (\d+) dimension",
       r"Tried to expand dim index (-?\d+) for tensor with (\d+) dimensions()",
       r"in the range \[(-?\d+), (-?\d+)\), but got (-?\d+)")
def _tf_axis(m: re.Match[str], ctx: _Ctx) -> Iterator[str]:
    if m.lastindex == 3 and m.group(3):
        yield from _axis(ctx, int(m.group(3)), int(m.group(2)))
    else:
        extra = 1 if m.group(0).startswith("Tried to expand") else 0
        yield from _axis(ctx, int(m.group(1)), int(m.group(2)) + extra)


from dlfuzz.engines.api.errorfeedback import dtypes as _more  # noqa: E402,F401
