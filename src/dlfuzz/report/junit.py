"""``dlfuzz findings --format junit``: JUnit XML, which CI systems render as test results.

One ``<testsuite>`` per campaign, one ``<testcase>`` per root cause × backend it showed
on (``classname`` the backend, ``name`` the root-cause key), so a CI page reads "torch:
torch/cumsum/wrong-result failed". A new confirmed bug is a ``<failure>`` whose message
is the bug's and whose text names the reproducer; a known one (in the baseline) and a
flaky one are ``<skipped>`` (they must not turn the build red); a baseline entry whose
reproducer now passes is a passing testcase (fixed). Written with ``xml.etree`` so every
library message is escaped; characters XML 1.0 cannot hold are dropped.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from dlfuzz.report.view import FindingsView, Record, backends_of, is_confirmed, reproducer_path

# Characters XML 1.0 forbids even escaped (control characters a library message may hold).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _text(value: object) -> str:
    return _NOT_XML.sub("", str(value))


def _case(suite: ET.Element, r: Record, backend: str, known: bool) -> str:
    """Add one testcase; returns its outcome (failure, skipped)."""
    key = str(r["root_cause"])
    case = ET.SubElement(suite, "testcase", classname=_text(f"dlfuzz.{backend}"),
                         name=_text(key), time="0")
    script = reproducer_path(r)
    if script:
        case.set("file", _text(script))
    message = " ".join(str(r.get("message", "")).split())
    body = [f"severity: {r['severity']}", f"bug: {r['id']}", f"api: {r.get('api')}",
            f"guilty backend: {r.get('guilty_backend')}",
            f"occurrences: {r.get('occurrences')}", f"message: {message}"]
    body += [f"reproducer ({b}): {p}" for b, p in sorted((r.get("repro") or {}).items())]
    if known:
        ET.SubElement(case, "skipped", message=_text(f"known bug (in the baseline): {key}"))
        outcome = "skipped"
    elif not is_confirmed(r):
        ET.SubElement(case, "skipped", message=_text(f"{r.get('status')} (not confirmed): "
                                                     f"{message}"))
        outcome = "skipped"
    else:
        failure = ET.SubElement(case, "failure", message=_text(f"{r['severity']}: {message}"),
                                type=_text(str(r["severity"])))
        failure.text = _text("\n".join(body))
        return "failure"
    out = ET.SubElement(case, "system-out")
    out.text = _text("\n".join(body))
    return outcome


def render(view: FindingsView) -> str:
    root = ET.Element("testsuites", name="dlfuzz")
    suite = ET.SubElement(root, "testsuite", name=_text(f"dlfuzz {view.label}"))
    props = ET.SubElement(suite, "properties")
    for name, value in (("campaign", str(view.campaign)), ("engine", view.engine),
                        ("baseline", str(view.baseline or ""))):
        if value:
            ET.SubElement(props, "property", name=name, value=_text(value))
    for backend, version in sorted((view.versions or {}).items()):
        ET.SubElement(props, "property", name=_text(f"version.{backend}"),
                      value=_text(version))
    counts = {"tests": 0, "failures": 0, "skipped": 0}
    for records, known in ((view.new, False), (view.known, True)):
        for r in records:
            for backend in backends_of(r):
                outcome = _case(suite, r, backend, known)
                counts["tests"] += 1
                counts[outcome if outcome == "skipped" else "failures"] += 1
    for c in view.fixed:
        for backend in c.entry.backends or (c.entry.guilty_backend,):
            case = ET.SubElement(suite, "testcase", classname=_text(f"dlfuzz.{backend}"),
                                 name=_text(c.entry.key), time="0")
            out = ET.SubElement(case, "system-out")
            out.text = _text(f"fixed since the baseline: {c.verdict}")
            counts["tests"] += 1
    for name, n in (*counts.items(), ("errors", 0)):
        suite.set(name, str(n))
        root.set(name, str(n))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")
