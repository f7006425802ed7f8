"""The Python end of the Node child: spawn it, frame messages, notice its death.

Messages both ways are ``[u32 header length][u32 body length][JSON header][body]``: the
header names the tensors (dtype, shape, byte count) and the body carries their raw
bytes, so tensors cross without base64 and NaN bit patterns survive. Replies come on a
pipe of their own, not Node's stdout, which tfjs and the code under test print to (it
goes to the worker's log, where the host keeps its tail as evidence).

The child stays in the Python worker's process group, so the executor's group kill on a
timeout takes it too; it also exits by itself when its stdin closes.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import struct
import subprocess
from collections.abc import Sequence
from typing import Any

import numpy as np

from dlfuzz.backends.base import NativeCrash, StageError
from dlfuzz.cases import DType, Ref

TFJS_DTYPES = {"float32": np.dtype(np.float32), "int32": np.dtype(np.int32),
               "bool": np.dtype(np.bool_), "complex64": np.dtype(np.complex64),
               "float64": np.dtype(np.float64)}  # float64: a JS number returned as is
INPUT_DTYPES = ("float32", "int32", "bool", "complex64")
_PREFIX = struct.Struct("<II")


class NodeError(Exception):
    """An exception thrown by tfjs, carried over with its JS type name."""

    def __init__(self, type_name: str, message: str, stage: str) -> None:
        super().__init__(message)
        self.js_type = type_name
        self.stage = stage


_JS_ERRORS: dict[str, type[NodeError]] = {}


def _js_error_class(name: str) -> type[NodeError]:
    """A NodeError subclass named like the JS error, so outcomes show ``TypeError`` etc."""
    if not name.isidentifier():
        name = "Error"
    cls = _JS_ERRORS.get(name)
    if cls is None:
        cls = _JS_ERRORS[name] = type(name, (NodeError,), {"__module__": "tfjs"})
    return cls


class BackendFallback(Exception):
    """tfjs is not running on the backend dlfuzz asked for: its outputs are not results."""


def encode_value(value: Any) -> Any:
    """A call argument as the JSON ``core.js`` decodes (Refs, dtypes, non-finite floats)."""
    if isinstance(value, Ref):
        return {"$ref": value.index}
    if isinstance(value, DType):
        return {"$dtype": value.name}
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        v = float(value)
        if math.isnan(v):
            return {"$float": "nan"}
        if math.isinf(v):
            return {"$float": "inf" if v > 0 else "-inf"}
        return v
    if isinstance(value, tuple | list):
        return [encode_value(v) for v in value]
    if isinstance(value, dict):
        return {"$obj": {str(k): encode_value(v) for k, v in value.items()}}
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"tfjs calls cannot take a {type(value).__name__} argument ({value!r})")


def tensor_specs(arrays: Sequence[np.ndarray]) -> tuple[list[dict[str, Any]], list[bytes]]:
    specs, blobs = [], []
    for arr in arrays:
        name = arr.dtype.name if arr.dtype != np.bool_ else "bool"
        if name not in INPUT_DTYPES:
            raise TypeError(f"tfjs has no dtype {name} (it has {', '.join(INPUT_DTYPES)})")
        data = np.ascontiguousarray(arr).tobytes()
        specs.append({"dtype": name, "shape": [int(d) for d in arr.shape], "nbytes": len(data)})
        blobs.append(data)
    return specs, blobs


class NodeChild:
    """One Node process running ``script``; ``request`` sends a message, waits the reply."""

    def __init__(self, script: str, args: Sequence[str], node_flags: Sequence[str] = ()
                 ) -> None:
        node = shutil.which("node")
        if node is None:
            raise RuntimeError("`node` is not on PATH; install Node.js 20+")
        read_fd, write_fd = os.pipe()
        try:
            self.proc = subprocess.Popen(
                [node, *node_flags, script, *args, "--fd-out", str(write_fd)],
                stdin=subprocess.PIPE, pass_fds=(write_fd,), close_fds=True)
        finally:
            os.close(write_fd)
        self._fd = read_fd
        self.ready = self.read()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def _read_exact(self, n: int) -> bytes:
        parts, left = [], n
        while left:
            chunk = os.read(self._fd, min(left, 1 << 20))
            if not chunk:
                raise NativeCrash(self.death())
            parts.append(chunk)
            left -= len(chunk)
        return b"".join(parts)

    def death(self) -> str:
        try:
            code = self.proc.wait(timeout=5.0)
        except subprocess.TimeoutExpired:
            return "the Node process closed its reply pipe"
        if code < 0:
            import signal

            return f"the Node process died of {signal.Signals(-code).name}"
        return f"the Node process exited with status {code}"

    def read(self) -> tuple[dict[str, Any], bytes]:
        head_len, body_len = _PREFIX.unpack(self._read_exact(_PREFIX.size))
        header = json.loads(self._read_exact(head_len))
        body = self._read_exact(body_len) if body_len else b""
        return header, body

    def request(self, header: dict[str, Any], blobs: Sequence[bytes] = ()
                ) -> tuple[dict[str, Any], bytes]:
        head = json.dumps(header, allow_nan=False).encode()
        body = b"".join(blobs)
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(_PREFIX.pack(len(head), len(body)) + head + body)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise NativeCrash(self.death()) from None
        return self.read()

    def close(self) -> None:
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5.0)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._fd)


def decode_outputs(header: dict[str, Any], body: bytes) -> tuple[np.ndarray, ...]:
    out, offset = [], 0
    for spec in header["outputs"]:
        n = spec["nbytes"]
        arr = np.frombuffer(body[offset:offset + n], dtype=TFJS_DTYPES[spec["dtype"]])
        out.append(arr.reshape(spec["shape"]).copy())
        offset += n
    return tuple(out)


def raise_error(header: dict[str, Any]) -> None:
    """The reply's error as the exception the worker turns into an outcome."""
    err = header["error"]
    stage = err.get("stage", "call")
    message = f"{err.get('type', 'Error')}: {err.get('message', '')}"
    if err.get("crash"):
        raise StageError(stage) from NativeCrash(message)
    if err.get("type") == "BackendFallback":
        raise StageError("dlfuzz") from BackendFallback(err.get("message", ""))
    exc = _js_error_class(err.get("type", "Error"))(err.get("type", "Error"),
                                                    err.get("message", ""), stage)
    raise StageError(stage if stage != "setup" else "call") from exc
