"""The worker process: imports one backend's library once, then serves cases.

Started by ``pool.Worker`` with two pipe descriptors for the protocol; its stdout and
stderr go to a third pipe the host drains, so a library that prints megabytes cannot
block it or corrupt the protocol. Limits (address space, no core files) are set here,
before the library is imported, so they apply to everything the library does.
"""

from __future__ import annotations

import argparse
import collections
import faulthandler
import gc
import os
import pickle
import resource
import select
import sys
import threading
import time
import traceback
from collections.abc import Sequence
from resource import RUSAGE_SELF, getrusage
from time import monotonic, perf_counter
from typing import Any, NoReturn

import numpy as np

from dlfuzz.backends.base import NativeCrash, StageError
from dlfuzz.cases import DTYPES, OUTPUT_TOO_LARGE, ApiCase, Outcome, dtype_name
from dlfuzz.executor import protocol

# Lower-case fragments of "type: message" meaning an allocation failed. TF eager says
# "ResourceExhaustedError: ... OOM when allocating tensor", XLA "RESOURCE_EXHAUSTED: Out
# of memory", torch "DefaultCPUAllocator: can't allocate memory".
_OOM_MARKERS = (
    "can't allocate memory", "out of memory", "bad_alloc", "resource_exhausted",
    "failed to allocate", "cannot allocate memory", "memoryerror", "unable to allocate",
    "oom when allocating",
)
_DTYPE_NAMES = {dtype: name for name, dtype in DTYPES.items()}
# The most output bytes one case may send to the host. A library asked for a range of
# 3e8 elements returns it within the worker's address-space limit; the host would hold
# every backend's copy and widen each to float64 to judge it (the likeliest cause of a
# campaign's host killed by the kernel at 21 GB). Nothing dlfuzz generates needs that much
# (its widest inputs, the `large` edge groups, hold 2**17 elements), so a case over the
# limit ends as an ``OutputTooLarge`` exception of stage "fetch": the library computed
# it, dlfuzz declines to compare it, and the oracles read the message as a rejection.
MAX_OUTPUT_BYTES = 64 << 20


class OutputTooLarge(Exception):
    """A case's outputs exceed ``MAX_OUTPUT_BYTES``: not sent to the host."""


def classify_exception(exc: BaseException) -> str:
    """``oom`` for allocation failures (the address-space limit at work), ``crash`` for a
    ``NativeCrash`` of a child process, else ``exception``."""
    if isinstance(exc, MemoryError):
        return "oom"
    if isinstance(exc, NativeCrash):  # a Node/browser child died or wasm trapped
        return exc.status
    text = f"{type(exc).__name__}: {exc}".lower()
    return "oom" if any(m in text for m in _OOM_MARKERS) else "exception"


def _short_message(exc: BaseException, limit: int = 2000) -> str:
    text = str(exc)
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit} more chars]"


def _tensor_wire(array: Any) -> tuple[str, tuple[int, ...], bytes]:
    """``Tensor.from_numpy`` as a tuple of builtins: the same checks, cheaper to pickle.
    A 0-d result stays 0-d (``np.ascontiguousarray`` would make it 1-d): reproducers
    check the shape the library really returns."""
    arr = np.asarray(array, order="C")
    name = _DTYPE_NAMES.get(arr.dtype)
    if name is None:
        name = dtype_name(arr.dtype)  # raises the usual "not one dlfuzz handles"
    return name, arr.shape, arr.tobytes()


def _encode_outputs(outputs: Any) -> tuple[tuple[str, tuple[int, ...], bytes], ...]:
    """Every output as its wire tuple, once their total size is known to be within
    ``MAX_OUTPUT_BYTES`` (checked before any copy is made)."""
    arrays = [np.asarray(a) for a in outputs]
    total = sum(a.nbytes for a in arrays)
    if total > MAX_OUTPUT_BYTES:
        shapes = ", ".join(f"{a.dtype}{list(a.shape)}" for a in arrays[:4])
        raise OutputTooLarge(
            f"outputs of {total / 2**20:,.0f} MiB ({shapes}) are too large to compare: "
            f"dlfuzz sends at most {MAX_OUTPUT_BYTES >> 20} MiB per case to the host")
    return tuple(map(_tensor_wire, arrays))


def execute(backend: Any, case: ApiCase) -> tuple[Any, ...]:
    """Run one case; its outcome as ``protocol``'s wire tuple. Library errors are values.

    This is the per-case hot path of a worker: two clock reads, one ``getrusage``, no
    dataclass (the host builds the Outcome).
    """
    start = perf_counter()
    try:
        encoded = _encode_outputs(backend.run(case))
        status, exc_type, message, stage = "ok", "", "", "call"
    except OutputTooLarge as too_large:
        status, exc_type, message, stage, encoded = ("exception", OUTPUT_TOO_LARGE,
                                                     str(too_large), "fetch", ())
    except StageError as err:
        exc = err.__cause__ or err
        status = classify_exception(exc)
        exc_type, message, stage, encoded = type(exc).__name__, _short_message(exc), err.stage, ()
    except BaseException as exc:  # noqa: BLE001 - a library may raise anything
        if isinstance(exc, KeyboardInterrupt | SystemExit):
            raise
        status = classify_exception(exc)
        exc_type, message, stage, encoded = type(exc).__name__, _short_message(exc), "call", ()
    duration = perf_counter() - start
    return (status, encoded, exc_type, message, stage, duration,
            getrusage(RUSAGE_SELF).ru_maxrss / 1024.0, monotonic())


def run_case(backend: Any, case: ApiCase) -> Outcome:
    """Run one case; every exception of the library becomes a value."""
    return protocol.outcome_from_wire(backend.name, execute(backend, case))


def serve(backend: Any, fd_in: int, fd_out: int) -> None:
    """Answer the host until it closes the pipe or says ``exit``."""
    owner = os.getpid()
    getpid, send, loads = os.getpid, protocol.send, pickle.loads
    while True:
        try:
            message = protocol.recv(fd_in)
        except protocol.ChannelClosed:
            return
        except Exception:  # noqa: BLE001 - a batch we cannot read is a dlfuzz bug: say so
            _fatal(fd_out)
        kind = message[0]
        if kind == "exit":
            return
        if kind == "ping":
            protocol.send(fd_out, ("pong",))
        elif kind == "run":
            blobs = message[1]
            # A blob that comes back in the batch is one object (see ``pool.encode_cases``):
            # decode it once, as unpickling the whole batch at once used to.
            uses = collections.Counter(map(id, blobs))
            decoded: dict[int, ApiCase] = {}
            for index, blob in enumerate(blobs):
                case = decoded.get(id(blob))
                if case is None:
                    try:
                        case = loads(blob)
                    except Exception:  # noqa: BLE001 - as above: a case we cannot read
                        _fatal(fd_out)
                    if uses[id(blob)] > 1:
                        decoded[id(blob)] = case
                wire = execute(backend, case)
                del case  # its arrays go now, not after the next case is decoded
                if getpid() != owner:
                    # A library forked and its child returned into this loop: only the
                    # worker itself may answer, or the host would read every result twice.
                    os._exit(0)
                send(fd_out, ("result", index, wire))
            protocol.send(fd_out, ("done",))


def _fatal(fd_out: int) -> NoReturn:
    protocol.send(fd_out, ("fatal", traceback.format_exc()))
    sys.exit(3)


def _mapped_mb() -> int:
    """This process's address space in MB (what ``RLIMIT_AS`` counts); 0 if unknown."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _limit_kind(target: str) -> int:
    """``RLIMIT_AS``, or ``RLIMIT_DATA`` for a backend whose children reserve huge address
    ranges they never touch (Chromium: ~100 GB for its allocator and V8 cages, which an
    address-space cap kills at start); such a backend sets ``address_space_limit = False``.
    """
    try:
        from dlfuzz.backends.base import load_backend_class

        cls = load_backend_class(target)
    except Exception:  # noqa: BLE001 - the start below reports the import error
        return resource.RLIMIT_AS
    return resource.RLIMIT_AS if getattr(cls, "address_space_limit", True) else resource.RLIMIT_DATA


def _set_limits(memory_limit_mb: int, kind: int = resource.RLIMIT_AS) -> None:
    """Address-space cap (a runaway allocation fails here, as ``oom``), no core files.

    A crashing worker with gigabytes mapped would otherwise spend seconds writing a
    core file into its scratch directory, for every crash the fuzzer finds.
    """
    if memory_limit_mb > 0:
        limit = memory_limit_mb * 1024 * 1024
        resource.setrlimit(kind, (limit, limit))
    try:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ValueError, OSError):
        pass


def _exit_with_host(host_pidfd: int = -1) -> None:
    """Exit as soon as the host is gone, even in the middle of a case that hangs.

    Without this, a host killed with SIGKILL would leave workers spinning in an
    infinite loop forever (their pipes only matter once they read them again). A spawned
    worker's host is its parent; a forked worker's parent is the fork server, so it
    watches a pidfd of the host instead: a fork server that dies (the kernel's OOM
    killer picks big processes) must not take its workers' cases down with it.
    """
    host = os.getppid()

    def watch() -> None:
        if host_pidfd >= 0:
            select.select([host_pidfd], [], [])
        else:
            while os.getppid() == host:
                time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="dlfuzz-host-watch", daemon=True).start()


def _start_failed(fd_out: int, exc: BaseException) -> NoReturn:
    """Tell the host why the worker could not start (its ``BackendUnavailable`` reason)."""
    text = "".join(traceback.format_exception(exc))
    try:
        protocol.send(fd_out, ("fatal", text))
    finally:
        sys.exit(3)


def _announce_and_serve(backend: Any, fd_in: int, fd_out: int, preload: Sequence[str],
                        forked: bool) -> None:
    """Preloads, the ``ready`` message, then cases until the host says stop."""
    try:
        # Preloads (test-only patches, user hooks) run after the library is imported.
        for module in filter(None, preload):
            __import__(module)
        # The library's hundreds of thousands of objects live as long as the worker: out
        # of the collector's sight, a full collection takes microseconds instead of the
        # ~50 ms (torch, JAX) that would otherwise stall a case now and then.
        gc.freeze()
        info = {"pid": os.getpid(), "name": backend.name, "library": backend.library,
                "case_timeout_factor": backend.case_timeout_factor,
                "executable": sys.executable, "forked": forked}
        # A plain str: torch's version is a ``TorchVersion``, and unpickling it would import
        # torch into the host (seconds to import, ~2 s more to tear down at exit).
        protocol.send(fd_out, ("ready", str(backend.version()), info))
    except BaseException as exc:  # noqa: BLE001 - report any start failure to the host
        _start_failed(fd_out, exc)
    serve(backend, fd_in, fd_out)


def _sandbox(target: str, memory_limit_mb: int, host_pidfd: int = -1) -> None:
    """Limits, crash stacks in the log, death with the host: before any case runs."""
    _set_limits(memory_limit_mb, _limit_kind(target))
    # A native crash prints the Python stack of every thread into the log tail, then
    # dies of the same signal (the host still sees SIGSEGV/SIGABRT/SIGFPE).
    faulthandler.enable(file=sys.stderr, all_threads=True)
    _exit_with_host(host_pidfd)


def serve_forked(backend: Any, target: str, fd_in: int, fd_out: int, memory_limit_mb: int,
                 preload: Sequence[str], host_pidfd: int) -> None:
    """A worker forked by the fork server (``zygote``): the library is imported and set
    up already; the limits apply from here on (an address-space cap below what is mapped
    already only stops further growth, which is what it is for)."""
    mapped_mb = _mapped_mb()
    if memory_limit_mb > 0 and mapped_mb >= memory_limit_mb:
        # A spawned worker under this limit fails at its import; a forked one would start
        # and then fail every case as out of memory.
        raise MemoryError(f"the memory limit of {memory_limit_mb} MB (--memory-limit-mb) is "
                          f"below the {mapped_mb} MB the library maps once imported; "
                          "raise it")
    # The command line a spawned worker has (the fork server's otherwise): hooks and
    # plants that read it see the same in both.
    sys.argv = ["-c", "--backend", target, "--fd-in", str(fd_in), "--fd-out", str(fd_out),
                "--memory-limit-mb", str(memory_limit_mb), "--preload", ",".join(preload)]
    _sandbox(target, memory_limit_mb, host_pidfd)
    _announce_and_serve(backend, fd_in, fd_out, preload, forked=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="dlfuzz-worker")
    parser.add_argument("--backend", required=True, help="module:Class of the backend")
    parser.add_argument("--fd-in", type=int, required=True)
    parser.add_argument("--fd-out", type=int, required=True)
    parser.add_argument("--memory-limit-mb", type=int, default=0)
    parser.add_argument("--preload", default="", help="comma-separated modules imported first")
    args = parser.parse_args(argv)

    _sandbox(args.backend, args.memory_limit_mb)
    try:
        from dlfuzz.backends.base import load_backend_class

        backend = load_backend_class(args.backend)()
        backend.setup()
    except BaseException as exc:  # noqa: BLE001 - report any start failure to the host
        _start_failed(args.fd_out, exc)
    _announce_and_serve(backend, args.fd_in, args.fd_out, args.preload.split(","), forked=False)


if __name__ == "__main__":
    main()
