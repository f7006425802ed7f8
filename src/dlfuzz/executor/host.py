"""Host side of one worker: start, feed, watch and restart a backend's process.

Split from ``pool.py`` (which runs many workers side by side); see that module's
docstring for the design.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dlfuzz import registry
from dlfuzz.backends.base import Backend, load_backend_class
from dlfuzz.cases import Outcome
from dlfuzz.errors import DlfuzzError, InternalError
from dlfuzz.executor import protocol, zygote
from dlfuzz.executor.cancel import POLL_S, StopSignal
from dlfuzz.executor.process import (
    LogDrain,
    WorkerProcess,
    bootstrap,
    can_watch_any_process,
    describe_exit,
)
from dlfuzz.executor.protocol import encode_cases

_OOM_LOG_MARKERS = ("bad_alloc", "out of memory", "cannot allocate memory", "oom-kill")
# Deaths that an allocation failure can explain: the kernel's OOM killer, an abort from an
# uncaught std::bad_alloc, an exit after a failed allocation. A fault signal (SEGV, FPE,
# BUS, ILL) is a crash even after an allocation failed: a library that dereferences the
# null it got from malloc has a bug, and a late allocator warning from an earlier case in
# the log must not turn a segfault into ``oom``.
_FAULT_SIGNALS = ("SIGSEGV", "SIGFPE", "SIGBUS", "SIGILL")
_EXIT_GRACE_S = 5.0  # a worker that closed its pipe gets this long to finish dying
_DRAIN_GRACE_S = 2.0  # after the kill, time for the last output to reach the log tail
_TRANSFER_GRACE_S = 5.0  # once a message has begun to arrive, time for the rest of it
# After a case times out, later cases of the same batch with the same signature (same
# call, same input shapes and dtypes) get this share of the timeout (at least 1 s): a
# signature that hangs usually hangs for every input, and a group of 16 such cases would
# otherwise cost 16 full timeouts. They still run; a hang is still observed, not assumed.
_REPEAT_TIMEOUT_SHARE = 0.1
# Later cases of the same API with another signature get this share: an API that hangs
# on one input often hangs on the next shapes too (``jnp.lcm`` with INT_MIN in any
# operand; 13 timeouts of 8 APIs took 130 s of workers' time in a 300 s campaign), but
# a new signature compiles first (in JAX up to about a second), so more than a tenth.
# A case cut short is never a hang on its own: triage re-runs it with the full limit.
_REPEAT_API_TIMEOUT_SHARE = 0.3
# The least a case's first limit is cut to (``WorkerConfig.first_limit_share``).
_FIRST_LIMIT_FLOOR_S = 3.0
# Once a signature has hung or killed the worker this many times in a batch, its later
# cases there are not run at all: each costs a worker restart (seconds for JAX or TF) on
# top of the short timeout, and a group of 64 inputs cost minutes (a hanging special
# function in JAX: 90 s; a TF scatter that aborts on every input: 415 s). Those cases
# come back ``SKIPPED`` and ``Pool.run`` leaves their outcome out, as for a backend that
# does not run a case: nothing is reported about an input that never ran.
_DEATHS_BEFORE_SKIP = 2
# The same for a whole API (the call's target, whatever its arguments): a scalar argument
# is part of the signature, so ``torch.fft.rfftfreq(n)`` with 16 huge ``n`` was 16
# signatures, and 8 of them each filled the worker's memory limit and restarted it (20 s
# of a 300 s campaign). The API's first deaths are its findings; the rest of its cases in
# the batch would say the same at a restart each.
_API_DEATHS_BEFORE_SKIP = 3
_DEATHS = frozenset({"timeout", "crash", "oom"})
# Output a dead worker's outcome keeps. TF prints the native stack of a failed CHECK and
# then faulthandler the Python stack of every thread, 30 frames deep through TF's
# dispatch layers: in 8 KB the native stack's head was gone, so no crash state was read
# (``oracles.crash_log``) and two APIs aborting at one place were filed as two bugs.
_CRASH_LOG_BYTES = 32 * 1024
SKIPPED = "skipped"  # a Worker.run status that never leaves the executor
# Longest pause between two drains of a busy worker's results. Each wake-up of the host
# costs CPU time a worker could use; 2 ms lets dozens of fast results gather in the pipe
# while adding at most 2 ms to a batch (less: see ``Worker._pace``).
_PACE_S = 0.002
_MIN_PAUSE_S = 0.0001  # below this, sleeping costs more than it saves


class BackendUnavailable(DlfuzzError):
    """A backend's worker could not start (library missing or broken)."""

    def __init__(self, backend: str, reason: str) -> None:
        super().__init__(f"backend {backend!r} is unavailable: {reason}")
        self.backend = backend
        self.reason = reason


@dataclass(frozen=True)
class WorkerConfig:
    """How to run one backend's worker.

    ``backend`` is a registered name or a ``package.module:Class`` plugin string;
    ``python`` is the interpreter that runs it (another virtualenv works, as long as it
    can import numpy and ml_dtypes); ``memory_limit_mb`` caps the worker's address space
    so a runaway allocation fails inside it (``oom``) instead of swapping the machine.
    """

    backend: str
    python: str = sys.executable
    memory_limit_mb: int = 8192
    case_timeout_s: float = 10.0
    start_timeout_s: float = 240.0
    restart_every: int = 0  # 0: only when a worker dies
    preload: tuple[str, ...] = ()
    scratch: str = ""
    threads: int = 1
    # Worker processes sharing this backend's cases (``Pool``). A backend that compiles
    # every new signature (JAX eager: ~100 ms against ~1 ms for a later case) bounds a
    # whole campaign on its own while the other workers wait; a second process puts the
    # idle core to work. Cases of one signature always go to the same process, whose
    # compile cache they reuse.
    replicas: int = 1
    # The share of the case limit each case gets in this worker, the full limit kept for
    # the later checks: a campaign's workers cut a case that runs past it short
    # (``timeout``, but never a hang on its own: triage re-runs it in a fresh worker
    # with the full limit before anything is claimed), triage's fresh workers have 1.0.
    # Never below ``_FIRST_LIMIT_FLOOR_S`` (nor above the full limit).
    first_limit_share: float = 1.0

    @property
    def target(self) -> str:
        return registry.import_string("backend", self.backend)


@dataclass
class WorkerStats:
    cases: int = 0
    restarts: int = 0
    crashes: int = 0
    timeouts: int = 0
    idle_deaths: int = 0  # found dead between batches: no case to blame
    busy_s: float = 0.0
    start_s: float = 0.0  # how long the last start took (a fork, or an interpreter + import)
    # How long an interpreter takes to import the library: the last spawned start, or the
    # fork server's own start (a reproducer, a new interpreter, pays this).
    import_s: float = 0.0
    forks: int = 0  # starts forked by the fork server (milliseconds) rather than spawned
    version: str = ""
    last_rss_mb: float = 0.0


def _host_backend_class(target: str) -> type[Backend] | None:
    """The backend class if the host can import it, else None.

    The host only reads class attributes (library, timeout factor); a plugin that only
    the worker's interpreter or ``PYTHONPATH`` can import still runs, and its worker
    reports the same attributes when it is ready.
    """
    try:
        return load_backend_class(target)
    except Exception:  # noqa: BLE001 - any import failure: the worker will say why
        return None


def _tag(event: str, message: Any) -> str:
    """The name of a received message, "" for an event or anything not a message."""
    if event == "message" and isinstance(message, tuple) and message:
        return str(message[0])
    return ""


def call_target(case: Any, library: str) -> str | None:
    """The function ``case`` calls in ``library`` (None for a case it does not call)."""
    call = case.call_for(library) if hasattr(case, "call_for") else None
    return None if call is None else str(call.target)


def signature_key(case: Any, library: str) -> Any:
    """What a backend compiles once for: the call's static part with the tensors' dtypes
    and shapes (None for a case this library does not call)."""
    call = case.call_for(library) if hasattr(case, "call_for") else None
    if call is None:
        return None
    return (call.static_key(), tuple((t.dtype, t.shape) for t in case.tensors))


class Worker:
    """One backend's worker process, restarted whenever it dies or hangs."""

    def __init__(self, config: WorkerConfig, stop: StopSignal | None = None) -> None:
        self.config = config
        # Checked between short waits for results: a stop (Ctrl-C, budget) raises
        # ``Cancelled`` out of ``start``/``run`` within ``POLL_S``, killing the worker.
        self.stop_signal = stop
        self.backend_class = _host_backend_class(config.target)
        self.info: dict[str, Any] = {}  # what the worker said about itself when ready
        self.stats = WorkerStats()
        self._proc: WorkerProcess | None = None
        self._log: LogDrain | None = None  # kept after a death: the tail is evidence
        self._ever_started = False
        self._since_start = 0
        self._own_scratch = ""

    # ---- what the host knows about the backend --------------------------------------
    @property
    def library(self) -> str:
        if self.backend_class is not None:
            return self.backend_class.library
        return str(self.info.get("library", ""))

    @property
    def case_timeout(self) -> float:
        if self.backend_class is not None:
            factor = self.backend_class.case_timeout_factor
        else:
            factor = float(self.info.get("case_timeout_factor", 1.0))
        return self.config.case_timeout_s * factor

    @property
    def first_limit(self) -> float:
        """The limit a case gets here before any hang of its signature or API: the full
        limit times ``first_limit_share``, never below ``_FIRST_LIMIT_FLOOR_S``."""
        full = self.case_timeout
        share = self.config.first_limit_share
        if share >= 1.0:
            return full
        return min(full, max(_FIRST_LIMIT_FLOOR_S, full * share))

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def log_bytes(self) -> int:
        """How much the current (or last) worker process printed: floods show here."""
        return self._log.total if self._log is not None else 0

    def log_tail(self, limit: int = 8192) -> str:
        """The last output of the current (or last) worker process.

        While the worker lives, the drain may be up to a pipe buffer behind its latest
        result; once it is dead (crash, timeout) the tail is complete.
        """
        return self._log.tail(limit) if self._log is not None else ""

    # ---- life cycle -----------------------------------------------------------------
    def start(self) -> str:
        """Start a worker process and wait until its library is imported; its version."""
        self.stop()
        cfg = self.config
        code = bootstrap("dlfuzz.executor.worker")

        def command(fd_in: int, fd_out: int) -> list[str]:
            return [cfg.python, "-c", code, "--backend", cfg.target,
                    "--fd-in", str(fd_in), "--fd-out", str(fd_out),
                    "--memory-limit-mb", str(cfg.memory_limit_mb),
                    "--preload", ",".join(cfg.preload)]

        t0 = time.monotonic()
        env, cwd = self._environment(), self._scratch_dir()
        forker = self._forker(env, cwd, t0 + cfg.start_timeout_s)
        try:
            try:
                self._proc = WorkerProcess(command, env, cwd, forker)
            except zygote.ZygoteLost:
                self._proc = WorkerProcess(command, env, cwd)
        except OSError as exc:
            self.close()
            raise BackendUnavailable(cfg.backend, f"cannot start {cfg.python}: {exc}") from exc
        self.stats.forks += self._proc.forked
        self._log = self._proc.drain
        self._ever_started = True
        self._since_start = 0
        try:
            event, message = self._next_message(t0 + cfg.start_timeout_s)
        except BaseException:  # Cancelled (a stop during start-up), or a dlfuzz bug
            self.stop()
            raise
        self.stats.start_s = time.monotonic() - t0
        self.stats.import_s = (forker.zygote.import_s if self._proc.forked and forker
                               else self.stats.start_s)
        if _tag(event, message) == "ready":
            self.stats.version = str(message[1])
            self.info = dict(message[2]) if len(message) > 2 else {}
            return self.stats.version
        reason = self._start_failure(event, message)
        self.close()  # nothing to keep: a later start() makes a new scratch directory
        raise BackendUnavailable(cfg.backend, reason)

    def _forker(self, env: dict[str, str], cwd: str, deadline: float) -> zygote.Forker | None:
        """The fork server this worker forks from, or None to spawn an interpreter: a
        backend that has not opted in (``Backend.forkable``), no pidfds to watch a process
        that is not our child, ``DLFUZZ_FORK_SERVER=off``, or a fork server that refused
        (a library that left threads behind at import) or did not start."""
        cls = self.backend_class
        if (cls is None or not cls.forkable or not zygote.enabled()
                or not can_watch_any_process()):
            return None
        server = zygote.REGISTRY.get(self.config.python, self.config.target, env, deadline,
                                     self.stop_signal)
        if server is None:
            return None
        # Absolute: a spawned worker's directory is relative to the host's, the fork
        # server's own is "/".
        spec = zygote.ChildSpec(memory_limit_mb=self.config.memory_limit_mb,
                                preload=tuple(self.config.preload), cwd=os.path.abspath(cwd))
        return zygote.Forker(server, spec)

    def _environment(self) -> dict[str, str]:
        env = dict(os.environ)  # PYTHONPATH included: plugins and patches reach the worker
        if env.get("PYTHONPATH"):
            # Relative to the host's directory, not the worker's (a scratch directory).
            env["PYTHONPATH"] = os.pathsep.join(
                os.path.abspath(p or os.curdir) for p in env["PYTHONPATH"].split(os.pathsep))
        env["DLFUZZ_WORKER_THREADS"] = str(self.config.threads)
        # The BLAS and OpenMP pools too (numpy's OpenBLAS would take every core): workers
        # run side by side, and a Ray actor's worker gets OMP_NUM_THREADS=1 from Ray, so
        # the same cases run with the same threads (and summation orders) either way.
        for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env[name] = str(self.config.threads)
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        env.setdefault("PYTHONUNBUFFERED", "1")  # a crash must not eat the last prints
        return env

    def _scratch_dir(self) -> str:
        """The worker's working directory: one per Worker, reused across restarts."""
        if self.config.scratch:
            Path(self.config.scratch).mkdir(parents=True, exist_ok=True)
            return self.config.scratch
        if not self._own_scratch or not Path(self._own_scratch).is_dir():
            self._own_scratch = tempfile.mkdtemp(prefix=f"dlfuzz-{self.config.backend}-"
                                                 .replace(":", "-").replace("/", "-"))
        return self._own_scratch

    def _start_failure(self, event: str, message: Any) -> str:
        """One readable line saying why a worker did not become ready."""
        if _tag(event, message) == "fatal":
            lines = str(message[1]).strip().splitlines()
            return lines[-1] if lines else "the worker failed to start"
        assert self._proc is not None
        if event == "message":
            why = f"unexpected first message {str(message)[:100]!r}"
        elif event in ("timeout", "stalled"):
            why = f"not ready within {self.config.start_timeout_s:g} s"
        else:
            self._proc.wait_exit(_EXIT_GRACE_S)
            why = describe_exit(self._proc.close(_DRAIN_GRACE_S))[1] + " before it was ready"
        lines = self._proc.drain.tail(3000).strip().splitlines()
        return f"{why}; last output: {lines[-1]}" if lines else why

    def stop(self) -> None:
        """Kill the worker's whole process group and release its descriptors."""
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.close(_DRAIN_GRACE_S)

    def kill(self) -> None:
        """SIGKILL the worker's process group now, without waiting (a second Ctrl-C).

        Safe from a signal handler; ``stop``/``close`` still reap it afterwards.
        """
        proc = self._proc
        if proc is not None:
            proc.kill_group()

    def close(self) -> None:
        """``stop`` for good: also removes the scratch directory this Worker created."""
        self.stop()
        if self._own_scratch:
            shutil.rmtree(self._own_scratch, ignore_errors=True)
            self._own_scratch = ""

    def alive(self) -> bool:
        return self._proc is not None and not self._proc.exited()

    def _restart(self) -> None:
        self.stop()
        self.stats.restarts += 1
        self.start()

    def _ensure_ready(self) -> None:
        """A live worker with room for more cases, (re)starting one where needed."""
        if self._proc is not None and not self.alive():
            self.stats.idle_deaths += 1  # died after its last answer: nobody to blame
            self._restart()
        elif self._proc is None:
            if self._ever_started:
                self._restart()
            else:
                self.start()
        elif self.config.restart_every and self._since_start >= self.config.restart_every:
            self._restart()

    # ---- messages -------------------------------------------------------------------
    def _next_message(self, deadline: float, grace: float = _TRANSFER_GRACE_S
                      ) -> tuple[str, Any]:
        """``("message", msg)``, or an event without one, by ``deadline`` (monotonic).

        Events: ``timeout`` (silent, alive), ``exited`` (dead, maybe with forks still
        holding the pipe), ``closed`` (EOF), ``stalled`` (a message began, then stopped
        for ``grace`` seconds past its beginning or the deadline, whichever is later),
        ``garbled`` (bytes that are not our protocol). Results already in the pipe win
        over an exit: those a worker wrote just before it crashed are read first.
        """
        proc = self._proc
        assert proc is not None
        reader = proc.reader
        partial_since: float | None = None
        drained_after_exit = False
        while True:
            try:
                message = reader.pop()
            except Exception as exc:  # noqa: BLE001 - unpickling garbage raises anything
                return "garbled", f"{type(exc).__name__}: {exc}"
            if message is not protocol.NOTHING:
                return "message", message
            if reader.eof:
                return "closed", None
            now = time.monotonic()
            limit = deadline
            if reader.partial:
                partial_since = now if partial_since is None else partial_since
                limit = max(deadline, partial_since + grace)
            # Past the limit this still polls once: a result may be waiting unread in the
            # pipe (the host paused), and it counts if the worker wrote it in time.
            wait = max(0.0, limit - now)
            if self.stop_signal is not None:
                self.stop_signal.check()
                wait = min(wait, POLL_S)
            event = proc.wait_event(wait)
            if event == "timeout" and time.monotonic() < limit:
                continue  # a slice of the wait ended, not the wait: check for a stop again
            if event == "timeout":
                if reader.partial:
                    return ("exited" if proc.exited() else "stalled"), None
                return "timeout", None
            if event == "message":
                try:
                    reader.fill()
                except OSError:
                    return "closed", None
            elif event == "exited":
                if drained_after_exit:
                    return "exited", None
                drained_after_exit = True
                try:
                    reader.fill()  # whatever it wrote before dying is in the pipe still
                except OSError:
                    return "exited", None

    # ---- running --------------------------------------------------------------------
    def run(self, cases: Sequence[Any], progress: Callable[[int], None] | None = None, *,
            encoded: Sequence[bytes] | None = None) -> list[Outcome]:
        """One Outcome per case, in order; survives crashes and hangs of the worker.

        ``encoded``: the cases already pickled (``encode_cases``), as ``Pool.run`` shares
        them between backends. ``progress(1)`` is called for each result as it is read.
        Raises ``BackendUnavailable`` only if no worker can be started (or fed) at all.
        """
        started = time.perf_counter()
        blobs = list(encoded) if encoded is not None else encode_cases(cases)
        if len(blobs) != len(cases):
            raise ValueError(f"{len(blobs)} encoded cases for {len(cases)} cases")
        try:
            return self._run_all(blobs, progress, [self._signature_key(c) for c in cases],
                                 [float(getattr(c, "timeout_factor", 1.0)) for c in cases],
                                 [call_target(c, self.library) for c in cases])
        except BaseException:
            # Interrupted mid-batch (a dlfuzz bug, a raising ``progress``, Ctrl-C): the
            # worker may still be answering, and stale results must never be read as
            # answers to the next batch.
            self.stop()
            raise
        finally:
            self.stats.busy_s += time.perf_counter() - started

    def _signature_key(self, case: Any) -> Any:
        return signature_key(case, self.library)

    def _run_all(self, blobs: list[bytes], progress: Callable[[int], None] | None,
                 keys: list[Any], factors: list[float] | None = None,
                 targets: list[str | None] | None = None) -> list[Outcome]:
        """``factors``: per case, its time limit over the backend's (a case kind that
        does the work of several runs, a model's training step, says so itself with a
        ``timeout_factor``). ``targets``: per case, the API it calls (deaths counted per
        API as well as per signature)."""
        outcomes: list[Outcome] = []
        undelivered = 0
        hung: set[Any] = set()
        deaths: Counter[Any] = Counter()
        api_deaths: Counter[str] = Counter()
        full = self.case_timeout
        first = self.first_limit
        factors = factors or [1.0] * len(keys)
        targets = targets or [None] * len(keys)
        short = min(first, max(1.0, full * _REPEAT_TIMEOUT_SHARE))
        api_short = min(first, max(short, full * _REPEAT_API_TIMEOUT_SHARE))
        hung_apis: set[str] = set()
        while len(outcomes) < len(blobs):
            k, target = keys[len(outcomes)], targets[len(outcomes)]
            if (k is not None and deaths[k] >= _DEATHS_BEFORE_SKIP) or (
                    target is not None and api_deaths[target] >= _API_DEATHS_BEFORE_SKIP):
                outcomes.append(Outcome(backend=self.config.backend, status=SKIPPED,
                                        message="not run: its signature or API hung or "
                                                "crashed the worker before"))
                if progress is not None:
                    progress(1)
                continue
            self._ensure_ready()
            pending = blobs[len(outcomes):]
            if self.config.restart_every:
                pending = pending[:max(1, self.config.restart_every - self._since_start)]
            done = len(outcomes)
            timeouts = [short if k is not None and k in hung
                        else api_short * f if target is not None and target in hung_apis
                        else first * f
                        for k, f, target in zip(keys[done:done + len(pending)],
                                                factors[done:done + len(pending)],
                                                targets[done:done + len(pending)],
                                                strict=True)]
            got = self._run_some(pending, progress, timeouts)
            if got is None:
                undelivered += 1
                if undelivered >= 2:  # two fresh workers in a row refused the batch
                    raise BackendUnavailable(
                        self.config.backend, "worker died before it could receive a batch; "
                        f"last output: {self.log_tail(500).strip()[-300:]}")
                continue
            undelivered = 0
            done = len(outcomes)
            for k, target, outcome in zip(keys[done:], targets[done:], got, strict=False):
                if outcome.status == "timeout" and k is not None:
                    hung.add(k)
                if outcome.status == "timeout" and target is not None:
                    hung_apis.add(target)
                if outcome.status in _DEATHS and k is not None:
                    deaths[k] += 1
                if outcome.status in _DEATHS and target is not None:
                    api_deaths[target] += 1
            outcomes.extend(got)
        return outcomes

    def _run_some(self, blobs: list[bytes], progress: Callable[[int], None] | None,
                  timeouts: list[float] | None = None) -> list[Outcome] | None:
        """Outcomes of a prefix of the cases (all, or up to the first death or hang).

        None if the batch could not be delivered: the worker died (broken pipe) or
        stopped reading after its last answer, so no case of this batch ran.
        """
        proc = self._proc
        assert proc is not None
        timeout = self.case_timeout
        timeouts = timeouts or [timeout] * len(blobs)
        # Where the first case's output begins in the log: taken before the batch is sent,
        # since a fast worker can run that case and write its last words before the host
        # reads the clock after ``send`` (a planted bad_alloc read as a crash on a busy
        # 2-core machine that way).
        first_mark = proc.drain.total
        try:
            deadline = time.monotonic() + timeout + _TRANSFER_GRACE_S
            protocol.send(proc.send_fd, ("run", blobs), deadline)
        except OSError:  # BrokenPipeError, or TimeoutError from a worker not reading
            self.stats.idle_deaths += 1
            self.stop()
            return None
        results: list[Outcome] = []
        # When the case in flight began: the worker's end time of the previous case, as
        # it reported it (the host may read that result much later), or now for the first.
        case_start = time.monotonic()
        first_byte = proc.reader.total
        busy = 0.0  # seconds the worker spent in the cases answered so far
        grace = max(_TRANSFER_GRACE_S, timeout)
        while True:
            limit = timeouts[min(len(results), len(timeouts) - 1)]
            event, message = self._next_message(case_start + limit, grace)
            tag = _tag(event, message)
            if tag == "result" and message[1] == len(results):
                wire = message[2]
                results.append(self._accept(wire, progress))
                case_start = protocol.finished_at(wire)
                busy += results[-1].duration_s
                if len(results) < len(blobs) and not proc.reader.has_frame():
                    self._pace(len(results), len(blobs) - len(results), busy,
                               (proc.reader.total - first_byte) / proc.result_pipe_bytes)
                continue
            if tag == "done" and len(results) == len(blobs):
                return results
            if tag == "fatal":
                self.stop()
                raise InternalError(f"worker of {self.config.backend} failed: {message[1]}")
            waited = max(0.0, time.monotonic() - case_start)
            if event in ("timeout", "stalled"):
                results.append(self._timeout_outcome(waited, event, limit))
            else:
                if event == "message":  # out of order, or not ours: a stray process wrote
                    event, message = "garbled", f"unexpected message {str(message)[:200]}"
                mark = proc.drain.offset_at(case_start) if results else first_mark
                results.append(self._death_outcome(waited, event, message, mark))
            return results

    @staticmethod
    def _pace(done: int, left: int, busy: float, pipes: float) -> None:
        """Let results gather in the pipe before the next drain, not longer than useful.

        ``busy``: the worker's time inside the ``done`` cases; ``pipes``: the pipe
        capacities their results filled. The pause is capped by the time the remaining
        cases take at that rate (a short batch is not held back by a fixed sleep), and by
        the time the worker takes to fill half the pipe (big results must not leave it
        blocked on a full one). Time inside the cases is a lower bound of the worker's
        pace, so both caps err on the side of waking up early.
        """
        per_case = busy / done
        pause = min(_PACE_S, per_case * left, busy / (2 * pipes) if pipes else _PACE_S)
        if pause >= _MIN_PAUSE_S:
            time.sleep(pause)

    def _accept(self, wire: tuple[Any, ...], progress: Callable[[int], None] | None
                ) -> Outcome:
        outcome = protocol.outcome_from_wire(self.config.backend, wire)
        self.stats.cases += 1
        self._since_start += 1
        self.stats.last_rss_mb = outcome.peak_rss_mb
        if progress is not None:
            progress(1)
        return outcome

    def _timeout_outcome(self, waited: float, event: str, limit: float | None = None
                         ) -> Outcome:
        self.stats.timeouts += 1
        self.stats.cases += 1
        self.stop()
        limit = self.case_timeout if limit is None else limit
        what = ("its result stopped half-way" if event == "stalled"
                else f"no result within {limit:.1f} s")
        return Outcome(backend=self.config.backend, status="timeout", stage="call",
                       message=what, duration_s=waited, log_tail=self.log_tail())

    def _death_outcome(self, waited: float, event: str, detail: Any, mark: int) -> Outcome:
        """The worker died during a case: name the signal or exit code."""
        proc = self._proc
        assert proc is not None
        self._proc = None
        self.stats.crashes += 1
        self.stats.cases += 1
        exited = event != "garbled" and proc.wait_exit(_EXIT_GRACE_S)
        exc_type, message = describe_exit(proc.close(_DRAIN_GRACE_S))
        if event == "garbled":
            exc_type, message = "protocol", f"worker pipe corrupted ({detail}); killed it"
        elif not exited:
            exc_type, message = "pipe-closed", "worker closed its pipe without exiting; killed it"
        case_log = proc.drain.tail(since=mark).lower()
        allocation_died = (exc_type not in _FAULT_SIGNALS
                           and any(m in case_log for m in _OOM_LOG_MARKERS))
        status = "oom" if allocation_died else "crash"
        return Outcome(backend=self.config.backend, status=status, exc_type=exc_type,
                       message=message, stage="worker", duration_s=waited,
                       log_tail=proc.drain.tail(_CRASH_LOG_BYTES))
