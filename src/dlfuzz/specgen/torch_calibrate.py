"""Dtype calibration of torch specs by execution (the dtypes torch's CPU kernels accept).

Signatures say ``Tensor`` and docs rarely list dtypes, so which dtypes an API takes is
measured: every candidate dtype is given to all probed tensors of the API at once
(kernels are written for one dtype), a handful of adjust-mode draws run in sandboxed
torch workers, and a dtype stays when it is valid about as often as the best one. Then
dtypes are mixed freely; where that fails with dtype errors, the operands must match
(``a.dtype == b.dtype``, recorded as learned from errors).
"""

from __future__ import annotations

import collections
import re
from dataclasses import replace
from typing import Any

from dlfuzz.engines.api.constraints import ConstraintError, make
from dlfuzz.engines.api.libspecs import LibSpec
from dlfuzz.specgen import torch_hints as hints
from dlfuzz.specgen.spec_edit import with_dtypes

# dtypes torch's CPU kernels know; uint16/32/64 exist only as storage types there.
TORCH_DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
                "float32", "float64", "complex64", "complex128")

PROBE_DRAWS = 6      # adjust-mode draws per (API, candidate dtype)
KEEP_RATIO = 0.5     # a dtype stays if its valid rate is at least this share of the best's
DTYPE_ERROR_SHARE = 0.2  # mixed-dtype draws failing on dtypes this often: must match
_DTYPE_WORDS = re.compile(r"dtype|scalar type|Float|Double|Half|BFloat16|Long|Int\b|Byte|"
                          r"Bool|Complex|same type|promot", re.I)


def probe_group(spec: LibSpec) -> list[str]:
    """Tensor parameters whose dtypes calibration decides together: all but those a
    source pinned to one dtype (index tensors are int64, a mask is bool)."""
    return [p.name for p in spec.params if p.tensor_like and len(p.dtypes) != 1]


def run_cases(cases: list[Any], backend: str = "torch") -> list[Any]:
    """Outcomes on one backend, in sandboxed workers (a kernel may crash)."""
    from dlfuzz.executor.pool import Pool, WorkerConfig

    out = []
    with Pool([WorkerConfig(backend, case_timeout_s=5.0)]) as pool:
        pool.start()
        if pool.unavailable:
            raise RuntimeError(f"backend unavailable: {pool.unavailable}")
        for start in range(0, len(cases), 2000):
            out += [r[backend] for r in pool.run(cases[start:start + 2000])]
    return out


def _draw_cases(jobs: list[tuple[Any, LibSpec]], draws: int, seed: int
                ) -> tuple[list[Any], list[Any]]:
    import numpy as np

    from dlfuzz.engines.api.libgen import LibGenerator, to_case

    gen = LibGenerator(np.random.default_rng(seed), mode="adjust")
    keys, cases = [], []
    for key, spec in jobs:
        for _ in range(draws):
            try:
                draw = gen.draw(spec)
            except Exception:  # noqa: BLE001 - a generator failure counts as invalid
                continue
            keys.append(key)
            cases.append(to_case(draw))
    return keys, cases


def calibrate(specs: list[LibSpec], draws: int = PROBE_DRAWS, seed: int = 0
              ) -> list[LibSpec]:
    """Dtypes by execution: each candidate dtype given to every probed tensor at once
    (one-dtype inputs are what most kernels are written for); then free mixing, and
    where mixing fails with dtype errors, ``a.dtype == b.dtype`` (from: error)."""
    jobs = []
    for i, spec in enumerate(specs):
        group = probe_group(spec)
        if spec.skip or not group:
            continue
        fields = hints.API.get(spec.api, {}).get("params", {})
        limits = [set(fields[n]["dtypes"]) for n in group if "dtypes" in fields.get(n, {})]
        # a doc's dtype list is a claim to check; the hand table's is a limit
        for d in [d for d in TORCH_DTYPES if all(d in lim for lim in limits)]:
            jobs.append(((i, d), with_dtypes(spec, {n: (d,) for n in group})))
    keys, cases = _draw_cases(jobs, draws, seed)
    ok: collections.Counter = collections.Counter()
    total: collections.Counter = collections.Counter()
    for key, outcome in zip(keys, run_cases(cases), strict=True):
        total[key] += 1
        ok[key] += outcome.ok
    out = list(specs)
    kept_by: dict[int, tuple[str, ...]] = {}
    for i, spec in enumerate(specs):
        rates = {d: ok[(j, d)] / total[(j, d)] for (j, d) in total if j == i}
        best = max(rates.values(), default=0.0)
        if best == 0.0:
            continue  # nothing ran: keep what the sources said, refine may know more
        kept = tuple(d for d in TORCH_DTYPES if rates.get(d, 0.0) >= KEEP_RATIO * best)
        kept_by[i] = kept
        out[i] = with_dtypes(spec, {n: kept for n in probe_group(spec)})
    return _mixing(out, kept_by, draws, seed + 1)


def _mixing(specs: list[LibSpec], kept_by: dict[int, tuple[str, ...]], draws: int,
            seed: int) -> list[LibSpec]:
    jobs = []
    for i, kept in kept_by.items():
        if len(kept) > 1 and len(probe_group(specs[i])) > 1:
            one = with_dtypes(specs[i], {n: (kept[0],) for n in probe_group(specs[i])})
            jobs += [((i, "one"), one), ((i, "mixed"), specs[i])]
    keys, cases = _draw_cases(jobs, draws * 3, seed)
    ok: collections.Counter = collections.Counter()
    total: collections.Counter = collections.Counter()
    dtype_errors: collections.Counter = collections.Counter()
    for key, outcome in zip(keys, run_cases(cases) if cases else [], strict=True):
        total[key] += 1
        ok[key] += outcome.ok
        dtype_errors[key] += (not outcome.ok) and bool(_DTYPE_WORDS.search(outcome.message))
    out = list(specs)
    for i in {k[0] for k in total}:
        mixed = total[(i, "mixed")]
        if mixed and dtype_errors[(i, "mixed")] >= max(2, DTYPE_ERROR_SHARE * mixed) and \
                dtype_errors[(i, "one")] == 0:
            group = probe_group(specs[i])
            names = specs[i].names
            extra = [c for c in (_make(
                f"{n} is None or {n}.dtype == {group[0]}.dtype"
                if "none" in specs[i].param(n).structures
                else f"{n}.dtype == {group[0]}.dtype", "error", names) for n in group[1:])
                if c is not None and c.text not in {k.text for k in specs[i].constraints}]
            out[i] = replace(specs[i], constraints=specs[i].constraints + tuple(extra))
    return out


def _make(text: str, source: str, names: frozenset[str]) -> Any:
    try:
        return make(text, source, names)
    except ConstraintError:
        return None
