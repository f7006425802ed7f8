"""What crosses a process boundary: cases, outcomes, findings.

All are frozen dataclasses of plain values so they pickle cheaply and compare by value.
Tensors travel as raw bytes plus a dtype name and a shape, so dtypes (bfloat16 included,
through ``ml_dtypes``) and NaN bit patterns survive the trip to a worker and back.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
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
class ApiCase:
    """One input for one API, with the concrete call for each library.

    ``calls`` maps a library (``numpy``, ``torch``, ...) to its Call; backends of the same
    library (``torch`` and ``torch-compile``) share it. ``params`` keeps the canonical
    (library-neutral) non-tensor arguments for reports and reduction. ``expect`` is
    ``"valid"``, or ``"invalid:<constraint>"`` for a violate-mode input that breaks that
    constraint of the API's spec on purpose: the API must reject it with a clean exception.
    """

    api: str
    tensors: tuple[Tensor, ...]
    calls: tuple[tuple[str, Call], ...]
    params: tuple[tuple[str, Any], ...] = ()
    expect: str = "valid"
    kind: str = field(default="api", init=False)

    @property
    def invalid(self) -> bool:
        return self.expect.startswith("invalid")

    def call_for(self, library: str) -> Call | None:
        for lib, call in self.calls:
            if lib == library:
                return call
        return None

    @property
    def libraries(self) -> tuple[str, ...]:
        return tuple(lib for lib, _ in self.calls)

    @property
    def id(self) -> str:
        h = hashlib.blake2b(digest_size=8)
        h.update(repr((self.api, self.calls, self.params, self.expect)).encode())
        for t in self.tensors:
            h.update(t.digest().encode())
        return h.hexdigest()

    def with_tensors(self, tensors: tuple[Tensor, ...]) -> ApiCase:
        return ApiCase(self.api, tensors, self.calls, self.params, self.expect)


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


@dataclass(frozen=True)
class GraphCase:
    """One model (graph + weights) and one input set, for every library that can run it.

    ``tensors`` are the graph inputs (named so the reference judge can upcast and nudge
    them as it does API inputs); giving ``with_tensors`` inputs of another float dtype
    converts the graph and its weights too, which is how a float64 reference of a
    float32 model is computed. ``probe`` asks backends for every node's value (layer
    localization). ``api`` labels findings: the seed and method, or after localization
    the suspect layer kind.
    """

    api: str
    graph: Any  # dlfuzz.ir.graph.Graph (a frozen value)
    weights: tuple[tuple[str, Tensor], ...]
    tensors: tuple[Tensor, ...]
    libraries: tuple[str, ...]
    probe: bool = False
    origin: tuple[tuple[str, Any], ...] = ()  # seed, mutation history: for reports
    kind: str = field(default="graph", init=False)

    def call_for(self, library: str) -> Call | None:
        """A stand-in call (what the executor keys hangs on), for libraries that run it."""
        if library not in self.libraries:
            return None
        return Call(f"graph:{self.model_key}")

    @property
    def model_key(self) -> str:
        h = hashlib.blake2b(self.graph.digest().encode(), digest_size=8)
        for name, t in self.weights:
            h.update(name.encode())
            h.update(t.digest().encode())
        h.update(b"probe" if self.probe else b"")
        return h.hexdigest()

    @property
    def id(self) -> str:
        h = hashlib.blake2b(self.model_key.encode(), digest_size=8)
        for t in self.tensors:
            h.update(t.digest().encode())
        return h.hexdigest()

    @property
    def params(self) -> tuple[tuple[str, Any], ...]:
        return self.origin

    def with_tensors(self, tensors: tuple[Tensor, ...]) -> GraphCase:
        from dataclasses import replace

        dtype = tensors[0].dtype if tensors else self.graph.dtype
        if dtype == self.graph.dtype:
            return replace(self, tensors=tuple(tensors))
        graph = self.graph.with_dtype(dtype)
        weights = tuple((k, Tensor.from_numpy(t.to_numpy().astype(DTYPES[dtype])))
                        for k, t in self.weights)
        return replace(self, graph=graph, weights=weights, tensors=tuple(tensors))

    def with_probe(self, probe: bool = True) -> GraphCase:
        from dataclasses import replace

        return replace(self, probe=probe)


PROGRAM_LIBRARIES: dict[str, tuple[str, ...]] = {
    "torch": ("torch",),
    "keras": ("keras-tf", "keras-jax", "keras-torch"),
}


@dataclass(frozen=True)
class ProgramCase:
    """One whole program (MoCo): source text that builds, trains and evaluates a model.

    The source is a standalone, readable Python file; a worker executes it in a fresh
    module namespace and returns its ``RESULT``. ``library`` is ``torch`` or ``keras`` (a
    Keras program runs on every keras-* backend). ``expect`` is ``"valid"`` for a
    positive node and ``"invalid:<param>"`` for a negative node (boundary checking: the
    library must raise). ``node``/``parent`` place it in the derivation tree and
    ``edge`` names the derivation step that made it (block index, API, mutated
    parameter, operator, value): that is what a finding is localized to. ``parts`` is
    how it was assembled (template and blocks, for reduction); it is not part of the id.
    """

    api: str
    source: str
    library: str
    expect: str = "valid"
    node: str = ""
    parent: str = ""
    edge: tuple[tuple[str, Any], ...] = ()
    seed: str = ""
    parts: Any = field(default=None, compare=False)
    kind: str = field(default="program", init=False)

    @property
    def negative(self) -> bool:
        return self.expect.startswith("invalid")

    @property
    def libraries(self) -> tuple[str, ...]:
        return PROGRAM_LIBRARIES.get(self.library, (self.library,))

    @property
    def tensors(self) -> tuple[Tensor, ...]:
        return ()

    @property
    def params(self) -> tuple[tuple[str, Any], ...]:
        return self.edge

    def call_for(self, library: str) -> Call | None:
        """A stand-in call (what the executor keys hangs on), for libraries that run it."""
        if library not in self.libraries:
            return None
        return Call(f"program:{self.id}")

    @property
    def id(self) -> str:
        h = hashlib.blake2b(digest_size=8)
        h.update(repr((self.library, self.expect)).encode())
        h.update(self.source.encode())
        return h.hexdigest()
