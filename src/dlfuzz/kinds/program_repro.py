"""Reproducers of program findings (MoCo's localization, made executable).

The reproducer is the reduced program itself, without dlfuzz's shape recording, with a
header that says what the bug is and a check around it: a boundary bug's script exits 1
when the program runs to the end (the illegal value was accepted) and 0 when the library
raises; a status/crash bug's exits 1 on an exception (a crash kills it, a hang is ended
by an alarm); a Keras cross-backend bug's compares the program's RESULT with the values
the other backends computed. A Keras script sets ``KERAS_BACKEND`` (and what the worker
sets up) before anything imports Keras, one script per backend.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dlfuzz.cases import Expectation, Finding, Outcome, ProgramCase
from dlfuzz.triage.repro import literal

_PRELUDE = '''\
import os
import signal
import sys


def _on_exception(kind, exc, tb):
    """The program raised: {meaning}."""
    import traceback

    traceback.print_exception(kind, exc, tb)
    print({message})
    sys.stdout.flush()
    os._exit({status})


sys.excepthook = _on_exception
signal.alarm({timeout})  # a hang ends the script (non-zero status)
'''

_CHECK_VALUES = '''
# ---- check: the values the other backends computed for this program ----
EXPECTED = {expected}
RTOL = {rtol}  # relative to the largest magnitude of each quantity (the oracle's rule)
_bad = []
for _key, _want in EXPECTED.items():
    _got = np.asarray(RESULT[_key], dtype=np.float64).reshape(-1)
    _want = np.asarray(_want, dtype=np.float64).reshape(-1)
    _scale = max(float(np.max(np.abs(_want))), 1e-6)
    if _got.shape != _want.shape or not np.all(np.abs(_got - _want) <= RTOL * _scale):
        _bad.append(_key)
if _bad:
    print(f"BUG present: {{', '.join(_bad)}} differ from the other backends beyond RTOL")
    sys.exit(1)
print("OK: the results match the other backends")
sys.exit(0)
'''


def program_source(case: ProgramCase, record: bool = False) -> str:
    """The case's program, reassembled from its parts (without shape recording)."""
    if case.parts is None:
        return case.source
    from dlfuzz.engines.program.assemble import assemble  # the engine's own assembler

    template, blocks = case.parts[0], case.parts[1]
    return assemble(template, blocks, record=record)


def program_reproducer(backend: Any, case: ProgramCase, expectation: Expectation, title: str,
                       version: str = "") -> str:
    edge = dict(case.edge)
    lines = ['"""' + f"dlfuzz reproducer: {title}", "",
             f"Backend: {backend.name}{' ' + version if version else ''}. Seed program "
             f"{case.seed}; derivation edge: block {edge.get('block')} = {edge.get('api')} "
             f"({edge.get('operator')}"
             + (f", {edge.get('param')}={edge.get('value')}" if edge.get("param") else "")
             + ").",
             "Exit status: 1 while the bug is present, 0 once it is fixed.", '"""']
    if expectation.kind == "rejects":
        prelude = _PRELUDE.format(
            meaning="right, the illegal value is rejected", status=0,
            message='f"OK: rejected with {kind.__name__}: {exc}"',
            timeout=expectation.timeout_s)
    else:
        prelude = _PRELUDE.format(
            meaning="the bug, a valid program must run", status=1,
            message='f"BUG present: {kind.__name__}: {exc}"', timeout=expectation.timeout_s)
    lines.append(prelude)
    if backend.library.startswith("keras"):
        lines.append("# Keras' backend is chosen before anything imports keras:")
        lines.append(backend.repro_import)
    if expectation.note:
        lines.append("# " + expectation.note.replace("\n", " "))
    lines.append("# ---- the program " + "-" * 60)
    lines.append(program_source(case).rstrip())
    lines.append("# " + "-" * 76)
    if expectation.kind == "rejects":
        lines += ["print('BUG present: the program ran to the end with an illegal value')",
                  "sys.exit(1)"]
    elif expectation.kind == "values":
        names = ("outputs", "loss", "eval_loss")
        expected = {k: np.asarray(v).tolist() for k, v in zip(names, expectation.expected,
                                                               strict=False)}
        body = "{" + ", ".join(f"{k!r}: {literal(v)}" for k, v in expected.items()) + "}"
        rtol = float(expectation.allowed[0]) if expectation.allowed else 1e-2
        lines.append(_CHECK_VALUES.format(expected=body, rtol=rtol))
    else:
        lines += ["print('OK: the program ran normally')", "sys.exit(0)"]
    return "\n".join(lines).rstrip() + "\n"


def program_expectation(finding: Finding, case: ProgramCase, outcomes: dict[str, Outcome]
                        ) -> Expectation:
    """What the reproducer checks, from the finding's symptom."""
    from dlfuzz.oracles.program import CROSS_RTOL

    if finding.symptom == "boundary":
        return Expectation("rejects", note=finding.message)
    if finding.symptom in ("numeric", "nan"):
        agreeing = [b for b in str(finding.detail("agreeing", "")).split(",") if b]
        ref = next((outcomes[b] for b in agreeing if b in outcomes and outcomes[b].ok), None)
        if ref is not None:
            values = tuple(t.to_numpy() for t in ref.outputs[:3])
            return Expectation("values", values, (np.asarray(CROSS_RTOL),),
                               note=f"EXPECTED: what {ref.backend} computed; {finding.message}")
    return Expectation("runs", note=finding.message)
