"""The CaseKind protocol: everything triage, bug folders, oracles and the report need to
know about one kind of case (api, graph, program), declared in one place.

Each hook below has a docstring and a working default, in the spirit of pytest's
``hookspec.py``: a new kind overrides what it does differently and inherits the rest.
The kinds themselves live in ``dlfuzz.kinds`` and are found through the ``CASE_KINDS``
registry (``dlfuzz.registry``) by the case's ``kind`` field, lazily, so this module (and
everything below triage) imports no kind, no engine and no DL library.

The values the hooks exchange (``Expectation``, ``Reduction``, ``TriageTools``) are
defined here because they are the protocol's vocabulary.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dlfuzz.cases.core import Finding, Outcome
from dlfuzz.errors import UsageError

# A reduction pass: simpler candidates of a case (each must weigh less to be tried).
Pass = Callable[[Any], Iterator[Any]]
# Runs cases on some backends and applies every oracle: per case (outcomes, findings).
Checker = Callable[[Sequence[Any], Sequence[str]],
                   list[tuple[dict[str, Outcome], list[Finding]]]]


@dataclass(frozen=True)
class Expectation:
    """What a reproducer checks, so that it exits 1 while the bug is present.

    ``kind`` is ``"values"`` (outputs within ``allowed`` of ``expected``), ``"runs"``
    (no exception, no crash, no hang), ``"survives"`` (no crash and no hang: returning
    and raising an exception are both the fix of a crash or a hang), ``"rejects"`` (the library
    must raise) or ``"repeatable"`` (re-runs give the first run's result); a kind may add
    its own (the grad kind: ``"gradient"``, autodiff against finite differences, and
    ``"gradient-shape"``).
    """

    kind: str  # "values" | "runs" | "rejects" | "repeatable" | a kind's own
    expected: tuple[np.ndarray, ...] = ()
    allowed: tuple[np.ndarray, ...] = ()
    note: str = ""
    timeout_s: int = 60


@dataclass(frozen=True)
class Reduction:
    """How a kind reduces a case: named passes (tried in order, as in Hypothesis'
    shrinker) and the weight candidates must lower (``None``: the API weight)."""

    passes: dict[str, Pass] = field(default_factory=dict)
    weight: Callable[[Any], tuple[Any, ...]] | None = None


@dataclass(frozen=True)
class TriageTools:
    """What triage offers a kind's hooks for one finding.

    ``judge`` (an ``oracles.reference.Judge``) computes float64 references and names the
    backends trusted for them; ``check`` runs cases on backends and applies the oracles
    (how a kind asks for probe values of a model); ``rebuild`` is the engine's hook that
    remakes an API case from fewer parameters (``None`` when the engine has none).
    """

    judge: Any = None
    check: Checker | None = None
    rebuild: Callable[..., Any] | None = None


class CaseKind:
    """The hooks of one case kind. Subclass it, set ``name``, override what differs."""

    name: str = ""
    # What a values check's outputs are, as an issue title names them: "" for the
    # call's own results, "gradient" for a backward pass's.
    outputs_are: str = ""

    # ---- bug folders -------------------------------------------------------------------

    def describe(self, case: Any) -> dict[str, Any]:
        """A readable account of the case for ``case.json`` (the pickle beside it is the
        exact case). Default: its API label and kind name."""
        return {"api": case.api, "kind": self.name}

    def write_files(self, folder: Path, case: Any) -> None:
        """Write the kind's own files into a bug folder being staged (a model's weights
        and graph, a program's source). Default: nothing beyond the generic files."""

    def title(self, finding: Finding, case: Any) -> str:
        """The bug's one-line title. Default: ``<symptom> in <backend>: <api>``."""
        return f"{finding.symptom} in {finding.guilty_backend or 'unknown'}: {finding.api}"

    def involved_backends(self, finding: Finding, case: Any,
                          backends: dict[str, Any]) -> dict[str, Any]:
        """Of the backends that ran the case (name -> Backend), those the bug folder gets
        a reproducer for. Default: all of them."""
        return dict(backends)

    def issue_case(self, case: Any, library: str) -> str:
        """What was run, in markdown, for the bug's ``issue.md`` (``library``: the guilty
        one, whose own call must be named). Default: the API and the inputs' dtypes and
        shapes."""
        inputs = ", ".join(f"{t.dtype}{list(t.shape)}" for t in getattr(case, "tensors", ()))
        return f"Case: `{case.api}`" + (f" on inputs {inputs}" if inputs else "") + "."

    # ---- reproducers -------------------------------------------------------------------

    def expectation(self, finding: Finding, case: Any, outcomes: dict[str, Outcome],
                    tools: TriageTools) -> Expectation:
        """What the reproducers of this finding check. Default: that the case runs."""
        return Expectation("runs", note=finding.message)

    def reproducer(self, backend: Any, case: Any, expectation: Expectation, title: str,
                   version: str = "") -> str | None:
        """A standalone script that shows the bug on ``backend`` (exit 1 while present,
        0 once fixed). Default: ``None``, no reproducer for this kind."""
        return None

    # ---- reduction ---------------------------------------------------------------------

    def reduction(self, case: Any, finding: Finding, tools: TriageTools) -> Reduction:
        """The passes and weight that reduce ``case`` while ``finding``'s signature holds.
        Default: no passes (the case is kept as found)."""
        return Reduction()

    # ---- oracles: localization ---------------------------------------------------------

    def localizes_values(self, case: Any) -> bool:
        """Whether a numeric finding on this case is localized to a part of it (a layer
        of a model, by probe runs and model prefixes). Default: False."""
        return False

    def localizes_failures(self, case: Any) -> bool:
        """Whether a status finding on this case is localized to the first part whose
        prefix fails alone. Default: False."""
        return False

    def relabel(self, case: Any, label: str) -> Any:
        """The case as its finding is filed once localized to a part called ``label``
        (the finding's ``api`` is the case's). Default: the case unchanged."""
        return case

    def numeric_details(self, outcomes: dict[str, Outcome], reference_outputs: Sequence[Any]
                        ) -> tuple[tuple[str, Any], ...]:
        """Extra details of a numeric finding, from the outcomes and the reference's
        outputs (a model's LEMON vote). Default: none."""
        return ()

    def rounding_nudged(self, case: Any, eps: float, rng: Any) -> Any:
        """``case`` (already upcast, its inputs nudged) with the roundings inside it moved
        by up to ``eps`` too, for the reference's sensitivity (``ir/rounding.py``).
        Default: the case unchanged (one call: its own rounding is the dtype's tolerance)."""
        return case

    def output_modes(self, case: Any) -> dict[int, str]:
        """Outputs of ``case`` not compared element by element: output index -> mode
        (``oracles/canonical.py``: sorted, set, skip-on-ties, residual, skip), such as an
        API's eigenvalues. Default: none, every output elementwise."""
        return {}

    # ---- report ------------------------------------------------------------------------

    def report_section(self, folder: Path, meta: dict[str, Any]) -> str:
        """HTML (every piece of text escaped) the report shows for a bug of this kind,
        from its folder and ``meta.json``. Default: nothing."""
        return ""


# Every hook a kind may override (the test of the registry checks each kind has them).
HOOKS: tuple[str, ...] = (
    "describe", "write_files", "title", "involved_backends", "issue_case", "expectation",
    "reproducer",
    "reduction", "localizes_values", "localizes_failures", "relabel", "numeric_details",
    "rounding_nudged", "output_modes", "report_section")

_INSTANCES: dict[str, CaseKind] = {}


def kind_named(name: str) -> CaseKind:
    """The (cached) kind registered as ``name`` in ``registry.CASE_KINDS``."""
    kind = _INSTANCES.get(name)
    if kind is None:
        from dlfuzz import registry  # registry imports only errors: no cycle

        cls = registry.load("case kind", name)
        if not (isinstance(cls, type) and issubclass(cls, CaseKind)):
            raise UsageError(f"case kind {name!r}: {cls!r} is not a CaseKind subclass; "
                             "derive it from dlfuzz.cases.kind.CaseKind")
        kind = _INSTANCES[name] = cls()
    return kind


def kind_of(case: Any) -> CaseKind:
    """The kind of ``case``, resolved from its ``kind`` field through the registry."""
    name = getattr(case, "kind", None)
    if not isinstance(name, str) or not name:
        raise UsageError(f"{type(case).__name__} has no 'kind' field naming its case kind; "
                         "give the case class a kind field registered in CASE_KINDS")
    return kind_named(name)
