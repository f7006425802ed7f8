"""A bug is a folder: case, inputs, outputs per backend, error log, metadata, reproducers.

Written under a temporary name and renamed into place, so a reader (the report, a
resumed campaign) never sees half a bug. The case's kind (``kind_of``) describes the
case, adds its own files (a model, a program) and writes the reproducers.
"""

from __future__ import annotations

import io
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dlfuzz.backends.base import Backend
from dlfuzz.cases import ApiCase, Expectation, Outcome, kind_of
from dlfuzz.libraries import of_backend
from dlfuzz.store.artifacts import npz_bytes, replace_dir, write_atomic
from dlfuzz.triage.issue_report import IssueFacts, issue_markdown
from dlfuzz.triage.severity import inputs_hold_specials


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
    severity: str = ""
    root_cause: str = ""
    places: tuple[dict[str, Any], ...] = ()


def repro_name(backend: str, suffix: str = ".py") -> str:
    return f"repro_{backend.replace('-', '_')}{suffix}"


def case_description(case: ApiCase) -> dict[str, Any]:
    """A readable account of a case (the pickle beside it is the exact one)."""
    return kind_of(case).describe(case)


def issue_text(folder: BugFolder, staging: Path, repros: dict[str, str]) -> str:
    """The folder's ``issue.md`` (``triage.issue_report``), from what is being written."""
    guilty = str(folder.meta.get("guilty_backend", ""))
    record = of_backend(guilty)
    library = record.name if record is not None else guilty
    repro_name = repros.get(guilty, "")
    repro = (staging / repro_name).read_text() if repro_name else ""
    involved = {b: v for b, v in folder.versions.items()
                if b in folder.outcomes or b == guilty}
    details = dict(folder.meta.get("details") or {})
    if not details.get("special_values") and inputs_hold_specials(folder.case):
        # An oracle that did not say so (older findings): the inputs tell.
        details["special_values"] = "inputs hold NaN or ±Inf"
    return issue_markdown(IssueFacts(
        title=folder.title, guilty_backend=guilty,
        library=record.title if record is not None else guilty,
        severity=folder.severity, root_cause=folder.root_cause,
        message=str(folder.meta.get("message", "")),
        details=details, versions=involved or folder.versions,
        expectation=folder.expectation, outcomes=folder.outcomes,
        case_text=kind_of(folder.case).issue_case(folder.case, library),
        repro=repro, repro_name=repro_name, places=folder.places,
        inputs=tuple(t.to_numpy() for t in getattr(folder.case, "tensors", ())[:4]),
        outputs_are=kind_of(folder.case).outputs_are))


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
                 npz_bytes({f"x{i}": t.to_numpy() for i, t in enumerate(case.tensors)}))
    log = io.StringIO()
    for name, o in sorted(folder.outcomes.items()):
        if o.outputs:
            write_atomic(staging / "outputs" / f"{name}.npz",
                         npz_bytes({f"out{i}": t.to_numpy() for i, t in enumerate(o.outputs)}))
        log.write(f"== {name}: {o.status} (stage {o.stage}, {o.duration_s * 1e3:.2f} ms)\n")
        if o.exc_type or o.message:
            log.write(f"{o.exc_type}: {o.message}\n")
        if o.log_tail:
            log.write(f"-- worker output (tail) --\n{o.log_tail}\n")
    write_atomic(staging / "error.log", log.getvalue().encode())
    repros: dict[str, str] = {}
    kind = kind_of(case)
    kind.write_files(staging, case)
    for name, backend in folder.backends.items():
        if case.call_for(backend.library) is None:
            continue
        # A backend in another language (TF.js: node script, HTML page) writes its own.
        custom = getattr(backend, "repro_script", None)
        if custom is not None:
            text = custom(case, folder.expectation, folder.title, folder.versions.get(name, ""))
        else:
            text = kind.reproducer(backend, case, folder.expectation, folder.title,
                                   folder.versions.get(name, ""))
        if text is None:
            continue  # the kind writes no reproducer for this backend
        file_name = repro_name(name, getattr(backend, "repro_suffix", ".py"))
        write_atomic(staging / file_name, text.encode())
        repros[name] = file_name
    meta = {**folder.meta, "id": folder.bug_id, "title": folder.title, "repro": repros,
            "versions": folder.versions, "case_kind": kind.name,
            "severity": folder.severity, "root_cause": folder.root_cause}
    write_atomic(staging / "issue.md", issue_text(folder, staging, repros).encode())
    write_atomic(staging / "meta.json", json.dumps(meta, indent=2, default=str).encode())
    replace_dir(staging, final)
    return final, repros
