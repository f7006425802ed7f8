"""The TF.js API specs (``data/tfjs.json``) and counterparts against the real tfjs.

Checks the file the fuzzer ships: it loads (every constraint parses), covers at least 180
tfjs-core ops, is what the extractor produces from the installed package today, and
adjust-mode inputs for a fixed sample of ops run on tfjs-cpu (sandboxed workers, the
``tfjs-cpu`` backend). The validated tfjs -> tf counterparts then agree with TensorFlow
on fresh inputs of a sample of ops.
"""

from __future__ import annotations

import numpy as np
import pytest

from dlfuzz.engines.api.libspecs import LibSpec, load_library

SAMPLE_APIS = 40
SAMPLE_DRAWS = 10
MIN_OK = 0.85
MIN_COUNTERPARTS = 80


@pytest.fixture(scope="module")
def specs() -> dict[str, LibSpec]:
    return load_library("tfjs")


def _fuzzed(specs: dict[str, LibSpec]) -> list[LibSpec]:
    return sorted((s for s in specs.values() if not s.skip), key=lambda s: s.api)


def test_file_covers_tfjs_core(specs: dict[str, LibSpec]) -> None:
    fuzzed = _fuzzed(specs)
    assert len(fuzzed) >= 180
    assert {"core", "image", "linalg", "losses", "signal", "sparse"} <= {s.group for s in fuzzed}
    for s in specs.values():
        assert s.library == "tfjs" and s.api.startswith("tf.")
        assert all(p.passing in ("positional", "variadic") for p in s.params), s.api
        if s.skip:
            assert len(s.skip) > 10, f"{s.api}: a skip says why"
    validation = sum(c.source == "validation" for s in fuzzed for c in s.constraints)
    assert validation >= 250
    conv = specs["tf.conv2d"]
    texts = {c.text for c in conv.constraints}
    assert "x.dtype == 'float32'" in texts and "filter.ndims == 4" in texts
    assert specs["tf.multinomial"].random and specs["tf.dropout"].random


def test_file_is_what_the_extractor_produces(specs: dict[str, LibSpec]) -> None:
    from dlfuzz.specgen import tfjs_apis

    fresh = {s.api: s for s in tfjs_apis.extract()}
    assert set(fresh) == set(specs)
    for api in ("tf.conv2d", "tf.matMul", "tf.image.resizeBilinear", "tf.sum"):
        assert fresh[api].params == specs[api].params, api
        assert [c.text for c in fresh[api].constraints] == \
            [c.text for c in specs[api].constraints], api


def test_adjusted_inputs_run_on_tfjs_cpu(specs: dict[str, LibSpec]) -> None:
    from dlfuzz.engines.api.libgen import LibGenerator, to_case
    from dlfuzz.executor.pool import Pool, WorkerConfig

    fuzzed = _fuzzed(specs)
    rng = np.random.default_rng(20241)
    sample = [fuzzed[i] for i in rng.choice(len(fuzzed), SAMPLE_APIS, replace=False)]
    gen = LibGenerator(np.random.default_rng(7), mode="adjust")
    cases, owners = [], []
    for spec in sample:
        for _ in range(SAMPLE_DRAWS):
            cases.append(to_case(gen.draw(spec)))
            owners.append(spec.api)
    with Pool([WorkerConfig("tfjs-cpu", case_timeout_s=20.0, start_timeout_s=120.0)]) as pool:
        started = pool.start()
        assert "tfjs-cpu" in started, pool.unavailable
        results = pool.run(cases)
    ok = [r.get("tfjs-cpu") is not None and r["tfjs-cpu"].status == "ok" for r in results]
    rate = sum(ok) / len(ok)
    failing = sorted({a for a, good in zip(owners, ok, strict=True) if not good})
    assert rate >= MIN_OK, f"valid rate {rate:.1%}; failing APIs: {failing}"


def test_validated_counterparts_agree_with_tensorflow(specs: dict[str, LibSpec]) -> None:
    from dlfuzz.engines.api.counterparts import load_counterparts
    from dlfuzz.engines.api.libgen import LibGenerator, to_case
    from dlfuzz.executor.pool import Pool, WorkerConfig
    from dlfuzz.specgen.counterparts.validate import compare

    table = load_counterparts("tfjs")
    assert sum(len(v) for v in table.values()) >= MIN_COUNTERPARTS
    assert all(cp.library == "tf" and cp.evidence for v in table.values() for cp in v)
    chosen = [a for a in ("tf.add", "tf.matMul", "tf.sum", "tf.cumsum", "tf.gather",
                          "tf.image.flipLeftRight") if a in table]
    assert len(chosen) >= 5, chosen
    gen = LibGenerator(np.random.default_rng(3), mode="adjust", specials=False)
    cases = []
    for api in chosen:
        for _ in range(4):
            draw = gen.draw(specs[api])
            cps = [cp for cp in table[api] if cp.applies(draw.values)]
            if cps:
                cases.append(to_case(draw, cps))
    with Pool([WorkerConfig("tfjs-cpu", case_timeout_s=20.0, start_timeout_s=120.0),
               WorkerConfig("tf", case_timeout_s=20.0, start_timeout_s=120.0)]) as pool:
        pool.start()
        results = pool.run(cases)
    agreed = 0
    for case, res in zip(cases, results, strict=True):
        mine, theirs = res.get("tfjs-cpu"), res.get("tf")
        assert mine is not None and theirs is not None, case.api
        if mine.ok:
            verdict, _ = compare(mine, theirs)
            assert verdict == "agree", f"{case.api}: {verdict} {theirs.message[:200]}"
            agreed += 1
    assert agreed >= len(cases) * 0.7
