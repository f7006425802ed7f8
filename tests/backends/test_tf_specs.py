"""The TensorFlow API specs (``data/tf.json``) against the real TensorFlow.

Checks the file the fuzzer ships: it loads, covers enough APIs, every API resolves the way
the worker resolves it and takes the parameter names the spec passes, and adjust-mode
inputs for a fixed sample of APIs run on tf eager (in sandboxed workers). Also checks the
extractor's op linkage on a few APIs whose op definitions are known.
"""

from __future__ import annotations

import inspect
import os

import numpy as np
import pytest

from dlfuzz.backends.base import Backend
from dlfuzz.engines.api.libspecs import LibSpec, load_library

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
tf = pytest.importorskip("tensorflow")

SAMPLE_APIS = 40
SAMPLE_DRAWS = 10
MIN_OK = 0.85


@pytest.fixture(scope="module")
def specs() -> dict[str, LibSpec]:
    return load_library("tf")


def _fuzzed(specs: dict[str, LibSpec]) -> list[LibSpec]:
    return [s for s in specs.values() if not s.skip]


def test_file_covers_seven_modules(specs: dict[str, LibSpec]) -> None:
    fuzzed = _fuzzed(specs)
    assert len(specs) >= 330
    assert len(fuzzed) >= 300
    groups = {s.group for s in fuzzed}
    assert groups == {"tf", "math", "nn", "linalg", "signal", "image", "quantization"}
    for s in specs.values():
        assert s.library == "tf" and s.api.startswith("tensorflow.")
        if s.skip:
            assert len(s.skip) > 10, f"{s.api}: a skip says why"


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
    resolver = Backend()
    wrong = []
    for spec in _fuzzed(specs):
        sig = inspect.signature(resolver.resolve(spec.api))
        kinds = {p.name: p.kind for p in sig.parameters.values()}
        if any(k is inspect.Parameter.VAR_KEYWORD for k in kinds.values()):
            continue
        for p in spec.params:
            kind = kinds.get(p.name)
            if kind is None:
                wrong.append(f"{spec.api}: no parameter {p.name!r}")
            elif p.passing == "variadic" and kind is not inspect.Parameter.VAR_POSITIONAL:
                wrong.append(f"{spec.api}: {p.name!r} is not *args")
        required = [n for n, q in sig.parameters.items() if q.default is q.empty
                    and q.kind in (q.POSITIONAL_ONLY, q.POSITIONAL_OR_KEYWORD)]
        for name in required:
            p = spec.param(name)
            if p is None or p.optional:
                wrong.append(f"{spec.api}: required parameter {name!r} may be left out")
    assert not wrong, "\n".join(wrong[:20])


def test_adjusted_inputs_run_on_tf_eager(specs: dict[str, LibSpec]) -> None:
    from dlfuzz.engines.api.libgen import LibGenerator, to_case
    from dlfuzz.executor.host import WorkerConfig
    from dlfuzz.executor.pool import Pool

    fuzzed = sorted(_fuzzed(specs), key=lambda s: s.api)
    rng = np.random.default_rng(20240)
    sample = [fuzzed[i] for i in rng.choice(len(fuzzed), SAMPLE_APIS, replace=False)]
    gen = LibGenerator(np.random.default_rng(5), mode="adjust")
    cases, owners = [], []
    for spec in sample:
        for _ in range(SAMPLE_DRAWS):
            cases.append(to_case(gen.draw(spec)))
            owners.append(spec.api)
    with Pool([WorkerConfig("tf", case_timeout_s=20.0, start_timeout_s=120.0)]) as pool:
        pool.start()
        results = pool.run(cases)
    ok = [r.get("tf") is not None and r["tf"].status == "ok" for r in results]
    rate = sum(ok) / len(ok)
    failing = sorted({a for a, good in zip(owners, ok, strict=True) if not good})
    assert rate >= MIN_OK, f"valid rate {rate:.1%}; failing APIs: {failing}"


def test_op_linkage_reads_op_definitions() -> None:
    from dlfuzz.specgen import tf_apis, tf_ops

    atan2 = tf_ops.link(tf.math.atan2, ["y", "x"])
    assert atan2 is not None and atan2.op == "Atan2"
    add = tf_ops.link(tf.math.add, ["x", "y"])  # a wrapper: linked through its source
    assert add is not None and add.op in ("Add", "AddV2") and add.mapping == {"x": "x", "y": "y"}
    conv = tf_ops.kernel_dtypes("Conv2D")["T"]
    assert "float32" in conv and "complex64" not in conv
    spec = tf_apis.build_spec("tensorflow.math.atan2", "math", tf.math.atan2)
    assert spec is not None and not spec.skip
    texts = {c.text: c.source for c in spec.constraints}
    assert texts.get("x.dtype == y.dtype") == "signature"  # later parameter on the left
    assert any("x.shape[-1] == 1" in t for t in texts)  # broadcasting
    assert spec.param("y").dtypes == ("float16", "bfloat16", "float32", "float64")
    fft = tf_apis.build_spec("tensorflow.fftnd", "tf", tf.fftnd)
    assert fft is not None and "no CPU kernel" in fft.skip
