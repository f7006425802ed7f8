"""The worker process: imports one backend's library once, then serves cases.

Started by ``pool.Worker`` with two pipe descriptors for the protocol; its stdout and
stderr go to a third pipe the host drains, so a library that prints megabytes cannot
block it or corrupt the protocol. Limits (address space) are set here, before the
library is imported, so they apply to everything the library does.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
import traceback

from dlfuzz.cases import Outcome, Tensor
from dlfuzz.executor import protocol

_OOM_MARKERS = (
    "can't allocate memory", "out of memory", "bad_alloc", "resource_exhausted",
    "failed to allocate", "cannot allocate memory", "memoryerror", "unable to allocate",
)


def classify_exception(exc: BaseException) -> str:
    """``oom`` for allocation failures (the address-space limit at work), else ``exception``."""
    if isinstance(exc, MemoryError):
        return "oom"
    text = f"{type(exc).__name__}: {exc}".lower()
    return "oom" if any(m in text for m in _OOM_MARKERS) else "exception"


def _rss_peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _short_message(exc: BaseException, limit: int = 2000) -> str:
    text = str(exc)
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit} more chars]"


def run_case(backend, case) -> Outcome:
    """Run one case; every exception of the library becomes a value."""
    from dlfuzz.backends.base import StageError

    start = time.perf_counter()
    try:
        outputs = backend.run(case)
        encoded = tuple(Tensor.from_numpy(o) for o in outputs)
        status, exc_type, message, stage = "ok", "", "", "call"
    except StageError as err:
        exc = err.__cause__ or err
        status = classify_exception(exc)
        exc_type, message, stage, encoded = type(exc).__name__, _short_message(exc), err.stage, ()
    except BaseException as exc:  # noqa: BLE001 - a library may raise anything
        if isinstance(exc, KeyboardInterrupt | SystemExit):
            raise
        status = classify_exception(exc)
        exc_type, message, stage, encoded = type(exc).__name__, _short_message(exc), "call", ()
    return Outcome(
        backend=backend.name, status=status, outputs=encoded, exc_type=exc_type,
        message=message, stage=stage, duration_s=time.perf_counter() - start,
        peak_rss_mb=_rss_peak_mb(),
    )


def serve(backend, fd_in: int, fd_out: int) -> None:
    while True:
        try:
            message = protocol.recv(fd_in)
        except protocol.ChannelClosed:
            return
        kind = message[0]
        if kind == "exit":
            return
        if kind == "ping":
            protocol.send(fd_out, ("pong",))
        elif kind == "run":
            for index, case in enumerate(message[1]):
                protocol.send(fd_out, ("result", index, run_case(backend, case)))
            protocol.send(fd_out, ("done",))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="dlfuzz-worker")
    parser.add_argument("--backend", required=True, help="module:Class of the backend")
    parser.add_argument("--fd-in", type=int, required=True)
    parser.add_argument("--fd-out", type=int, required=True)
    parser.add_argument("--memory-limit-mb", type=int, default=0)
    parser.add_argument("--preload", default="", help="comma-separated modules imported first")
    args = parser.parse_args(argv)

    if args.memory_limit_mb > 0:
        limit = args.memory_limit_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        from dlfuzz.backends.base import load_backend_class

        backend = load_backend_class(args.backend)()
        backend.setup()
        # Preloads (test-only patches, user hooks) run after the library is imported.
        for module in filter(None, args.preload.split(",")):
            __import__(module)
        protocol.send(args.fd_out, ("ready", backend.version(), {"pid": os.getpid()}))
    except BaseException as exc:  # noqa: BLE001 - report any start failure to the host
        text = "".join(traceback.format_exception(exc))
        try:
            protocol.send(args.fd_out, ("fatal", text))
        finally:
            sys.exit(3)
    serve(backend, args.fd_in, args.fd_out)


if __name__ == "__main__":
    main()
