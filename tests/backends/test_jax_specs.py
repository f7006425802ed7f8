"""The JAX API specs (``data/jax.json``) against the real JAX.

Checks the file the fuzzer ships: it loads, covers enough APIs of each module, every API
resolves the way the worker resolves it and takes the parameter names the spec passes,
and adjust-mode inputs for a fixed sample of APIs run on jax eager (sandboxed workers,
x64 enabled as in fuzzing). Also checks, on a few APIs, that the extractor finds what
JAX's own code states (axis conventions, lax dtype and shape rules, jnp broadcasting).
"""

from __future__ import annotations

import collections
import inspect

import numpy as np
import pytest

from dlfuzz.backends.base import Backend
from dlfuzz.engines.api.libspecs import LibSpec, load_library

jax = pytest.importorskip("jax")

SAMPLE_APIS = 40
SAMPLE_DRAWS = 10
MIN_OK = 0.85
MODULES = ("jax.numpy", "jax.numpy.linalg", "jax.numpy.fft", "jax.lax", "jax.nn",
           "jax.scipy.special")


@pytest.fixture(scope="module")
def specs() -> dict[str, LibSpec]:
    return load_library("jax")


def _fuzzed(specs: dict[str, LibSpec]) -> list[LibSpec]:
    return [s for s in specs.values() if not s.skip]


def test_file_covers_the_four_namespaces(specs: dict[str, LibSpec]) -> None:
    fuzzed = _fuzzed(specs)
    assert len(specs) >= 330 and len(fuzzed) >= 300
    per_module = collections.Counter(s.api.rsplit(".", 1)[0] for s in fuzzed)
    assert set(per_module) == set(MODULES)
    assert per_module["jax.lax"] >= 60
    assert per_module["jax.nn"] >= 20 and per_module["jax.scipy.special"] >= 40
    for s in specs.values():
        assert s.library == "jax"
        if s.skip:
            assert len(s.skip) > 10, f"{s.api}: a skip says why"
    sources = collections.Counter(c.source for s in fuzzed for c in s.constraints)
    for source in ("validation", "hand"):  # axis ranges are dlfuzz's convention: "hand"
        assert sources[source] > 50, sources


def test_every_api_resolves_like_the_worker(specs: dict[str, LibSpec]) -> None:
    resolver = Backend()
    unresolved = []
    for api in specs:
        try:
            fn = resolver.resolve(api)
        except (ImportError, AttributeError) as exc:
            unresolved.append(f"{api}: {exc}")
            continue
        assert callable(fn), api
    assert not unresolved


def test_parameters_are_accepted_by_the_signatures(specs: dict[str, LibSpec]) -> None:
    import jax.numpy as jnp

    resolver = Backend()
    wrong = []
    for spec in _fuzzed(specs):
        fn = resolver.resolve(spec.api)
        if isinstance(fn, jnp.ufunc):  # positional only: nin arguments
            if len(spec.params) != fn.nin or any(p.passing != "positional"
                                                 for p in spec.params):
                wrong.append(f"{spec.api}: ufunc takes {fn.nin} positional arguments")
            continue
        sig = inspect.signature(fn)
        kinds = {p.name: p.kind for p in sig.parameters.values()}
        for p in spec.params:
            kind = kinds.get(p.name)
            if kind is None:
                if inspect.Parameter.VAR_KEYWORD not in kinds.values():
                    wrong.append(f"{spec.api}: no parameter {p.name!r}")
            elif p.passing == "variadic" and kind is not inspect.Parameter.VAR_POSITIONAL:
                wrong.append(f"{spec.api}: {p.name!r} is not *args")
            elif p.passing == "positional" and kind is inspect.Parameter.KEYWORD_ONLY:
                wrong.append(f"{spec.api}: {p.name!r} is keyword-only")
            elif p.passing == "keyword" and kind is inspect.Parameter.POSITIONAL_ONLY:
                wrong.append(f"{spec.api}: {p.name!r} is positional-only")
        required = [n for n, q in sig.parameters.items() if q.default is q.empty
                    and q.kind not in (q.VAR_POSITIONAL, q.VAR_KEYWORD)]
        for name in required:
            p = spec.param(name)
            if p is None or p.optional:
                wrong.append(f"{spec.api}: required parameter {name!r} may be left out")
    assert not wrong, "\n".join(wrong[:20])


def test_adjusted_inputs_run_on_jax_eager(specs: dict[str, LibSpec]) -> None:
    from dlfuzz.engines.api.libgen import LibGenerator, to_case
    from dlfuzz.executor.pool import Pool, WorkerConfig

    fuzzed = sorted(_fuzzed(specs), key=lambda s: s.api)
    rng = np.random.default_rng(20241)
    sample = [fuzzed[i] for i in rng.choice(len(fuzzed), SAMPLE_APIS, replace=False)]
    gen = LibGenerator(np.random.default_rng(5), mode="adjust")
    cases, owners = [], []
    for spec in sample:
        for _ in range(SAMPLE_DRAWS):
            cases.append(to_case(gen.draw(spec)))
            owners.append(spec.api)
    with Pool([WorkerConfig("jax", case_timeout_s=20.0, start_timeout_s=120.0)]) as pool:
        pool.start()
        results = pool.run(cases)
    ok = [r.get("jax") is not None and r["jax"].status == "ok" for r in results]
    rate = sum(ok) / len(ok)
    bad = collections.Counter(a for a, good in zip(owners, ok, strict=True) if not good)
    assert rate >= MIN_OK, f"valid rate {rate:.1%}; failing draws per API: {dict(bad)}"


def test_extractor_reads_jax_code() -> None:
    from dlfuzz.specgen import jax_apis

    def spec(api: str) -> LibSpec:
        return jax_apis.build_spec(api, "test", Backend().resolve(api))

    add = spec("jax.lax.add")  # dtype rule: one dtype, no bool; broadcasting shape rule
    texts = {c.text: c.source for c in add.constraints}
    assert texts.get("x.dtype == y.dtype") == "validation"
    assert "bool" not in add.param("x").dtypes and "float32" in add.param("x").dtypes
    assert any("x.ndims == y.ndims" in t for t in texts)
    red = spec("jax.lax.reduce_sum")  # lax axes: non-negative, distinct
    assert any(c.source == "hand" and "axes[0] >= 0" in c.text for c in red.constraints)
    total = spec("jax.numpy.sum")  # jnp axes may be negative; axis is int, list or None
    assert total.param("axis").structures == ("int", "ints", "none")
    assert any("axis >= -a.ndims" in c.text for c in total.constraints)
    solve = spec("jax.numpy.linalg.solve")  # `if a.ndim < 2: raise ValueError(...)`
    assert any(c.source == "validation" and c.text == "a.ndims >= 2"
               for c in solve.constraints)
    atan2 = spec("jax.numpy.arctan2")  # promote_args_inexact: broadcasting
    assert any(c.source == "validation" and "x1.shape[-1] == x2.shape[-1]" in c.text
               for c in atan2.constraints)
    assert "callable" in spec("jax.lax.scan").skip  # skipped with the reason
