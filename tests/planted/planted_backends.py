"""Planted backends: third-party style ``package.module:Class`` backends for tests.

Test-only, imported by workers through ``PYTHONPATH`` (the host need not import them).
"""

from __future__ import annotations

import importlib

from dlfuzz.backends.numpy_backend import NumpyBackend

MISSING_MODULE = "dlfuzz_planted_missing_library"


class OtherNumpy(NumpyBackend):
    """A plugin backend: numpy under another name, computing the numpy calls of a case."""

    name = "other-numpy"
    library = "numpy"

    def version(self) -> str:
        return "other-" + super().version()


class MissingLibrary(NumpyBackend):
    """A backend whose library is not installed: ``setup`` fails to import it."""

    name = "missing-library"
    library = "numpy"

    def setup(self) -> None:
        importlib.import_module(MISSING_MODULE)


class SlowFactor(NumpyBackend):
    """A backend granted twice the per-case time (like a compiling backend)."""

    name = "slow-factor"
    library = "numpy"
    case_timeout_factor = 2.0


class ThreadAtSetup(NumpyBackend):
    """A backend whose setup leaves a thread running (as a library with a thread pool
    started at import would): forking it could deadlock, so the fork server refuses it
    and its workers are spawned."""

    name = "thread-at-setup"
    library = "numpy"

    def setup(self) -> None:
        import threading
        import time

        threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
