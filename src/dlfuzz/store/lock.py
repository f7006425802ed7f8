"""One writer per campaign folder: an OS lock on ``DIR/campaign.lock``.

Two runs writing one campaign would interleave their batches and overwrite each other's
rows, so ``dlfuzz run`` and ``run --resume`` hold an exclusive ``flock`` for the life of
the run. The kernel drops the lock when its holder dies, however it dies, so a lock left
by a killed run never blocks the next one; the holder's pid is written in the file only
to name it in the error a second run gets. Readers (findings, report, reproduce) take
no lock: SQLite's WAL mode lets them read while a run writes.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from dlfuzz.errors import UsageError

LOCK_NAME = "campaign.lock"


class CampaignLock:
    """An exclusive, non-blocking lock on a campaign folder; ``release`` (or the end of
    the process) frees it."""

    def __init__(self, root: Path, purpose: str = "--out") -> None:
        self.path = Path(root) / LOCK_NAME
        self._fd: int | None = None
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise UsageError(f"{purpose} {root}: cannot create {LOCK_NAME} "
                             f"({exc.strerror}); give a folder you can write to") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = _read_pid(fd)
            os.close(fd)
            who = f"pid {holder}" if holder else "another process"
            raise UsageError(f"{purpose} {root}: the campaign is in use by another dlfuzz "
                             f"run ({who}); wait for it to finish or stop it, then "
                             f"try again") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        """Free the lock (the file stays: removing it could race a waiting run)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode().strip()
        return int(text) if text else None
    except (OSError, ValueError, UnicodeDecodeError):
        return None
