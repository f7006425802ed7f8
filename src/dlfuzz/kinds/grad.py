"""The grad kind: the backward pass of one API call (``cases/grad.py``).

Its bugs are filed as the API's (title, issue text) with the gradient in front: what was
differentiated, with respect to which inputs. Reduction is the api kind's, applied to the
call underneath (the cotangent seed stays, so the reduced case asks for the same kind of
gradient). Reproducers compute the gradient with the library alone (``_vjp``, the
backend's ``repro_gradient``) and check it the way the finding was judged:

* a self-check finding (``judged_by`` finite differences): the float64 directional
  derivative of the library's reverse (or forward) mode against central finite
  differences of its own forward pass, with the oracle's allowance;
* a cross-library finding: the gradient in the case's dtype against the float64 gradient
  the reference libraries agreed on, element by element (the api kind's values check);
* a gradient of the wrong shape: each gradient must have its input's shape;
* a crash: the gradient must simply be computed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from dlfuzz.backends.base import FD_STEP
from dlfuzz.cases import CaseKind, Expectation, Finding, GradCase, Outcome
from dlfuzz.cases.grad import GRAD_DTYPES
from dlfuzz.cases.kind import Reduction, TriageTools
from dlfuzz.kinds.api import ApiKind, own_target
from dlfuzz.kinds.expectation import symptom_expectation
from dlfuzz.kinds.report_html import described_case, table
from dlfuzz.oracles import gradient as rules
from dlfuzz.triage.repro import _values, call_source, literal, script_head, waits_for_result
from dlfuzz.triage.repro_verdict import values_check

_API = ApiKind()


class GradKind(CaseKind):
    name = "grad"
    outputs_are = "gradient"

    def output_modes(self, case: GradCase) -> dict[int, str]:
        """The self-check vector (the last output) is each backend's own: not compared."""
        return {len(case.wrt): "skip"}

    def describe(self, case: GradCase) -> dict[str, Any]:
        return {**_API.describe(case.base), "kind": self.name, "seed": case.seed,
                "wrt": [f"x{i}" for i in case.wrt]}

    def title(self, finding: Finding, case: GradCase) -> str:
        return (f"wrong gradient in {finding.guilty_backend or 'unknown'}: "
                f"{own_target(case.base, finding.guilty_backend)}"
                if finding.symptom == "gradient" else
                f"{finding.symptom} in the backward of {finding.guilty_backend or 'unknown'}: "
                f"{own_target(case.base, finding.guilty_backend)}")

    def issue_case(self, case: GradCase, library: str) -> str:
        wrt = ", ".join(f"x{i}" for i in case.wrt)
        return (f"{_API.issue_case(case.base, library)} Gradient of the outputs weighted by "
                f"a cotangent, with respect to {wrt}.")

    def expectation(self, finding: Finding, case: GradCase, outcomes: dict[str, Outcome],
                    tools: TriageTools) -> Expectation:
        return gradient_expectation(finding, case, outcomes, tools)

    def reproducer(self, backend: Any, case: GradCase, expectation: Expectation, title: str,
                   version: str = "") -> str | None:
        if not backend.repro_gradient():
            return None
        return reproducer(backend, case, expectation, title, version)

    def report_section(self, folder: Path, meta: dict[str, Any]) -> str:
        """The api kind's calls, then what was differentiated and how."""
        described = described_case(folder)
        if described is None:
            return ""
        rows: list[tuple[str, Any]] = [
            ("with respect to", ", ".join(described.get("wrt", []))),
            ("cotangent seed", described.get("seed", "")),
            ("judged by", meta.get("details", {}).get("judged_by", ""))]
        return (_API.report_section(folder, meta)
                + "<h3>Gradient</h3>" + table(rows))

    def reduction(self, case: GradCase, finding: Finding, tools: TriageTools) -> Reduction:
        """The api kind's passes on the call underneath; candidates stay gradient cases
        (a pass that would make an input half precision is dropped)."""
        inner = _API.reduction(case.base, finding, tools)

        def wrapped(step: Any) -> Any:
            def run(c: GradCase) -> Iterator[GradCase]:
                for smaller in step(c.base):
                    if any(t.dtype in GRAD_DTYPES for t in smaller.tensors):
                        yield c.with_base(smaller)
            return run

        return Reduction({name: wrapped(step) for name, step in inner.passes.items()})


def gradient_expectation(finding: Finding, case: Any, outcomes: dict[str, Outcome],
                         tools: TriageTools) -> Expectation:
    """What a gradient finding's reproducers check (a gradient case's or a training
    step's): the shapes, finite differences in the finding's mode, the gradients against
    the agreed float64 ones (the leading outputs, ``case.gradient_shapes()``), or that
    the backward pass runs."""
    if finding.symptom == "shape":
        return Expectation("gradient-shape", note=finding.message)
    if finding.symptom != "gradient":
        return Expectation("runs", note=finding.message)
    if str(finding.detail("judged_by", "")).startswith("finite"):
        mode = str(finding.detail("mode", "reverse"))
        return Expectation("gradient", note=f"{mode}: {finding.message}")
    values = symptom_expectation(replace(finding, symptom="numeric", oracle="gradient"),
                                 case, outcomes, tools.judge,
                                 str(finding.detail("checked_reference", "")))
    if values.kind != "values":
        return values
    n = len(case.gradient_shapes())
    return replace(values, expected=values.expected[:n], allowed=values.allowed[:n])


def reproducer(backend: Any, case: GradCase, expectation: Expectation, title: str,
               version: str = "") -> str:
    """The gradient reproducer for ``backend`` (see the module doc)."""
    call = case.call_for(backend.library)
    if call is None:
        raise ValueError(f"case has no call for {backend.library}")
    expr, extra = call_source(call, backend)
    names = [f"x{i}" for i in range(len(case.tensors))]
    target = call.target.rpartition(".")[2] if call.target.startswith("dlfuzz.") \
        else call.target
    mode = expectation.note.partition(":")[0] if expectation.kind == "gradient" else ""
    lines = script_head(backend, title, [
        f"Backend: {backend.name}{' ' + version if version else ''}. Needs only that library "
        "(and NumPy, which it depends on).",
        "The gradient of the call's floating outputs, weighted by a cotangent, with respect",
        f"to {', '.join(f'x{i}' for i in case.wrt)}. Exit status: 1 while the bug is present, "
        "0 once it is fixed;",
        "the last line printed is the verdict."], extra, ("import numpy as np",))
    lines += [backend.repro_gradient().strip(), "", COMMON.strip(), ""]
    for i, t in enumerate(case.tensors):
        lines.append(f"x{i} = {backend.repro_tensor(_values(t.to_numpy()), t.dtype, t.shape)}")
    unpack = ", ".join(names) + ("," if len(names) == 1 else "")
    lines += [
        f"INPUTS = [{', '.join(names)}]",
        f"WRT = {list(case.wrt)!r}  # the inputs differentiated",
        f"SEED = {case.seed}  # draws the cotangents and the direction",
        f"STILL = {list(case.still)!r}  # outputs without a cotangent (not compared elementwise)",
        f"STRUCTURE = {dict(case.structure)!r}  # inputs moved within their structure",
        "",
        "",
        "def f(*ps):",
        '    """The call with the differentiated inputs replaced; its floating outputs."""',
        "    x = list(INPUTS)",
        "    for i, p in zip(WRT, ps):",
        "        x[i] = p",
        f"    {unpack} = x",
        f"    outs = _flat({expr})",
        "    return [o for k, o in enumerate(outs) if k not in STILL and _floating(o)]",
        "",
        "",
        f"signal.alarm({int(expectation.timeout_s)})  # a hang ends the script",
    ]
    lines += gradient_checks(expectation, target, mode, backend.repro_wait)
    return "\n".join(lines).rstrip() + "\n"


def gradient_checks(expectation: Expectation, target: str, mode: str, wait: str = ""
                    ) -> list[str]:
    """The end of a gradient reproducer: the check ``expectation`` asks for, given ``f``,
    ``INPUTS``, ``WRT``, the library helpers and ``COMMON`` (``target`` names what was
    differentiated, ``mode`` the self-check's mode, ``wait`` the backend's statement that
    waits for ``result`` where it dispatches asynchronously: ``Backend.repro_wait``)."""
    if expectation.kind == "gradient":
        return fd_check(target, mode)
    if expectation.kind == "gradient-shape":
        return [
            "primals = [INPUTS[i] for i in WRT]",
            "grads = _vjp(f, primals, _cotangents(f(*primals)))",
            "for i, g in zip(WRT, grads):",
            "    got, want = tuple(_numpy(g).shape), tuple(_numpy(INPUTS[i]).shape)",
            '    print(f"gradient for x{i}: shape {list(got)}, input shape {list(want)}")',
            "    if got != want:",
            f'        _verdict(1, f"BUG present: the gradient of {target} for x{{i}} has shape '
            '{list(got)}, not the input\'s {list(want)}")',
            f'_verdict(0, "OK: every gradient of {target} has its input\'s shape")',
        ]
    if expectation.kind == "values":
        return [
            "primals = [INPUTS[i] for i in WRT]",
            "cots = _cotangents(f(*primals))",
            f"# {expectation.note}" if expectation.note else "# the gradient's reference",
            "result = _vjp(f, primals, cots)",
            values_check(f"gradient of {target}", expectation.expected, expectation.allowed,
                         literal),
        ]
    return [
        "primals = [INPUTS[i] for i in WRT]",
        "try:",
        "    result = _vjp(f, primals, _cotangents(f(*primals)))",
        *waits_for_result(wait),
        "except Exception as exc:  # the bug: the gradient must be computed",
        f'    _verdict(1, f"BUG present: the gradient of {target} raised '
        '{type(exc).__name__}: {exc}")',
        f'_verdict(0, "OK: the gradient of {target} was computed")',
    ]


def fd_check(target: str, mode: str) -> list[str]:
    """The float64 check of reverse (or forward) mode against finite differences."""
    measured = "_forward_mode()" if mode == "forward" else "_reverse_mode()"
    return [
        "wide = [_tensor(_numpy(INPUTS[i]).astype(np.float64)) for i in WRT]",
        "cots = _cotangents(f(*wide))",
        "vs = [_structured(_grid(2, i, tuple(_numpy(INPUTS[i]).shape)), STRUCTURE.get(i, ''))",
        "      for i in WRT]",
        "",
        "",
        "def _loss(t):",
        "    moved = [_tensor(_numpy(w) + t * v) for w, v in zip(wide, vs)]",
        "    return sum(float(np.sum(_numpy(o).astype(np.float64) * c))",
        "               for o, c in zip(f(*moved), cots))",
        "",
        "",
        "def _reverse_mode():",
        "    grads = _vjp(f, wide, cots)",
        "    terms = [_numpy(g).astype(np.float64).reshape(v.shape) * v for g, v in zip(grads, vs)]",
        "    return sum(float(np.sum(t)) for t in terms), sum(float(np.sum(np.abs(t))) for t in terms)",
        "",
        "",
        "def _forward_mode():",
        "    tangents = _jvp(f, wide, vs)",
        "    terms = [_numpy(t).astype(np.float64) * c for t, c in zip(tangents, cots)]",
        "    return sum(float(np.sum(t)) for t in terms), sum(float(np.sum(np.abs(t))) for t in terms)",
        "",
        "",
        f"derivative, scale = {measured}",
        f"step = {FD_STEP!r} * max(1.0, max(float(np.max(np.abs(_numpy(w)))) "
        "for w in wide if _numpy(w).size) if any(_numpy(w).size for w in wide) else 1.0)",
        "at = {t: _loss(t * step) for t in (-2, -1, 1, 2)}",
        "value = sum(float(np.sum(np.abs(_numpy(o).astype(np.float64) * c)))"
        " for o, c in zip(f(*wide), cots))",
        "fd = (at[1] - at[-1]) / (2 * step)",
        "fd_wide = (at[2] - at[-2]) / (4 * step)",
        f"allowed = ({rules.FD_RTOL!r} * max(scale, abs(fd)) + {rules.SPREAD_FACTOR!r} * "
        f"abs(fd - fd_wide) + {rules.ROUNDING_FACTOR!r} * 2.0 ** -52 * value / step)",
        f'print(f"{mode or "reverse"}-mode directional derivative (float64): {{derivative!r}}")',
        'print(f"central finite differences of the forward pass:  {fd!r} (allowed error '
        '{allowed:.3g})")',
        "if not abs(derivative - fd) <= allowed:",
        f'    _verdict(1, f"BUG present: the {mode or "reverse"}-mode gradient of {target} '
        'is off finite differences: {derivative!r} vs {fd!r}")',
        f'_verdict(0, "OK: the {mode or "reverse"}-mode gradient of {target} matches finite '
        'differences")',
    ]


COMMON = '''
GRID = [-2.0, -1.5, -1.0, -0.75, -0.5, -0.25, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0]


def _mix32(h):
    h = h ^ (h >> 16)
    h = (h * 0x85EBCA6B) & 0xFFFFFFFF
    h = h ^ (h >> 13)
    h = (h * 0xC2B2AE35) & 0xFFFFFFFF
    return h ^ (h >> 16)


def _grid(salt, index, shape):
    """The values dlfuzz drew (exactly representable in every floating dtype): a hash
    of (SEED, salt, index, shape) and each element's position picks one of GRID."""
    key = 0
    for part in (SEED & 0xFFFFFFFF, salt, index, len(shape), *shape):
        key = _mix32(((key ^ (part & 0xFFFFFFFF)) + 0x9E3779B9) & 0xFFFFFFFF)
    position = np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.uint64)
    hashed = _mix32((np.uint64(key) + position * np.uint64(0x9E3779B9)) & np.uint64(0xFFFFFFFF))
    return np.asarray(GRID)[(hashed % np.uint64(len(GRID))).astype(np.int64)].reshape(shape)


def _cotangents(outs):
    """One cotangent per floating output, in its dtype."""
    arrays = [_numpy(o) for o in outs]
    return [_grid(1, k, a.shape).astype(a.dtype) for k, a in enumerate(arrays)]


def _structured(a, how):
    """The direction kept in the input's structure (a triangle, or symmetric)."""
    if not how or a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        return a
    lower = how.endswith("lower")
    if not how.startswith("symmetric"):
        return np.tril(a) if lower else np.triu(a)
    strict = np.tril(a, -1) if lower else np.triu(a, 1)
    return strict + np.swapaxes(strict, -1, -2) + a * np.eye(a.shape[-1])


def _flat(v):
    if isinstance(v, (list, tuple)):
        return [x for item in v for x in _flat(item)]
    return [] if v is None else [v]
'''
