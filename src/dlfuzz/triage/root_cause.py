"""Root-cause keys: one bug per mechanism, however many ways it was reached.

A signature (``oracles.signature``) says how a finding looked: its symptom, backend, API,
dtypes and message. Many signatures are one bug for a maintainer. The root-cause key is
what they share, visible and stable (a baseline file or an exported regression test can
name it)::

    <who>/<op>/<mechanism>        e.g.  tf/hypot/special-value
                                        torch/conv2d/wrong-result
                                        tfjs-wasm/min-max-clip/nan-propagation
                                        tf/tridiagonalsolve/memory

* ``who``: the guilty backend's library (``tf`` for ``tf`` and ``tf-xla``), so execution
  modes merge; a compiled mode keeps its own name (``tf-xla``) when its eager sibling is
  not wrong on the same case: that is a compiler bug. A library served by several eager
  backends (``keras-tf``/``keras-jax``/``keras-torch``, ``tfjs-cpu``/``tfjs-wasm``) is
  named once (``keras``) when more than one of its backends shows the mechanism on the
  case (backend-independent code), else by the one backend (its own kernel).
* ``op``: for a crash whose worker output names where it failed, its crash state
  (``oracles.crash_log``: the top native frames under a failed CHECK, or an uncaught
  C++ exception's type and message), ``at:`` before it, so the APIs reaching one
  failing place are one bug (``tf/at:tensorshapebase.dimsize<tensorscatterop.compute<
  threadpooldevice.compute/abort``). Else the API or layer name reduced to its last
  dotted component, lower-cased,
  without underscores, then through ``op_aliases.json`` (``torch.slogdet`` and
  ``torch.linalg.slogdet`` -> ``slogdet``; the ``Conv2D`` layer of the model engine and
  ``torch.nn.functional.conv2d`` of the API engine -> ``conv2d``). A family row of
  ``families.json`` replaces op and mechanism by the family's name and label when the
  op is a member and the mechanism matches (min/max/clip/relu6 NaN propagation).
* ``mechanism``: never a dtype, never a number. Numeric findings give their severity
  class (``wrong-result``, ``special-value``, ``ill-conditioned``, ``inconsistency``
  when demoted), a special-value one about NaN handling ``nan-propagation`` (NaN and
  no infinity in the inputs, NaN on one side only of a disagreeing element: NaN
  handling and infinity handling are separate code paths, one report must not hide the
  other); ``shape``; a status finding its exception type and first words;
  ``accepts-invalid:<parameter>`` for validation gaps; ``hang``, ``oom``, ``abort``.
  A crash from undefined behaviour in native or wasm code (SIGSEGV, SIGBUS, SIGFPE, a
  wasm out-of-bounds access or integer-division trap) and nondeterministic output
  (uninitialised memory read) are all ``memory``: an unchecked size (a negative output
  size, a zero-size dimension used as a divisor) shows as any of them, depending on
  what the memory held, so those symptoms of one op are one root cause (wasm prelu
  trapped "divide by zero" on one case and returned uninitialised memory on another).
  Other symptoms stay apart.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import numpy as np

from dlfuzz.oracles.crash_log import state_slug
from dlfuzz.oracles.signature import normalize_message
from dlfuzz.oracles.special import NAN_HANDLING, input_specials
from dlfuzz.triage.severity import severity_of

_MEMORY = re.compile(r"SIGSEGV|SIGBUS|SIGILL|SIGFPE|memory access out of bounds|heap|"
                     r"corrupt|double free|use.after.free|stack smashing|"
                     r"(divide|remainder) by zero|integer overflow", re.I)
_ABORT = re.compile(r"SIGABRT|abort|check failed|assert", re.I)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NOT_PARAMS = {"and", "or", "not", "in", "is", "len", "ndim", "shape", "dtype", "none",
               "true", "false", "int", "float", "all", "any", "abs", "min", "max",
               "input", "x", "self", "size", "numel", "dim", "rank", "of", "the"}


@dataclass(frozen=True)
class Family:
    name: str
    label: str
    ops: frozenset[str]
    mechanisms: tuple[str, ...]  # "*" matches any
    when: str  # a key of CONDITIONS
    reason: str

    def matches(self, op: str, mechanism: str, case: Any) -> bool:
        if op not in self.ops or not CONDITIONS[self.when](op, case):
            return False
        return "*" in self.mechanisms or mechanism in self.mechanisms


def _data(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        resources.files("dlfuzz.triage").joinpath(name).read_text(encoding="utf-8"))
    return data


@cache
def aliases() -> dict[str, str]:
    """Reduced name -> canonical op (``op_aliases.json``)."""
    out: dict[str, str] = {}
    for row in _data("op_aliases.json")["aliases"]:
        for name in row["names"]:
            out[name] = row["op"]
    return out


@cache
def families() -> tuple[Family, ...]:
    rows = _data("families.json")["families"]
    for r in rows:
        if r.get("when", "") not in CONDITIONS:
            from dlfuzz.errors import InternalError

            raise InternalError(f"families.json: family {r['name']!r} has when="
                                f"{r.get('when')!r}; known conditions: {sorted(CONDITIONS)}")
    return tuple(Family(r["name"], r["label"], frozenset(r["ops"]), tuple(r["mechanisms"]),
                        r.get("when", ""), r["reason"])
                 for r in rows)


def op_name(api: str) -> str:
    """The canonical operation of an API, layer or program-block name.

    A label with ``:`` (an unlocalized model ``seed:method``, a program template) is no
    operation and is kept whole, lower-cased."""
    text = re.sub(r"\s+", "-", api.strip()).replace("/", "_")
    if ":" in text:
        return text.lower()
    leaf = text.rsplit(".", 1)[-1].lower().replace("_", "")
    return aliases().get(leaf, leaf) or "unknown"


def _slug(text: str, words: int = 6) -> str:
    parts = re.findall(r"[a-z0-9]+", normalize_message(text).lower())
    return "-".join(parts[:words]) or "error"


def constraint_params(constraint: str) -> str:
    """The parameter names a broken constraint speaks of (``0 <= p <= 1`` -> ``p``)."""
    names = sorted({w for w in _WORD.findall(constraint) if w.lower() not in _NOT_PARAMS})
    return "+".join(names) or _slug(constraint, 3)


def mechanism(symptom: str, message: str, details: Mapping[str, Any],
              severity: str | None = None, case: Any = None) -> str:
    """The symptom-independent part of a root cause (see the module doc)."""
    if symptom in ("crash", "nondeterministic"):
        if symptom == "nondeterministic" or _MEMORY.search(message):
            return "memory"
        return "abort" if _ABORT.search(message) else "crash"
    if symptom == "timeout":
        return "hang"
    if symptom == "oom":
        return "oom"
    if symptom == "boundary":
        constraint = str(details.get("constraint") or details.get("edge_param") or "")
        return f"accepts-invalid:{constraint_params(constraint)}"
    if symptom == "gradient":  # reverse/forward vs finite differences, eager/compiled
        return f"gradient:{details.get('mode') or 'reverse'}"
    if symptom in ("numeric", "nan"):
        if details.get("ill_conditioned"):
            return "ill-conditioned"
        klass = severity or severity_of(symptom, details, case)
        if klass == "special-value" and about_nan_handling(details, case):
            return "nan-propagation"
        return klass
    if symptom == "status":
        return f"error:{_slug(message)}"
    if symptom == "performance":
        metric = details.get("metric")
        return f"performance:{metric}" if metric else "performance"
    return symptom or "unknown"


def about_nan_handling(details: Mapping[str, Any], case: Any = None) -> bool:
    """Whether a special-value finding is about NaN handling: its ``special_values``
    phrase says "NaN inputs handled differently" (``oracles.special.nan_handling``: NaN
    and no infinity in the inputs, and NaN on one side only of a disagreeing element).
    NaN handling is its own code path (a check skipped, a comparison that NaN makes
    false); infinities and overflow are another one. A report filed from an inf input
    would hide a NaN-only bug of the same op (``gammainc(nan, x)`` finite in torch), so
    they are two root causes. A finding stored without a phrase is asked of its case:
    NaN and no infinity in the inputs."""
    phrase = details.get("special_values")
    if isinstance(phrase, str) and phrase:
        return NAN_HANDLING in phrase
    if case is None or not getattr(case, "tensors", None):
        return False
    held = input_specials(case)
    return "nan" in held and "inf" not in held and "-inf" not in held


def has_empty_input(case: Any) -> bool:
    return any(getattr(t, "size", 1) == 0 for t in getattr(case, "tensors", ()) or ())


_INT32_MAX = 2**31 - 1


def has_int64_beyond_int32(case: Any) -> bool:
    """An int64 input holding a value int32 cannot: where an int64 kernel that computes
    or compares in int32 goes wrong, and only there."""
    for t in getattr(case, "tensors", ()) or ():
        if getattr(t, "dtype", "") == "int64" and t.size:
            if int(np.abs(t.to_numpy()).max()) > _INT32_MAX:
                return True
    return False


_WINDOW_PARAMS = ("filterSize", "windowShape", "strides", "dilations")


def _numeric_pad(params: Mapping[str, Any]) -> bool:
    pad = params.get("pad")
    return not isinstance(pad, bool) and isinstance(pad, int | float)


def _pair(value: Any) -> tuple[int, int] | None:
    """A window parameter as (height, width): an int is square, a pair is itself."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value, value
    if isinstance(value, tuple | list) and len(value) == 2 \
            and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return int(value[0]), int(value[1])
    return None


def has_numeric_pad_anisotropic_window(op: str, case: Any) -> bool:
    """A numeric ``pad`` with a window whose height and width parameters differ (a 1-D
    op's window is 1 x W). TF.js computes the output size of a numeric pad from the
    height parameters for both dimensions, so conv1d, pool and maxPool then allocate the
    wrong output: one mechanism, whatever op reached it."""
    params = dict(getattr(case, "params", ()) or ())
    if not _numeric_pad(params):
        return False
    if op.endswith("1d"):
        return True
    for name in _WINDOW_PARAMS:
        value = params.get(name)
        if isinstance(value, tuple | list) and len(value) == 2 and value[0] != value[1]:
            return True
    return False


def has_unit_window_numeric_pad(op: str, case: Any) -> bool:
    """A 1 x 1 pooling window with a numeric pad above zero: wasm's pooling kernels
    leave the padded border of such an output uninitialised (avgPool and maxPool alike)."""
    params = dict(getattr(case, "params", ()) or ())
    if not _numeric_pad(params) or not params["pad"] > 0:
        return False
    window = _pair(params.get("filterSize", params.get("windowShape")))
    return window == (1, 1)


def has_window_larger_than_input(op: str, case: Any) -> bool:
    """A ``'valid'`` window (dilated) taller or wider than the input: a negative output
    size. TF.js's shared conv/pool geometry (``computeConv2DInfo``/``computePool2DInfo``)
    does not reject it, so separableConv2d, dilation2d, maxPoolWithArgmax and avgPool
    read or write outside their buffers: one missing check, whatever op reached it."""
    params = dict(getattr(case, "params", ()) or ())
    if params.get("pad") != "valid":
        return False
    tensors = list(getattr(case, "tensors", ()) or ())
    if not tensors or len(tensors[0].shape) not in (3, 4):
        return False
    height, width = tensors[0].shape[-3], tensors[0].shape[-2]
    window = _pair(params.get("filterSize", params.get("windowShape")))
    if window is None and len(tensors) > 1 and len(tensors[1].shape) >= 2:
        window = int(tensors[1].shape[0]), int(tensors[1].shape[1])
    if window is None:
        return False
    dilation = _pair(params.get("dilations", params.get("dilation", 1))) or (1, 1)
    tall = (window[0] - 1) * dilation[0] + 1
    wide = (window[1] - 1) * dilation[1] + 1
    return tall > height or wide > width


CONDITIONS: dict[str, Callable[[str, Any], bool]] = {
    "": lambda op, case: True,
    "empty-input": lambda op, case: has_empty_input(case),
    "int64-beyond-int32": lambda op, case: has_int64_beyond_int32(case),
    "numeric-pad-anisotropic": has_numeric_pad_anisotropic_window,
    "unit-window-numeric-pad": has_unit_window_numeric_pad,
    "valid-window-larger-than-input": has_window_larger_than_input,
}


@dataclass(frozen=True)
class Backends:
    """What the key needs to know about a campaign's backends."""

    library_of: Mapping[str, str]
    compiled: Mapping[str, bool]

    def library(self, backend: str) -> str:
        lib = self.library_of.get(backend)
        if lib:
            return lib
        from dlfuzz.libraries import of_backend  # records only, no library import

        record = of_backend(backend)
        return record.name if record is not None else (backend or "unknown")

    def eager_of(self, library: str) -> list[str]:
        """The eager backends of ``library``: every one its record lists (so a key does
        not depend on which of them a campaign selected), else those of the campaign."""
        from dlfuzz.libraries import get, is_known

        names = [b for b, _ in get(library).backends] if is_known(library) else []
        names = names or [b for b, lib in self.library_of.items() if lib == library]
        return [b for b in names if not self.is_compiled(b)]

    def is_compiled(self, backend: str) -> bool:
        if backend in self.compiled:
            return bool(self.compiled[backend])
        from dlfuzz import registry  # the backend class only, no library import
        from dlfuzz.errors import UsageError

        try:
            return bool(getattr(registry.load("backend", backend), "compiled", False))
        except (UsageError, ImportError):
            return False


def who(backend: str, backends: Backends, also_guilty: Sequence[str]) -> str:
    """The key's first part: the library, or the backend whose own code is at fault.

    ``also_guilty``: other backends blamed for the same op and mechanism on the same case.
    """
    lib = backends.library(backend)
    same_lib = [b for b in also_guilty if b != backend and backends.library(b) == lib]
    if backends.is_compiled(backend):
        eager_too = any(not backends.is_compiled(b) for b in same_lib)
        return lib if eager_too else backend
    if len(backends.eager_of(lib)) <= 1:
        return lib
    return lib if same_lib else backend


def key_parts(api: str, symptom: str, message: str, details: Mapping[str, Any],
              severity: str | None = None, case: Any = None) -> tuple[str, str]:
    """(op part, mechanism part) of a key, families applied."""
    op = op_name(api)
    mech = mechanism(symptom, message, details, severity, case)
    state = details.get("crash_state")
    if symptom == "crash" and isinstance(state, str) and state:
        return f"at:{state_slug(state)}", mech
    for fam in families():
        if fam.matches(op, mech, case):
            return fam.name, fam.label
    if has_empty_input(case) and mech in ("wrong-result", "special-value", "nan-propagation",
                                          "inconsistency", "shape"):
        mech = f"empty-input-{mech}"
    return op, mech


def root_cause_key(finding: Any, case: Any, backends: Backends,
                   case_findings: Sequence[Any] = ()) -> str:
    """The root-cause key of ``finding`` on ``case``; ``case_findings``: every finding
    of the same case (the other backends it blames decide the ``who`` part)."""
    details = dict(finding.details)
    op, mech = key_parts(finding.api, finding.symptom, finding.message, details, case=case)
    also = [f.guilty_backend for f in case_findings
            if f.guilty_backend and f.guilty_backend != finding.guilty_backend
            and key_parts(f.api, f.symptom, f.message, dict(f.details), case=case)
            == (op, mech)]
    return f"{who(finding.guilty_backend, backends, also)}/{op}/{mech}"


def stored_root_cause(guilty_backend: str, api: str, symptom: str, message: str,
                      details: Mapping[str, Any], severity: str | None = None) -> str:
    """A key for a bug stored before keys existed: no case and no sibling findings, so
    the backend's library names it (modes of one library merge)."""
    op, mech = key_parts(api, symptom, message, details, severity)
    lib = Backends({}, {}).library(guilty_backend)
    return f"{lib}/{op}/{mech}"
