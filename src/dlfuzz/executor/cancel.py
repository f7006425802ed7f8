"""Stopping a run in flight: Ctrl-C, SIGTERM or a spent budget, honoured within a second.

The host waits for worker results in short slices (``POLL_S``) and checks a shared
``StopSignal`` between them, so a stop does not wait for the batch (or a 10 s case
timeout) to end. Whoever sees the stop raises ``Cancelled``; the worker it was waiting
for is killed (its answers to a cancelled batch must never be read as answers to the next
one) and restarted by the next ``run`` if there is one.
"""

from __future__ import annotations

import threading
import time

from dlfuzz.errors import DlfuzzError

POLL_S = 0.1  # longest wait for a result before the host checks for a stop again


class Cancelled(DlfuzzError):
    """The run was stopped while waiting for workers; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"stopped: {reason}")
        self.reason = reason


class StopSignal:
    """A stop request shared by all threads of a pool, plus an optional deadline.

    ``set`` is safe to call from a signal handler (it only sets an event); the deadline
    is a ``time.monotonic()`` value after which the signal counts as set (the budget).
    """

    def __init__(self) -> None:
        self._event = threading.Event()
        self._deadline: float | None = None
        self.reason = ""

    def set(self, reason: str) -> None:
        if not self._event.is_set():
            self.reason = reason
            self._event.set()

    def set_deadline(self, deadline: float | None) -> None:
        self._deadline = deadline

    def is_set(self) -> bool:
        if self._event.is_set():
            return True
        if self._deadline is not None and time.monotonic() >= self._deadline:
            self.set("budget spent")
            return True
        return False

    def check(self) -> None:
        """Raise ``Cancelled`` if a stop was requested or the deadline passed."""
        if self.is_set():
            raise Cancelled(self.reason)
