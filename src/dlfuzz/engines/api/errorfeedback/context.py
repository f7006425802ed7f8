"""The failing draw as the rules see it, and the constraint texts they write.

``Ctx`` finds parameters by what the message printed (the tensor of that shape or dtype,
the dimension of that size, the int parameter of that value), preferring the names the
message mentions; ``rank_text`` and ``dtype_text`` write the two most common constraints.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from dlfuzz.engines.api.constraints import Env


@dataclass
class Ctx:
    """The failing draw, as the handlers need it."""

    names: frozenset[str]
    order: list[str]                 # parameters in spec order
    values: dict[str, Any]           # passed values plus defaults of optional ones
    env: Env
    message: str

    @property
    def tensors(self) -> list[str]:
        return [n for n in self.order if is_tensor(self.values.get(n))]

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
                and not any(is_tensor(x) for x in self.values[n])]


def is_tensor(v: Any) -> bool:
    return isinstance(v, np.ndarray) or (hasattr(v, "shape") and hasattr(v, "dtype")
                                         and not isinstance(v, type))


# ---- text helpers -----------------------------------------------------------------------
def rank_text(t: str, lo: int, hi: int | None) -> str:
    if hi == lo:
        return f"{t}.ndims == {lo}"
    return f"{t}.ndims >= {lo}" + ("" if hi is None else f" and {t}.ndims <= {hi}")


def dtype_text(t: str, dtypes: tuple[str, ...] | list[str]) -> str:
    ds = tuple(dict.fromkeys(dtypes))
    return f"{t}.dtype == {ds[0]!r}" if len(ds) == 1 else f"{t}.dtype in {ds!r}"
