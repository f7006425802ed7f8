"""The program kind: one whole user program (MoCo), as source text.

A bug folder holds the program itself (``program.py``); the reproducers are that program
with a check around it (``program_repro``), and reduction keeps the template and the
block the finding's derivation edge inserted (``program_reduce``).
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

from dlfuzz.cases import CaseKind, Expectation, Finding, Outcome, ProgramCase
from dlfuzz.cases.kind import Reduction, TriageTools
from dlfuzz.kinds.program_reduce import PROGRAM_PASSES, program_weight
from dlfuzz.kinds.program_repro import program_expectation, program_reproducer
from dlfuzz.kinds.report_html import file_block, table
from dlfuzz.store.artifacts import write_atomic


class ProgramKind(CaseKind):
    name = "program"

    def describe(self, case: ProgramCase) -> dict[str, Any]:
        return {"api": case.api, "kind": "program", "library": case.library,
                "expect": case.expect, "seed": case.seed, "node": case.node,
                "parent": case.parent, "edge": {k: v for k, v in case.edge},
                "program": "program.py"}

    def write_files(self, folder: Path, case: ProgramCase) -> None:
        write_atomic(folder / "program.py", case.source.encode())

    def issue_case(self, case: ProgramCase, library: str) -> str:
        edge = dict(case.edge)
        where = f" around `{edge.get('api')}`" if edge.get("api") else ""
        return (f"A {case.library} program (`program.py` beside this file){where}, "
                f"expected to be {'rejected' if case.negative else 'valid'}.")

    def expectation(self, finding: Finding, case: ProgramCase, outcomes: dict[str, Outcome],
                    tools: TriageTools) -> Expectation:
        return program_expectation(finding, case, outcomes)

    def reproducer(self, backend: Any, case: ProgramCase, expectation: Expectation,
                   title: str, version: str = "") -> str:
        return program_reproducer(backend, case, expectation, title, version)

    def reduction(self, case: ProgramCase, finding: Finding, tools: TriageTools
                  ) -> Reduction:
        return Reduction(dict(PROGRAM_PASSES), program_weight)

    def report_section(self, folder: Path, meta: dict[str, Any]) -> str:
        """Where in the derivation tree the program sits (seed, node, edge) and its source."""
        path = folder / "case.json"
        described = json.loads(path.read_text()) if path.is_file() else {}
        rows: list[tuple[str, Any]] = [
            (k, described[k]) for k in ("library", "expect", "seed", "node", "parent")
            if k in described]
        rows += [(f"edge: {k}", v) for k, v in (described.get("edge") or {}).items()]
        head = f"<h3>Program of {escape(str(described.get('api', '')))}</h3>" + table(rows) \
            if rows else ""
        return head + file_block(folder, "program.py", "Program")
