"""Name -> "module:Class" registries, resolved lazily.

Heavy libraries load only when a component is chosen, so the registries hold import
strings rather than classes. Third parties add backends through the ``dlfuzz.backends``
entry-point group or with a ``package.module:Class`` string wherever a name is accepted.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any

from dlfuzz.errors import UsageError
from dlfuzz.libraries import LIBRARIES, ResolveError, resolve

# The built-in backends are the libraries' (dlfuzz.libraries), in library order.
BACKENDS: dict[str, str] = {name: target for lib in LIBRARIES for name, target in lib.backends}

ENGINES: dict[str, str] = {
    "api": "dlfuzz.engines.api.engine:ApiEngine",
    "numpy-api": "dlfuzz.engines.api.engine:NumpyApiEngine",  # the api engine, numpy spec set
    "model": "dlfuzz.engines.model.engine:ModelEngine",
    "program": "dlfuzz.engines.program.engine:ProgramEngine",
}

ORACLES: dict[str, str] = {
    "crash": "dlfuzz.oracles.crash:CrashOracle",
    "status": "dlfuzz.oracles.status:StatusOracle",
    "differential": "dlfuzz.oracles.differential:DifferentialOracle",
    "dtype": "dlfuzz.oracles.dtype:DtypeOracle",
    "boundary": "dlfuzz.oracles.boundary:BoundaryOracle",
    "determinism": "dlfuzz.oracles.determinism:DeterminismOracle",
    "gradient": "dlfuzz.oracles.gradient:GradientOracle",
    "program-state": "dlfuzz.oracles.program:ProgramStateOracle",
    "program-cross": "dlfuzz.oracles.program:KerasCrossOracle",
    "program-performance": "dlfuzz.oracles.program:PerformanceOracle",
}

# Where the workers run: this host, or the nodes of a Ray cluster (``--executor``).
EXECUTORS: dict[str, str] = {
    "local": "dlfuzz.executor.pool:Pool",
    "ray": "dlfuzz.executor.ray_pool:RayPool",
}

# How triage, bug folders, oracles and the report treat each kind of case (``case.kind``).
CASE_KINDS: dict[str, str] = {
    "api": "dlfuzz.kinds.api:ApiKind",
    "grad": "dlfuzz.kinds.grad:GradKind",
    "graph": "dlfuzz.kinds.graph:GraphKind",
    "program": "dlfuzz.kinds.program:ProgramKind",
    "train": "dlfuzz.kinds.train:TrainKind",
}

_ENTRY_POINT_GROUPS = {"backend": "dlfuzz.backends", "engine": "dlfuzz.engines",
                       "oracle": "dlfuzz.oracles", "case kind": "dlfuzz.case_kinds"}


def _table(kind: str) -> dict[str, str]:
    base = {"backend": BACKENDS, "engine": ENGINES, "oracle": ORACLES,
            "case kind": CASE_KINDS, "executor": EXECUTORS}[kind]
    merged = dict(base)
    group = _ENTRY_POINT_GROUPS.get(kind)
    if group:
        for ep in entry_points(group=group):
            merged.setdefault(ep.name, ep.value)
    return merged


def names(kind: str) -> list[str]:
    """Every registered name of a kind, built-ins first."""
    return list(_table(kind))


def import_string(kind: str, name: str) -> str:
    """The ``module:Class`` string for ``name``; a dotted ``pkg.mod:Class`` passes through."""
    if ":" in name:
        return name
    table = _table(kind)
    if name not in table:
        known = ", ".join(table)
        raise UsageError(f"unknown {kind} {name!r}; known {kind}s: {known} "
                         f"(or give a plugin as package.module:Class)")
    return table[name]


def load(kind: str, name: str) -> Any:
    """Import and return the class registered as ``name``."""
    target = import_string(kind, name)
    try:
        return resolve(target)
    except ResolveError as exc:
        raise UsageError(f"{kind} {name!r}: {exc}") from exc.__cause__
