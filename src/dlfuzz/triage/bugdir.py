"""A bug is a folder: case, inputs, outputs per backend, error log, metadata, reproducers.

Written under a temporary name and renamed into place, so a reader (the report, a
resumed campaign) never sees half a bug.
"""

from __future__ import annotations

import io
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dlfuzz.backends.base import Backend
from dlfuzz.cases import ApiCase, GraphCase, Outcome
from dlfuzz.store.artifacts import replace_dir, write_atomic
from dlfuzz.triage.repro import Expectation, reproducer
from dlfuzz.triage.repro_model import model_npz, model_reproducer


@dataclass(frozen=True)
class BugFolder:
    bug_id: str
    title: str
    case: ApiCase
    outcomes: dict[str, Outcome]
    expectation: Expectation
    backends: dict[str, Backend]  # backend name -> instance (host side, for repro text)
    versions: dict[str, str]
    meta: dict[str, Any]


def repro_name(backend: str, suffix: str = ".py") -> str:
    return f"repro_{backend.replace('-', '_')}{suffix}"


def _npz(arrays: dict[str, np.ndarray]) -> bytes:
    buf = io.BytesIO()
    safe = {k: (v.astype(np.float32) if v.dtype.name == "bfloat16" else v)
            for k, v in arrays.items()}
    np.savez(buf, **safe)
    return buf.getvalue()


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


def case_description(case: ApiCase | GraphCase) -> dict[str, Any]:
    """A readable account of a case (the pickle beside it is the exact one)."""
    if getattr(case, "kind", "") == "program":
        return {"api": case.api, "kind": "program", "library": case.library,
                "expect": case.expect, "seed": case.seed, "node": case.node,
                "parent": case.parent, "edge": {k: v for k, v in case.edge},
                "program": "program.py"}
    if isinstance(case, GraphCase):
        return {"api": case.api, "kind": "model", "origin": dict(case.origin),
                "dtype": case.graph.dtype, "nodes": [n.op for n in case.graph.nodes],
                "inputs": [{"dtype": t.dtype, "shape": list(t.shape)} for t in case.tensors],
                "weights": {k: list(t.shape) for k, t in case.weights}}
    return {
        "api": case.api,
        "params": {k: repr(v) for k, v in case.params},
        "expect": case.expect,
        "tensors": [{"dtype": t.dtype, "shape": list(t.shape)} for t in case.tensors],
        "calls": {lib: {"target": c.target, "args": repr(c.args), "kwargs": repr(c.kwargs)}
                  for lib, c in case.calls},
    }


def write_bug_folder(root: Path, folder: BugFolder) -> tuple[Path, dict[str, str]]:
    """Write the folder; returns its path and backend -> reproducer path (relative)."""
    final = root / folder.bug_id
    staging = root / f".tmp-{folder.bug_id}"
    shutil.rmtree(staging, ignore_errors=True)
    (staging / "outputs").mkdir(parents=True)
    case = folder.case
    write_atomic(staging / "case.json",
                 json.dumps(case_description(case), indent=2).encode())
    write_atomic(staging / "inputs.npz",
                 _npz({f"x{i}": t.to_numpy() for i, t in enumerate(case.tensors)}))
    log = io.StringIO()
    for name, o in sorted(folder.outcomes.items()):
        if o.outputs:
            write_atomic(staging / "outputs" / f"{name}.npz",
                         _npz({f"out{i}": t.to_numpy() for i, t in enumerate(o.outputs)}))
        log.write(f"== {name}: {o.status} (stage {o.stage}, {o.duration_s * 1e3:.2f} ms)\n")
        if o.exc_type or o.message:
            log.write(f"{o.exc_type}: {o.message}\n")
        if o.log_tail:
            log.write(f"-- worker output (tail) --\n{o.log_tail}\n")
    write_atomic(staging / "error.log", log.getvalue().encode())
    repros: dict[str, str] = {}
    if isinstance(case, GraphCase):
        write_model_files(staging, case)
    program = getattr(case, "kind", "") == "program"
    if program:
        write_atomic(staging / "program.py", case.source.encode())  # type: ignore[attr-defined]
    for name, backend in folder.backends.items():
        if case.call_for(backend.library) is None:
            continue
        make = model_reproducer if isinstance(case, GraphCase) else reproducer
        if program:
            from dlfuzz.engines.program.repro import program_reproducer as make
        # A backend in another language (TF.js: node script, HTML page) writes its own.
        custom = getattr(backend, "repro_script", None)
        if custom is not None:
            text = custom(case, folder.expectation, folder.title, folder.versions.get(name, ""))
        else:
            text = make(backend, case, folder.expectation, folder.title,  # type: ignore[arg-type]
                        folder.versions.get(name, ""))
        file_name = repro_name(name, getattr(backend, "repro_suffix", ".py"))
        write_atomic(staging / file_name, text.encode())
        repros[name] = file_name
    meta = {**folder.meta, "id": folder.bug_id, "title": folder.title, "repro": repros,
            "versions": folder.versions}
    write_atomic(staging / "meta.json", json.dumps(meta, indent=2, default=str).encode())
    replace_dir(staging, final)
    return final, repros
