"""A graph case: one model (graph + weights) and one input set."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from dlfuzz.cases.core import DTYPES, Call, Tensor


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
