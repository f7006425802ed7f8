"""Bug identity: a structured signature, so one root cause is one bug.

The signature is (symptom, stage, guilty backend, API, normalized message). Messages are
normalized by stripping what varies between occurrences of the same bug: numbers,
addresses, paths, quoted values and shapes.
"""

from __future__ import annotations

import re

_PATTERNS = [
    (re.compile(r"0x[0-9a-fA-F]+"), "0x#"),
    (re.compile(r"(/[\w.\-]+)+"), "<path>"),
    (re.compile(r"'[^']*'|\"[^\"]*\""), "'…'"),
    (re.compile(r"\[[^\]]*\]|\([\d,\s]*\)"), "[…]"),
    # Numbers, but not the digits of names (float32, conv2d, int64 stay as they are);
    # generated suffixes (__inference_bound_793) go.
    (re.compile(r"(?<![A-Za-z\d])[-+]?\d+(\.\d+)?([eE][-+]?\d+)?"), "#"),
    (re.compile(r"\s+"), " "),
]


def normalize_message(message: str, limit: int = 160) -> str:
    """First line of ``message`` with the varying parts replaced by placeholders."""
    lines = [ln for ln in message.strip().splitlines() if ln.strip()]
    text = lines[0] if lines else ""
    for pattern, repl in _PATTERNS:
        text = pattern.sub(repl, text)
    return text.strip()[:limit]


def make_signature(symptom: str, stage: str, backend: str, api: str, message: str) -> str:
    return "|".join((symptom, stage, backend, api, normalize_message(message)))
