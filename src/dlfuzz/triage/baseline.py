"""A baseline: the root causes a team already knows, so that a CI gate fails only on new ones.

``dlfuzz baseline DIR --out known.json`` writes one entry per confirmed root cause of a
campaign; ``--baseline known.json`` on ``run`` and ``findings`` lists the campaign's bugs
whose root cause is in it apart ("known") and never fails the gate on them.

Entries are matched by root-cause key (``torch/cumsum/wrong-result``), not by bug id: the
id hashes a signature that holds the dtype and the exact API, so the same mechanism found
by another seed, on another dtype or through a sibling op gets another id but the same
key (``triage.root_cause``).

An entry keeps its guilty backend's reproducer, path *and* content, so whether the bug is
still there can be re-checked on the installed library versions after the campaign folder
is gone (a CI job keeps ``known.json`` in the repository, not the campaign). The check
runs that one script (``check_entry``); a script that says OK is "fixed", one that still
shows the bug is "present", anything else (no reproducer, a script that fails without a
verdict because its library is missing, a time-out) is "unchecked", never "fixed".
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dlfuzz.errors import UsageError
from dlfuzz.triage.severity import SEVERITIES

FORMAT = "dlfuzz-baseline"
VERSION = 1
# A reproducer is small (literal inputs of a reduced case); one that is not is kept by
# path only, so a baseline stays a file people review in pull requests.
MAX_CONTENT_BYTES = 256_000
# Start-up allowed to a reproducer's library on top of the campaign's case timeout when a
# baseline entry is re-checked (TensorFlow takes several seconds to import on a busy CI
# machine; ``run_reproducer`` doubles it).
CHECK_START_S = 30.0


@dataclass(frozen=True)
class Reproducer:
    """The guilty backend's reproducer script of a baseline entry."""

    backend: str
    name: str  # file name, e.g. repro_torch.py
    path: str  # where the campaign wrote it (may be gone)
    content: str  # "" when the script was too large to embed

    def as_json(self) -> dict[str, str]:
        return {"backend": self.backend, "name": self.name, "path": self.path,
                "content": self.content}


@dataclass(frozen=True)
class Entry:
    """One known root cause."""

    key: str
    severity: str
    api: str
    symptom: str
    guilty_backend: str
    backends: tuple[str, ...]
    places: tuple[Mapping[str, Any], ...]
    message: str
    bug_id: str
    reproducer: Reproducer | None

    def as_json(self) -> dict[str, Any]:
        return {"key": self.key, "severity": self.severity, "api": self.api,
                "symptom": self.symptom, "guilty_backend": self.guilty_backend,
                "backends": list(self.backends), "places": [dict(p) for p in self.places],
                "message": self.message, "id": self.bug_id,
                "reproducer": self.reproducer.as_json() if self.reproducer else None}


@dataclass(frozen=True)
class Baseline:
    path: Path
    entries: tuple[Entry, ...]

    def keys(self) -> set[str]:
        return {e.key for e in self.entries}


@dataclass(frozen=True)
class EntryCheck:
    """What became of a baseline entry the campaign did not find again.

    ``state``: ``fixed`` (its reproducer passes now), ``present`` (it still shows the
    bug), ``unchecked`` (no verdict: see ``verdict``), ``not-checked`` (not asked to).
    """

    entry: Entry
    state: str
    verdict: str

    def as_json(self) -> dict[str, Any]:
        return {**self.entry.as_json(), "state": self.state, "verdict": self.verdict}


@dataclass(frozen=True)
class ReproEnv:
    """How a campaign ran one backend's reproducers: its interpreter and preloads (the
    shape ``confirm.run_reproducer`` reads)."""

    python: str
    preload: tuple[str, ...]


def entry_of(record: Mapping[str, Any]) -> Entry:
    """The baseline entry of one root cause, from its ``findings`` record."""
    places = tuple(dict(p) for p in record.get("places") or [])
    backends = tuple(dict.fromkeys(str(p.get("backend")) for p in places if p.get("backend")))
    guilty = str(record["guilty_backend"])
    reproducer = None
    script = (record.get("repro") or {}).get(guilty)
    if script:
        path = Path(script)
        try:
            data = path.read_bytes()
            content = data.decode("utf-8") if len(data) <= MAX_CONTENT_BYTES else ""
        except (OSError, UnicodeDecodeError):
            content = ""
        reproducer = Reproducer(guilty, path.name, str(path), content)
    return Entry(key=str(record["root_cause"]), severity=str(record["severity"]),
                 api=str(record["api"]), symptom=str(record["symptom"]),
                 guilty_backend=guilty, backends=backends or (guilty,), places=places,
                 message=" ".join(str(record["message"]).split()), bug_id=str(record["id"]),
                 reproducer=reproducer)


def baseline_json(campaign: Path, entries: Sequence[Entry],
                  versions: Mapping[str, str]) -> dict[str, Any]:
    from dlfuzz import __version__

    return {"format": FORMAT, "version": VERSION, "dlfuzz": __version__,
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "campaign": str(campaign), "backend_versions": dict(versions),
            "bugs": [e.as_json() for e in entries]}


def load_baseline(path: Path, flag: str = "--baseline") -> Baseline:
    """The baseline in ``path``; any problem is a UsageError naming the file and the fix."""
    where = f"{flag} {path}"
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{where}: no such file; write one with "
                         f"`dlfuzz baseline DIR --out {path}`") from None
    except IsADirectoryError:
        raise UsageError(f"{where}: is a directory; give the JSON file written by "
                         "`dlfuzz baseline DIR --out FILE`") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{where}: cannot be read ({exc})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{where}: not valid JSON (line {exc.lineno}, column {exc.colno}: "
                         f"{exc.msg}); regenerate it with `dlfuzz baseline`") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise UsageError(f"{where}: not a dlfuzz baseline (no \"format\": \"{FORMAT}\"); "
                         "write one with `dlfuzz baseline DIR --out FILE`")
    version = data.get("version")
    if not isinstance(version, int) or version < 1:
        raise UsageError(f"{where}: \"version\" is {version!r}, expected {VERSION}")
    if version > VERSION:
        raise UsageError(f"{where}: written by a newer dlfuzz (baseline version {version}; "
                         f"this one reads {VERSION}); upgrade dlfuzz or regenerate the file")
    bugs = data.get("bugs")
    if not isinstance(bugs, list):
        raise UsageError(f"{where}: \"bugs\" must be a list of entries, got "
                         f"{type(bugs).__name__}")
    return Baseline(Path(path), tuple(_entry(item, f"{where}: bugs[{i}]")
                                      for i, item in enumerate(bugs)))


def _entry(item: object, where: str) -> Entry:
    """One entry read back; a person may have edited the file, so every field is checked.
    Only ``key`` is required (a hand-written baseline may list just keys)."""
    if not isinstance(item, dict):
        raise UsageError(f"{where}: an entry must be an object, got {type(item).__name__}")
    key = item.get("key")
    if not isinstance(key, str) or not key.strip():
        raise UsageError(f"{where}: \"key\" (the root-cause key, e.g. "
                         f"torch/cumsum/wrong-result) is missing or not a string")

    def text(name: str, default: str = "") -> str:
        value = item.get(name, default)
        if value is None:
            return default
        if not isinstance(value, str):
            raise UsageError(f"{where} ({key}): \"{name}\" must be a string, got {value!r}")
        return value

    severity = text("severity")
    if severity and severity not in SEVERITIES:
        raise UsageError(f"{where} ({key}): severity {severity!r} is not one of "
                         f"{', '.join(SEVERITIES)}")
    backends = item.get("backends", [])
    places = item.get("places", [])
    if not isinstance(backends, list) or not all(isinstance(b, str) for b in backends):
        raise UsageError(f"{where} ({key}): \"backends\" must be a list of names")
    if not isinstance(places, list) or not all(isinstance(p, dict) for p in places):
        raise UsageError(f"{where} ({key}): \"places\" must be a list of objects")
    return Entry(key=key, severity=severity, api=text("api"), symptom=text("symptom"),
                 guilty_backend=text("guilty_backend"), backends=tuple(backends),
                 places=tuple(places), message=text("message"), bug_id=text("id"),
                 reproducer=_reproducer(item.get("reproducer"), f"{where} ({key})"))


def _reproducer(value: object, where: str) -> Reproducer | None:
    if value is None:
        return None
    fields = ("backend", "name", "path", "content")
    if not isinstance(value, dict) or not all(isinstance(value.get(f, ""), str)
                                              for f in fields):
        raise UsageError(f"{where}: \"reproducer\" must be an object of strings "
                         f"({', '.join(fields)}) or null")
    if not value.get("backend") or not value.get("name"):
        raise UsageError(f"{where}: \"reproducer\" needs \"backend\" and \"name\"")
    name = str(value["name"])
    if Path(name).name != name:
        raise UsageError(f"{where}: reproducer name {name!r} must be a file name, not a path")
    return Reproducer(str(value["backend"]), name, str(value.get("path", "")),
                      str(value.get("content", "")))


def split(records: Iterable[Mapping[str, Any]], baseline: Baseline | None
          ) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """(new, known): records whose root cause is not / is in the baseline."""
    keys = baseline.keys() if baseline else set()
    new: list[Mapping[str, Any]] = []
    known: list[Mapping[str, Any]] = []
    for r in records:
        (known if str(r["root_cause"]) in keys else new).append(r)
    return new, known


def not_seen(baseline: Baseline | None, seen_keys: Iterable[str]) -> list[Entry]:
    """Baseline entries whose root cause the campaign did not show (first of each key)."""
    if baseline is None:
        return []
    seen = set(seen_keys)
    out: dict[str, Entry] = {}
    for e in baseline.entries:
        if e.key not in seen:
            out.setdefault(e.key, e)
    return list(out.values())


def check_entry(entry: Entry, env: ReproEnv, case_timeout_s: float) -> EntryCheck:
    """Run the entry's reproducer on the installed versions: is the bug gone?

    The script runs where the campaign wrote it when it is still there unchanged (a model
    reproducer reads ``model.npz`` beside it); otherwise its recorded content is written
    to a fresh temporary folder and run there.
    """
    from dlfuzz.triage.confirm import run_reproducer

    rep = entry.reproducer
    if rep is None:
        return EntryCheck(entry, "unchecked", "no reproducer recorded for it")
    original = Path(rep.path) if rep.path else None
    if original is not None and original.is_file() and (original.parent / "meta.json").is_file():
        try:
            same = not rep.content or original.read_text(encoding="utf-8") == rep.content
        except (OSError, UnicodeDecodeError):
            same = False
        if same:
            return _judged(entry, run_reproducer(original.parent, rep.backend, entry.symptom,
                                                 env, case_timeout_s, CHECK_START_S))
    if not rep.content:
        return EntryCheck(entry, "unchecked", f"{rep.path or rep.name} is gone and its "
                          "content was not recorded")
    with tempfile.TemporaryDirectory(prefix="dlfuzz-baseline-") as tmp:
        folder = Path(tmp)
        (folder / rep.name).write_text(rep.content, encoding="utf-8")
        (folder / "meta.json").write_text(json.dumps({"repro": {rep.backend: rep.name}}))
        return _judged(entry, run_reproducer(folder, rep.backend, entry.symptom, env,
                                             case_timeout_s, CHECK_START_S))


def _judged(entry: Entry, check: Any) -> EntryCheck:
    """``ReproCheck`` -> state. Fixed only on a clean pass (exit 0 / an OK verdict): a
    script that failed without a verdict says nothing about the library."""
    if check.reproduced:
        return EntryCheck(entry, "present", check.verdict)
    if check.reproduced is False and check.exit_status == 0:
        return EntryCheck(entry, "fixed", check.verdict)
    return EntryCheck(entry, "unchecked", check.verdict)
