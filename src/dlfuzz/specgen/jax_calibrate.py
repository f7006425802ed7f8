"""Dtype calibration of the JAX specs: which dtypes each API really runs with.

Signatures say ``ArrayLike`` and docstrings rarely name dtypes, so a tensor parameter the
extractor could not type (a *free* parameter: no dtypes from a lax dtype rule, a name
convention or a hint) would otherwise get the generator's default (float32/float64 only)
and integer, boolean, half and complex paths would never be tested. Calibration runs
each API with every free parameter set to one probe dtype at a time (``GROUP`` draws of
equal shapes, so JAX compiles once per dtype) in the sandboxed jax worker (x64 enabled,
as fuzzing runs it), and keeps the dtypes of which at least one draw ran. int16, uint32
and complex128 are not probed: they are kept when both of their neighbours are
(``INFERRED``), which the final valid-rate measurement then checks.

Results are cached in the spec file itself: ``cached_dtypes`` reads the calibrated
dtypes of ``data/jax.json`` when that file was written by the same JAX version.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from dlfuzz.engines.api.libspecs import DATA_DIR, LIBRARY_FILES, LibSpec, load_file
from dlfuzz.specgen.jax_rules import CANDIDATE_DTYPES
from dlfuzz.specgen.spec_edit import with_dtypes

PROBE_DTYPES = ("bool", "int8", "int32", "int64", "uint8", "float16", "bfloat16", "float32",
                "float64", "complex64")
INFERRED = {"int16": ("int8", "int32"), "uint32": ("uint8", "int32"),
            "complex128": ("complex64", "float64")}
GROUP = 2
BATCH = 500
NONE_RAN = "dtype calibration: no probe dtype ran"


def free_params(spec: LibSpec) -> tuple[list[str], list[str]]:
    """(tensor parameters without dtypes, dtype parameters offering every candidate)."""
    tensors, dtypes = [], []
    for p in spec.params:
        if p.tensor_like and not p.dtypes:
            tensors.append(p.name)
        elif "dtype" in p.structures and tuple(p.dtypes) == CANDIDATE_DTYPES:
            dtypes.append(p.name)
    return tensors, dtypes


def probe_spec(spec: LibSpec, dtype: str, target: str) -> LibSpec:
    """The spec with its free ``target`` parameters ('tensor' or 'dtype') fixed to one
    dtype. Probing tensors, optional dtype parameters are left out and required ones
    fixed to float32 (so ``std(a, dtype=int8)`` failing does not drop ``a``'s int8);
    probing dtype parameters, they are always passed."""
    tensors, dtypes = free_params(spec)
    params = []
    for p in spec.params:
        if target == "tensor" and p.name in tensors:
            p = replace(p, dtypes=(dtype,))
        elif target == "tensor" and p.name in dtypes:
            if p.optional:
                continue
            p = replace(p, dtypes=("float32",))
        elif target == "dtype" and p.name in dtypes:
            p = replace(p, dtypes=(dtype,), structures=("dtype",), optional=False)
        params.append(p)
    return replace(spec, params=tuple(params))


def cached_dtypes(versions: Mapping[str, str]) -> dict[str, dict[str, tuple[str, ...]]]:
    """API -> parameter -> dtypes from the existing ``data/jax.json``, if that file was
    written for these versions (APIs whose calibration found nothing are left out)."""
    path = DATA_DIR / LIBRARY_FILES["jax"]
    try:
        head = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if head.get("versions", {}).get("jax") != versions.get("jax"):
        return {}
    out: dict[str, dict[str, tuple[str, ...]]] = {}
    for spec in load_file(path):
        if spec.skip:
            continue
        if NONE_RAN not in spec.notes:  # those are probed again (a fixed spec may run)
            out[spec.api] = {p.name: p.dtypes for p in spec.params if p.dtypes}
    return out


def _note(spec: LibSpec, text: str) -> LibSpec:
    notes = "; ".join(filter(None, [spec.notes, text]))
    return replace(spec, notes=notes)


def calibrate(specs: list[LibSpec], cached: Mapping[str, Mapping[str, tuple[str, ...]]]
              | None = None, group: int = GROUP, seed: int = 0, pool: Any = None,
              progress: Callable[[str], None] | None = None) -> list[LibSpec]:
    """Copies of ``specs`` whose free parameters carry the dtypes the API runs with."""
    cached = cached or {}
    say = progress or (lambda msg: print(msg, file=sys.stderr))
    out = list(specs)
    todo: list[tuple[int, str, list[str]]] = []  # (spec index, target, parameters)
    for i, spec in enumerate(specs):
        tensors, dtypes = free_params(spec) if not spec.skip else ([], [])
        free = tensors + dtypes
        if not free:
            continue
        old = cached.get(spec.api)
        if old is not None and all(n in old for n in free):
            out[i] = with_dtypes(spec, {n: old[n] for n in free})
        else:
            todo += [(i, target, names) for target, names in (("tensor", tensors),
                                                              ("dtype", dtypes)) if names]
    if not todo:
        return out
    ok = _probe([(specs[i], target) for i, target, _ in todo], group, seed, pool, say)
    kept_by: dict[int, dict[str, tuple[str, ...]]] = {}
    for (i, _, names), passed in zip(todo, ok, strict=True):
        kept = [d for d in PROBE_DTYPES if passed.get(d, 0) > 0]
        kept += [d for d, pair in INFERRED.items() if all(x in kept for x in pair)]
        if kept:
            ordered = tuple(d for d in CANDIDATE_DTYPES if d in kept)
            kept_by.setdefault(i, {}).update({n: ordered for n in names})
    for i in {i for i, _, _ in todo}:
        if i in kept_by:
            out[i] = with_dtypes(specs[i], kept_by[i])
        else:
            out[i] = _note(specs[i], NONE_RAN)
    return out


def _probe(jobs: list[tuple[LibSpec, str]], group: int, seed: int, pool: Any,
           say: Callable[[str], None]) -> list[dict[str, int]]:
    """Per job, probe dtype -> draws that ran."""
    from dlfuzz.engines.api.libgen import LibGenerator, to_case
    from dlfuzz.executor.pool import Pool, WorkerConfig

    cases, owners = [], []
    for j, (spec, target) in enumerate(jobs):
        for k, dtype in enumerate(PROBE_DTYPES):
            gen = LibGenerator(seed * 1_000_003 + j * 101 + k, mode="adjust")
            try:
                draws = gen.group(probe_spec(spec, dtype, target), group)
            except Exception as exc:  # noqa: BLE001 - the generator cannot serve this dtype
                say(f"calibration: {spec.api} {dtype}: generator {type(exc).__name__}: {exc}")
                continue
            for d in draws:
                cases.append(to_case(d))
                owners.append((j, dtype))
    own = pool is None
    if own:
        pool = Pool([WorkerConfig("jax")])
        pool.start()
    try:
        results: list[dict[str, Any]] = []
        for start in range(0, len(cases), BATCH):
            results += pool.run(cases[start:start + BATCH])
            say(f"calibration: ran {len(results)}/{len(cases)} cases")
    finally:
        if own:
            pool.close()
    passed: list[dict[str, int]] = [{} for _ in jobs]
    for (j, dtype), outcome in zip(owners, results, strict=True):
        if any(o.ok for o in outcome.values()):
            passed[j][dtype] = passed[j].get(dtype, 0) + 1
    return passed
