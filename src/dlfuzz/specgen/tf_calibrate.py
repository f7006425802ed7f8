"""Calibration of TensorFlow specs by execution: error feedback on input properties.

``tf_apis`` extracts specs statically; here generated inputs run on tf eager in sandboxed
workers, and properties that no input having them ran with are excluded (``calibrate``):
dtypes without a working CPU kernel, empty or rank-0 tensors an op rejects, NaN/Inf
elements an op refuses. ``reuse`` carries what an earlier run (this one, or
``refine``'s message-driven feedback) learned into a fresh extraction.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from dlfuzz.engines.api.libspecs import LibSpec
from dlfuzz.specgen.spec_edit import add_constraint, with_dtypes
from dlfuzz.specgen.tf_ops import TENSOR_DTYPES


def cached(versions: dict[str, str]) -> dict[str, LibSpec]:
    """The shipped specs, if the installed TensorFlow (``versions``) wrote them."""
    import json

    from dlfuzz.engines.api.libspecs import load_file
    from dlfuzz.engines.api.specs import DATA_DIR

    path = DATA_DIR / "tf.json"
    try:
        head = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if head.get("versions") != versions:
        return {}
    return {s.api: s for s in load_file(path)}


def reuse(spec: LibSpec, cached: LibSpec) -> LibSpec:
    """``spec`` with what execution taught about it before (see ``extract``)."""
    if spec.skip or cached.skip.startswith("never ran"):
        return replace(spec, skip=spec.skip or cached.skip)
    narrowed = {}
    for p in spec.params:
        old = cached.param(p.name)
        if old is not None and old.dtypes and p.tensor_like:
            keep = tuple(d for d in (p.dtypes or TENSOR_DTYPES) if d in old.dtypes)
            if keep and keep != p.dtypes:
                narrowed[p.name] = keep
    spec = with_dtypes(spec, narrowed)
    cons = list(spec.constraints)
    for c in cached.constraints:
        if c.source == "error":
            add_constraint(cons, c.text, "error", list(spec.params))
    return replace(spec, constraints=tuple(cons), specials=spec.specials and cached.specials)


def run_draws(specs: list[LibSpec], n: int, seed: int = 0, timeout_s: float = 20.0
              ) -> dict[str, list[tuple[Any, Any]]]:
    """api -> [(draw, tf Outcome)] for ``n`` adjust-mode draws per spec, run on tf eager
    in sandboxed workers (a segfaulting kernel must not take the extractor down)."""
    import numpy as np

    from dlfuzz.engines.api.libgen import LibGenerator, to_case
    from dlfuzz.executor.host import WorkerConfig
    from dlfuzz.executor.pool import Pool

    gen = LibGenerator(np.random.default_rng(seed), mode="adjust")
    draws, cases = [], []
    for spec in specs:
        for _ in range(n):
            try:
                d = gen.draw(spec)
            except Exception:  # noqa: BLE001 - a generator bug: counts as no valid input
                break
            draws.append(d)
            cases.append(to_case(d))
    with Pool([WorkerConfig("tf", case_timeout_s=timeout_s)]) as pool:
        pool.start()
        results = pool.run(cases)
    out: dict[str, list[tuple[Any, Any]]] = {s.api: [] for s in specs}
    for d, r in zip(draws, results, strict=True):
        out[d.spec.api].append((d, r.get("tf")))
    return out


def _dtype_of(value: Any) -> str | None:
    if isinstance(value, list | tuple):
        value = value[0] if value else None
    dt = getattr(value, "dtype", None)
    from dlfuzz.cases import dtype_name

    try:
        return dtype_name(dt) if dt is not None else None
    except ValueError:
        return None


def _features(draw: Any) -> set[tuple[str, str, str]]:
    """What a draw's tensors are like: (kind, param, detail) for dtype, empty, scalar,
    plus ("special", "", "") when some float holds NaN or Inf."""
    import numpy as np

    out: set[tuple[str, str, str]] = set()
    for name, value in draw.values.items():
        members = value if isinstance(value, list) else [value]
        for arr in members:
            if not isinstance(arr, np.ndarray):
                continue
            dt = _dtype_of(arr)
            out.add(("dtype", name, dt or "?"))
            if arr.size == 0:
                out.add(("empty", name, ""))
            if arr.ndim == 0:
                out.add(("scalar", name, ""))
            if dt and dt.startswith(("float", "bfloat", "complex")) and arr.size and not \
                    np.isfinite(arr.astype(np.complex128 if dt.startswith("complex")
                                           else np.float64)).all():
                out.add(("special", "", ""))
    return out


def calibrate(specs: list[LibSpec], n: int = 32, seed: int = 0, rounds: int = 2
              ) -> list[LibSpec]:
    """Error feedback over whole draws (DLLens' idea, on properties rather than messages):
    a property that no draw having it ran with, while most draws without it did, is
    excluded. Per tensor parameter: a dtype (the kernels a CPU build really has; a kernel
    registered for a type attr can still reject a type in its own code) is dropped; an
    empty tensor or a rank-0 one adds ``x.num_element > 0`` / ``x.ndims >= 1`` (source
    ``error``); NaN/Inf elements turn ``specials`` off. A property needs two failing
    draws, and the draws without it must mostly run (three in four), so a property
    that only fails together with another cause is not blamed."""
    out = {s.api: s for s in specs}
    for r in range(rounds):
        todo = [s for s in out.values() if not s.skip]
        runs = run_draws(todo, n, seed + r)
        for spec in todo:
            tally: dict[tuple[str, str, str], list[int]] = {}
            pairs = [(_features(d), o is not None and o.status == "ok") for d, o in runs[spec.api]]
            for feats, ok in pairs:
                for f in feats:
                    t = tally.setdefault(f, [0, 0])
                    t[0] += ok
                    t[1] += 1
            bad = set()
            for f, (oks, total) in tally.items():
                rest = [ok for feats, ok in pairs if f not in feats]
                if oks == 0 and total >= 2 and len(rest) >= 2 and sum(rest) >= 0.75 * len(rest):
                    bad.add(f)
            out[spec.api] = _excluded(spec, bad)
    return [out[s.api] for s in specs]


def _excluded(spec: LibSpec, bad: set[tuple[str, str, str]]) -> LibSpec:
    narrowed: dict[str, tuple[str, ...]] = {}
    cons = list(spec.constraints)
    params = list(spec.params)
    for p in params:
        drop = {dt for kind, name, dt in bad if kind == "dtype" and name == p.name}
        keep = tuple(d for d in (p.dtypes or TENSOR_DTYPES) if d not in drop)
        if drop and keep:
            narrowed[p.name] = keep
        if ("empty", p.name, "") in bad:
            add_constraint(cons, f"{p.name}.num_element > 0", "error", params)
        if ("scalar", p.name, "") in bad:
            add_constraint(cons, f"{p.name}.ndims >= 1", "error", params)
    spec = replace(with_dtypes(spec, narrowed), constraints=tuple(cons))
    if ("special", "", "") in bad:
        spec = replace(spec, specials=False)
    return spec


def valid_rates(specs: list[LibSpec], n: int = 20, seed: int = 1000
                ) -> dict[str, tuple[float, str]]:
    """api -> (share of draws tf eager ran without error, most common error)."""
    from collections import Counter

    out: dict[str, tuple[float, str]] = {}
    for api, pairs in run_draws([s for s in specs if not s.skip], n, seed).items():
        oks = sum(1 for _, o in pairs if o is not None and o.status == "ok")
        errors = Counter(f"{o.status} {o.exc_type}: {' '.join(o.message.split())[:120]}"
                         for _, o in pairs if o is not None and o.status != "ok")
        out[api] = (oks / max(1, len(pairs)), errors.most_common(1)[0][0] if errors else "")
    return out
