"""The api kind: one input for one API, called in every library.

Reproducers are the one call with its inputs as literals (``triage.repro``); reduction
shrinks tensors, simplifies values and drops optional parameters through the engine's
``rebuild`` hook (``triage.reduce``). A boundary finding is about the API's own library
(a counterpart in another library may accept what the API must reject).
"""

from __future__ import annotations

from collections.abc import Iterator
from html import escape
from pathlib import Path
from typing import Any

from dlfuzz.cases import ApiCase, CaseKind, Expectation, Finding, Outcome, Ref, Tensor
from dlfuzz.cases.kind import Reduction, TriageTools
from dlfuzz.kinds.expectation import symptom_expectation
from dlfuzz.kinds.finite_first import finite_variants
from dlfuzz.kinds.report_html import described_case, table
from dlfuzz.libraries import of_backend
from dlfuzz.triage.reduce import DEFAULT_PASSES, drop_params
from dlfuzz.triage.repro import reproducer


def finite_first(case: ApiCase) -> Iterator[ApiCase]:
    """The case with NaN/inf input elements made finite (``kinds.finite_first``)."""
    arrays = [t.to_numpy() for t in case.tensors]
    for variant in finite_variants(arrays):
        yield case.with_tensors(tuple(Tensor.from_numpy(a) for a in variant))


class ApiKind(CaseKind):
    name = "api"

    def output_modes(self, case: Any) -> dict[int, str]:
        """The ``compare`` entries of the API's built-in spec (eigenvalues, sets, ...)."""
        from dlfuzz.engines.api.libspecs import compare_modes

        return compare_modes(str(getattr(case, "api", "")))

    def describe(self, case: ApiCase) -> dict[str, Any]:
        return {
            "api": case.api,
            "params": {k: repr(v) for k, v in case.params},
            "expect": case.expect,
            "tensors": [{"dtype": t.dtype, "shape": list(t.shape)} for t in case.tensors],
            "calls": {lib: {"target": c.target, "args": repr(c.args),
                            "kwargs": repr(c.kwargs)} for lib, c in case.calls},
        }

    def title(self, finding: Finding, case: ApiCase) -> str:
        """``<symptom> in <backend>: <the guilty library's own call>``: a tf bug found
        from ``torch.erf`` is titled with the tf function the case called, never with
        torch's name."""
        return f"{finding.symptom} in {finding.guilty_backend or 'unknown'}: " \
            f"{own_target(case, finding.guilty_backend)}"

    def issue_case(self, case: ApiCase, library: str) -> str:
        call = case.call_for(library)
        inputs = ", ".join(f"x{i}: {t.dtype}{list(t.shape)}" for i, t in enumerate(case.tensors))
        if call is None:
            return super().issue_case(case, library)
        kwargs = ", ".join(f"{k}={_source(v)}" for k, v in call.kwargs)
        args = ", ".join([_source(a) for a in call.args] + ([kwargs] if kwargs else []))
        return f"Call: `{call.target}({args})`" + (f" with {inputs}." if inputs else ".")

    def involved_backends(self, finding: Finding, case: ApiCase,
                          backends: dict[str, Any]) -> dict[str, Any]:
        if finding.symptom == "boundary" and case.calls:
            # Only the API's own library must reject the input; a counterpart may not.
            own = case.calls[0][0]
            return {b: be for b, be in backends.items() if be.library == own}
        return dict(backends)

    def expectation(self, finding: Finding, case: ApiCase, outcomes: dict[str, Outcome],
                    tools: TriageTools) -> Expectation:
        return symptom_expectation(finding, case, outcomes, tools.judge)

    def reproducer(self, backend: Any, case: ApiCase, expectation: Expectation, title: str,
                   version: str = "") -> str:
        return reproducer(backend, case, expectation, title, version)

    def reduction(self, case: ApiCase, finding: Finding, tools: TriageTools) -> Reduction:
        """Finite inputs first (a wrong result on ordinary numbers is the better report),
        then fewer parameters, smaller tensors, simpler values."""
        return Reduction({"finite_first": finite_first, "drop_params": drop_params(tools.rebuild),
                          **DEFAULT_PASSES})

    def report_section(self, folder: Path, meta: dict[str, Any]) -> str:
        """The call per library (target and arguments) and the input's expectation."""
        described = described_case(folder)
        if described is None:
            return ""
        rows: list[tuple[str, Any]] = [
            (lib, f"{c.get('target')}(*{c.get('args')}, **dict({c.get('kwargs')}))")
            for lib, c in described.get("calls", {}).items()]
        rows.append(("expect", described.get("expect", "")))
        return f"<h3>Calls of {escape(str(described.get('api', '')))}</h3>" + table(rows)


def _source(value: Any) -> str:
    """An argument as the call's source would spell it (input ``i`` as ``xi``)."""
    if isinstance(value, Ref):
        return f"x{value.index}"
    if isinstance(value, tuple):
        inner = ", ".join(_source(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(_source(v) for v in value) + "]"
    return repr(value)


def own_target(case: ApiCase, backend: str) -> str:
    """The function ``backend``'s library calls for ``case`` (its own API name), or the
    case's API when that library has no call of its own in the case (a plugin backend)."""
    record = of_backend(backend)
    call = case.call_for(record.name) if record is not None else None
    if call is None or call.target.startswith("dlfuzz."):
        # No own call, or a dlfuzz-written composition: name what it stands for.
        return case.api if call is None else f"{case.api} (dlfuzz composition)"
    return call.target
