"""The train kind: one SGD step of a model (``cases/train.py``).

Its bugs are filed like model bugs (the model's files beside the reproducers, the
localized layer kind as the label) with the training step in front. Reduction is the
graph kind's, applied to the model underneath (the cotangent seed stays). Reproducers
build the model from its training-form lowering (the exact code the worker ran, with
the weights from ``model.npz``) inside the differentiated function and check the
gradients the way the finding was judged, as the grad kind's reproducers do
(``kinds/grad.gradient_checks``): the float64 directional derivative against finite
differences of the float64 model, the gradients in the model's dtype against the float64
gradients the reference libraries agreed on, the gradients' shapes, or that the step runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dlfuzz.cases import CaseKind, Expectation, Finding, Outcome, TrainCase
from dlfuzz.cases.kind import Reduction, TriageTools
from dlfuzz.kinds.grad import COMMON, gradient_checks, gradient_expectation
from dlfuzz.kinds.graph import GraphKind
from dlfuzz.kinds.graph_repro import INLINE_LIMIT
from dlfuzz.kinds.report_html import described_case, table
from dlfuzz.triage.repro import _values, script_head

_GRAPH = GraphKind()


class TrainKind(CaseKind):
    name = "train"
    outputs_are = "gradient"

    def output_modes(self, case: TrainCase) -> dict[int, str]:
        """The self-check vector (the last output) is each backend's own: not compared."""
        return {len(case.gradient_shapes()) + 1 + len(case.trained): "skip"}

    def describe(self, case: TrainCase) -> dict[str, Any]:
        return {**_GRAPH.describe(case.base), "kind": self.name, "seed": case.seed,
                "trained": list(case.trained), "wrt": [f"x{i}" for i in case.wrt]}

    def write_files(self, folder: Path, case: TrainCase) -> None:
        _GRAPH.write_files(folder, case.base)

    def title(self, finding: Finding, case: TrainCase) -> str:
        what = "wrong gradient" if finding.symptom == "gradient" else \
            f"{finding.symptom} in the backward"
        title = f"{what} in {finding.guilty_backend or 'unknown'}: {finding.api} (training step)"
        if finding.api != case.api:
            title += f" (found from {case.api})"
        return title

    def issue_case(self, case: TrainCase, library: str) -> str:
        wrt = [f"{len(case.trained)} weight(s)"] * bool(case.trained) + \
            [", ".join(f"x{i}" for i in case.wrt)] * bool(case.wrt)
        return (f"{_GRAPH.issue_case(case.base, library)} One training step: the model's "
                "outputs weighted by a cotangent (the loss), differentiated with respect to "
                f"{' and '.join(wrt)}.")

    def expectation(self, finding: Finding, case: TrainCase, outcomes: dict[str, Outcome],
                    tools: TriageTools) -> Expectation:
        return gradient_expectation(finding, case, outcomes, tools)

    def reproducer(self, backend: Any, case: TrainCase, expectation: Expectation, title: str,
                   version: str = "") -> str | None:
        if not backend.repro_gradient() or not backend.lowering:
            return None
        return reproducer(backend, case, expectation, title, version)

    def reduction(self, case: TrainCase, finding: Finding, tools: TriageTools) -> Reduction:
        """The graph kind's passes on the model underneath; candidates stay training steps
        of something to train."""
        inner = _GRAPH.reduction(case.base, finding, tools)

        def wrapped(step: Any) -> Any:
            def run(c: TrainCase) -> Iterator[TrainCase]:
                for smaller in step(c.base):
                    candidate = c.with_base(smaller)
                    if smaller.graph.dtype == c.graph.dtype and (candidate.trained
                                                                 or candidate.wrt):
                        yield candidate
            return run

        return Reduction({name: wrapped(step) for name, step in inner.passes.items()},
                         lambda c: inner.weight(c.base) if inner.weight else ())

    def relabel(self, case: TrainCase, label: str) -> TrainCase:
        return case.relabelled(label)

    def rounding_nudged(self, case: TrainCase, eps: float, rng: Any) -> TrainCase:
        return case.with_base(_GRAPH.rounding_nudged(case.base, eps, rng))

    def report_section(self, folder: Path, meta: dict[str, Any]) -> str:
        """The model (as the graph kind shows it), then what was trained and how."""
        described = described_case(folder) or {}
        details = meta.get("details", {})
        rows: list[tuple[str, Any]] = [
            ("trained weights", ", ".join(described.get("trained", []))),
            ("inputs differentiated", ", ".join(described.get("wrt", []))),
            ("cotangent seed", described.get("seed", "")),
            ("judged by", details.get("judged_by", ""))]
        return "<h3>Training step</h3>" + table(rows) + _GRAPH.report_section(folder, meta)


def reproducer(backend: Any, case: TrainCase, expectation: Expectation, title: str,
               version: str = "") -> str:
    """The training-step reproducer for ``backend`` (see the module doc)."""
    from dlfuzz.ir.lower import emit
    from dlfuzz.ir.render import to_text

    mode = expectation.note.partition(":")[0] if expectation.kind == "gradient" else ""
    # The finite-difference check is all float64: the float64 program of the model.
    graph = case.graph.with_dtype("float64") if expectation.kind == "gradient" \
        else case.graph
    source = emit(backend.lowering, graph, train=True)
    names = [k for k, _ in case.weights]
    trained = set(case.trained)
    wrt = [i for i, k in enumerate(names) if k in trained] + [len(names) + i
                                                              for i in case.wrt]
    target = (f"a training step of one {case.graph.nodes[0].op} layer"
              if len(case.graph.nodes) == 1 else f"a training step of {case.api}")
    lines = script_head(backend, title, [
        f"Backend: {backend.name}{' ' + version if version else ''}. Needs only that library "
        "(and NumPy); the weights are in model.npz beside this file.",
        "One training step: the model's outputs weighted by a cotangent (the loss), its",
        "gradient with respect to the trained weights and floating inputs (INPUTS[WRT]).",
        "Exit status: 1 while the bug is present, 0 once it is fixed; the last line printed",
        "is the verdict.",
        "",
        "The model (dlfuzz IR):",
        *("    " + line for line in to_text(case.graph).splitlines())],
        "", ("import numpy as np",))
    lines += [backend.repro_gradient().strip(), "", COMMON.strip(), "",
              "# ---- the model, as dlfuzz ran it (training form) " + "-" * 24,
              source.rstrip(), "# " + "-" * 72, "",
              "_NPZ = np.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "
              "'model.npz'))",
              f"NAMES = {names!r}  # the weights, in order",
              "WEIGHTS = [_tensor(_NPZ['w/' + k]) for k in NAMES]"]
    for i, t in enumerate(case.tensors):
        if t.size <= INLINE_LIMIT:
            lines.append(f"x{i} = _tensor(np.array({_values(t.to_numpy())}, "
                         f"dtype=np.{t.dtype}).reshape({t.shape!r}))")
        else:
            lines.append(f"x{i} = _tensor(_NPZ['x{i}'])")
    xs = ", ".join(f"x{i}" for i in range(len(case.tensors)))
    lines += [
        f"INPUTS = WEIGHTS + [{xs}]  # the weights, then the model's inputs",
        f"WRT = {wrt!r}  # the trained weights and floating inputs",
        f"SEED = {case.seed}  # draws the cotangents and the direction",
        "STRUCTURE = {}",
        "",
        "",
        "def f(*ps):",
        '    """The model built from INPUTS with the differentiated ones replaced by ps;'
        ' its floating outputs."""',
        "    x = list(INPUTS)",
        "    for i, p in zip(WRT, ps):",
        "        x[i] = p",
        "    model = build(dict(zip(NAMES, x[:len(NAMES)])))",
        "    return [o for o in _flat(model(*x[len(NAMES):])) if _floating(o)]",
        "",
        "",
        f"signal.alarm({int(expectation.timeout_s)})  # a hang ends the script",
    ]
    lines += gradient_checks(expectation, target, mode, backend.repro_wait)
    return "\n".join(lines).rstrip() + "\n"

