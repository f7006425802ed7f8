"""Compositions inlined into reproducers stand alone: every composition target of the
counterpart files becomes source that defines its function without dlfuzz (the helpers,
constants and imports it uses come along; decorators and annotations do not)."""

import json
from pathlib import Path

from dlfuzz.engines.api.counterparts.model import DATA_DIR
from dlfuzz.triage.repro import _inlined


def _targets() -> set[str]:
    found = set()
    for path in Path(DATA_DIR).glob("*.json"):
        for entry in json.loads(path.read_text()).get("counterparts", []):
            target = entry.get("target", "") if isinstance(entry, dict) else ""
            if target.startswith("dlfuzz."):
                found.add(target)
    return found


def test_every_composition_inlines_into_standalone_source() -> None:
    targets = _targets()
    assert len(targets) >= 40, len(targets)
    for target in sorted(targets):
        name, source = _inlined(target)
        assert "dlfuzz" not in source and "@composes" not in source, target
        namespace: dict = {}
        exec(compile(source, target, "exec"), namespace)  # defining must need nothing else
        assert callable(namespace[name]), target
