"""``dlfuzz findings --format sarif``: SARIF 2.1.0, the format code-scanning services read.

* one rule (``reportingDescriptor``) per root cause, its id the root-cause key;
* ``level`` from the severity class: crash and wrong-result are ``error``, special-value
  and inconsistency ``warning``, validation and performance ``note``;
* one result per root cause, located at its guilty backend's reproducer, which is also a
  run artifact carrying the script's text, so the log alone reproduces the bug;
* with ``--baseline``: ``baselineState`` ``new`` / ``unchanged`` for the campaign's
  root causes, and ``absent`` for baseline entries the campaign did not find again whose
  reproducer now passes (fixed);
* paths relative to the campaign folder (``uriBaseId`` ``CAMPAIGN``, resolved by
  ``originalUriBaseIds``), so an upload from another machine still names the files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dlfuzz.report.view import FindingsView, Record, backends_of, is_confirmed, reproducer_path
from dlfuzz.triage.baseline import MAX_CONTENT_BYTES, EntryCheck
from dlfuzz.triage.severity import SEVERITIES

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
BASE_ID = "CAMPAIGN"
LEVELS = {"crash": "error", "wrong-result": "error", "special-value": "warning",
          "inconsistency": "warning", "validation": "note", "performance": "note"}
# GitHub code scanning sorts by this 0-10 score: the severity order, spread out.
_SECURITY = {s: f"{9.0 - 1.5 * i:.1f}" for i, s in enumerate(SEVERITIES)}


def level(severity: str) -> str:
    return LEVELS.get(severity, "warning")


class _Artifacts:
    """The run's artifacts (reproducer scripts), each listed once, by index."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.items: list[dict[str, Any]] = []
        self.index: dict[str, int] = {}

    def location(self, path: str) -> dict[str, Any]:
        """The artifactLocation of ``path`` (relative to the campaign when inside it)."""
        p = Path(path)
        try:
            loc: dict[str, Any] = {"uri": p.resolve().relative_to(self.root).as_posix(),
                                   "uriBaseId": BASE_ID}
        except ValueError:
            loc = {"uri": p.resolve().as_uri()}
        if path in self.index:
            return {**loc, "index": self.index[path]}
        artifact: dict[str, Any] = {"location": dict(loc), "roles": ["resultFile"]}
        text = _read(p)
        if text is not None:
            artifact["contents"] = {"text": text}
            artifact["length"] = len(text.encode("utf-8"))
        if p.suffix == ".py":
            artifact.update(mimeType="text/x-python", sourceLanguage="python")
        elif p.suffix == ".js":
            artifact.update(mimeType="text/javascript", sourceLanguage="javascript")
        elif p.suffix in (".html", ".htm"):
            artifact.update(mimeType="text/html", sourceLanguage="html")
        self.index[path] = len(self.items)
        self.items.append(artifact)
        return {**loc, "index": self.index[path]}


def _read(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if len(data) > MAX_CONTENT_BYTES:
        return None
    return data.decode("utf-8", "replace")


def _rule(key: str, severity: str, api: str, symptom: str, message: str) -> dict[str, Any]:
    return {
        "id": key,
        "name": key.replace("/", "_").replace("-", "_"),
        "shortDescription": {"text": f"{severity}: {symptom or 'bug'} in {api or key}"},
        "fullDescription": {"text": message or key},
        "defaultConfiguration": {"level": level(severity)},
        "properties": {"severity": severity, "tags": [t for t in (severity, symptom) if t],
                       "security-severity": _SECURITY.get(severity, "5.0")},
    }


def _result(r: Record, rule_index: int, artifacts: _Artifacts, state: str | None
            ) -> dict[str, Any]:
    severity = str(r["severity"])
    message = " ".join(str(r.get("message", "")).split())
    script = reproducer_path(r)
    text = (f"{r['root_cause']} ({severity}, bug {r['id']}, {r.get('occurrences', 1)} "
            f"occurrence(s) on {', '.join(backends_of(r))}): {message}")
    if not is_confirmed(r):
        text += f" [{r.get('status')}: not confirmed]"
    result: dict[str, Any] = {
        "ruleId": str(r["root_cause"]), "ruleIndex": rule_index, "level": level(severity),
        "kind": "fail", "message": {"text": text},
        "partialFingerprints": {"dlfuzzRootCause/v1": str(r["root_cause"])},
        "properties": {"id": r["id"], "ids": list(r.get("ids") or [r["id"]]),
                       "severity": severity, "api": r.get("api"),
                       "guilty_backend": r.get("guilty_backend"),
                       "status": r.get("status"), "places": list(r.get("places") or []),
                       "reproducers": dict(r.get("repro") or {})},
    }
    if script:
        result["locations"] = [{"physicalLocation": {
            "artifactLocation": artifacts.location(script), "region": {"startLine": 1}}}]
        others = [p for b, p in sorted((r.get("repro") or {}).items()) if p != script]
        if others:
            result["relatedLocations"] = [
                {"id": i, "physicalLocation": {"artifactLocation": artifacts.location(p)},
                 "message": {"text": f"reproducer on {Path(p).stem.removeprefix('repro_')}"}}
                for i, p in enumerate(others, 1)]
    if state is not None:
        result["baselineState"] = state
    return result


def _absent_result(c: EntryCheck, rule_index: int) -> dict[str, Any]:
    e = c.entry
    return {"ruleId": e.key, "ruleIndex": rule_index, "level": "none", "kind": "pass",
            "baselineState": "absent",
            "message": {"text": f"{e.key}: fixed since the baseline (its reproducer now "
                                f"passes: {c.verdict})"},
            "partialFingerprints": {"dlfuzzRootCause/v1": e.key},
            "properties": {"id": e.bug_id, "severity": e.severity, "state": c.state}}


def render(view: FindingsView) -> str:
    from dlfuzz import __version__

    artifacts = _Artifacts(view.campaign)
    rules: list[dict[str, Any]] = []
    rule_index: dict[str, int] = {}

    def rule_for(key: str, severity: str, api: str, symptom: str, message: str) -> int:
        if key not in rule_index:
            rule_index[key] = len(rules)
            rules.append(_rule(key, severity, api, symptom, message))
        return rule_index[key]

    results = []
    baseline = view.baseline is not None
    for records, state in ((view.new, "new"), (view.known, "unchanged")):
        for r in records:
            i = rule_for(str(r["root_cause"]), str(r["severity"]), str(r.get("api", "")),
                         str(r.get("symptom", "")), " ".join(str(r.get("message")).split()))
            results.append(_result(r, i, artifacts, state if baseline else None))
    for c in view.fixed:
        e = c.entry
        i = rule_for(e.key, e.severity, e.api, e.symptom, e.message)
        results.append(_absent_result(c, i))
    run: dict[str, Any] = {
        "tool": {"driver": {"name": "dlfuzz", "version": __version__,
                            "semanticVersion": __version__, "rules": rules}},
        "originalUriBaseIds": {BASE_ID: {"uri": view.campaign.as_uri().rstrip("/") + "/",
                                         "description": {"text": "the campaign folder"}}},
        "artifacts": artifacts.items,
        "results": results,
        "columnKind": "unicodeCodePoints",
        "properties": {"campaign": str(view.campaign), "engine": view.engine,
                       "backend_versions": dict(view.versions or {}),
                       "baseline": str(view.baseline) if view.baseline else None},
    }
    log = {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}
    return json.dumps(log, indent=2)
