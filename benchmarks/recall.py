"""Recall of dlfuzz on real, still-open bugs of the installed releases (and planted ones).

dlfuzz exists to find bugs; this benchmark says how many known ones it finds. The bugs
are in ``benchmarks/recall/bugs/*.json``: each was reported upstream (its link), and
each has a standalone trigger that reproduces it here (``--verify`` runs them all). A
bug names the library backend that shows it, its API (dlfuzz's spelling: the spec name,
or the layer/op at model level), and the severity classes that count as finding it.

Unaided (the default): one campaign per engine and backend mix, with dlfuzz's default
settings, no ``--apis`` and nothing from the benchmark: the benchmark measures, it never
feeds the generator. A bug counts as found when a confirmed bug of the campaign (or one
of its places, after root-cause dedup) is on the bug's backend and API (the case's API,
or what the case called on that backend: a counterpart; or an API the bug's ``also``
lists, those its upstream report names as showing it) with one of its
severity classes, and meets the bug's ``match`` conditions (the mechanism: message,
input dtypes and sizes, symptom, special input values; see ``Rule``); the time to the
first hit is when that bug row was stored, counted from the campaign's start (worker
start-up included, a few seconds). A finding on the right backend, API and severity
that fails only the ``match`` conditions is listed as a near miss, with the condition.

``--directed``: one short campaign per API-level bug in the specs, with ``--apis`` set to
the bug's API (what a maintainer checking one API would run); prints the time to the
first hit and the median.

``--planted``: the planted bugs of the test suite (``tests/planted``), each in an
unaided campaign over all specs with its module preloaded in the worker; with
``--directed`` also each plant's API alone (``--apis``) for ``--directed-budget``
seconds, what one API's cases are worth (``--planted-budget 0``: those only). A plant
is found by the campaign's first confirmed bug, of the plant's backend and severity,
whose reproducer fails with the plant loaded and passes without it: the plant itself,
whichever API reached it (``lp_pool2d`` calling ``avg_pool2d``, ``jnp.cumsum`` as the
counterpart in a ``torch.cumsum`` case). The table also says which API that was.

Run: ``.venv/bin/python benchmarks/recall.py [--budget 1200] [--only api,tfjs]
[--out DIR] [--from DIR] [--directed [--directed-budget 120]] [--planted
[--planted-budget 300] [--plants A,B] [--directed]] [--verify]``. Numbers go to
docs/recall.md by hand.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np

from corpus import read_folder
from dlfuzz.cases.core import DTYPES
from dlfuzz.errors import UsageError
from precision import Campaign

HERE = Path(__file__).resolve().parent
BUGS = HERE / "recall" / "bugs"
ROOT = HERE.parent
PLANTED = ROOT / "tests" / "planted"
TFJS_CACHE = Path.home() / ".cache" / "dlfuzz" / "tfjs"
SEVERITIES = ("crash", "wrong-result", "special-value", "inconsistency", "validation",
              "performance")
LEVELS = ("api", "model", "program")
KINDS = ("crash", "wrong-result", "nan-inf", "validation", "compile-mode", "gradient")
_REQUIRED = ("id", "library", "level", "kind", "upstream", "title", "reproduces_on", "api",
             "backend", "severity", "symptom", "trigger_lang", "trigger", "verify")
_OPTIONAL = ("reported_on", "tfjs_version", "in_specs", "campaign", "note", "match", "also")
# The symptoms dlfuzz gives a finding (``Finding.symptom``; ``triage.severity`` ranks them).
SYMPTOMS = ("crash", "timeout", "oom", "nan", "numeric", "status", "shape", "dtype",
            "boundary", "nondeterministic", "performance", "gradient")
# The special values an input may be required to hold (``Rule.inputs``).
INPUT_VALUES = ("nan", "inf", "-inf", "subnormal", "int-min", "zero-size")
_RULE_KEYS = ("message", "dtypes", "min_elements", "symptom", "inputs")


# ---- the bugs ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Rule:
    """A known bug's ``match`` object: what a finding must show, beyond backend, API and
    severity, to be that bug and not another one of the same API.

    Backend, API and severity alone count float32 ``reduce_mean`` overflowing near 3e38
    as TF's float16 element-count overflow (65520 elements and more): a benchmark that
    over-counts says nothing. Each condition is what the bug itself needs, nothing more:

    * ``message``: a regular expression searched, case-insensitively, in what dlfuzz
      recorded of the failure: the bug's message (``SIGFPE: worker killed by SIGFPE``),
      the worker's output tail in its details and the bug folder's ``error.log`` (a TF
      ``Check failed`` line is in the worker's output only).
    * ``dtypes``: some input tensor of the case has one of these dtypes.
    * ``min_elements``: some input tensor has at least this many elements.
    * ``symptom``: the finding's symptom is one of these (``SYMPTOMS``).
    * ``inputs``: each of these values (``INPUT_VALUES``) is held by some input tensor.

    The tensor conditions hold on the case as detected or as reduced (both are stored);
    a model's weights count as inputs, as in ``triage.severity``.
    """

    message: re.Pattern[str] | None = None
    dtypes: tuple[str, ...] = ()
    min_elements: int = 0
    symptom: tuple[str, ...] = ()
    inputs: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.message or self.dtypes or self.min_elements or self.symptom
                    or self.inputs)

    @property
    def on_tensors(self) -> bool:
        return bool(self.dtypes or self.min_elements or self.inputs)


@dataclass(frozen=True)
class KnownBug:
    """One upstream bug, with what dlfuzz should report for it (see the module doc)."""

    id: str
    library: str
    level: str
    kind: str
    upstream: str
    title: str
    api: str
    backend: str
    severity: tuple[str, ...]
    symptom: str
    trigger_lang: str
    trigger: str
    verify: str
    reproduces_on: str = ""
    reported_on: str = ""
    tfjs_version: str | None = None
    in_specs: bool = True
    campaign: str = ""
    note: str = ""
    rule: Rule = Rule()  # the ``match`` object (no conditions when absent)
    file: str = ""
    # Other APIs of the bug's library that the upstream report names as showing the
    # same bug (``jnp.gcd`` beside ``jnp.lcm``: one loop of one helper).
    also: tuple[str, ...] = ()

    @property
    def apis(self) -> tuple[str, ...]:
        return (self.api, *self.also)

    @property
    def campaign_name(self) -> str:
        """The unaided campaign that should find it (an entry may name its own)."""
        if self.campaign:
            return self.campaign
        if self.level == "model":
            return "model"
        if self.level == "program":
            return "program"
        if self.backend.startswith("tfjs-"):
            version = self.tfjs_version or ""
            return f"tfjs-{version}" if version and version != DEFAULT_TFJS else "tfjs"
        if self.backend in ("torch-compile", "jax-jit", "tf-xla"):
            return "api-compiled"
        return "api"


DEFAULT_TFJS = "4.22.0"


def load_bugs(folder: Path = BUGS) -> list[KnownBug]:
    """Every entry of every ``*.json`` in ``folder`` (``{"bugs": [...]}``); a malformed
    entry is a UsageError naming the file, the entry and the key."""
    out: list[KnownBug] = []
    seen: dict[str, str] = {}
    for path, entries in read_folder(folder, "bugs", list, "the known bugs", "--bugs",
                                     "bug"):
        for i, entry in enumerate(entries):
            bug = _bug(path, i, entry)
            if bug.id in seen:
                raise UsageError(f"{path}: bug id {bug.id!r} is used already in "
                                 f"{seen[bug.id]}; give each bug its own id")
            seen[bug.id] = path.name
            out.append(bug)
    return out


def _bug(path: Path, index: int, entry: Any) -> KnownBug:
    where = f"{path}: bugs[{index}]"
    if not isinstance(entry, dict):
        raise UsageError(f"{where}: an entry must be an object")
    missing = [k for k in _REQUIRED if not entry.get(k)]
    if missing:
        raise UsageError(f"{where} ({entry.get('id', '?')}): missing {', '.join(missing)}")
    unknown = set(entry) - set(_REQUIRED) - set(_OPTIONAL)
    if unknown:
        raise UsageError(f"{where} ({entry['id']}): unknown key(s) {sorted(unknown)}")
    severity = entry["severity"]
    if isinstance(severity, str):
        severity = [severity]
    bad = [s for s in severity if s not in SEVERITIES]
    if bad:
        raise UsageError(f"{where} ({entry['id']}): severity {bad} unknown; use "
                         f"{', '.join(SEVERITIES)}")
    for key, allowed in (("level", LEVELS), ("kind", KINDS),
                         ("trigger_lang", ("python", "js")), ("verify", ("signal", "stdout"))):
        if entry[key] not in allowed:
            raise UsageError(f"{where} ({entry['id']}): {key} {entry[key]!r}; use one of "
                             f"{', '.join(allowed)}")
    if not str(entry["upstream"]).startswith("https://github.com/"):
        raise UsageError(f"{where} ({entry['id']}): upstream must be a GitHub issue link")
    also = entry.get("also", [])
    if not isinstance(also, list) or not all(isinstance(a, str) and a for a in also):
        raise UsageError(f"{where} ({entry['id']}): also must be a list of API names "
                         f"(the other APIs the upstream report names), not {also!r}")
    values = {k: entry[k] for k in _REQUIRED + _OPTIONAL if k in entry and k != "match"}
    values["severity"] = tuple(severity)
    values["also"] = tuple(also)
    values["in_specs"] = bool(entry.get("in_specs", True))
    rule = _rule(f"{where} ({entry['id']})", entry["match"]) if "match" in entry else Rule()
    return KnownBug(file=path.name, rule=rule, **values)


def _rule(where: str, value: Any) -> Rule:
    """The ``match`` object of an entry; anything malformed is a UsageError naming the
    file, the entry, the key and what to write instead."""
    if not isinstance(value, dict) or not value:
        raise UsageError(f"{where}: match must be an object with one or more of "
                         f"{', '.join(_RULE_KEYS)}; remove it to match on backend, API "
                         f"and severity only")
    unknown = sorted(set(value) - set(_RULE_KEYS))
    if unknown:
        raise UsageError(f"{where}: match key(s) {unknown} unknown; use "
                         f"{', '.join(_RULE_KEYS)}")
    message = None
    if "message" in value:
        text = value["message"]
        if not isinstance(text, str) or not text:
            raise UsageError(f"{where}: match.message must be a non-empty regular "
                             f"expression string, not {text!r}")
        try:
            message = re.compile(text, re.IGNORECASE)
        except re.error as exc:
            raise UsageError(f"{where}: match.message {text!r} is no regular expression "
                             f"({exc}); fix it (escape a literal '(' as '\\(')") from None
    minimum = value.get("min_elements", 0)
    if "min_elements" in value and (isinstance(minimum, bool) or not isinstance(minimum, int)
                                    or minimum < 1):
        raise UsageError(f"{where}: match.min_elements must be a whole number >= 1, not "
                         f"{minimum!r}")
    return Rule(message=message, min_elements=minimum,
                dtypes=_names(where, value, "dtypes", tuple(DTYPES)),
                symptom=_names(where, value, "symptom", SYMPTOMS),
                inputs=_names(where, value, "inputs", INPUT_VALUES))


def _names(where: str, value: dict[str, Any], key: str, allowed: Sequence[str]
           ) -> tuple[str, ...]:
    if key not in value:
        return ()
    names = value[key]
    if not isinstance(names, list) or not names or not all(isinstance(n, str)
                                                           for n in names):
        raise UsageError(f"{where}: match.{key} must be a non-empty list of names "
                         f"(from {', '.join(allowed)}), not {names!r}")
    bad = [n for n in names if n not in allowed]
    if bad:
        raise UsageError(f"{where}: match.{key} {bad} unknown; use {', '.join(allowed)}")
    return tuple(names)


# ---- campaigns -------------------------------------------------------------------------------
CAMPAIGNS = {c.name: c for c in (
    Campaign("api", "API engine on numpy, torch, jax, tf",
             ("--engine", "api", "--backends", "numpy,torch,jax,tf")),
    Campaign("api-compiled", "API engine on torch, torch-compile, jax, jax-jit, tf, tf-xla",
             ("--engine", "api", "--backends",
              "torch,torch-compile,jax,jax-jit,tf,tf-xla")),
    Campaign("tfjs", f"API engine on tfjs-cpu, tfjs-wasm, tf (TF.js {DEFAULT_TFJS})",
             ("--engine", "api", "--backends", "tfjs-cpu,tfjs-wasm,tf",
              "--tfjs-version", DEFAULT_TFJS)),
    Campaign("tfjs-4.1.0", "API engine on tfjs-cpu, tfjs-wasm, tf (TF.js 4.1.0)",
             ("--engine", "api", "--backends", "tfjs-cpu,tfjs-wasm,tf",
              "--tfjs-version", "4.1.0")),
    Campaign("model", "model engine (defaults) on torch, torch-compile, jax, jax-jit, tf, "
             "tf-xla, ort, ort-noopt",
             ("--engine", "model", "--backends",
              "torch,torch-compile,jax,jax-jit,tf,tf-xla,ort,ort-noopt")),
    Campaign("program", "program engine (defaults) on keras-tf, keras-jax, keras-torch",
             ("--engine", "program", "--backends", "keras-tf,keras-jax,keras-torch",
              "--batch-size", "8")),
)}


def run_campaign(args: Sequence[str], out: Path, budget_s: float, seed: int,
                 extra: Sequence[str] = (), env: dict[str, str] | None = None) -> float:
    """``dlfuzz run`` into ``out``; returns the wall seconds it took."""
    cmd = [sys.executable, "-m", "dlfuzz", "run", *args, "--seed", str(seed), "--budget",
           f"{int(budget_s)}s", "--out", str(out), "--quiet", *extra]
    t0 = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env,
                          timeout=budget_s * 3 + 900)
    if proc.returncode not in (0, 130):
        raise UsageError(f"campaign {' '.join(cmd)} failed ({proc.returncode}):\n"
                         f"{proc.stderr[-2000:]}")
    return time.time() - t0


# ---- scoring ------------------------------------------------------------------------------
@dataclass
class Hit:
    bug_id: str
    root_cause: str
    seconds: float
    api: str = ""  # the API of the case that found it (planted bugs)


@dataclass(frozen=True)
class TensorFacts:
    """What a ``Rule`` reads of one input tensor of a stored case."""

    dtype: str
    elements: int
    values: frozenset[str]  # the INPUT_VALUES it holds


@dataclass
class CampaignBugs:
    """The confirmed bugs of a campaign folder, with when each was stored.

    Each row also keeps what the ``match`` conditions read: ``symptom``, ``text`` (the
    message, the worker output tail and the bug folder's ``error.log``) and ``cases``
    (the input tensors of the case as detected and, when reduced, as reduced)."""

    started: float
    rows: list[dict[str, Any]] = field(default_factory=list)


def read_campaign(folder: Path) -> CampaignBugs:
    from dlfuzz.store.db import Store

    store = Store.open(folder)
    try:
        started = float(store.meta().get("created_at", 0.0))
        rows = []
        for row in store.bugs():
            if row.status not in ("confirmed", "duplicate"):
                continue
            places = list(row.places or [])
            stored = [_stored_case(store.blobs.get, key)
                      for key in (row.case_blob, row.reduced_blob) if key]
            rows.append({"id": row.id, "api": row.api, "backend": row.guilty_backend,
                         "called": _called(stored[0] if stored else None,
                                           row.guilty_backend),
                         "severity": row.severity, "root_cause": row.root_cause,
                         "places": places, "created_at": row.created_at,
                         "updated_at": row.updated_at,
                         "suspect_op": str(row.details.get("suspect_op", "")),
                         "symptom": row.symptom, "dir": row.dir,
                         "text": _failure_text(folder, row.message, row.details,
                                               row.guilty_backend, row.dir),
                         "cases": [_case_facts(c) for c in stored if c is not None]})
        return CampaignBugs(started, rows)
    finally:
        store.close()


def _failure_text(folder: Path, message: str, details: dict[str, Any], backend: str,
                  bug_dir: str | None) -> str:
    """What dlfuzz recorded of the failure, for ``Rule.message``: a crash's message is
    only its signal; the library's own words (``Check failed: ...``) are in the worker's
    output, kept (its tail) in the details and, longer, in the guilty backend's part of
    the folder's ``error.log`` (the other backends' parts are their own business)."""
    parts = [message, str(details.get("log_tail", ""))]
    if bug_dir:
        try:
            with (folder / bug_dir / "error.log").open(errors="replace") as f:
                log = f.read(1 << 20)
        except OSError:
            log = ""  # no folder (an unconfirmed or older bug): the row's text only
        sections = re.split(r"^== (?=[^\n:]+: )", log, flags=re.MULTILINE)
        parts += [sec for sec in sections if sec.startswith(f"{backend}: ")]
    return "\n".join(parts)


def _stored_case(get: Any, key: str) -> Any:
    """The stored case ``key``; None when its blob is unreadable."""
    try:
        return get(key)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
        return None


def _called(case: Any, backend: str) -> tuple[str, ...]:
    """What ``case`` called on ``backend``'s library: its counterpart there
    (``jax.numpy.gcd`` in a ``torch.gcd`` case), the API itself on its own library.
    A bug a backend shows is a bug of what that backend ran: a JAX hang reached through
    a torch API's counterpart is JAX's ``gcd`` hanging."""
    from dlfuzz.libraries import of_backend

    library = of_backend(backend)
    if library is None or case is None:
        return ()
    return tuple(str(call.target) for lib, call in getattr(case, "calls", ()) or ()
                 if lib == library.name and isinstance(getattr(call, "target", None), str))


def _case_facts(case: Any) -> list[TensorFacts]:
    """The input tensors of a stored case (a model's weights count as inputs)."""
    tensors = list(getattr(case, "tensors", ()) or ())
    tensors += [t for _, t in getattr(case, "weights", ()) or ()]  # a model's weights
    return [tensor_facts(t.dtype, t.to_numpy()) for t in tensors]


def tensor_facts(dtype: str, array: np.ndarray) -> TensorFacts:
    """The dtype, size and special values (``INPUT_VALUES``) of one input tensor."""
    values: set[str] = set()
    if array.size == 0:
        values.add("zero-size")
    elif array.dtype.kind in "iub":
        if array.dtype.kind == "i" and (array == np.iinfo(array.dtype).min).any():
            values.add("int-min")
    else:
        real = {"complex64": "float32", "complex128": "float64"}.get(dtype, dtype)
        tiny = float(ml_dtypes.finfo(DTYPES[real]).tiny)  # the smallest normal number
        parts = [array.real, array.imag] if array.dtype.kind == "c" else [array]
        for part in (np.asarray(p, dtype=np.float64) for p in parts):
            if np.isnan(part).any():
                values.add("nan")
            if np.isposinf(part).any():
                values.add("inf")
            if np.isneginf(part).any():
                values.add("-inf")
            if ((part != 0) & (np.abs(part) < tiny)).any():
                values.add("subnormal")
    return TensorFacts(dtype, int(array.size), frozenset(values))


def _same_api(ours: str, theirs: str) -> bool:
    a, b = ours.lower(), theirs.lower()
    return a == b or a.endswith("." + b) or b.endswith("." + a)


def unmet(rule: Rule, row: dict[str, Any]) -> list[str]:
    """The ``rule`` conditions a campaign bug row fails, each said with what it showed
    (empty: it is the known bug)."""
    out = []
    if rule.message is not None and not rule.message.search(row.get("text", "")):
        message = str(row.get("text", "")).split("\n", 1)[0][:60]
        out.append(f"message {message!r} lacks /{rule.message.pattern}/")
    if rule.symptom and row.get("symptom", "") not in rule.symptom:
        out.append(f"symptom {row.get('symptom', '') or '?'} not in "
                   f"{','.join(rule.symptom)}")
    if rule.on_tensors:
        cases = row.get("cases") or []
        if not cases:
            out.append("case not readable for " + ", ".join(_tensor_keys(rule)))
        else:
            # as detected or as reduced: the one closer to the rule speaks for the row
            closest: list[str] = min((_unmet_tensors(rule, c) for c in cases), key=len)
            out += closest
    return out


def _tensor_keys(rule: Rule) -> list[str]:
    return [k for k, v in (("dtypes", rule.dtypes), ("min_elements", rule.min_elements),
                           ("inputs", rule.inputs)) if v]


def _unmet_tensors(rule: Rule, tensors: list[TensorFacts]) -> list[str]:
    out = []
    if rule.dtypes and not any(t.dtype in rule.dtypes for t in tensors):
        have = ",".join(sorted({t.dtype for t in tensors})) or "none"
        out.append(f"input dtypes {have} not in {','.join(rule.dtypes)}")
    if rule.min_elements and not any(t.elements >= rule.min_elements for t in tensors):
        most = max((t.elements for t in tensors), default=0)
        out.append(f"largest input {most} elements < {rule.min_elements}")
    held = frozenset().union(*(t.values for t in tensors))
    missing = [v for v in rule.inputs if v not in held]
    if missing:
        out.append(f"inputs hold no {','.join(missing)}")
    return out


def _unmet_place(rule: Rule, place: dict[str, Any], row: dict[str, Any]) -> list[str]:
    """A place of a merged bug keeps its input dtypes and symptom only: a condition on
    anything else cannot be shown there, so it is unmet (never guessed from the bug the
    place was merged into, which showed the mechanism on another API)."""
    out = []
    if rule.symptom and place.get("symptom", "") not in rule.symptom:
        out.append(f"symptom {place.get('symptom', '') or '?'} not in "
                   f"{','.join(rule.symptom)}")
    dtypes = str(place.get("dtypes", "?"))
    if rule.dtypes and (dtypes == "?" or not set(dtypes.split(",")) & set(rule.dtypes)):
        out.append(f"input dtypes {dtypes} not in {','.join(rule.dtypes)}")
    unseen = [k for k, v in (("message", rule.message), ("min_elements", rule.min_elements),
                             ("inputs", rule.inputs)) if v]
    if unseen:
        out.append(f"{', '.join(unseen)} not recorded for a place merged into "
                   f"{row['id']} ({row['api']})")
    return out


def _candidates(bug: KnownBug, found: CampaignBugs
                ) -> list[tuple[dict[str, Any], float, list[str]]]:
    """Every (row, when, unmet conditions) on the bug's backend, API and severity: the
    row itself first, then its places."""
    out = []
    for row in found.rows:
        if row["severity"] not in bug.severity:
            continue
        apis = (row["api"], row["suspect_op"], *row.get("called", ()))
        if row["backend"] == bug.backend and any(_same_api(a, b) for a in apis if a
                                                 for b in bug.apis):
            out.append((row, row["created_at"], unmet(bug.rule, row)))
        for place in row["places"]:
            if place.get("backend") == bug.backend and any(
                    _same_api(str(place.get("api", "")), b) for b in bug.apis):
                # a later place: at the latest by the time the row last changed
                out.append((row, row["updated_at"], _unmet_place(bug.rule, place, row)))
    return out


def match(bug: KnownBug, found: CampaignBugs) -> Hit | None:
    """The earliest confirmed bug of the campaign that is this known bug."""
    best: Hit | None = None
    for row, when, missing in _candidates(bug, found):
        if missing:
            continue
        hit = Hit(row["id"], row["root_cause"], max(0.0, when - found.started))
        if best is None or hit.seconds < best.seconds:
            best = hit
    return best


def near_miss(bug: KnownBug, found: CampaignBugs) -> str | None:
    """When no campaign bug matches: the first on the bug's backend, API and severity
    that failed only the ``match`` conditions, and which (None if there is none, or if
    the bug is matched)."""
    candidates = _candidates(bug, found)
    if any(not missing for _, _, missing in candidates):
        return None
    if not candidates:
        return None
    row, _, missing = min(candidates, key=lambda c: c[1])
    return f"near miss ({row['id']}: {'; '.join(missing)})"


# ---- verification of the triggers ------------------------------------------------------------
def verify(bug: KnownBug, timeout: float = 180) -> tuple[bool, str]:
    """Whether the bug's trigger shows the bug here (as its ``verify`` says)."""
    if bug.trigger_lang == "python":
        cmd = [sys.executable, "-c", bug.trigger]
        env = None
    else:
        version = bug.tfjs_version or DEFAULT_TFJS
        modules = TFJS_CACHE / version / "node_modules"
        if not modules.is_dir():
            return False, f"TF.js {version} not installed (run `dlfuzz tfjs install {version}`)"
        cmd = ["node", "-e", bug.trigger]
        env = dict(os.environ, NODE_PATH=str(modules))
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return False, "timed out"
    if bug.verify == "signal":
        ok = proc.returncode < 0 or proc.returncode in (134, 136, 139)
        return ok, f"exit {proc.returncode}"
    ok = "REPRODUCED" in proc.stdout
    tail = (proc.stdout.strip().splitlines() or [""])[-1]
    return ok, tail[:100]


# ---- planted bugs ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Plant:
    """A planted bug of the test suite: the module, where it shows, and how it counts."""

    module: str
    backend: str
    api: str
    severity: tuple[str, ...]
    campaign: str = "api"
    extra: tuple[str, ...] = ()


PLANTS = (
    Plant("planted_torch_cumsum", "torch", "torch.cumsum", ("wrong-result",)),
    Plant("planted_torch_conv_dilated", "torch", "torch.nn.functional.conv2d",
          ("wrong-result",)),
    Plant("planted_torch_dropout_range", "torch", "torch.nn.functional.dropout",
          ("validation",)),
    Plant("planted_torch_hardswish_bf16", "torch", "torch.nn.functional.hardswish",
          ("wrong-result",)),
    Plant("planted_torch_floordiv_extreme", "torch", "torch.floor_divide", ("crash",)),
    Plant("planted_torch_gcd_extreme", "torch", "torch.gcd", ("crash",)),
    Plant("planted_torch_pool_rank_abort", "torch", "torch.nn.functional.avg_pool2d",
          ("crash",)),
    Plant("planted_jax_cumsum", "jax", "jax.numpy.cumsum", ("wrong-result",)),
)


# ---- output --------------------------------------------------------------------------------
def _table(rows: Iterable[Sequence[str]], header: Sequence[str]) -> str:
    rows = [list(map(str, r)) for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(header)]
    line = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True))  # noqa: E731
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])


Score = tuple[Hit | None, str | None]  # the match, else the near miss (``near_miss``)


def score(bug: KnownBug, found: CampaignBugs) -> Score:
    hit = match(bug, found)
    return hit, None if hit is not None else near_miss(bug, found)


def unaided(bugs: list[KnownBug], only: set[str] | None, out: Path, budget_s: float,
            seed: int, reuse: bool) -> dict[str, Score]:
    wanted = sorted({b.campaign_name for b in bugs})
    unknown = [c for c in wanted if c not in CAMPAIGNS]
    if unknown:
        raise UsageError(f"bugs name unknown campaigns {unknown}; known: "
                         f"{', '.join(CAMPAIGNS)}")
    hits: dict[str, Score] = {}
    for name in wanted:
        if only and name not in only:
            continue
        folder = out / name
        if not (reuse and folder.exists()):
            c = CAMPAIGNS[name]
            print(f"[recall] campaign {name}: {c.title}, {int(budget_s)} s ...", flush=True)
            wall = run_campaign(c.args, folder, budget_s, seed)
            print(f"[recall] campaign {name} done in {wall:.0f} s", flush=True)
        found = read_campaign(folder)
        for bug in bugs:
            if bug.campaign_name == name:
                hits[bug.id] = score(bug, found)
    return hits


def directed(bugs: list[KnownBug], out: Path, budget_s: float, seed: int
             ) -> dict[str, Score]:
    hits: dict[str, Score] = {}
    for bug in bugs:
        if bug.level != "api" or not bug.in_specs:
            continue
        c = CAMPAIGNS[bug.campaign_name]
        folder = out / f"directed-{bug.id}"
        print(f"[recall] directed {bug.id} ({bug.api}), {int(budget_s)} s ...", flush=True)
        run_campaign((*c.args, "--apis", bug.api), folder, budget_s, seed)
        hits[bug.id] = score(bug, read_campaign(folder))
    return hits


def planted(out: Path, budget_s: float, seed: int, only: set[str] | None = None,
            directed: bool = False) -> list[tuple[Plant, Hit | None]]:
    """Each plant's campaign, unaided (all specs), or ``directed`` at the plant's API.

    The directed run measures what one visit of the API is worth: how long the
    generator needs to draw the trigger once the API gets the whole budget."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [str(PLANTED), os.environ.get("PYTHONPATH")])))
    if only:
        unknown = sorted(only - {p.module for p in PLANTS})
        if unknown:
            raise UsageError(f"--plants: unknown plant(s) {', '.join(unknown)}; plants: "
                             f"{', '.join(p.module for p in PLANTS)}")
    results = []
    for plant in PLANTS:
        if only and plant.module not in only:
            continue
        if not (PLANTED / f"{plant.module}.py").exists():
            print(f"[recall] plant {plant.module}: no such module, skipped", flush=True)
            continue
        c = CAMPAIGNS[plant.campaign]
        how = "directed" if directed else "unaided"
        folder = out / f"{'directed-' if directed else ''}planted-{plant.module}"
        print(f"[recall] planted {plant.module}, {int(budget_s)} s {how} ...", flush=True)
        aim = ("--apis", plant.api) if directed else ()
        run_campaign(c.args, folder, budget_s, seed,
                     ("--preload", f"{plant.backend}={plant.module}", *aim, *plant.extra),
                     env=env)
        results.append((plant, plant_match(plant, folder, env)))
    return results


def plant_match(plant: Plant, folder: Path, env: dict[str, str]) -> Hit | None:
    """The first confirmed bug of the campaign in ``folder`` that is the plant: on its
    backend and of its severity, with a reproducer that fails with the plant module
    imported first and passes without it (a real bug of the library fails both ways).

    The API does not decide: a plant is reached through whatever calls it (``Hit.api``
    says which API's case it was)."""
    found = read_campaign(folder)
    rows = sorted((r for r in found.rows if r["backend"] == plant.backend
                   and r["severity"] in plant.severity), key=lambda r: r["created_at"])
    for row in rows[:PLANT_CHECKS]:
        script = _reproducer(folder, row)
        if script is None:
            continue
        if _fails(script, plant.module, env) and not _fails(script, None, env):
            return Hit(row["id"], row["root_cause"],
                       max(0.0, row["created_at"] - found.started), row["api"])
    return None


PLANT_CHECKS = 40  # candidate bugs tried per plant (two reproducer runs each)


def _reproducer(folder: Path, row: dict[str, Any]) -> Path | None:
    """The guilty backend's reproducer of a campaign bug row (None without a folder)."""
    if not row.get("dir"):
        return None
    try:
        meta = json.loads((folder / row["dir"] / "meta.json").read_text())
    except (OSError, ValueError):
        return None
    name = meta.get("repro", {}).get(row["backend"])
    return folder / row["dir"] / name if name else None


def _fails(script: Path, plant: str | None, env: dict[str, str]) -> bool:
    """Whether the reproducer exits non-zero (killed included), with ``plant``
    imported first when given."""
    code = f"import runpy; runpy.run_path({str(script)!r}, run_name='__main__')"
    if plant is not None:
        code = f"import {plant}; {code}"
    try:
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True,
                              env=env, timeout=300, cwd=script.parent)
    except subprocess.TimeoutExpired:
        return True
    return proc.returncode != 0


def _seconds(hit: Hit | None) -> str:
    return "-" if hit is None else f"{hit.seconds:.0f}"


def _through(plant: Plant, hit: Hit | None) -> str:
    """The API whose case found the plant, where it is not the plant's own."""
    return "" if hit is None or hit.api == plant.api else hit.api


def _directed_cell(result: Score | None) -> str:
    if result is None:
        return ""
    hit, near = result
    return "near miss" if hit is None and near else _seconds(hit)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--budget", type=float, default=1200, help="seconds per unaided campaign")
    ap.add_argument("--only", help="comma-separated campaigns: " + ", ".join(CAMPAIGNS))
    ap.add_argument("--out", type=Path, help="keep the campaign folders here")
    ap.add_argument("--from", dest="from_dir", type=Path,
                    help="score campaign folders an earlier --out kept, running nothing")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bugs", type=Path, default=BUGS)
    ap.add_argument("--directed", action="store_true", help="also the directed runs")
    ap.add_argument("--directed-budget", type=float, default=120)
    ap.add_argument("--planted", action="store_true",
                    help="only the planted bugs of the test suite, unaided")
    ap.add_argument("--planted-budget", type=float, default=300,
                    help="seconds per unaided plant campaign; 0 runs only the directed "
                    "ones (with --directed)")
    ap.add_argument("--plants", help="with --planted: comma-separated plant modules "
                    "(default: every plant)")
    ap.add_argument("--verify", action="store_true",
                    help="only run every bug's trigger and say whether it reproduces")
    args = ap.parse_args(argv)
    try:
        return _main(args)
    except UsageError as exc:
        print(f"recall.py: {exc}", file=sys.stderr)
        return 2


def _main(args: argparse.Namespace) -> int:
    bugs = load_bugs(args.bugs)
    rows: list[tuple[str, ...]]
    if args.verify:
        rows = []
        for bug in bugs:
            ok, why = verify(bug)
            rows.append((bug.id, bug.backend, "yes" if ok else "NO", why))
        print(_table(rows, ("bug", "backend", "reproduces", "evidence")))
        bad = sum(r[2] == "NO" for r in rows)
        print(f"{len(rows) - bad}/{len(rows)} triggers reproduce their bug")
        return 1 if bad else 0
    out = args.from_dir or args.out or Path(tempfile.mkdtemp(prefix="dlfuzz-recall-"))
    out.mkdir(parents=True, exist_ok=True)
    if args.planted:
        plants = set(args.plants.split(",")) if args.plants else None
        results = (planted(out, args.planted_budget, args.seed, plants)
                   if args.planted_budget > 0 else [])
        aimed = (dict(planted(out, args.directed_budget, args.seed, plants, directed=True))
                 if args.directed else {})
        if results:
            rows = [(p.module, p.backend, p.api, "yes" if h else "no", _seconds(h),
                     _through(p, h), _seconds(aimed[p]) if p in aimed else "")
                    for p, h in results]
        else:
            rows = [(p.module, p.backend, p.api, "", "", _through(p, h), _seconds(h))
                    for p, h in aimed.items()]
        print(_table(rows, ("plant", "backend", "api", "found", "s to first hit",
                            "through", "directed s")))
        if results:
            print(f"planted bugs found unaided: {sum(h is not None for _, h in results)}"
                  f"/{len(results)} ({int(args.planted_budget)} s each)")
        if aimed:
            print(f"found directed: {sum(h is not None for h in aimed.values())}/{len(aimed)}"
                  f" ({int(args.directed_budget)} s each)")
        return 0
    only = set(args.only.split(",")) if args.only else None
    hits = unaided(bugs, only, out, args.budget, args.seed, reuse=args.from_dir is not None)
    direct = directed(bugs, out, args.directed_budget, args.seed) if args.directed else {}
    rows = []
    for bug in bugs:
        if bug.id not in hits:
            continue
        h, near = hits[bug.id]
        rows.append((bug.id, bug.level, bug.kind, bug.campaign_name,
                     "yes" if h else "no", _seconds(h), _directed_cell(direct.get(bug.id)),
                     h.root_cause if h else near or ""))
    print(_table(rows, ("bug", "level", "kind", "campaign", "found", "s to hit",
                        "directed s", "root cause (or near miss)")))
    found = sum(r[4] == "yes" for r in rows)
    print(f"\nfound unaided: {found}/{len(rows)} "
          f"({100.0 * found / max(1, len(rows)):.0f}%), {int(args.budget)} s per campaign")
    near_misses = sum(r[7].startswith("near miss") for r in rows)
    if near_misses:
        print(f"  near misses (backend, API and severity right, a match condition not): "
              f"{near_misses}")
    for level in LEVELS:
        sub = [r for r in rows if r[1] == level]
        if sub:
            print(f"  {level}: {sum(r[4] == 'yes' for r in sub)}/{len(sub)}")
    if args.directed:
        times = [h.seconds for h, _ in direct.values() if h is not None]
        print(f"directed: {len(times)}/{len(direct)} found; median time to find "
              f"{statistics.median(times):.0f} s" if times else
              f"directed: 0/{len(direct)} found")
    print(f"campaign folders: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
