"""One worker process at the operating-system level: spawn, watch, kill, reap, drain.

``pool.Worker`` speaks the protocol; this module owns the descriptors and the process,
because that is where the subtle failures live:

* Death is watched through a pidfd (or, without one, by polling ``waitid``), never
  inferred from end-of-file on a pipe: a library that forked leaves children holding
  the pipes open, and EOF would only come when they die.
* The process is reaped only after its group is killed (a forked worker by the fork
  server, its parent, when asked: see ``zygote``). The worker leads its own
  session, so its group id is its pid; that pid stays reserved while the worker is an
  unreaped zombie, so ``killpg`` cannot hit a stranger, and the children a library left
  behind (forks, helpers) die with the worker.
* The log drain thread owns the read end of the log pipe and closes it itself. Closing
  a descriptor while another thread is blocked reading it would free the number for the
  next ``os.pipe()`` (the next worker's protocol pipe) and the drain would then steal
  protocol bytes.
"""

from __future__ import annotations

import collections
import fcntl
import math
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Protocol

import dlfuzz
from dlfuzz.executor.protocol import FrameReader

LOG_KEEP = 64 * 1024
_PIPE_BYTES = 1 << 20
_DEFAULT_PIPE_BYTES = 1 << 16  # Linux's default pipe capacity
_KILLED_EXIT_S = 5.0  # how long a SIGKILLed forked worker may take to die before its reap
_POLL_SLICE_S = 0.05  # exit-polling period where pidfds are missing (old kernels, non-Linux)


class LogDrain(threading.Thread):
    """Reads a worker's stdout+stderr continuously, keeping only the last bytes.

    Continuous reading is what keeps a library that prints megabytes from blocking on a
    full pipe; keeping a bounded tail is what keeps the host's memory flat.
    """

    def __init__(self, fd: int, keep: int = LOG_KEEP) -> None:
        super().__init__(name=f"dlfuzz-log-drain-{fd}", daemon=True)
        self._fd = fd
        self._keep = keep
        self._chunks: collections.deque[bytes] = collections.deque()
        self._size = 0
        self.total = 0  # bytes read so far: a mark to tell one case's output from the rest
        # (arrival time, total before the chunk) of recent chunks, for ``offset_at``
        self._arrivals: collections.deque[tuple[float, int]] = collections.deque(maxlen=1024)
        self._lock = threading.Lock()
        self._halt = threading.Event()

    def run(self) -> None:
        poller = select.poll()
        poller.register(self._fd, select.POLLIN)
        try:
            while not self._halt.is_set():
                if not poller.poll(250):
                    continue  # wake up now and then to see whether we were told to stop
                try:
                    chunk = os.read(self._fd, 65536)
                except OSError:
                    return
                if not chunk:
                    return
                now = time.monotonic()
                with self._lock:
                    self._arrivals.append((now, self.total))
                    self._chunks.append(chunk)
                    self._size += len(chunk)
                    self.total += len(chunk)
                    while len(self._chunks) > 1 and self._size - len(self._chunks[0]) >= self._keep:
                        self._size -= len(self._chunks.popleft())
        finally:
            os.close(self._fd)

    def finish(self, grace_s: float) -> None:
        """Wait up to ``grace_s`` for end of file, then stop reading regardless.

        EOF comes once every process holding the write end is dead; one that escaped
        the process group (``setsid``) would otherwise keep this thread alive forever.
        """
        self.join(grace_s)
        if self.is_alive():
            self._halt.set()
            self.join(1.0)

    def offset_at(self, when: float) -> int:
        """The mark (a value ``total`` had) after the output read up to ``when`` (monotonic).

        The host reads results in bulk, well after the worker wrote them; this finds where
        the output of a case that began at ``when`` starts in the stream. Only the last
        chunks are remembered: for an older ``when`` it is the start of the oldest one.
        """
        with self._lock:
            mark = self.total
            for arrived, before in reversed(self._arrivals):
                if arrived <= when:
                    break
                mark = before
            return mark

    def tail(self, limit: int = 8192, since: int = 0) -> str:
        """The last ``limit`` bytes of output, only what came after the mark ``since``."""
        with self._lock:
            data = b"".join(self._chunks)
            first = self.total - len(data)  # stream offset of data[0]
        if since > first:
            data = data[since - first:]
        return data[-limit:].decode("utf-8", errors="replace")


class Forker(Protocol):
    """Forks a worker from a process that has its library imported (``zygote.Forker``)."""

    def fork(self, fds: tuple[int, int, int]) -> int: ...

    def reap(self, pid: int) -> int | None: ...


def describe_exit(returncode: int | None) -> tuple[str, str]:
    """``(exc_type, message)`` for a worker's exit status: the signal's name or the code
    (None: the status was lost with the fork server that was the worker's parent)."""
    if returncode is None:
        return "exit(unknown)", "worker died; its exit status was lost with its fork server"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        message = f"worker killed by {name}"
        if name == "SIGKILL":
            message += " (not by dlfuzz: the kernel's OOM killer, or another process)"
        return name, message
    return f"exit({returncode})", f"worker exited with code {returncode}"


def _pidfd_open(pid: int) -> int:
    """A descriptor that becomes readable when ``pid`` exits, or -1 where unsupported."""
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return -1
    try:
        return opener(pid)
    except OSError:
        return -1


def bootstrap(module: str) -> str:
    """``python -c`` code that runs ``module.main()`` with dlfuzz importable from its own
    directory and no '' on ``sys.path``: a worker's directory (its scratch directory)
    outlives restarts, and a file a library wrote there must not shadow a module."""
    package_parent = str(Path(dlfuzz.__file__).resolve().parent.parent)
    return ("import sys; sys.path[:] = [p for p in sys.path if p]; "
            f"sys.path.append({package_parent!r}); from {module} import main; main()")


def can_watch_any_process() -> bool:
    """Whether death of a process that is not our child can be watched (a pidfd), which a
    worker forked by the fork server needs."""
    fd = _pidfd_open(os.getpid())
    if fd < 0:
        return False
    os.close(fd)
    return True


def _grow_pipe(fd: int) -> int:
    """Raise a pipe's buffer to 1 MiB where allowed: big tensors cross in fewer turns.

    Returns the capacity the pipe ended up with (the host paces its reads by it).
    """
    setpipe = getattr(fcntl, "F_SETPIPE_SZ", None)
    if setpipe is None:
        return _DEFAULT_PIPE_BYTES
    try:
        return fcntl.fcntl(fd, setpipe, _PIPE_BYTES)
    except OSError:
        # Over /proc/sys/fs/pipe-max-size, or the user's pipe quota: keep the default.
        try:
            return fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ)
        except (AttributeError, OSError):
            return _DEFAULT_PIPE_BYTES


def _close_all(*fds: int) -> None:
    for fd in fds:
        if fd >= 0:
            try:
                os.close(fd)
            except OSError:
                pass


class WorkerProcess:
    """A worker: its protocol descriptors and reader, exit watcher and log drain.

    Spawned, ``command(fd_in, fd_out)`` builds the argument vector once the child's
    descriptor numbers are known; forked (``forker``), the fork server gets the child's
    pipe ends and the worker runs in ``cwd`` (the environment is the fork server's).
    The host's ends are non-blocking (see ``protocol``). Raises what the forker raises
    (``zygote.ZygoteLost``) with every descriptor closed: the caller spawns instead.
    """

    def __init__(self, command: Callable[[int, int], list[str]], env: Mapping[str, str],
                 cwd: str, forker: Forker | None = None) -> None:
        fds: list[int] = []
        try:
            for _ in range(3):
                fds.extend(os.pipe())
        except OSError:
            _close_all(*fds)
            raise
        h2w_r, h2w_w, w2h_r, w2h_w, log_r, log_w = fds
        _grow_pipe(h2w_w)
        _grow_pipe(log_w)
        self.result_pipe_bytes = _grow_pipe(w2h_w)  # how much a worker writes unblocked
        self.popen: subprocess.Popen[bytes] | None = None
        self._forker = forker
        try:
            if forker is not None:
                self.pid = forker.fork((h2w_r, w2h_w, log_w))
            else:
                self.popen = subprocess.Popen(
                    command(h2w_r, w2h_w), stdin=subprocess.DEVNULL, stdout=log_w,
                    stderr=log_w, pass_fds=(h2w_r, w2h_w), cwd=cwd, env=dict(env),
                    start_new_session=True)
                self.pid = self.popen.pid
        except BaseException:
            _close_all(h2w_w, w2h_r, log_r)
            raise
        finally:
            _close_all(h2w_r, w2h_w, log_w)  # the child's ends: it has its own copies
        self.forked = forker is not None
        self.send_fd, self.recv_fd = h2w_w, w2h_r
        os.set_blocking(self.send_fd, False)
        os.set_blocking(self.recv_fd, False)
        self.reader = FrameReader(self.recv_fd)
        self._pidfd = _pidfd_open(self.pid)
        self._poller = select.poll()
        self._poller.register(self.recv_fd, select.POLLIN)
        if self._pidfd >= 0:
            self._poller.register(self._pidfd, select.POLLIN)
        self.returncode: int | None = None
        self._reaped = False
        self._closed = False
        self.drain = LogDrain(log_r)
        self.drain.start()

    def exited(self) -> bool:
        """Whether the worker has exited, without reaping it (its pid stays reserved)."""
        if self._reaped:
            return True
        if self.forked:  # not our child: only its pidfd tells (always there when forked)
            return bool(self._pidfd >= 0 and select.select([self._pidfd], [], [], 0)[0])
        try:
            status = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return True  # reaped behind our back
        return status is not None

    def wait_event(self, timeout_s: float) -> str:
        """``message`` (the pipe has data or hit EOF), ``exited`` or ``timeout``.

        Data wins over exit: results written just before a crash are read first.
        """
        deadline = time.monotonic() + timeout_s
        while True:
            remaining = max(0.0, deadline - time.monotonic())
            wait = remaining if self._pidfd >= 0 else min(remaining, _POLL_SLICE_S)
            ready = {fd for fd, _ in self._poller.poll(math.ceil(wait * 1000))}
            if self.recv_fd in ready:
                return "message"
            if self._pidfd in ready or (self._pidfd < 0 and self.exited()):
                return "exited"
            if time.monotonic() >= deadline:
                return "timeout"

    def wait_exit(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for the worker to exit (unreaped); whether it did."""
        deadline = time.monotonic() + timeout_s
        while not self.exited():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            if self._pidfd >= 0:
                poller = select.poll()
                poller.register(self._pidfd, select.POLLIN)
                poller.poll(math.ceil(remaining * 1000))
            else:
                time.sleep(min(remaining, _POLL_SLICE_S))
        return True

    def kill_group(self) -> None:
        """SIGKILL the worker and everything left in its process group."""
        if self._reaped:
            return  # the group id may belong to someone else by now
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def close(self, drain_grace_s: float = 2.0) -> int | None:
        """Kill the group, reap the worker, finish the drain, close descriptors.

        Returns the worker's exit status as ``Popen.returncode`` gives it (None: a forked
        worker's status lost with its fork server). Idempotent.
        """
        if not self._closed:
            self._closed = True
            self.kill_group()
            if self._forker is not None:
                self.wait_exit(_KILLED_EXIT_S)  # the pidfd: dead before the reap blocks
                self.returncode = self._forker.reap(self.pid)
            else:
                assert self.popen is not None
                self.returncode = self.popen.wait()
            self._reaped = True
            self.drain.finish(drain_grace_s)
            _close_all(self.send_fd, self.recv_fd, self._pidfd)
        return self.returncode
