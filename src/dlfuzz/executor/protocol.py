"""Framing between the host and a worker: a 4-byte magic, a 4-byte length, a pickle.

Pickle keeps frozen dataclasses and bytes intact; tensors inside are raw bytes already.
Messages are tuples whose first item names the message:

host -> worker: ("run", [case, ...]) | ("ping",) | ("exit",)
worker -> host: ("ready", version, info) | ("result", index, Outcome) | ("done",)
               | ("pong",) | ("fatal", text)

The worker uses blocking descriptors and no deadline: it has nothing better to do than
wait. The host puts its ends in non-blocking mode and passes a deadline, because a
worker that stops reading (or dies while a fork of it still holds the pipe) must never
block the host forever in ``write`` or ``read``: it raises ``TimeoutError`` instead.
"""

from __future__ import annotations

import os
import pickle
import select
import struct
import time
from typing import Any

_MAGIC = b"DLFZ"  # garbage from a stray writer fails at once instead of as a 1 GB frame
_HEADER = struct.Struct("<4sI")
_CHUNK = 1 << 20


class ChannelClosed(EOFError):
    """The other side closed the pipe (a dead worker, usually)."""


class ProtocolError(ValueError):
    """Bytes on the pipe that are not a frame: something else wrote into it."""


def _wait(fd: int, event: int, deadline: float | None) -> None:
    """Block until ``fd`` is ready for ``event`` (a poll flag) or raise ``TimeoutError``."""
    poller = select.poll()
    poller.register(fd, event)
    while True:
        if deadline is None:
            timeout_ms = None
        else:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"descriptor {fd} not ready before the deadline")
            timeout_ms = max(1, int(remaining * 1000))
        if poller.poll(timeout_ms):
            return  # ready, or hung up / in error: the next read or write says which


def send(fd: int, message: Any, deadline: float | None = None) -> None:
    """Write one framed message; ``deadline`` (``time.monotonic``) for non-blocking fds."""
    payload = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    header = _HEADER.pack(_MAGIC, len(payload))
    if len(payload) < _CHUNK:  # the common case: one write
        _write_all(fd, memoryview(header + payload), deadline)
    else:  # a big tensor: no copy just to prepend four bytes
        _write_all(fd, memoryview(header), deadline)
        _write_all(fd, memoryview(payload), deadline)


def _write_all(fd: int, view: memoryview, deadline: float | None) -> None:
    while view:
        try:
            written = os.write(fd, view[:_CHUNK])
        except BlockingIOError:
            _wait(fd, select.POLLOUT, deadline)
            continue
        view = view[written:]


def read_exactly(fd: int, n: int, deadline: float | None = None) -> bytes:
    """``n`` bytes, or ``ChannelClosed`` at end of file, or ``TimeoutError``.

    Memory grows with the bytes that actually arrive, not with the announced length: a
    stray process writing garbage into the pipe must not make the host allocate 4 GiB.
    """
    chunks = []
    while n:
        try:
            chunk = os.read(fd, min(n, _CHUNK))
        except BlockingIOError:
            _wait(fd, select.POLLIN, deadline)
            continue
        if not chunk:
            raise ChannelClosed()
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def recv(fd: int, deadline: float | None = None) -> Any:
    """Read one framed message; ``deadline`` (``time.monotonic``) for non-blocking fds."""
    magic, length = _HEADER.unpack(read_exactly(fd, _HEADER.size, deadline))
    if magic != _MAGIC:
        raise ProtocolError(f"not a frame: {magic!r}")
    return pickle.loads(read_exactly(fd, length, deadline))
