"""Framing between the host and a worker: a 4-byte magic, a 4-byte length, a pickle.

Messages are tuples of plain values whose first item names the message:

host -> worker: ("run", [pickled case, ...]) | ("ping",) | ("exit",)
worker -> host: ("ready", version, info) | ("result", index, wire outcome) | ("done",)
               | ("pong",) | ("fatal", text)

Cases cross as one pickle each (``encode_cases``), made once per batch on the host and
shared by every backend that runs the case: pickling frozen dataclasses costs several
microseconds per case, and a case runs on three or more backends. Outcomes cross as a
tuple of builtins (see ``outcome_from_wire``), several times cheaper to pickle and
unpickle than the dataclasses.

Every result is its own frame, written as soon as the case ends: one small ``write``,
well under a microsecond while nobody is blocked reading the pipe. The host drains the
pipe in bulk (``FrameReader``), pausing between drains, instead of waking per case. The
pipe's kernel buffer thus plays the part of a result buffer that survives the worker:
when it dies, every result it wrote is still there to read, and bytes a library wrote
into the pipe by mistake sit exactly between the results of the cases around them.
Crash, timeout and corruption stay pinned on the case that caused them, with no shared
progress record and no case run twice. Each result carries the worker's clock at the
end of its case, so per-case timeouts and log marks count from when the next case
really began, however late the host reads.

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
from collections.abc import Callable, Sequence
from typing import Any, Final

from dlfuzz.cases import Outcome, Tensor
from dlfuzz.errors import InternalError

_MAGIC = b"DLFZ"  # garbage from a stray writer fails at once instead of as a 1 GB frame
_HEADER = struct.Struct("<4sI")
_CHUNK = 1 << 20
_SMALL = 1 << 16  # frames up to this size are joined and written at once
_KEEP_BUFFER = 8 << 20  # a reader's buffer beyond this shrinks back once it is parsed
MAX_FRAME = 2**32 - 1  # the header's 4-byte length
PICKLE_PROTOCOL = 5  # the newest every supported Python speaks (>= 3.8)

NOTHING: Final = object()  # ``FrameReader.pop``: no complete frame buffered


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
    """Write one framed message; ``deadline`` (``time.monotonic``) for non-blocking fds.

    One system call in the common case: a small frame is joined (a few hundred bytes to
    copy), a big one goes out with ``writev`` (no copy just to prepend eight bytes).
    """
    payload = pickle.dumps(message, protocol=PICKLE_PROTOCOL)
    if len(payload) > MAX_FRAME:  # engines cap their cases far below this
        raise InternalError(f"a {message[0]!r} message of {len(payload):,} bytes is larger "
                            f"than a frame holds ({MAX_FRAME:,} bytes)")
    header = _HEADER.pack(_MAGIC, len(payload))
    if len(payload) <= _SMALL:
        data = header + payload
        try:
            written = os.write(fd, data)
        except BlockingIOError:
            written = 0
        if written < len(data):
            write_all(fd, memoryview(data)[written:], deadline)
        return
    views = [memoryview(header), memoryview(payload)]
    while views:
        try:
            written = os.writev(fd, views)
        except BlockingIOError:
            _wait(fd, select.POLLOUT, deadline)
            continue
        while views and written >= len(views[0]):
            written -= len(views[0])
            views.pop(0)
        if views:
            views[0] = views[0][written:]


def write_all(fd: int, view: memoryview, deadline: float | None = None) -> None:
    """Write all of ``view``, waiting (up to ``deadline``) where the pipe is full."""
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


class FrameReader:
    """Host side: the frames of a non-blocking descriptor, however many have arrived.

    ``fill`` reads what the pipe holds straight into one reused buffer (one system call
    for dozens of results, no copy on the way) and ``pop`` unpickles one frame from it. The buffer grows (doubling) only when a frame is bigger than what it
    holds, so memory follows the bytes that arrive, never a length a stray writer
    announced.
    """

    def __init__(self, fd: int, size: int = _CHUNK) -> None:
        self.fd = fd
        self.eof = False
        self.total = 0  # bytes read so far
        self._mem = bytearray(size)
        self._start = 0  # first byte not parsed yet
        self._end = 0  # end of the bytes read

    def fill(self) -> int:
        """Read what the pipe holds now (what fits), without blocking; how many bytes came.

        One ``readv`` into the free end of the buffer: what does not fit stays in the
        pipe for the next call, once the frames read so far have been parsed.
        """
        if self._end == len(self._mem):
            self._make_room()
        with memoryview(self._mem) as whole, whole[self._end:] as free:
            try:
                n = os.readv(self.fd, [free])
            except BlockingIOError:
                n = -1
        if n == 0:
            self.eof = True
        got = max(n, 0)
        self._end += got
        self.total += got
        return got

    def _make_room(self) -> None:
        """Move the unparsed bytes to the front; into a buffer twice the size only when
        they fill more than half of it (a frame that big, all of it arrived)."""
        live = self._end - self._start
        mem = self._mem
        if live > len(mem) // 2:
            mem = bytearray(2 * len(mem))
        with memoryview(self._mem) as old:
            mem[:live] = old[self._start:self._end]
        self._mem, self._start, self._end = mem, 0, live

    @property
    def partial(self) -> bool:
        """Whether bytes of an incomplete frame wait in the buffer."""
        return self._end > self._start

    def has_frame(self) -> bool:
        """Whether a complete frame is buffered (``pop`` would not return ``NOTHING``)."""
        start = self._start
        if self._end - start < _HEADER.size:
            return False
        return self._end >= start + _HEADER.size + _HEADER.unpack_from(self._mem, start)[1]

    def pop(self) -> Any:
        """The next message, or ``NOTHING``; ``ProtocolError`` (or any unpickling error)
        for bytes that are not a frame."""
        start = self._start
        if self._end - start < _HEADER.size:
            return NOTHING
        magic, length = _HEADER.unpack_from(self._mem, start)
        if magic != _MAGIC:
            raise ProtocolError(f"not a frame: {magic!r}")
        begin = start + _HEADER.size
        end = begin + length
        if end > self._end:
            return NOTHING
        with memoryview(self._mem) as whole, whole[begin:end] as view:
            message = pickle.loads(view)
        if end == self._end:
            self._start = self._end = 0  # all parsed: the next fill writes from the front
            if len(self._mem) > _KEEP_BUFFER:
                self._mem = bytearray(_CHUNK)  # a huge tensor passed: give the memory back
        else:
            self._start = end
        return message


# ---- cases on the wire ---------------------------------------------------------------

def encode_cases(cases: Sequence[Any], wanted: Callable[[Any], bool] | None = None
                 ) -> list[bytes]:
    """Cases as workers receive them: each pickled once, sent to every backend as is.

    A case object that comes back in the batch (a re-run, a benchmark) is pickled once
    and sent once: the same ``bytes`` object pickles as a reference, and the worker
    decodes it once. Cases that ``wanted`` rejects (no backend runs them) become b"".
    """
    seen: dict[int, bytes] = {}
    blobs = []
    for case in cases:
        blob = seen.get(id(case))  # ``cases`` keeps every object alive: ids are stable
        if blob is None:
            wanted_here = wanted is None or wanted(case)
            blob = pickle.dumps(case, protocol=PICKLE_PROTOCOL) if wanted_here else b""
            seen[id(case)] = blob
        blobs.append(blob)
    return blobs


# ---- outcomes on the wire -------------------------------------------------------------
# (status, ((dtype, shape, data), ...), exc_type, message, stage, duration_s, peak_rss_mb,
#  finished): builtins only. ``finished`` is the worker's ``time.monotonic()`` when the
# case ended (the clock is system-wide): the next case started then, which is what the
# host's per-case deadline and log marks count from, however late it reads the result.

def outcome_from_wire(backend: str, wire: tuple[Any, ...]) -> Outcome:
    """The Outcome a worker sent as a tuple, named as the host names the backend."""
    status, outputs, exc_type, message, stage, duration_s, peak_rss_mb = wire[:7]
    tensors = tuple(Tensor(dtype, shape, data) for dtype, shape, data in outputs)
    return Outcome(backend, status, tensors, exc_type, message, stage, duration_s, peak_rss_mb)


def finished_at(wire: tuple[Any, ...]) -> float:
    """When (``time.monotonic``) the worker finished the case of a wire outcome."""
    return float(wire[7])
