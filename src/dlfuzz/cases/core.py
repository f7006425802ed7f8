"""The values every case kind shares: dtypes, tensors, calls, outcomes, findings.

All are frozen dataclasses of plain values so they pickle cheaply and compare by value.
Tensors travel as raw bytes plus a dtype name and a shape, so dtypes (bfloat16 included,
through ``ml_dtypes``) and NaN bit patterns survive the trip to a worker and back.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np

# Canonical dtype names -> numpy dtypes. Every backend maps these names to its own dtypes.
DTYPES: dict[str, np.dtype] = {
    "bool": np.dtype(np.bool_),
    "int8": np.dtype(np.int8),
    "int16": np.dtype(np.int16),
    "int32": np.dtype(np.int32),
    "int64": np.dtype(np.int64),
    "uint8": np.dtype(np.uint8),
    "uint16": np.dtype(np.uint16),
    "uint32": np.dtype(np.uint32),
    "uint64": np.dtype(np.uint64),
    "float16": np.dtype(np.float16),
    "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "float32": np.dtype(np.float32),
    "float64": np.dtype(np.float64),
    "complex64": np.dtype(np.complex64),
    "complex128": np.dtype(np.complex128),
}
FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")
COMPLEX_DTYPES = ("complex64", "complex128")
INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")

STATUSES = ("ok", "exception", "crash", "timeout", "oom")
# The exception type of a case whose outputs the worker computed but would not send, for
# their size (``executor.worker.MAX_OUTPUT_BYTES``): the library returned, so an oracle
# that asks "did it accept the input?" must read it as a result, not a rejection.
OUTPUT_TOO_LARGE = "OutputTooLarge"


_NAME_OF: dict[np.dtype, str] = {dt: name for name, dt in DTYPES.items()}


def dtype_name(dtype: Any) -> str:
    """Canonical name of a numpy dtype (raises for dtypes dlfuzz does not know)."""
    dt = np.dtype(dtype)
    name = _NAME_OF.get(dt)
    if name is None:
        raise ValueError(f"dtype {dt} is not one dlfuzz handles")
    return name


@dataclass(frozen=True)
class Tensor:
    """A dense array as bytes: exact bits, any dtype of ``DTYPES``."""

    dtype: str
    shape: tuple[int, ...]
    data: bytes

    @classmethod
    def from_numpy(cls, array: Any) -> Tensor:
        arr = np.asarray(array, order="C")  # ascontiguousarray would make 0-d arrays 1-d
        return cls(dtype_name(arr.dtype), tuple(int(d) for d in arr.shape), arr.tobytes())

    def to_numpy(self) -> np.ndarray:
        arr = np.frombuffer(self.data, dtype=DTYPES[self.dtype]).reshape(self.shape)
        return arr.copy()  # writable, owned

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def digest(self) -> str:
        h = hashlib.blake2b(digest_size=8)
        h.update(f"{self.dtype}{self.shape}".encode())
        h.update(self.data)
        return h.hexdigest()

    def __repr__(self) -> str:  # bytes are noise in logs
        return f"Tensor({self.dtype}, {self.shape})"


@dataclass(frozen=True)
class Ref:
    """An argument that stands for ``case.tensors[index]``."""

    index: int


@dataclass(frozen=True)
class DType:
    """A dtype passed as an argument (``dtype=float32``); each backend maps the name."""

    name: str


@dataclass(frozen=True)
class Call:
    """One library call: ``target`` is ``module.path.function``; values may hold Refs."""

    target: str
    args: tuple[Any, ...] = ()
    kwargs: tuple[tuple[str, Any], ...] = ()

    def static_key(self) -> str:
        """The non-tensor part of the call: what a compiled callable is specialized on."""
        return repr((self.target, _strip_refs(self.args), _strip_refs(self.kwargs)))


def _strip_refs(value: Any) -> Any:
    if isinstance(value, Ref):
        return "<T>"
    if isinstance(value, tuple):
        return tuple(_strip_refs(v) for v in value)
    return value


@dataclass(frozen=True)
class Outcome:
    """What one backend did with one case. Every field is a value, never an exception."""

    backend: str
    status: str  # one of STATUSES
    outputs: tuple[Tensor, ...] = ()
    exc_type: str = ""
    message: str = ""
    stage: str = "call"  # prepare | compile | call | fetch | worker
    duration_s: float = 0.0
    peak_rss_mb: float = 0.0
    log_tail: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass(frozen=True)
class Finding:
    """A raw observation of an oracle, before triage turns it into a bug."""

    oracle: str
    symptom: str  # crash | timeout | oom | nan | numeric | status
    api: str
    guilty_backend: str  # "" when nobody can be blamed
    stage: str
    message: str
    signature: str
    case_id: str
    details: tuple[tuple[str, Any], ...] = ()

    def detail(self, key: str, default: Any = None) -> Any:
        for k, v in self.details:
            if k == key:
                return v
        return default
