"""Host side of the executor: long-lived workers, timeouts, crash recovery.

Each backend has one worker process (a fresh interpreter, never a fork: JAX, TF and CUDA
break under fork). Cases go in batches; results stream back one case at a time, so when
a worker dies or hangs the host knows exactly which case it was running: that case gets
``crash``/``timeout``, a new worker starts, and the rest of the batch goes on. Whether
the case kills a worker on its own or only after its predecessors is settled later by
triage, which re-runs it alone in a fresh worker (``Pool.isolate``).
"""

from __future__ import annotations

import collections
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import dlfuzz
from dlfuzz import registry
from dlfuzz.backends.base import load_backend_class
from dlfuzz.cases import Outcome
from dlfuzz.errors import DlfuzzError, InternalError
from dlfuzz.executor import protocol

_LOG_KEEP = 64 * 1024
_OOM_LOG_MARKERS = ("bad_alloc", "out of memory", "cannot allocate memory", "oom-kill")


class BackendUnavailable(DlfuzzError):
    """A backend's worker could not start (library missing or broken)."""

    def __init__(self, backend: str, reason: str) -> None:
        super().__init__(f"backend {backend!r} is unavailable: {reason}")
        self.backend = backend
        self.reason = reason


@dataclass(frozen=True)
class WorkerConfig:
    backend: str
    python: str = sys.executable
    memory_limit_mb: int = 8192
    case_timeout_s: float = 10.0
    start_timeout_s: float = 240.0
    restart_every: int = 0  # 0: only when a worker dies
    preload: tuple[str, ...] = ()
    scratch: str = ""
    threads: int = 1

    @property
    def target(self) -> str:
        return registry.import_string("backend", self.backend)


@dataclass
class WorkerStats:
    cases: int = 0
    restarts: int = 0
    crashes: int = 0
    timeouts: int = 0
    busy_s: float = 0.0
    version: str = ""
    last_rss_mb: float = 0.0
    rss_history: list[float] = field(default_factory=list)


class _LogDrain(threading.Thread):
    """Reads a worker's stdout+stderr continuously, keeping only the last bytes."""

    def __init__(self, stream: Any) -> None:
        super().__init__(daemon=True)
        self.stream = stream
        self.chunks: collections.deque[bytes] = collections.deque()
        self.size = 0
        self.total = 0
        self.lock = threading.Lock()

    def run(self) -> None:
        fd = self.stream.fileno()
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                return
            if not chunk:
                return
            with self.lock:
                self.chunks.append(chunk)
                self.size += len(chunk)
                self.total += len(chunk)
                while self.size > _LOG_KEEP and len(self.chunks) > 1:
                    self.size -= len(self.chunks.popleft())

    def tail(self, limit: int = 8192) -> str:
        with self.lock:
            data = b"".join(self.chunks)[-limit:]
        return data.decode("utf-8", errors="replace")


class Worker:
    """One backend's worker process, restarted whenever it dies or hangs."""

    def __init__(self, config: WorkerConfig) -> None:
        self.config = config
        self.backend_class = load_backend_class(config.target)
        self.case_timeout = config.case_timeout_s * self.backend_class.case_timeout_factor
        self.stats = WorkerStats()
        self.proc: subprocess.Popen[bytes] | None = None
        self._fd_send = self._fd_recv = -1
        self._drain: _LogDrain | None = None
        self._since_start = 0

    # ---- life cycle -----------------------------------------------------------------
    def start(self) -> str:
        cfg = self.config
        scratch = cfg.scratch or tempfile.mkdtemp(prefix=f"dlfuzz-{cfg.backend}-")
        Path(scratch).mkdir(parents=True, exist_ok=True)
        h2w_r, h2w_w = os.pipe()
        w2h_r, w2h_w = os.pipe()
        package_parent = str(Path(dlfuzz.__file__).resolve().parent.parent)
        bootstrap = (f"import sys; sys.path.append({package_parent!r}); "
                     "from dlfuzz.executor.worker import main; main()")
        cmd = [cfg.python, "-c", bootstrap, "--backend", cfg.target,
               "--fd-in", str(h2w_r), "--fd-out", str(w2h_w),
               "--memory-limit-mb", str(cfg.memory_limit_mb), "--preload", ",".join(cfg.preload)]
        env = dict(os.environ)
        env["DLFUZZ_WORKER_THREADS"] = str(cfg.threads)
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        try:
            self.proc = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                pass_fds=(h2w_r, w2h_w), cwd=scratch, env=env, start_new_session=True)
        except OSError as exc:
            os.close(h2w_r), os.close(h2w_w), os.close(w2h_r), os.close(w2h_w)
            raise BackendUnavailable(cfg.backend, f"cannot start {cfg.python}: {exc}") from exc
        os.close(h2w_r)
        os.close(w2h_w)
        self._fd_send, self._fd_recv = h2w_w, w2h_r
        self._drain = _LogDrain(self.proc.stdout)
        self._drain.start()
        self._since_start = 0
        message = self._receive(cfg.start_timeout_s)
        if message is None or message[0] != "ready":
            detail = message[1] if message and message[0] == "fatal" else self._drain.tail(3000)
            self.stop()
            last = detail.strip().splitlines()[-1] if detail.strip() else "no output"
            raise BackendUnavailable(cfg.backend, last)
        self.stats.version = message[1]
        return message[1]

    def stop(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self.proc.wait()
            if self._drain is not None:
                self._drain.join(timeout=2)
            if self.proc.stdout is not None:
                self.proc.stdout.close()
        for fd in (self._fd_send, self._fd_recv):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._fd_send = self._fd_recv = -1
        self.proc = None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def _restart(self) -> None:
        self.stop()
        self.stats.restarts += 1
        self.start()

    # ---- messages -------------------------------------------------------------------
    def _receive(self, timeout: float) -> Any | None:
        """The next message, or None if the worker died or stayed silent for ``timeout``."""
        ready, _, _ = select.select([self._fd_recv], [], [], timeout)
        if not ready:
            return None
        try:
            return protocol.recv(self._fd_recv)
        except (protocol.ChannelClosed, OSError):
            return None

    # ---- running --------------------------------------------------------------------
    def run(self, cases: Sequence[Any], progress: Callable[[int], None] | None = None
            ) -> list[Outcome]:
        """One Outcome per case, in order; survives crashes and hangs of the worker."""
        outcomes: list[Outcome] = []
        started = time.perf_counter()
        while len(outcomes) < len(cases):
            if not self.alive():
                self._restart()
            pending = list(cases[len(outcomes):])
            if self.config.restart_every:
                room = max(1, self.config.restart_every - self._since_start)
                pending = pending[:room]
            outcomes.extend(self._run_some(pending, progress))
            if self.config.restart_every and self._since_start >= self.config.restart_every:
                self._restart()
        self.stats.busy_s += time.perf_counter() - started
        return outcomes

    def _run_some(self, cases: list[Any], progress: Callable[[int], None] | None
                  ) -> list[Outcome]:
        try:
            protocol.send(self._fd_send, ("run", cases))
        except OSError:
            return [self._death_outcome(0.0)]
        results: list[Outcome] = []
        while True:
            t0 = time.perf_counter()
            message = self._receive(self.case_timeout)
            waited = time.perf_counter() - t0
            if message is None:
                if self.alive() and waited >= self.case_timeout * 0.99:
                    results.append(self._timeout_outcome(waited))
                else:
                    results.append(self._death_outcome(waited))
                return results
            kind = message[0]
            if kind == "done":
                return results
            if kind != "result":
                raise InternalError(f"worker {self.config.backend} sent {kind!r}")
            outcome: Outcome = message[2]
            results.append(outcome)
            self.stats.cases += 1
            self._since_start += 1
            self.stats.last_rss_mb = outcome.peak_rss_mb
            if progress is not None:
                progress(1)

    def _timeout_outcome(self, waited: float) -> Outcome:
        self.stats.timeouts += 1
        self.stats.cases += 1
        tail = self._drain.tail() if self._drain else ""
        self.stop()
        return Outcome(backend=self.config.backend, status="timeout", stage="call",
                       message=f"no result within {self.case_timeout:.1f} s",
                       duration_s=waited, log_tail=tail)

    def _death_outcome(self, waited: float) -> Outcome:
        """The worker died during a case: name the signal or exit code."""
        self.stats.crashes += 1
        self.stats.cases += 1
        proc = self.proc
        code = None
        if proc is not None:
            try:
                code = proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                code = None
        if self._drain is not None:
            self._drain.join(timeout=2)
        tail = self._drain.tail() if self._drain else ""
        self.stop()
        if code is not None and code < 0:
            name = signal.Signals(-code).name
            message, exc_type = f"worker killed by {name}", name
        else:
            message, exc_type = f"worker exited with code {code}", f"exit({code})"
        status = "oom" if any(m in tail.lower() for m in _OOM_LOG_MARKERS) else "crash"
        return Outcome(backend=self.config.backend, status=status, exc_type=exc_type,
                       message=message, stage="worker", duration_s=waited, log_tail=tail)


class Pool:
    """One worker per backend; a case runs on all its backends in parallel."""

    def __init__(self, configs: Sequence[WorkerConfig]) -> None:
        self.configs = {c.backend: c for c in configs}
        self.workers: dict[str, Worker] = {}
        self.unavailable: dict[str, str] = {}
        self._executor = ThreadPoolExecutor(max_workers=max(1, len(configs)))

    def start(self) -> dict[str, str]:
        """Start every worker in parallel; returns backend -> version of those that started."""
        def start_one(cfg: WorkerConfig) -> tuple[str, str | None, str]:
            worker = Worker(cfg)
            try:
                version = worker.start()
            except BackendUnavailable as exc:
                return cfg.backend, None, exc.reason
            self.workers[cfg.backend] = worker
            return cfg.backend, version, ""

        versions: dict[str, str] = {}
        for name, version, reason in self._executor.map(start_one, self.configs.values()):
            if version is None:
                self.unavailable[name] = reason
            else:
                versions[name] = version
        return versions

    def run(self, cases: Sequence[Any], progress: Callable[[int], None] | None = None
            ) -> list[dict[str, Outcome]]:
        """For each case, backend -> Outcome for every started backend whose library it calls."""
        results: list[dict[str, Outcome]] = [{} for _ in cases]

        def run_backend(name: str) -> None:
            worker = self.workers[name]
            library = worker.backend_class.library
            index = [i for i, c in enumerate(cases) if c.call_for(library) is not None]
            if not index:
                return
            outcomes = worker.run([cases[i] for i in index], progress)
            for i, outcome in zip(index, outcomes, strict=True):
                results[i][name] = outcome

        for future in [self._executor.submit(run_backend, n) for n in self.workers]:
            future.result()
        return results

    def isolate(self, case: Any, backends: Sequence[str]) -> dict[str, Outcome]:
        """Run one case alone, each backend in a brand-new worker (confirmation of crashes)."""
        out: dict[str, Outcome] = {}
        for name in backends:
            cfg = self.configs[name]
            worker = Worker(replace(cfg, restart_every=0))
            try:
                worker.start()
                out[name] = worker.run([case])[0]
            finally:
                worker.stop()
        return out

    def stats(self) -> dict[str, WorkerStats]:
        return {name: w.stats for name, w in self.workers.items()}

    def close(self) -> None:
        for worker in self.workers.values():
            worker.stop()
        self.workers.clear()
        self._executor.shutdown(wait=False)

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
