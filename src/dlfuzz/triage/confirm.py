"""Confirmation of a new finding under the conditions it was detected in.

A finding seen once in a long-lived worker may be caused by what earlier cases left
behind (a TF.js wasm heap corrupted by the previous case, a library's global state), by a
limit shorter than the detection's (a later case of a batch whose signature already hung
gets a fraction of the timeout), or by the generated program itself. A maintainer would
close such a report, so a bug is called ``confirmed`` only when:

1. every re-run shows the same signature (one case per run). A crash's or a hang's
   re-runs of the guilty backend are in a *fresh* worker process (``Pool.fresh_worker``:
   a new interpreter, hence a new Node child with a new wasm instance or Chromium page
   for TF.js), since what an earlier case left in the process (a file, a corrupted heap)
   can kill it, each with the detection's full case timeout (no repeated-signature
   shortcut applies: a hang must hang again for the whole limit). Other findings are
   re-run in the pool's own workers (``FRESH_SYMPTOMS``), and the fresh process that
   checks them is the reproducer of step 3: a fresh worker for each of them had cost a
   library start (3-8 s of CPU for JAX or TF on the 2-core machine) per new bug, 27 in a
   300 s campaign;
2. the re-runs do not show a generated program that is itself invalid: one that fails
   on every backend the same way, or raises a Python error only generated code raises
   (``NameError``, a failed import) before it reaches the library: ``invalid-program``;
3. the guilty backend's standalone reproducer, run once in a subprocess with the
   detection's timeout (plus the measured start-up of its library), ends with its
   "BUG present" verdict (or dies of a signal / hangs where the bug is a crash / hang).
   A reproducer that says OK, or fails without a verdict (a traceback of its own), makes
   the bug ``unreproduced``: listed with ``--all``, never among the confirmed bugs.

A crash or hang costs a worker start per new bug, every bug one subprocess; known
signatures only count an occurrence.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dlfuzz.cases import Finding, Outcome

# One re-run of a case: (case, backends to run, guilty backend) -> outcomes and findings.
ReRun = Callable[[Any, Sequence[str], str], tuple[dict[str, Outcome], list[Finding]]]
# A plain checker (cases, backends) -> [(outcomes, findings)], as the campaign's ``check``.
Checker = Callable[[Sequence[Any], Sequence[str]],
                   list[tuple[dict[str, Outcome], list[Finding]]]]

# Python errors that only the generated program's own code raises: a library that is
# reached raises its own exceptions, not an unknown name or a missing module.
_GENERATED_CODE_ERRORS = frozenset({"NameError", "UnboundLocalError", "SyntaxError",
                                    "ImportError", "ModuleNotFoundError"})
# An attribute or call on a plain tuple, list or None ("'tuple' object has no attribute
# 'flatten'": an nn.LSTM's (output, state) tuple fed to the next layer) where no backend
# runs the program is the generated wiring's mistake. Where another backend runs it,
# the program is valid and the error is the library's (keras-jax raised "'str' object
# has no attribute '_error_repr'" from inside jax while keras-torch trained the model).
_BUILTIN_VALUE_ERROR = re.compile(r"^'(tuple|list|NoneType)' object "
                                  r"(has no attribute|is not callable|is not subscriptable)")
SYMPTOMS_KILLED = frozenset({"crash", "oom"})  # a signal death reproduces these
# Findings re-run in a fresh worker when confirmed (the others in the pool's workers).
FRESH_SYMPTOMS = frozenset({"crash", "oom", "timeout"})
_SYMPTOMS_HANG = frozenset({"timeout"})  # a reproducer stopped by the limit reproduces it
# Start-up of the reproducer's interpreter (library import) on top of the case timeout:
# the measured start of the fresh worker (interpreter, library and preloads, under the
# machine's load of the moment), doubled, and at least this many seconds. A hang's
# reproducer runs this long, so the allowance is kept close to the measured start.
MIN_START_ALLOWANCE_S = 5.0
# A timeout is a hang only if the case still runs after this many times the detection's
# limit in a fresh worker; one that ends within it is a slow run (a large network
# training on a loaded machine), which a maintainer would not call a hang.
HANG_FACTOR = 4.0


@dataclass(frozen=True)
class Confirmation:
    """What the re-runs of a new finding showed."""

    status: str  # confirmed | flaky | invalid-program | slow
    hits: int
    runs: int
    outcomes: dict[str, Outcome] | None  # of the last re-run showing the finding
    note: str = ""
    # A hang confirmed by its re-runs at the limit whose slow-run check (``still_hangs``)
    # the caller runs later, in the background (``confirm(defer_hang_check=True)``).
    hang_check_due: bool = False


@dataclass(frozen=True)
class SlowRun:
    """A "hang" whose case ended within ``HANG_FACTOR`` times the limit: a slow run."""

    seconds: float

    @property
    def note(self) -> str:
        return (f"ends after {self.seconds:.1f} s, within {HANG_FACTOR:g} times the limit: "
                "a slow run, not a hang")


@dataclass(frozen=True)
class ReproCheck:
    """What the guilty backend's standalone reproducer said."""

    reproduced: bool | None  # None: there is no reproducer for the guilty backend
    verdict: str
    exit_status: int | None = None
    seconds: float = 0.0

    def as_meta(self) -> dict[str, Any]:
        return {"reproduced": self.reproduced, "verdict": self.verdict,
                "exit_status": self.exit_status, "seconds": round(self.seconds, 2)}


def invalid_program(case: Any, outcomes: dict[str, Outcome]) -> str:
    """Why a program case is itself invalid ("" when it is not, or is no program).

    Every backend failing the same way means the program, not one library, is wrong;
    a ``NameError``, a failed import, or (where no backend runs the program) an
    attribute of a plain tuple/list/None comes from the generated code, not from a
    library (a library bug looks different on different backends).
    """
    if getattr(case, "kind", "") != "program" or not outcomes:
        return ""
    none_ran = not any(o.ok for o in outcomes.values())
    own = [o for o in outcomes.values() if o.status == "exception"
           and (o.exc_type in _GENERATED_CODE_ERRORS
                or (none_ran and o.exc_type in ("AttributeError", "TypeError")
                    and _BUILTIN_VALUE_ERROR.match(o.message)))]
    if own:
        return f"the generated program raises {own[0].exc_type}: {own[0].message[:200]}"
    if len(outcomes) >= 2 and all(o.status == "exception" for o in outcomes.values()):
        shapes = {(o.exc_type, _normalise(o.message)) for o in outcomes.values()}
        if len(shapes) == 1:
            o = next(iter(outcomes.values()))
            return (f"every backend raises the same {o.exc_type}: {o.message[:200]} "
                    "(the program, not a library, is wrong)")
    return ""


def _normalise(message: str) -> str:
    """A message without numbers, addresses and backend names: the same error anywhere."""
    text = re.sub(r"0x[0-9a-f]+|\d+", "#", message.lower())
    return re.sub(r"\b(tensorflow|tf|jax|torch|pytorch|keras)\b", "lib", text)[:300]


def confirm(finding: Finding, case: Any, needed: Sequence[str], runs: int,
            rerun: ReRun, defer_hang_check: bool = False) -> Confirmation:
    """Re-run ``case`` ``runs`` times; confirmed only if every re-run shows the signature.

    A hang's last re-run is the slow-run check itself (``still_hangs``: the guilty
    backend alone, ``HANG_FACTOR`` times the limit): a hang that still runs there has
    shown its signature once more. It used to come after ``runs`` re-runs at the limit,
    one limit and a worker start more per hang (a torch ``eigvals`` hang took about 70 s
    of a 600 s campaign's triage). With ``defer_hang_check`` that check is not run here:
    the hang is ``confirmed`` by its re-runs at the limit with ``hang_check_due``, and the
    caller runs the check later (triage: in the background, before the reproducer; a
    ``jnp.lcm`` hang's check stopped a 300 s campaign for 45 s)."""
    hits = 0
    last: dict[str, Outcome] | None = None
    prepare = getattr(rerun, "prepare", None)  # FreshRerun: whether a fresh worker is due
    if prepare is not None:
        prepare(finding)
    still_hangs = getattr(rerun, "still_hangs", None)
    long_last = finding.symptom in _SYMPTOMS_HANG and still_hangs is not None and runs >= 2
    try:
        for _ in range(runs - 1 if long_last else runs):
            outcomes, findings = rerun(case, needed, finding.guilty_backend)
            why = invalid_program(case, outcomes)
            if why:
                return Confirmation("invalid-program", hits, runs, None, why)
            if any(f.signature == finding.signature for f in findings):
                hits += 1
                last = outcomes
    finally:
        close = getattr(rerun, "close", None)  # a fresh worker lives for one confirmation
        if close is not None:
            close()
    if last is None or hits < (runs - 1 if long_last else runs):
        return Confirmation("flaky", hits, runs, last)
    if finding.symptom in _SYMPTOMS_HANG and still_hangs is not None:
        if defer_hang_check:
            return Confirmation("confirmed", hits, runs, last, hang_check_due=True)
        hangs, seconds = still_hangs(case, finding.guilty_backend)
        if not hangs:
            return Confirmation("slow", hits, runs, last, SlowRun(seconds).note)
        hits = runs if long_last else hits
    return Confirmation("confirmed", hits, runs, last)


def rerun_in_pool(check: Checker) -> ReRun:
    """Re-runs through the campaign's own workers, one case per run (no shortened limit
    for a repeated signature): for callers without fresh workers (unit tests)."""
    def run(case: Any, needed: Sequence[str], guilty: str
            ) -> tuple[dict[str, Outcome], list[Finding]]:
        return check([case], needed)[0]
    return run


class FreshRerun:
    """Re-runs with the guilty backend in a fresh worker (a crash or a hang:
    ``FRESH_SYMPTOMS``, set by ``prepare``), the others in the pool.

    ``judge`` applies every oracle to (case, outcomes) pairs, as detection did. The fresh
    worker is started once per new finding and kept for its re-runs (one case per
    ``run`` call: each gets the full timeout); a re-run after a crash starts another one.
    """

    def __init__(self, pool: Any, judge: Callable[[list[tuple[Any, dict[str, Outcome]]]],
                                                   list[list[Finding]]]) -> None:
        self.pool = pool
        self.judge = judge
        self.start_s: dict[str, float] = {}  # measured fresh start per backend
        self._fresh: tuple[Any, str, Any] | None = None  # (case id, backend, worker)
        self._fresh_due = True

    def prepare(self, finding: Finding) -> None:
        """Before a finding's re-runs: a fresh worker for a crash or a hang only."""
        self._fresh_due = finding.symptom in FRESH_SYMPTOMS

    def __call__(self, case: Any, needed: Sequence[str], guilty: str
                 ) -> tuple[dict[str, Outcome], list[Finding]]:
        others = [b for b in needed if b != guilty or not self._fresh_due]
        outcomes: dict[str, Outcome] = {}
        if guilty in needed and self._fresh_due:
            outcomes[guilty] = self._fresh_run(case, guilty)
        if others:
            outcomes.update(self.pool.run([case], only=others)[0])
        ordered = {b: outcomes[b] for b in needed if b in outcomes}
        return ordered, self.judge([(case, ordered)])[0]

    def _fresh_run(self, case: Any, backend: str) -> Outcome:
        if self._fresh is None or self._fresh[:2] != (case.id, backend):
            self.close()
            worker = self.pool.fresh_worker(backend)
            # Its library's import, not the wait for it (a spare may have been ready) nor
            # the fork that started it (milliseconds, where a reproducer imports anew).
            self.start_s[backend] = worker.stats.import_s
            self._fresh = (case.id, backend, worker)
        return self._fresh[2].run([case])[0]

    def still_hangs(self, case: Any, backend: str, factor: float = HANG_FACTOR
                    ) -> tuple[bool, float]:
        """Whether ``case`` still runs on ``backend`` after ``factor`` times the limit,
        in a fresh worker; and the seconds it ran. A slow computation (training a large
        network on a loaded machine) ends there; a hang does not. Its own worker: triage
        calls this from its background thread while it confirms the next finding with
        ``_fresh`` (``confirm`` has closed a hang's re-run worker before)."""
        worker = self.pool.fresh_worker(backend, timeout_factor=factor)
        try:
            t0 = time.perf_counter()
            outcome = worker.run([case])[0]
            return outcome.status == "timeout", time.perf_counter() - t0
        finally:
            worker.close()

    def reproduce(self, folder: Path, finding: Finding) -> ReproCheck:
        """The guilty backend's reproducer in ``folder``, under the detection's limit."""
        backend = finding.guilty_backend
        if backend not in self.pool.configs:
            return ReproCheck(None, f"no worker configuration for {backend!r}")
        return self.pool.in_folder_near(
            backend, folder, run_reproducer, backend, finding.symptom,
            self.pool.configs[backend], self.pool.case_timeout(backend),
            self._start_s(backend))

    def _start_s(self, backend: str) -> float:
        """The library's measured start: a fresh worker's, else the pool worker's last
        (a finding confirmed in the pool has started no fresh one)."""
        if backend in self.start_s:
            return self.start_s[backend]
        stats = self.pool.stats().get(backend)
        return float(getattr(stats, "import_s", 0.0) or 0.0)

    def close(self) -> None:
        """Stop the fresh worker of the last confirmation."""
        if self._fresh is not None:
            self._fresh[2].close()
            self._fresh = None


# ---- the reproducer ---------------------------------------------------------------------
def reproducer_command(backend: str, script: Path, preload: Sequence[str], python: str
                       ) -> list[str]:
    """The argv running one reproducer: a backend that writes scripts in another language
    (``repro.js`` for Node, an HTML page for the browser) says how to run them; Python
    scripts run in the campaign's interpreter with the preloads imported first."""
    from dlfuzz import registry
    from dlfuzz.errors import UsageError

    try:
        cls = registry.load("backend", backend)
    except UsageError:
        cls = None
    if cls is not None and hasattr(cls, "repro_command"):
        return list(cls().repro_command(script, list(preload)))
    code = "".join(f"import {m}; " for m in preload)
    code += f"import runpy; runpy.run_path({str(script)!r}, run_name='__main__')"
    return [python, "-c", code]


def reproducer_env(backend: str) -> dict[str, str]:
    """Environment variables a backend's reproducer needs when preloads are imported
    before the script (the backend's ``repro_env``: Keras' ``KERAS_BACKEND``)."""
    from dlfuzz import registry
    from dlfuzz.errors import UsageError

    try:
        cls = registry.load("backend", backend)
    except UsageError:
        return {}
    if not hasattr(cls, "repro_env"):
        return {}
    return dict(cls().repro_env or {})


def reproducer_process_env(backend: str, extra: dict[str, str] | None = None
                           ) -> dict[str, str]:
    """The whole environment a reproducer runs in: ours, the backend's ``repro_env`` and
    ``extra``, with relative ``PYTHONPATH`` entries made absolute (the script runs with
    its own folder as working directory)."""
    env = {**os.environ, **reproducer_env(backend), **(extra or {})}
    if env.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p or os.curdir)
                                            for p in env["PYTHONPATH"].split(os.pathsep))
    return env


def verdict_line(stdout: str, stderr: str) -> str:
    """The script's verdict: its last line on stdout; else the last on stderr (a crash)."""
    for text in (stdout, stderr):
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        if lines:
            return lines[-1]
    return "(no output)"


def judge_reproducer(symptom: str, rc: int | None, stdout: str, stderr: str,
                     timeout_s: float) -> ReproCheck:
    """Whether a finished (or stopped: ``rc`` None) reproducer shows the bug."""
    if rc is None:
        hang = symptom in _SYMPTOMS_HANG
        return ReproCheck(hang, f"(no verdict: stopped after {timeout_s:g} s)", None)
    line = verdict_line(stdout, "" if stdout.strip() else stderr)
    if line.startswith("BUG present"):
        return ReproCheck(True, line, rc)
    if rc == 0 or line.startswith("OK"):
        return ReproCheck(False, line, rc)
    if rc < 0:
        name = _signal_name(-rc)
        hang = name == "SIGALRM"  # the script's own alarm ends a hang
        shows = symptom in (_SYMPTOMS_HANG if hang else SYMPTOMS_KILLED | _SYMPTOMS_HANG)
        return ReproCheck(shows, f"killed by {name}", rc)
    if "Traceback (most recent call last)" in stderr:
        last = verdict_line("", stderr)
        return ReproCheck(False, f"the reproducer failed without a verdict: {last}", rc)
    return ReproCheck(symptom in SYMPTOMS_KILLED, f"exit {rc}: {line}", rc)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def run_reproducer(folder: Path, backend: str, symptom: str, config: Any,
                   case_timeout_s: float, start_s: float = 0.0) -> ReproCheck:
    """Run the guilty backend's reproducer in ``folder`` once and judge its verdict.

    ``config`` is the backend's ``WorkerConfig`` (interpreter, preloads); the limit is
    the detection's case timeout plus the library's start-up (``start_s`` measured on
    the fresh worker, doubled, at least ``MIN_START_ALLOWANCE_S``).
    """
    import json

    folder = folder.resolve()  # the script runs with its folder as working directory
    meta_path = folder / "meta.json"
    if not meta_path.is_file():
        return ReproCheck(None, "no bug folder")
    name = json.loads(meta_path.read_text()).get("repro", {}).get(backend)
    if not name or not (folder / name).is_file():
        return ReproCheck(None, f"no reproducer for {backend}")
    python = getattr(config, "python", "") or sys.executable
    preload = tuple(getattr(config, "preload", ()))
    argv = reproducer_command(backend, folder / name, preload, python)
    timeout = case_timeout_s + max(MIN_START_ALLOWANCE_S, 2 * start_s)
    env = reproducer_process_env(backend)
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              cwd=folder, env=env, start_new_session=True)
    except subprocess.TimeoutExpired:
        check = judge_reproducer(symptom, None, "", "", timeout)
    except OSError as exc:
        return ReproCheck(None, f"cannot run {name}: {exc}")
    else:
        check = judge_reproducer(symptom, proc.returncode, proc.stdout, proc.stderr, timeout)
    return ReproCheck(check.reproduced, check.verdict, check.exit_status,
                      time.perf_counter() - t0)


def record_in_folder(folder: Path, check: ReproCheck) -> None:
    """Add the reproducer's verdict to the bug folder's ``meta.json`` (the report and
    whoever files the bug read it there)."""
    import json

    from dlfuzz.store.artifacts import write_atomic

    meta_path = folder / "meta.json"
    if not meta_path.is_file():
        return
    meta = json.loads(meta_path.read_text())
    meta["reproducer"] = check.as_meta()
    meta.setdefault("details", {})["reproducer"] = check.as_meta()
    write_atomic(meta_path, json.dumps(meta, indent=2, default=str).encode())
