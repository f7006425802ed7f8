"""``issue.md``: a bug folder's report in the shape upstream trackers ask for.

Title, versions, severity and root cause, the guilty library's standalone reproducer
inline, and expected vs actual: the float64 reference and the other libraries' values
beside the guilty one's. Numeric reports follow PyTorch's fuzzer-report conventions:
the baseline is float64, the default tolerances of ``torch.testing.assert_close`` for
the dtype are named (and whether the result passes them), and no argmax/index output is
compared by value. Short on purpose: a maintainer reads it in a minute.
"""

from __future__ import annotations

import json
import platform
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from dlfuzz.cases import Expectation, Outcome

_SHOWN = 6  # elements of an output shown per library
LOG_LINES = 16  # of a crash's output: its fatal message and the top of its stack


@dataclass(frozen=True)
class IssueFacts:
    title: str
    guilty_backend: str
    library: str  # the guilty library's name as people write it ("PyTorch")
    severity: str
    root_cause: str
    message: str
    details: Mapping[str, Any]
    versions: Mapping[str, str]  # backend -> version, of the backends involved
    expectation: Expectation
    outcomes: Mapping[str, Outcome]
    case_text: str  # what was run, in markdown (the case kind's ``issue_case``)
    repro: str = ""  # the guilty backend's reproducer
    repro_name: str = ""
    places: Sequence[Mapping[str, Any]] = field(default_factory=tuple)
    inputs: tuple[np.ndarray, ...] = ()  # the first few inputs, previewed
    outputs_are: str = ""  # the case kind's ``outputs_are``: "gradient" or ""


@cache
def assert_close_defaults() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(resources.files("dlfuzz.triage").joinpath(
        "assert_close_tolerances.json").read_text(encoding="utf-8"))
    return data


def _fmt(value: Any) -> str:
    if isinstance(value, complex | np.complexfloating):
        return f"{complex(value):.6g}"
    if isinstance(value, float | np.floating):
        return f"{float(value):.8g}"
    return str(value)


def _preview(arr: np.ndarray, at: int | None = None) -> str:
    flat = arr.reshape(-1)
    if flat.size == 0:
        return "[] (empty)"
    start = 0 if at is None else max(0, min(at - _SHOWN // 2, flat.size - _SHOWN))
    part = ", ".join(_fmt(v) for v in flat[start:start + _SHOWN])
    return (f"[{'…, ' if start else ''}{part}{', …' if start + _SHOWN < flat.size else ''}]"
            f" ({arr.dtype.name}{list(arr.shape)})")


def _first_special(arr: np.ndarray) -> int | None:
    """Flat index of the first NaN/±Inf of a floating array (shown in its preview)."""
    if arr.dtype.kind not in "fcV" or arr.size == 0:
        return None
    flat = arr.reshape(-1)
    if arr.dtype.kind == "V":
        flat = flat.astype(np.float64)  # bfloat16
    bad = np.flatnonzero(~np.isfinite(flat))
    return int(bad[0]) if bad.size else None


def _worst(actual: np.ndarray, expected: np.ndarray) -> tuple[int, float, int]:
    """(flat index of the worst element, max abs diff, elements that differ)."""
    a = actual.astype(np.complex128 if actual.dtype.kind == "c" else np.float64).reshape(-1)
    e = expected.astype(np.complex128 if expected.dtype.kind == "c" else np.float64
                        ).reshape(-1)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(a - e)
    both_nan = np.isnan(a) & np.isnan(e)
    same_inf = np.isinf(a) & np.isinf(e) & (a == e)
    diff = np.where(both_nan | same_inf, 0.0, np.where(np.isnan(diff), np.inf, diff))
    if diff.size == 0:
        return 0, 0.0, 0
    idx = int(np.argmax(diff))
    return idx, float(diff[idx]), int(np.count_nonzero(diff > 0))


def baseline(exp: Expectation) -> tuple[str, str]:
    """(short name, description) of what the expected values are: the float64
    reference for API calls and models; for a program, what the agreeing backends
    computed (the reproducer's note says which: ``EXPECTED: <what>; ALLOWED: ...``)."""
    what = exp.note.partition(";")[0].removeprefix("EXPECTED:").strip()
    if "float64" in what or not what:
        return "the float64 reference", what or "float64 computation of the same inputs"
    m = re.match(r"what (\S+) computed", what)
    return (m.group(1) if m else "the expected value"), what


def _assert_close_line(actual: np.ndarray, expected: np.ndarray, base: str) -> str:
    table = assert_close_defaults()
    tol = table["tolerances"].get(actual.dtype.name)
    if tol is None:
        return ""
    a = actual.astype(np.complex128 if actual.dtype.kind == "c" else np.float64)
    e = expected.astype(np.complex128 if expected.dtype.kind == "c" else np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.isclose(a, e, rtol=tol["rtol"], atol=tol["atol"], equal_nan=True)
    verdict = "passes" if bool(np.all(close)) else f"fails ({int(np.sum(~close))} " \
        f"of {close.size} elements)"
    return (f"`torch.testing.assert_close` with its default tolerances for "
            f"{actual.dtype.name} (rtol={tol['rtol']:g}, atol={tol['atol']:g}) against "
            f"{base} rounded to {actual.dtype.name}: {verdict}.")


def _values_section(facts: IssueFacts) -> list[str]:
    exp = facts.expectation
    guilty = facts.outcomes.get(facts.guilty_backend)
    if guilty is None or not guilty.ok:
        return []
    outs = [t.to_numpy() for t in guilty.outputs]
    base = baseline(exp)[0]
    lines: list[str] = []
    for i, expected in enumerate(exp.expected[:2]):
        if i >= len(outs):
            break
        actual = outs[i]
        if actual.dtype.kind in "iub" and "arg" in facts.title.lower():
            continue  # indices are not compared by value (ties): no argmax comparisons
        head = f"Output {i}" if len(exp.expected) > 1 else "Output"
        if actual.shape != expected.shape:
            lines.append(f"- {head}: shape {list(actual.shape)} from "
                         f"{facts.guilty_backend}, expected {list(expected.shape)}")
            continue
        at, max_abs, bad = _worst(actual, expected)
        lines.append(f"- {head}, actual ({facts.guilty_backend}): {_preview(actual, at)}")
        lines.append(f"- {head}, expected ({base}, rounded): "
                     f"{_preview(expected, at)}")
        for name, o in sorted(facts.outcomes.items()):
            if name == facts.guilty_backend or not o.ok or i >= len(o.outputs):
                continue
            other = o.outputs[i].to_numpy()
            if other.shape == expected.shape:
                lines.append(f"- {head}, {name}: {_preview(other, at)}")
        if expected.size:
            flat_a, flat_e = actual.reshape(-1), expected.reshape(-1)
            lines.append(f"- Worst element: flat index {at}: {_fmt(flat_a[at])} vs "
                         f"{_fmt(flat_e[at])} (max abs diff {max_abs:.3g}; {bad} of "
                         f"{expected.size} elements differ)")
        check = _assert_close_line(actual, expected, base)
        if check:
            lines.append(f"- {check}")
    return lines


_EXPECTED_TEXT = {
    "runs": "the call returns normally (no crash, hang or exception)",
    "survives": "the call returns or raises an exception the caller can handle; the "
                "process neither crashes nor hangs",
    "rejects": "the call raises an exception (the input breaks a constraint of the API; "
               "where the constraint comes from is noted above when known)",
    "repeatable": "running the same input twice gives bit-identical results",
}


def headline(facts: IssueFacts) -> str:
    """The issue's title: the guilty call (from the kind's title) and what it does wrong,
    in words a tracker's title wants (``returns inf where the float64 reference gives
    306.5``), falling back to the kind's title."""
    call = facts.title.split(": ", 1)[-1]
    who = f"[{facts.library}] {call}"
    returns, has = "returns", "returns"
    if facts.outputs_are:  # "[TF.js] gradient of tf.tanh is X where ..."
        who = f"[{facts.library}] {facts.outputs_are} of {call}"
        returns, has = "is", "has"
    guilty = facts.outcomes.get(facts.guilty_backend)
    exp = facts.expectation
    if exp.kind == "values" and guilty is not None and guilty.ok and exp.expected:
        actual = guilty.outputs[0].to_numpy() if guilty.outputs else None
        expected = exp.expected[0]
        if actual is not None and actual.shape == expected.shape and expected.size:
            at, _, bad = _worst(actual, expected)
            if bad:
                return (f"{who} {returns} {_fmt(actual.reshape(-1)[at])} where "
                        f"{baseline(exp)[0]} gives {_fmt(expected.reshape(-1)[at])} "
                        f"({actual.dtype.name})")
        elif actual is not None and actual.shape != expected.shape:
            return f"{who} {has} shape {list(actual.shape)}, expected {list(expected.shape)}"
    if guilty is not None and guilty.status in ("crash", "oom"):
        return f"{who} crashes" + (f" ({guilty.exc_type})" if guilty.exc_type else "")
    if guilty is not None and guilty.status == "timeout":
        return f"{who} hangs"
    if exp.kind == "rejects":
        return f"{who} accepts an invalid input instead of raising"
    if exp.kind == "repeatable":
        return f"{who} gives different results for the same input"
    if guilty is not None and guilty.status == "exception":
        return f"{who} raises {guilty.exc_type} on a valid input"
    return facts.title


_ISA_FLAGS = (("avx2", "AVX2"), ("avx512f", "AVX-512"), ("avx512_vnni", "AVX512_VNNI"),
              ("avx512_bf16", "AVX512_BF16"), ("amx_tile", "AMX"))


@cache
def cpu_description() -> str:
    """The host CPU and the instruction sets that choose kernels. Libraries pick CPU
    kernels by them: oneDNN's AVX-512 gelu gives torch NaN for +inf where its AVX2 one
    gives +inf, and TensorFlow turns its oneDNN kernels on by default only on CPUs with
    AVX512_VNNI, AVX512_BF16 or AMX. A maintainer on another CPU needs this to reproduce."""
    model, flags = "", set[str]()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and not model:
                model = value.strip()
            elif key.strip() == "flags" and not flags:
                flags = set(value.split())
    except OSError:
        pass  # not Linux: the model from platform, no instruction sets
    isa = [name for flag, name in _ISA_FLAGS if flag in flags]
    where = ", ".join([platform.machine() or "unknown architecture", *isa])
    return f"{model or platform.processor() or 'unknown'} ({where})"


def issue_markdown(facts: IssueFacts) -> str:
    """The issue text for one bug (see the module doc)."""
    d = facts.details
    out = [f"# {headline(facts)}", ""]
    out.append(f"**Severity:** {facts.severity or '?'} · **Root cause key:** "
               f"`{facts.root_cause or '?'}` · found and confirmed by dlfuzz")
    out += ["", "## Versions", ""]
    out += [f"- {name}: {version or 'unknown'}"
            for name, version in sorted(facts.versions.items())]
    out.append(f"- CPU: {cpu_description()}")
    out += ["", "## Description", "", f"{facts.library} ({facts.guilty_backend}): "
            f"{facts.message}"]
    notes = [str(d[k]) for k in ("special_values", "demoted", "constraint_source")
             if d.get(k)]
    if d.get("ill_conditioned"):
        cond = d.get("condition_number")
        notes.append("the input is ill-conditioned for its dtype"
                     + (f" (condition number {float(cond):.3g})" if cond else ""))
    out += [f"- Note: {n}" for n in notes]
    if d.get("crash_state"):
        out.append(f"- Crash state (top native frames, callee first): `{d['crash_state']}`")
    if facts.case_text:
        out += ["", facts.case_text]
    out += [f"- Input x{i}: {_preview(x, _first_special(x))}"
            for i, x in enumerate(facts.inputs)]
    if facts.repro:
        lang = "javascript" if facts.repro_name.endswith(".js") else \
            "html" if facts.repro_name.endswith(".html") else "python"
        out += ["", "## Minimal reproducer", "",
                f"`{facts.repro_name}` (exits 1 while the bug is present, 0 once fixed):",
                "", f"```{lang}", facts.repro.rstrip(), "```"]
    out += ["", "## Expected vs actual", ""]
    exp = facts.expectation
    if exp.kind == "values":
        out.append(f"Expected: {baseline(exp)[1]}.")
        out.append("")
        out += _values_section(facts)
    else:
        out.append(f"- Expected: {_EXPECTED_TEXT.get(exp.kind, exp.kind)}")
        guilty = facts.outcomes.get(facts.guilty_backend)
        if guilty is not None:
            what = "returns normally" if guilty.ok else guilty.status + (
                f" ({guilty.exc_type}: {guilty.message})"
                if guilty.exc_type or guilty.message else "")
            out.append(f"- Actual ({facts.guilty_backend}): {what}")
        others = [f"{n}: {o.status}" for n, o in sorted(facts.outcomes.items())
                  if n != facts.guilty_backend]
        if others:
            out.append(f"- Other backends on the same case: {', '.join(others)}")
    log = str(d.get("log_tail") or "")
    if d.get("crash_state") and log:
        out += ["", "## Output of the crashed process (from its fatal message)", "",
                "```", *log.splitlines()[:LOG_LINES], "```"]
    if len(facts.places) > 1:
        out += ["", "## Also seen at", ""]
        out += [f"- {p.get('backend')}: {p.get('api')} ({p.get('dtypes')}, "
                f"{p.get('symptom')}) ×{p.get('count', 1)}" for p in facts.places]
    return "\n".join(out) + "\n"
