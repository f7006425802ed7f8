"""Results IEEE 754 / C99 Annex F fix for special inputs, read from ``ieee.json``.

The float64 re-run is one more implementation: on NaN and infinities it can be as wrong
as the backend it judges (numpy's ``hypot`` and a library's may disagree on
``hypot(inf, nan)``, and the standard says ``+inf``). Where a rule of the table fixes an
element's result, that value is the expected one, for the reference and every backend
alike: the backend that deviates is guilty of a special-value bug and the ones that
follow the rule are never blamed. Rules apply elementwise to calls whose target's last
name is in the row's ``functions`` and whose first arguments broadcast to the output.

The same file lists the APIs whose results depend on evaluation order (sums, scans,
contractions) or on the computing dtype's range (products): there NaN vs ±inf with
infinite inputs of the kind the row names is no bug at all.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np

from dlfuzz.cases import DTYPES, ApiCase, Ref
from dlfuzz.errors import UsageError

TABLE = Path(__file__).with_name("ieee.json")
NEEDS = ("both_signs", "any_inf", "underflow")  # see ``OrderDependence``

_PATTERNS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "any": lambda x: np.ones(x.shape, bool),
    "nan": np.isnan,
    "notnan": lambda x: ~np.isnan(x),
    "inf": np.isinf,
    "+inf": lambda x: np.isposinf(x),
    "-inf": lambda x: np.isneginf(x),
    "finite": np.isfinite,
    "finite_nonzero": lambda x: np.isfinite(x) & (x != 0),
    "0": lambda x: x == 0,
    "+0": lambda x: (x == 0) & ~np.signbit(x),
    "-0": lambda x: (x == 0) & np.signbit(x),
    "+1": lambda x: x == 1,
    "-1": lambda x: x == -1,
    "neg": lambda x: x < 0,
    "pos": lambda x: x > 0,
    "below_-1": lambda x: x < -1,
    "abs_lt_1": lambda x: np.abs(x) < 1,
    "abs_gt_1": lambda x: np.abs(x) > 1,
}
_VALUES = {"inf": np.inf, "-inf": -np.inf, "nan": np.nan, "0": 0.0, "-0": -0.0, "1": 1.0,
           "-1": -1.0, "pi": np.pi, "pi/2": np.pi / 2, "pi/4": np.pi / 4,
           "3pi/4": 3 * np.pi / 4}


@dataclass(frozen=True)
class Rule:
    functions: tuple[str, ...]
    args: tuple[str, ...]
    result: tuple[tuple[str, Any], ...]
    citation: str

    def value(self, arrays: list[np.ndarray]) -> np.ndarray:
        """The fixed result at every element (meaningful where ``mask`` holds)."""
        spec = dict(self.result)
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
        if "arg" in spec:
            out = np.broadcast_to(arrays[spec["arg"]], shape).astype(np.float64)
            if "sign_of" in spec:
                out = np.copysign(np.abs(out), arrays[spec["sign_of"]])
            return np.asarray(out, dtype=np.float64)
        out = np.full(shape, _VALUES[spec["value"]])
        if "sign_of" in spec:
            out = np.copysign(out, np.broadcast_to(arrays[spec["sign_of"]], shape))
        return out

    def mask(self, arrays: list[np.ndarray]) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            parts = [_PATTERNS[p](a) for p, a in zip(self.args, arrays, strict=True)]
        return np.logical_and.reduce(np.broadcast_arrays(*parts))


@dataclass(frozen=True)
class Fixed:
    """Where rules fix one output: the mask, the values there, and each element's rule."""

    mask: np.ndarray
    values: np.ndarray
    citations: tuple[str, ...]  # per rule, indexed by ``which``
    which: np.ndarray  # index into ``citations`` at fixed elements, -1 elsewhere


@dataclass(frozen=True)
class OrderDependence:
    """APIs whose NaN vs ±inf depends on evaluation order, and what inputs make it so:
    ``both_signs`` (a sum needs +inf and -inf among its terms), ``any_inf`` (in a
    contraction one infinity times terms of either sign, or zero, suffices) or
    ``underflow`` (a product: an infinity, and factors below 1 whose product underflows
    the computing dtype, so whether the partial product is zero when it meets the
    infinity depends on the order and the range)."""

    pattern: re.Pattern[str]
    needs: str
    reason: str


@cache
def _table() -> tuple[tuple[Rule, ...], tuple[OrderDependence, ...]]:
    try:
        data = json.loads(TABLE.read_text())
    except (OSError, ValueError) as exc:
        raise UsageError(f"{TABLE}: cannot read the IEEE rule table ({exc}); restore the "
                         "file from the repository") from exc
    rules = []
    for i, row in enumerate(data.get("rules", [])):
        bad = [p for p in row["args"] if p not in _PATTERNS]
        value = row["result"].get("value")
        if bad or (value is not None and value not in _VALUES) or not row.get("citation"):
            raise UsageError(f"{TABLE}: rule {i} ({row.get('functions')}) has unknown "
                             f"patterns {bad} or value {value!r} or no citation; use the "
                             "vocabulary in the file's 'about'")
        rules.append(Rule(tuple(row["functions"]), tuple(row["args"]),
                          tuple(sorted(row["result"].items())), row["citation"]))
    order = []
    for i, row in enumerate(data.get("order_dependent", [])):
        if row.get("needs") not in NEEDS or not row.get("reason"):
            raise UsageError(f"{TABLE}: order_dependent row {i} needs 'needs' (one of "
                             f"{', '.join(NEEDS)}) and a 'reason'")
        order.append(OrderDependence(re.compile(row["pattern"]), row["needs"], row["reason"]))
    return tuple(rules), tuple(order)


def rules_for(target: str) -> tuple[Rule, ...]:
    name = target.rsplit(".", 1)[-1]
    return tuple(r for r in _table()[0] if name in r.functions)


def order_dependent(case: ApiCase, specials: Sequence[str], dtype: str = "") -> str:
    """The reason when NaN vs ±inf in the case's result depends on evaluation order (or,
    for products, on the range of ``dtype``, the dtype the result was computed in),
    given the special values its inputs hold; else ""."""
    order = _table()[1]
    infinities = {"inf", "-inf"} & set(specials)
    if getattr(case, "kind", "api") == "graph":
        # Models chain dense and convolution layers: contractions throughout.
        contraction = next((o for o in order if o.needs == "any_inf"), None)
        return contraction.reason if contraction is not None and infinities else ""
    names = [case.api] + [c.target for _, c in getattr(case, "calls", ())]
    for o in order:
        if o.needs == "both_signs":
            enough = len(infinities) == 2
        elif o.needs == "underflow":
            enough = bool(infinities) and _factors_underflow(case, dtype)
        else:
            enough = bool(infinities)
        if enough and any(o.pattern.search(n) for n in names):
            return o.reason
    return ""


def _factors_underflow(case: ApiCase, dtype: str) -> bool:
    """Whether the finite nonzero input values below 1 in magnitude multiply to less than
    ``dtype``'s smallest subnormal: some order of the product reaches zero (float16's is
    6e-8: three factors of 0.004 reach it)."""
    if not dtype.startswith(("float", "bfloat")) or dtype not in DTYPES:
        return False
    tiny = float(ml_dtypes.finfo(DTYPES[dtype]).smallest_subnormal)
    log_product = 0.0
    for t in case.tensors:
        a = t.to_numpy()
        if a.dtype.kind != "f" and a.dtype.name != "bfloat16":
            continue
        wide = np.abs(a.astype(np.float64))
        small = wide[(wide > 0) & (wide < 1)]
        log_product += float(np.log(small).sum())
    return log_product < math.log(tiny)


def _operands(case: ApiCase, target_args: tuple[Any, ...], kwargs: tuple[tuple[str, Any], ...],
              n: int) -> list[np.ndarray] | None:
    """The first ``n`` tensor or number arguments of a call, as float64 arrays."""
    values = [v for v in (*target_args, *(v for _, v in kwargs))
              if isinstance(v, Ref) or (isinstance(v, int | float) and not isinstance(v, bool))]
    if len(values) < n:
        return None
    out = []
    for v in values[:n]:
        a = case.tensors[v.index].to_numpy() if isinstance(v, Ref) else np.asarray(v)
        if a.dtype.kind not in "fiub" and a.dtype.name != "bfloat16":
            return None  # complex: Annex G, not covered here
        out.append(a.astype(np.float64))
    return out


def fixed_results(case: ApiCase, library: str, shape: tuple[int, ...]) -> Fixed | None:
    """Where IEEE rules fix the single output (of ``shape``) of ``library``'s call."""
    call = case.call_for(library) if hasattr(case, "call_for") else None
    if call is None:
        return None
    rules = rules_for(call.target)
    if not rules:
        return None
    mask = np.zeros(shape, bool)
    values = np.zeros(shape)
    which = np.full(shape, -1)
    citations: list[str] = []
    for rule in rules:
        arrays = _operands(case, call.args, call.kwargs, len(rule.args))
        if arrays is None:
            continue
        try:
            joint = np.broadcast_shapes(*(a.shape for a in arrays))
        except ValueError:
            continue
        if joint != tuple(shape):
            if math.prod(joint) != 1 or math.prod(shape) != 1:
                continue
            # A one-element result may come back as (1,) for 0-d operands.
            arrays = [np.broadcast_to(a, joint).reshape(shape) for a in arrays]
        m = rule.mask(arrays) & ~mask  # the first matching rule wins
        if not m.any():
            continue
        values = np.where(m, rule.value(arrays), values)
        if rule.citation not in citations:
            citations.append(rule.citation)
        which = np.where(m, citations.index(rule.citation), which)
        mask |= m
    if not mask.any():
        return None
    return Fixed(mask, values, tuple(citations), which)
