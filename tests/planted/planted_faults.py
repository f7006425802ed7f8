"""Planted faults: API targets that misbehave the way a broken native library does.

Test-only. Tests put ``tests/planted`` on ``PYTHONPATH`` before starting a Pool, so a
worker of the numpy backend resolves ``Call("planted_faults.segfault", (Ref(0),))`` like
any library function. Each function takes one array (so the generic argument plumbing
is exercised) and either returns an array or takes its worker down in one specific way.
Nothing here may run in the test process itself: most of it kills the interpreter.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time

import numpy as np

ABORT_MESSAGE = "planted_faults: about to abort, invariant violated"
FLOOD_BYTES = 100 * 1024 * 1024
BIG_ALLOCATION_BYTES = 50 * 1024**3
WRAPPER_MARKER = "DLFUZZ_PLANTED_INTERPRETER"


def identity(x: np.ndarray) -> np.ndarray:
    """The well-behaved call: what the survivors of a batch are checked against."""
    return x


def segfault(x: np.ndarray) -> np.ndarray:
    """Reads address 0 from C: SIGSEGV, no Python exception can catch it."""
    ctypes.string_at(0)
    return x


def abort(x: np.ndarray) -> np.ndarray:
    """A failed C assertion: a message on stderr, then abort() (SIGABRT)."""
    sys.stderr.write(ABORT_MESSAGE + "\n")
    sys.stderr.flush()
    os.abort()


def bad_alloc_abort(x: np.ndarray) -> np.ndarray:
    """An uncaught std::bad_alloc: the C++ runtime prints it, then aborts: an ``oom``."""
    sys.stderr.write("terminate called after throwing an instance of 'std::bad_alloc'\n")
    sys.stderr.flush()
    os.abort()


def allocator_warning_then_segfault(x: np.ndarray) -> np.ndarray:
    """An allocator complains, then the library dereferences null: a crash, not an oom."""
    sys.stderr.write("Allocator (cpu) ran out of memory trying to allocate 50.00GiB\n")
    sys.stderr.flush()
    ctypes.string_at(0)
    return x


def sigfpe(x: np.ndarray) -> np.ndarray:
    """What an integer division by zero in a kernel does on x86: SIGFPE."""
    signal.raise_signal(signal.SIGFPE)
    return x


def hang_sleep(x: np.ndarray) -> np.ndarray:
    """A deadlock: blocked forever without using the CPU."""
    while True:
        time.sleep(3600)


def hang_busy(x: np.ndarray) -> np.ndarray:
    """An infinite loop burning the CPU."""
    n = 0
    while True:
        n += 1


def allocate_50gb(x: np.ndarray) -> np.ndarray:
    """An allocation far beyond the worker's address-space limit."""
    big = np.ones(BIG_ALLOCATION_BYTES, dtype=np.uint8)
    return big[:1]


def huge_output(x: np.ndarray) -> np.ndarray:
    """A result of 96 MiB, well within the worker's limit and over what it sends."""
    return np.ones(96 << 20, dtype=np.uint8)


def exit7(x: np.ndarray) -> np.ndarray:
    """A library calling exit() on an error path: no signal, exit status 7."""
    os._exit(7)


def flood_stdout(x: np.ndarray) -> np.ndarray:
    """Prints 100 MB to stdout, then returns normally."""
    chunk = "y" * (1024 * 1024 - 1) + "\n"
    for _ in range(FLOOD_BYTES // len(chunk)):
        sys.stdout.write(chunk)
    sys.stdout.flush()
    return x


def _fork_lingering_child() -> None:
    """Forks a child that holds every pipe of the worker open for a minute.

    Its pid goes to ``forked_child.pid`` in the current directory (the worker's scratch
    directory) so a test can check that it did not outlive its worker.
    """
    child = os.fork()
    if child == 0:
        time.sleep(60)
        os._exit(0)
    with open("forked_child.pid", "w") as f:
        f.write(str(child))


def fork_then_segfault(x: np.ndarray) -> np.ndarray:
    """Crashes while a forked child keeps the worker's pipes open.

    The host must notice the death at once rather than wait for end-of-file on the
    pipes (it never comes while the child lives), and the child must die too.
    """
    _fork_lingering_child()
    ctypes.string_at(0)
    return x


def fork_then_hang(x: np.ndarray) -> np.ndarray:
    """Hangs while a forked child keeps the pipes open: the timeout must kill both."""
    _fork_lingering_child()
    while True:
        time.sleep(3600)


def fork_and_return(x: np.ndarray) -> np.ndarray:
    """A fork whose child returns into the caller: two processes would answer the host."""
    os.fork()
    return x


def linger_thread(x: np.ndarray) -> np.ndarray:
    """Leaves a non-daemon thread sleeping forever; the call itself returns normally."""
    threading.Thread(target=time.sleep, args=(3600,), daemon=False).start()
    return x


def corrupt_protocol(x: np.ndarray) -> np.ndarray:
    """Writes garbage into the worker's result pipe (a library using a stale fd)."""
    fd_out = int(sys.argv[sys.argv.index("--fd-out") + 1])
    os.write(fd_out, b"garbage!")
    return x


def pid(x: np.ndarray) -> np.ndarray:
    """The worker's process id, to tell one worker process from another."""
    return np.array([os.getpid()], dtype=np.int64)


def pid_after_sleep(x: np.ndarray) -> np.ndarray:
    """Sleeps ``x[0]`` seconds (if any), then returns the worker's process id: a case
    that keeps its process busy a known time and says which process ran it."""
    if x.size:
        time.sleep(float(x.reshape(-1)[0]))
    return np.array([os.getpid()], dtype=np.int64)


def sleep_seconds(x: np.ndarray) -> np.ndarray:
    """Sleeps ``x[0]`` seconds, then returns ``x``: a slow but finite call."""
    time.sleep(float(x.reshape(-1)[0]))
    return x


def interpreter(x: np.ndarray) -> np.ndarray:
    """``sys.executable`` and the wrapper marker, as UTF-8 bytes joined by a newline."""
    text = f"{sys.executable}\n{os.environ.get(WRAPPER_MARKER, '')}"
    return np.frombuffer(text.encode(), dtype=np.uint8).copy()


POISON_FILE = "planted_poison"


def poison(x: np.ndarray) -> np.ndarray:
    """Leaves state behind and returns normally: a file in the worker's working directory
    (which a restarted worker of the same pool reuses), as a library cache would."""
    with open(POISON_FILE, "w") as f:
        f.write("poisoned")
    return x


def segfault_if_poisoned(x: np.ndarray) -> np.ndarray:
    """Crashes only where ``poison`` ran before: the earlier case's fault, not this one's."""
    if os.path.exists(POISON_FILE):
        ctypes.string_at(0)
    return x


def sleep_first(x: np.ndarray) -> np.ndarray:
    """Sleeps ``x[0]`` seconds: a hang or a slow call, the same call signature either way."""
    time.sleep(float(x.reshape(-1)[0]))
    return x
