"""The graph kind: one model (graph + weights) and one input set.

A bug folder holds the model beside the reproducers (weights and inputs, the graph as
text, dot and a loadable dlfuzz model file); each reproducer is the model lowered to one
library's own code (``graph_repro``). Reduction cuts, isolates and shrinks the model
(``graph_reduce``), isolating nodes with the values a backend the bug does not affect
computes for them. Numeric and status findings are localized to a layer, and a
localized finding is filed under that layer kind (LEMON's unit of a model bug).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from html import escape
from pathlib import Path
from typing import Any

import numpy as np

from dlfuzz.cases import CaseKind, Expectation, Finding, GraphCase, Outcome, Tensor
from dlfuzz.cases.kind import Reduction, TriageTools
from dlfuzz.ir.rounding import nudge_edges
from dlfuzz.kinds.expectation import symptom_expectation
from dlfuzz.kinds.graph_reduce import model_passes, model_weight
from dlfuzz.kinds.graph_repro import model_npz, model_reproducer
from dlfuzz.kinds.report_html import file_block, table
from dlfuzz.oracles.lemon_vote import lemon_details
from dlfuzz.store.artifacts import write_atomic


def write_model_files(folder: Path, case: GraphCase) -> None:
    """The model beside the reproducers: weights+inputs, graph as text, dot and JSON."""
    from dlfuzz.ir.model import Model
    from dlfuzz.ir.render import to_dot, to_text
    from dlfuzz.ir.serialize import save_model

    write_atomic(folder / "model.npz", model_npz(case))
    write_atomic(folder / "graph.txt", to_text(case.graph).encode())
    write_atomic(folder / "graph.dot", to_dot(case.graph).encode())
    # graph.json + graph.npz are a dlfuzz model file: `--seed-model <bug>/graph.json`
    # fuzzes onward from the reduced model, `dlfuzz.ir.serialize.load_model` reads it.
    save_model(Model(case.graph, {k: t.to_numpy() for k, t in case.weights}),
               folder / "graph.json")


def probe_values(tools: TriageTools, finding: Finding
                 ) -> Callable[[GraphCase], dict[str, np.ndarray] | None]:
    """Every value of a model on a backend the bug does not affect (for ``isolate``)."""
    judge, check = tools.judge, tools.check
    sound = finding.detail("localized_against") or next(
        (b for b in (judge.reference_backends if judge is not None else ())
         if b != finding.guilty_backend), "")

    def values(case: GraphCase) -> dict[str, np.ndarray] | None:
        if not sound or check is None:
            return None
        outcome = check([case.with_probe(True)], [sound])[0][0].get(sound)
        if outcome is None or not outcome.ok or len(outcome.outputs) != len(
                case.graph.nodes):
            return None
        found = {x: t.to_numpy() for x, t in zip(case.graph.input_names, case.tensors,
                                                 strict=True)}
        found.update({n.id: t.to_numpy() for n, t in zip(case.graph.nodes,
                                                          outcome.outputs, strict=True)})
        return found
    return values


class GraphKind(CaseKind):
    name = "graph"

    def describe(self, case: GraphCase) -> dict[str, Any]:
        return {"api": case.api, "kind": "model", "origin": dict(case.origin),
                "dtype": case.graph.dtype, "nodes": [n.op for n in case.graph.nodes],
                "inputs": [{"dtype": t.dtype, "shape": list(t.shape)} for t in case.tensors],
                "weights": {k: list(t.shape) for k, t in case.weights}}

    def write_files(self, folder: Path, case: GraphCase) -> None:
        write_model_files(folder, case)

    def title(self, finding: Finding, case: GraphCase) -> str:
        title = super().title(finding, case)
        if finding.api != case.api:
            title += f" (found from {case.api})"
        return title

    def issue_case(self, case: GraphCase, library: str) -> str:
        ops = ", ".join(n.op for n in case.graph.nodes[:12])
        more = " …" if len(case.graph.nodes) > 12 else ""
        inputs = ", ".join(f"{t.dtype}{list(t.shape)}" for t in case.tensors)
        return (f"Model of {len(case.graph.nodes)} layers ({ops}{more}) on inputs {inputs}; "
                "the reproducer below builds it with the library's own layers "
                "(weights in model.npz beside it).")

    def expectation(self, finding: Finding, case: GraphCase, outcomes: dict[str, Outcome],
                    tools: TriageTools) -> Expectation:
        return symptom_expectation(finding, case, outcomes, tools.judge)

    def reproducer(self, backend: Any, case: GraphCase, expectation: Expectation, title: str,
                   version: str = "") -> str:
        return model_reproducer(backend, case, expectation, title, version)

    def reduction(self, case: GraphCase, finding: Finding, tools: TriageTools) -> Reduction:
        return Reduction(model_passes(probe_values(tools, finding)), model_weight)

    def localizes_values(self, case: GraphCase) -> bool:
        return True

    def localizes_failures(self, case: GraphCase) -> bool:
        # A probe run is itself a localization; a one-node model has no smaller prefix.
        return not case.probe and len(case.graph.nodes) >= 2

    def relabel(self, case: GraphCase, label: str) -> GraphCase:
        return replace(case, api=label)

    def numeric_details(self, outcomes: dict[str, Outcome], reference_outputs: Sequence[Any]
                        ) -> tuple[tuple[str, Any], ...]:
        return lemon_details(outcomes, reference_outputs)

    def rounding_nudged(self, case: GraphCase, eps: float, rng: Any) -> GraphCase:
        """Each edge out of a rounding layer moved by up to ``eps``: what a fused program
        may round differently per consumer (``ir/rounding.py``)."""
        weights = {k: t.to_numpy() for k, t in case.weights}
        graph, nudged = nudge_edges(case.graph, weights, eps, rng)
        if graph is case.graph:
            return case
        return replace(case, graph=graph, weights=tuple(
            (k, Tensor.from_numpy(v)) for k, v in nudged.items()))

    def report_section(self, folder: Path, meta: dict[str, Any]) -> str:
        """The (reduced) model as text, where it was localized, and its model files."""
        details = meta.get("details") or {}
        rows = [(k, details[k]) for k in ("suspect_node", "suspect_op", "localized_by",
                                          "localized_against", "lemon_vote")
                if k in details]
        parts = [f"<h3>Localization</h3>{table(rows)}" if rows else ""]
        parts.append(file_block(folder, "graph.txt", "Model"))
        files = [n for n in ("graph.json", "graph.dot", "model.npz") if (folder / n).is_file()]
        if files:
            parts.append("<p>Model files: " + ", ".join(
                f"<code>{escape(str(folder / n))}</code>" for n in files) + "</p>")
        return "".join(parts)
