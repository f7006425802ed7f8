"""Version bisection: which release of a library introduced (or fixed) a confirmed bug.

A confirmed bug has a standalone reproducer for its guilty backend (exit 1 and a
"BUG present" verdict while the bug is there, exit 0 / "OK" once it is gone). Running
that script under several releases of the guilty library tells where its behaviour
changed. The pieces are separate so each can be tested alone:

* **listing** (``parse_pypi_json``, ``parse_npm_versions``, ``select_versions``): the
  releases of the range, oldest first, final releases only unless asked for pre-releases;
* **environments** (``prepare``): a TF.js release goes through ``dlfuzz tfjs install``'s
  side-by-side cache and is picked with ``$DLFUZZ_TFJS_DIR``; a Python library gets one
  cached virtual environment per release (``uv`` when it is on PATH, else ``venv`` + pip,
  which honours the machine's pip configuration such as local wheel folders);
* **probing** (``probe``): one run of the reproducer, judged as ``confirm`` judges it;
  "bad", "good" or "skip" (no verdict: a release that cannot be installed or whose
  script fails on its own, as ``git bisect skip``);
* **search** (``search``): binary search assuming the verdict changes once in the range
  (a bug that comes, goes and comes back is reported at one of its transitions only).
  Both ends are probed first; they must differ. Old-bad/new-good is a *fix*, old-good/
  new-bad a *regression*; both are reported as the last release before the change and the
  first one after it.

Verdicts are cached per (bug signature, reproducer content, library, release) under the
bisection cache, so a re-run probes nothing it has already judged.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from dlfuzz.errors import DlfuzzError, UsageError
from dlfuzz.libraries.record import Library

BAD, GOOD, SKIP = "bad", "good", "skip"
PYPI_JSON = "https://pypi.org/pypi/{name}/json"
_MARKER = ".dlfuzz-bisect-installed"


@dataclass(frozen=True)
class Probe:
    """The reproducer's verdict on one release."""

    version: str
    verdict: str  # bad | good | skip
    seconds: float
    line: str  # the script's verdict line, or why there is none
    cached: bool = False


@dataclass(frozen=True)
class Outcome:
    """Where the verdict changes, and every probe that showed it."""

    direction: str  # regression (good -> bad) | fix (bad -> good)
    before: str  # the last release with the older verdict
    after: str  # the first release with the newer verdict
    skipped: tuple[str, ...]  # releases between before and after that gave no verdict
    probes: tuple[Probe, ...] = field(default_factory=tuple)

    @property
    def first_bad(self) -> str | None:
        return self.after if self.direction == "regression" else None

    @property
    def last_good(self) -> str | None:
        return self.before if self.direction == "regression" else None

    @property
    def last_bad(self) -> str | None:
        return self.before if self.direction == "fix" else None

    @property
    def first_good(self) -> str | None:
        return self.after if self.direction == "fix" else None

    def summary(self) -> str:
        if self.direction == "regression":
            text = f"first bad {self.after}, last good {self.before}"
        else:
            text = f"fixed in {self.after} (first good), last bad {self.before}"
        if self.skipped:
            text += (f"; the change may lie in the releases that gave no verdict: "
                     f"{', '.join(self.skipped)}")
        return text

    def as_json(self) -> dict[str, Any]:
        return {"direction": self.direction, "first_bad": self.first_bad,
                "last_good": self.last_good, "last_bad": self.last_bad,
                "first_good": self.first_good, "skipped": list(self.skipped),
                "probes": [asdict(p) for p in self.probes]}


class NoTransition(DlfuzzError):
    """Both ends of the range gave the same verdict (or one gave none); ``probes`` holds
    what they said, so the caller can still show it."""

    def __init__(self, message: str, probes: tuple[Probe, ...]) -> None:
        super().__init__(message)
        self.probes = probes


# ---- listing ----------------------------------------------------------------------------
def _version(text: str) -> Version | None:
    try:
        return Version(text)
    except InvalidVersion:
        return None


def sort_versions(versions: Sequence[str], pre: bool = False) -> list[str]:
    """Valid release numbers, oldest first, without pre-releases unless ``pre``; each once."""
    parsed = {v: _version(v) for v in versions}
    kept = [v for v, p in parsed.items() if p is not None and (pre or not p.is_prerelease)]
    return sorted(kept, key=lambda v: parsed[v])  # type: ignore[arg-type, return-value]


def parse_pypi_json(data: dict[str, Any], pre: bool = False) -> list[str]:
    """The releases in a PyPI JSON API answer that can be installed: at least one file,
    not every file yanked."""
    releases = data.get("releases") or {}
    usable = [v for v, files in releases.items()
              if files and not all(f.get("yanked", False) for f in files)]
    return sort_versions(usable, pre)


def parse_npm_versions(text: str, pre: bool = False) -> list[str]:
    """The releases in ``npm view PKG versions --json`` (a list, or one string)."""
    data = json.loads(text)
    return sort_versions([data] if isinstance(data, str) else list(data), pre)


def registry_versions(lib: Library, pre: bool = False) -> list[str]:
    """Every release of ``lib`` its registry lists (npm for TF.js, PyPI otherwise)."""
    if lib.npm:
        npm = shutil.which("npm")
        if npm is None:
            raise UsageError("listing TF.js releases needs `npm` on PATH; install Node.js "
                             "with npm, or give --versions as an explicit list A,B,C")
        proc = subprocess.run([npm, "view", lib.npm, "versions", "--json"],
                              capture_output=True, text=True, timeout=120, check=False)
        if proc.returncode != 0:
            raise UsageError(f"cannot list the releases of {lib.npm}: npm view failed "
                             f"({proc.stderr.strip()[-500:]}); check the npm registry is "
                             "reachable, or give --versions as an explicit list A,B,C")
        return parse_npm_versions(proc.stdout, pre)
    name = lib.distributions[0]
    url = PYPI_JSON.format(name=name)
    try:
        with urllib.request.urlopen(url, timeout=60) as answer:  # noqa: S310 - fixed https URL
            data = json.loads(answer.read().decode("utf-8"))
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise UsageError(f"cannot list the releases of {name} from {url}: {exc}; give "
                         "--versions as an explicit list A,B,C") from exc
    return parse_pypi_json(data, pre)


def select_versions(spec: str, listing: Callable[[], list[str]], pre: bool = False
                    ) -> list[str]:
    """The releases ``--versions`` names: ``A..B`` (both ends included, from ``listing``)
    or an explicit list ``A,B,C`` (used as given, sorted; no registry asked)."""
    spec = spec.strip()
    if ".." in spec:
        low, _, high = spec.partition("..")
        ends = [low.strip(), high.strip()]
        for end in ends:
            if _version(end) is None:
                raise UsageError(f"--versions {spec!r}: {end!r} is not a release number; "
                                 "give A..B, e.g. 4.1.0..4.22.0")
        lo, hi = sorted(Version(e) for e in ends)
        known = listing()
        chosen = [v for v in known if lo <= Version(v) <= hi]
        for end in ends:
            if end not in chosen and Version(end) not in {Version(v) for v in chosen}:
                near = ", ".join(known[-5:]) or "none"
                raise UsageError(f"--versions {spec!r}: release {end} is not listed (or "
                                 f"is a pre-release: add --pre); latest listed: {near}")
        return chosen
    items = [v.strip() for v in spec.split(",") if v.strip()]
    bad = [v for v in items if _version(v) is None]
    if bad or len(items) < 2:
        raise UsageError(f"--versions {spec!r}: give a range A..B or at least two release "
                         "numbers A,B,C (e.g. 4.1.0,4.10.0,4.22.0)")
    return sort_versions(items, pre=True)


# ---- environments -----------------------------------------------------------------------
@dataclass(frozen=True)
class Release:
    """How to run a reproducer under one release: an interpreter and extra environment."""

    version: str
    python: str  # "" for a JavaScript library
    env: dict[str, str]


def local_wheel_dirs() -> list[Path]:
    """pip's ``find-links`` folders (``$PIP_FIND_LINKS``, ``pip config``): where wheels
    that no registry serves (a CPU build of torch) may lie."""
    found = [p for p in os.environ.get("PIP_FIND_LINKS", "").split() if p]
    proc = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True,
                          text=True, timeout=60, check=False)
    for line in proc.stdout.splitlines():
        key, _, value = line.partition("=")
        if key.endswith("find-links"):
            found += value.strip().strip("'\"").split()
    return [Path(p.removeprefix("file://")) for p in dict.fromkeys(found)
            if Path(p.removeprefix("file://")).is_dir()]


def local_torch_versions(dirs: Sequence[Path]) -> list[str]:
    """Torch releases with a CPU wheel in ``dirs`` (``torch-2.13.0+cpu-...whl``)."""
    out = []
    for d in dirs:
        for wheel in d.glob("torch-*+cpu-*.whl"):
            out.append(wheel.name.split("-")[1].split("+")[0])
    return sort_versions(out, pre=True)


def check_torch(versions: Sequence[str], dirs: Sequence[Path]) -> None:
    """Torch from PyPI is a CUDA build of several GB per release: bisect only releases
    whose CPU wheel lies in a local wheel folder, and say so otherwise."""
    local = set(local_torch_versions(dirs))
    missing = [v for v in versions if v not in local]
    if missing:
        where = ", ".join(str(d) for d in dirs) or "none configured"
        raise UsageError(
            f"--library torch: no local CPU wheel for release(s) {', '.join(missing)}. "
            "PyPI serves torch for Linux as CUDA builds of several GB each, so dlfuzz "
            "installs torch only from CPU wheels in pip's find-links folders "
            f"({where}); releases available there: {', '.join(sorted(local)) or 'none'}. "
            "Put torch-VERSION+cpu-*.whl files (from https://download.pytorch.org/whl/cpu, "
            "fetched where that site is reachable) into such a folder, or bisect another "
            "library")


def python_requirements(lib: Library, version: str) -> list[str]:
    """What a release's environment needs: the library's distributions at ``version``
    (JAX: jax and jaxlib) and numpy, which the reproducers use."""
    own = [f"{d}=={version}" for d in lib.distributions if d not in ("onnx",)]
    return [*own, "numpy"]


def venv_dir(cache: Path, lib: Library, version: str) -> Path:
    return cache / f"{lib.distributions[0]}-{version}"


def _venv_python(directory: Path) -> Path:
    return directory / "bin" / "python"


def _uv() -> str | None:
    """``uv`` on PATH or beside this interpreter (a venv that installed it)."""
    here = Path(sys.executable).parent / "uv"
    return shutil.which("uv") or (str(here) if here.is_file() else None)


def install_python_release(cache: Path, lib: Library, version: str) -> Path:
    """The interpreter of a cached venv holding ``lib`` at ``version``; created once."""
    directory = venv_dir(cache, lib, version)
    python = _venv_python(directory)
    if (directory / _MARKER).is_file():
        return python
    shutil.rmtree(directory, ignore_errors=True)  # a half-made one from a stopped run
    directory.parent.mkdir(parents=True, exist_ok=True)
    wants = python_requirements(lib, version)
    uv = _uv()
    if uv is not None:
        steps = [[uv, "venv", "--quiet", "--python", sys.executable, str(directory)],
                 [uv, "pip", "install", "--quiet", "--python", str(python), *wants]]
    else:
        steps = [[sys.executable, "-m", "venv", str(directory)],
                 [str(python), "-m", "pip", "install", "--quiet", *wants]]
    for argv in steps:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=1800, check=False)
        if proc.returncode != 0:
            shutil.rmtree(directory, ignore_errors=True)
            raise DlfuzzError(f"installing {' '.join(wants)} failed: "
                              f"{(proc.stderr or proc.stdout).strip()[-400:]}")
    (directory / _MARKER).write_text(json.dumps(wants))
    return python


def prepare(lib: Library, version: str, cache: Path) -> Release:
    """Install ``version`` of ``lib`` (or find it installed) and say how to run it."""
    if lib.npm:
        from dlfuzz.backends.tfjs import install

        directory = install.ensure_installed(version)
        return Release(version, "", {"DLFUZZ_TFJS_DIR": str(directory),
                                     lib.release_env: version})
    return Release(version, str(install_python_release(cache, lib, version)), {})


def installed_versions(lib: Library, cache: Path) -> list[str]:
    """Releases already installed: no install happens while probing only these."""
    if lib.npm:
        from dlfuzz.backends.tfjs import install

        return sort_versions(install.installed_versions(), pre=True)
    prefix = f"{lib.distributions[0]}-"
    if not cache.is_dir():
        return []
    return sort_versions([p.name[len(prefix):] for p in cache.iterdir()
                          if p.name.startswith(prefix) and (p / _MARKER).is_file()], pre=True)


# ---- probing ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Reproducer:
    """The guilty backend's script of a bug and how the campaign ran it."""

    folder: Path
    script: Path
    backend: str
    symptom: str
    signature: str
    preload: tuple[str, ...]

    def key(self) -> str:
        """The cache key: signature, backend, the script's content and the preloads it
        runs with (a verdict with a planted patch loaded says nothing about a run
        without it, as ``--no-preload`` asks)."""
        digest = hashlib.sha256()
        for part in (self.signature, self.backend, self.script.read_text(), *self.preload):
            digest.update(part.encode("utf-8", "backslashreplace") + b"\0")
        return digest.hexdigest()[:24]


def command(repro: Reproducer, release: Release) -> list[str]:
    """The argv running the reproducer under ``release``."""
    from dlfuzz.triage.confirm import reproducer_command

    python = release.python or sys.executable
    saved = {k: os.environ.get(k) for k in release.env}
    os.environ.update(release.env)  # a Node command loads tfjs from $DLFUZZ_TFJS_DIR
    try:
        argv = reproducer_command(repro.backend, repro.script, repro.preload, python)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    if "DLFUZZ_TFJS_DIR" in release.env and argv[:1] == ["node"] and len(argv) > 2 \
            and argv[1].endswith("run_html.js"):
        argv += ["--tfjs-dir", release.env["DLFUZZ_TFJS_DIR"]]  # the browser page's tfjs
    return argv


def probe(repro: Reproducer, release: Release, timeout_s: float) -> Probe:
    """Run the reproducer once under ``release`` and judge it as triage did."""
    from dlfuzz.triage.confirm import judge_reproducer, reproducer_process_env

    argv = command(repro, release)
    env = reproducer_process_env(repro.backend, dict(release.env))
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s,
                              cwd=repro.folder, env=env, start_new_session=True)
    except subprocess.TimeoutExpired:
        check = judge_reproducer(repro.symptom, None, "", "", timeout_s)
    except OSError as exc:
        return Probe(release.version, SKIP, time.perf_counter() - t0, f"cannot run: {exc}")
    else:
        check = judge_reproducer(repro.symptom, proc.returncode, proc.stdout, proc.stderr,
                                 timeout_s)
    seconds = time.perf_counter() - t0
    if check.reproduced is True:
        return Probe(release.version, BAD, seconds, check.verdict)
    if check.reproduced is False and (check.exit_status == 0
                                      or check.verdict.startswith("OK")):
        return Probe(release.version, GOOD, seconds, check.verdict)
    return Probe(release.version, SKIP, seconds, f"no verdict: {check.verdict}")


class VerdictCache:
    """Verdicts per release of one reproducer, in ``<cache>/results/<key>.json``.

    Only "bad" and "good" are kept: a skip (an install that failed, a script that broke)
    may go away on the next try.
    """

    def __init__(self, cache: Path, key: str) -> None:
        self.path = cache / "results" / f"{key}.json"
        try:
            self.data: dict[str, dict[str, Any]] = json.loads(self.path.read_text())
        except (OSError, ValueError):
            self.data = {}

    def get(self, version: str) -> Probe | None:
        item = self.data.get(version)
        if item is None:
            return None
        return Probe(version, str(item["verdict"]), float(item["seconds"]),
                     str(item["line"]), cached=True)

    def put(self, found: Probe) -> None:
        if found.verdict == SKIP:
            return
        from dlfuzz.store.artifacts import write_atomic

        self.data[found.version] = {"verdict": found.verdict, "seconds": round(found.seconds, 2),
                                    "line": found.line}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(self.path, (json.dumps(self.data, indent=1) + "\n").encode("utf-8"))


# ---- search -----------------------------------------------------------------------------
def _verdict_of(versions: Sequence[str], index: int, probe_at: Callable[[str], Probe],
                seen: list[Probe]) -> str:
    found = probe_at(versions[index])
    seen.append(found)
    return found.verdict


def search(versions: Sequence[str], probe_at: Callable[[str], Probe]) -> Outcome:
    """Where the verdict of ``probe_at`` changes along ``versions`` (oldest first).

    Assumes one change in the range. Both ends first: they must both give a verdict and
    differ (``NoTransition`` otherwise). Then halve the interval; a release that gives no
    verdict is skipped and its nearest untried neighbour inside the interval is tried.
    """
    if len(versions) < 2:
        raise UsageError(f"bisection needs at least two releases; the range holds "
                         f"{len(versions)}: {', '.join(versions) or 'none'}")
    seen: list[Probe] = []
    first = _verdict_of(versions, 0, probe_at, seen)
    last = _verdict_of(versions, len(versions) - 1, probe_at, seen)
    if SKIP in (first, last):
        end = versions[0] if first == SKIP else versions[-1]
        why = next(p.line for p in seen if p.version == end)
        raise NoTransition(f"the reproducer gives no verdict on {end} ({why}); choose "
                           "range ends where it runs", tuple(seen))
    if first == last:
        state = "present" if first == BAD else "absent"
        raise NoTransition(f"the bug is {state} in both {versions[0]} and {versions[-1]}: "
                           "no change to bisect in this range; widen it", tuple(seen))
    lo, hi = 0, len(versions) - 1
    skipped: set[int] = set()
    while True:
        inside = [i for i in range(lo + 1, hi) if i not in skipped]
        if not inside:
            break
        middle = (lo + hi) // 2
        index = min(inside, key=lambda i: (abs(i - middle), i))
        verdict = _verdict_of(versions, index, probe_at, seen)
        if verdict == SKIP:
            skipped.add(index)
        elif verdict == first:
            lo = index
        else:
            hi = index
    direction = "regression" if first == GOOD else "fix"
    gaps = tuple(versions[i] for i in sorted(skipped) if lo < i < hi)
    return Outcome(direction, versions[lo], versions[hi], gaps, tuple(seen))
