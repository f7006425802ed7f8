"""Fork server: a process that holds a backend's library imported and forks its workers.

Starting a worker means a new interpreter importing the library: 1.5 s for torch, 3-8 s
for TensorFlow on this 2-core machine, more when the machine is busy. A campaign restarts
its workers 20-40 times (every crash, out-of-memory death and hang), and a batch waits
for each restart. A fork of a process that has imported the library takes milliseconds.

Why a fork is safe here, when forking a process that *ran* TF, JAX or torch is not: the
zygote only imports the library and runs the backend's ``setup`` (configuration, no op),
and it refuses to serve (the host then spawns as before) unless it is a single thread
afterwards. Thread pools, device clients and compile caches come into being at the first
op, in the child. Backends opt in (``Backend.forkable``): one whose setup starts a helper
process (TF.js starts Node) must not be forked.

What a forked worker keeps of a spawned one, which the executor's guarantees rest on:

* Its own session and process group (``setsid``), so ``killpg`` takes whatever the
  library forked, and a terminal's Ctrl-C does not reach it.
* Its pid stays reserved until the host has killed the group: the zygote reaps a child
  only when the host asks (``reap``), after the kill, and sends back the exit status
  (the host is not the parent, so it cannot ``waitpid`` itself; it watches death through
  a pidfd, which works for any process).
* Its limits (address space, no core files), preloads (plants, user hooks) and working
  directory are set in the child, after the fork, as a spawned worker sets them before
  and after its import.
* It dies with its host: the worker's watch thread waits on a pidfd of the host (not of
  its parent: a fork server killed by the kernel's OOM killer must not end the case its
  worker runs), and the zygote exits when its socket to the host closes.

Exchanges are pickled tuples over an ``AF_UNIX`` ``SOCK_SEQPACKET`` socket (message
boundaries kept); a fork request carries the worker's three pipe ends as ``SCM_RIGHTS``.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import os
import pickle
import resource
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from dlfuzz.errors import DlfuzzError
from dlfuzz.executor.cancel import POLL_S, StopSignal
from dlfuzz.executor.process import bootstrap

# Environment switch: ``DLFUZZ_FORK_SERVER=off`` spawns every worker (for debugging a
# library that misbehaves after a fork; nothing else changes).
ENV_SWITCH = "DLFUZZ_FORK_SERVER"
_REPLY_TIMEOUT_S = 30.0  # a fork or a reap of a killed child: milliseconds when healthy
_MAX_IDLE = 4  # zygotes without live workers kept per host process (each holds a library)
_EVICT_AFTER_S = 30.0  # ...and only those that forked or reaped nothing for this long
_MESSAGE_BYTES = 1 << 16


class ZygoteLost(DlfuzzError):
    """The fork server did not answer (died, or refused): spawn the worker instead."""


@dataclass(frozen=True)
class ChildSpec:
    """What a forked worker sets up after the fork: a spawned worker's command line."""

    memory_limit_mb: int
    preload: tuple[str, ...]
    cwd: str


def enabled() -> bool:
    return os.environ.get(ENV_SWITCH, "on").strip().lower() not in ("0", "off", "no", "false")


# ---- host side ----------------------------------------------------------------------------

class Zygote:
    """Host side of one fork server: start it, ask it to fork or reap, close it.

    One lock serialises the exchanges: several host threads (one per worker) share it.
    """

    def __init__(self, python: str, target: str, env: Mapping[str, str]) -> None:
        self.target = target
        self._sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        code = bootstrap("dlfuzz.executor.zygote")
        try:
            self._popen = subprocess.Popen(
                [python, "-c", code, "--backend", target, "--sock-fd", str(theirs.fileno())],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                pass_fds=(theirs.fileno(),), cwd="/", env=dict(env), start_new_session=True)
        except OSError:
            self._sock.close()
            raise
        finally:
            theirs.close()
        self._lock = threading.Lock()
        self.state = "starting"  # then "ready", "refused" or "lost"
        self.reason = ""
        self.live: set[int] = set()  # forked, not reaped yet
        self._spawned_at = time.monotonic()
        self.used = self._spawned_at
        # Seconds from spawn to ready: the interpreter and the library's import, what a
        # spawned worker's start costs (a reproducer, a new interpreter, pays it too).
        self.import_s = 0.0

    def wait_ready(self, deadline: float, stop: StopSignal | None) -> bool:
        """Whether the zygote serves, waiting for its import until ``deadline``."""
        with self._lock:
            if self.state == "starting":
                try:
                    reply = self._receive(deadline, stop)
                except ZygoteLost as lost:
                    self._lose(str(lost))
                else:
                    if reply[0] == "ready":
                        self.state = "ready"
                        self.used = time.monotonic()
                        self.import_s = self.used - self._spawned_at
                    else:
                        self._lose(str(reply[1]), state="refused")
            return self.state == "ready"

    def fork(self, fds: tuple[int, int, int], spec: ChildSpec) -> int:
        """A new worker with the pipe ends ``fds`` (its stdin protocol end, its result end,
        its log end); its pid. Raises ``ZygoteLost`` if the zygote cannot."""
        with self._lock:
            if self.state != "ready":
                raise ZygoteLost(f"fork server of {self.target} is {self.state}")
            try:
                socket.send_fds(self._sock, [pickle.dumps(("fork", spec))], list(fds))
                reply = self._receive(time.monotonic() + _REPLY_TIMEOUT_S, None)
            except (OSError, ZygoteLost) as exc:
                self._lose(f"fork request failed: {exc}")
                raise ZygoteLost(self.reason) from exc
            if reply[0] != "forked":
                raise ZygoteLost(f"fork server of {self.target} could not fork: {reply[1]}")
            pid = int(reply[1])
            self.live.add(pid)
            self.used = time.monotonic()
            return pid

    def reap(self, pid: int) -> int | None:
        """The exit status of forked worker ``pid`` once it is dead (``Popen.returncode``
        style), reaping it; None if the zygote is gone and the status with it."""
        with self._lock:
            self.live.discard(pid)
            self.used = time.monotonic()
            if self.state != "ready":
                return None
            try:
                self._sock.send(pickle.dumps(("reap", pid)))
                reply = self._receive(time.monotonic() + _REPLY_TIMEOUT_S, None)
            except (OSError, ZygoteLost) as exc:
                self._lose(f"reap request failed: {exc}")
                return None
            return None if reply[1] is None else int(reply[1])

    def _receive(self, deadline: float, stop: StopSignal | None) -> tuple[Any, ...]:
        poller = select.poll()
        poller.register(self._sock, select.POLLIN)
        while True:
            if stop is not None:
                stop.check()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ZygoteLost(f"fork server of {self.target} did not answer in time")
            if poller.poll(int(min(remaining, POLL_S) * 1000) + 1):
                data = self._sock.recv(_MESSAGE_BYTES)
                if not data:
                    raise ZygoteLost(f"fork server of {self.target} exited")
                reply = pickle.loads(data)
                if not isinstance(reply, tuple) or not reply:
                    raise ZygoteLost(f"fork server of {self.target} said {reply!r}")
                return reply

    def _lose(self, reason: str, state: str = "lost") -> None:
        self.state, self.reason = state, reason
        self._stop_process()

    def _stop_process(self) -> None:
        # The zygote alone, not its process group: a child forked a moment ago is in that
        # group until its ``setsid``, and it is a worker the host is waiting for.
        try:
            os.kill(self._popen.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self._popen.wait()
        self._sock.close()

    def close(self) -> None:
        """Kill the zygote. Workers it forked and nobody reaped lose their exit status
        (they go on; a pidfd of the host, not their parent, tells them when to exit)."""
        with self._lock:
            if self.state in ("starting", "ready"):
                self._lose("closed", state="lost")

    def close_if_idle(self, idle_s: float) -> bool:
        """Close the zygote if nobody is using it: no exchange in flight (a start, a fork),
        no live worker, nothing forked or reaped for ``idle_s``. Whether it is closed."""
        if not self._lock.acquire(blocking=False):
            return False  # starting, forking or reaping right now
        try:
            if self.live or self.state == "starting" or time.monotonic() - self.used < idle_s:
                return False
            if self.state == "ready":
                self._lose("closed", state="lost")
            return True
        finally:
            self._lock.release()


class _Registry:
    """The host's zygotes, one per (interpreter, backend class, environment)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._zygotes: dict[Any, Zygote] = {}
        self._refused: dict[Any, str] = {}

    def get(self, python: str, target: str, env: Mapping[str, str], deadline: float,
            stop: StopSignal | None) -> Zygote | None:
        key = (python, target, tuple(sorted(env.items())))
        with self._lock:
            if key in self._refused:
                return None
            zygote = self._zygotes.get(key)
            if zygote is not None and zygote.state == "lost":
                del self._zygotes[key]
                zygote = None
            if zygote is None:
                self._evict_idle(keep=_MAX_IDLE - 1, idle_s=_EVICT_AFTER_S)
                try:
                    zygote = Zygote(python, target, env)
                except OSError as exc:
                    self._refused[key] = str(exc)
                    return None
                self._zygotes[key] = zygote
        if zygote.wait_ready(deadline, stop):
            return zygote
        if zygote.state == "refused":
            with self._lock:
                self._refused[key] = zygote.reason
        return None

    def _evict_idle(self, keep: int, idle_s: float) -> None:
        """Close the least recently used idle zygotes beyond ``keep`` idle ones."""
        idle = sorted((z.used, key) for key, z in self._zygotes.items() if not z.live)
        for _, key in idle[:max(0, len(idle) - keep)]:
            if self._zygotes[key].close_if_idle(idle_s):
                del self._zygotes[key]

    def close_idle(self) -> None:
        """Close every zygote nobody is using (a pool that closes calls this)."""
        with self._lock:
            self._evict_idle(keep=0, idle_s=0.0)

    def close_all(self) -> None:
        with self._lock:
            zygotes, self._zygotes = list(self._zygotes.values()), {}
        for zygote in zygotes:
            zygote.close()


REGISTRY = _Registry()
atexit.register(REGISTRY.close_all)


class Forker:
    """A zygote bound to one worker's ``ChildSpec``: what ``WorkerProcess`` forks with."""

    def __init__(self, zygote: Zygote, spec: ChildSpec) -> None:
        self.zygote, self.spec = zygote, spec

    def fork(self, fds: tuple[int, int, int]) -> int:
        return self.zygote.fork(fds, self.spec)

    def reap(self, pid: int) -> int | None:
        return self.zygote.reap(pid)


# ---- the zygote process --------------------------------------------------------------------

def _thread_count() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def _host_pidfd() -> int:
    """A pidfd of the host (this process's parent), which forked workers watch; -1 where
    pidfds are missing (they then watch their parent, this process, which exits with
    the host)."""
    try:
        return os.pidfd_open(os.getppid())
    except (AttributeError, OSError):
        return -1


def _send(sock: socket.socket, message: tuple[Any, ...]) -> None:
    sock.send(pickle.dumps(message))


def _child(sock: socket.socket, backend: Any, target: str, fds: Sequence[int],
           spec: ChildSpec, host_pidfd: int) -> NoReturn:
    """The forked worker: set up as a spawned one would be, then serve. Never returns
    into the zygote's loop."""
    code = 0
    try:
        sock.close()
        os.setsid()
        fd_in, fd_out, log_fd = fds
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)
        os.close(log_fd)
        os.chdir(spec.cwd)
        from dlfuzz.executor import worker

        worker.serve_forked(backend, target, fd_in, fd_out, spec.memory_limit_mb, spec.preload,
                            host_pidfd)
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 1
    except BaseException:  # noqa: BLE001 - whatever it is, the child must not return
        traceback.print_exc()
        code = 3
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _serve(sock: socket.socket, backend: Any, target: str, host_pidfd: int) -> None:
    while True:
        try:
            data, fds, _flags, _addr = socket.recv_fds(sock, _MESSAGE_BYTES, 3)
        except OSError:
            return
        if not data:
            return  # the host is gone
        request = pickle.loads(data)
        if request[0] == "fork":
            if len(fds) != 3:
                for fd in fds:
                    os.close(fd)
                _send(sock, ("failed", f"a fork request came with {len(fds)} descriptors"))
                continue
            sys.stdout.flush()
            sys.stderr.flush()
            try:
                pid = os.fork()
            except OSError as exc:
                for fd in fds:
                    os.close(fd)
                _send(sock, ("failed", str(exc)))
                continue
            if pid == 0:
                _child(sock, backend, target, fds, request[1], host_pidfd)
            for fd in fds:
                os.close(fd)
            _send(sock, ("forked", pid))
        elif request[0] == "reap":
            try:
                _, status = os.waitpid(int(request[1]), 0)
                code: int | None = os.waitstatus_to_exitcode(status)
            except ChildProcessError:
                code = None
            _send(sock, ("reaped", code))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="dlfuzz-zygote")
    parser.add_argument("--backend", required=True, help="module:Class of the backend")
    parser.add_argument("--sock-fd", type=int, required=True)
    args = parser.parse_args(argv)
    sock = socket.socket(fileno=args.sock_fd)
    try:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ValueError, OSError):
        pass
    try:
        from dlfuzz.backends.base import load_backend_class

        backend = load_backend_class(args.backend)()
        backend.setup()
        gc.collect()
        gc.freeze()  # the library's objects stay shared with the children, untouched
        threads = _thread_count()
        if threads != 1:
            _send(sock, ("refused", f"{threads} threads after the library's setup: "
                                    "forking it could deadlock a worker"))
            return
        _send(sock, ("ready", str(backend.version())))
    except BaseException as exc:  # noqa: BLE001 - any failure: the host spawns instead
        _send(sock, ("refused", "".join(traceback.format_exception_only(exc)).strip()))
        return
    _serve(sock, backend, args.backend, _host_pidfd())


if __name__ == "__main__":
    main()
