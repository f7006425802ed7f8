"""Framing between the host and a worker: a 4-byte length, then a pickle.

Pickle keeps frozen dataclasses and bytes intact; tensors inside are raw bytes already.
Messages are tuples whose first item names the message:

host -> worker: ("run", [case, ...]) | ("ping",) | ("exit",)
worker -> host: ("ready", version, info) | ("result", index, Outcome) | ("done",)
               | ("pong",) | ("fatal", text)
"""

from __future__ import annotations

import os
import pickle
import struct
from typing import Any

_HEADER = struct.Struct("<I")


class ChannelClosed(EOFError):
    """The other side closed the pipe (a dead worker, usually)."""


def send(fd: int, message: Any) -> None:
    payload = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_HEADER.pack(len(payload)) + payload)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def read_exactly(fd: int, n: int) -> bytes:
    chunks = []
    while n:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            raise ChannelClosed()
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def recv(fd: int) -> Any:
    (length,) = _HEADER.unpack(read_exactly(fd, _HEADER.size))
    return pickle.loads(read_exactly(fd, length))
