"""The TF.js backends on real Node and real headless Chromium (no mocks).

* tfjs-cpu, tfjs-wasm and tfjs-webgl compute add / matMul / conv2d / logicalAnd / complex
  add on float32, int32, bool and complex64 inputs like NumPy does;
* a dtype tfjs lacks is a clean exception; a tfjs error keeps its JS type name;
* a model (IR graph through graph.js) gives the same outputs on the three backends, and
  its standalone reproducers (node script, HTML page) say 0 / 1 without / with a planted
  kernel;
* an abort of the Node process and a wasm trap are ``crash`` outcomes, a hang is a
  ``timeout``, and the case after each runs normally in a restarted Node child;
* webgl unavailable (Chromium without WebGL) or abandoned by the page is an error,
  never a result;
* an old release (4.1.0) is selectable with $DLFUZZ_TFJS_VERSION and runs.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from dlfuzz.backends.tfjs import install
from dlfuzz.cases import ApiCase, Call, GraphCase, Ref, Tensor
from dlfuzz.executor.pool import Pool, WorkerConfig

PLANTED = Path(__file__).resolve().parents[1] / "planted"
BACKENDS = ("tfjs-cpu", "tfjs-wasm", "tfjs-webgl")
OLD = "4.1.0"


def api_case(target: str, *arrays: np.ndarray, args: tuple = (), kwargs: tuple = ()
             ) -> ApiCase:
    refs = tuple(Ref(i) for i in range(len(arrays)))
    return ApiCase(target, tuple(Tensor.from_numpy(a) for a in arrays),
                   (("tfjs", Call(target, refs + args, kwargs)),))


def started(*configs: WorkerConfig) -> Pool:
    pool = Pool(list(configs))
    pool.start()
    assert not pool.unavailable, pool.unavailable
    return pool


@pytest.fixture(scope="module")
def pool() -> Iterator[Pool]:
    with started(*(WorkerConfig(b, case_timeout_s=30) for b in BACKENDS)) as p:
        yield p


@pytest.fixture
def planted_path(monkeypatch: pytest.MonkeyPatch) -> None:
    old = os.environ.get("PYTHONPATH", "")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(PLANTED), old) if p))


def test_versions_name_the_backend(pool: Pool) -> None:
    versions = {n: w.stats.version or "" for n, w in pool.workers.items()}
    assert set(pool.workers) == set(BACKENDS)
    assert pool.workers["tfjs-webgl"].info["library"] == "tfjs"
    for name, version in versions.items():
        assert version.startswith(f"tfjs {install.DEFAULT_VERSION} ("), (name, version)
    assert "webgl, SwiftShader" in versions["tfjs-webgl"], versions


def test_ops_match_numpy_on_every_backend_and_dtype(pool: Pool) -> None:
    rng = np.random.default_rng(3)
    f = rng.normal(size=(3, 4)).astype(np.float32)
    g = rng.normal(size=(4, 5)).astype(np.float32)
    i = rng.integers(-50, 50, size=(3, 4)).astype(np.int32)
    j = rng.integers(-50, 50, size=(4, 2)).astype(np.int32)
    b1, b2 = rng.random((2, 5)) > 0.5, rng.random((2, 5)) > 0.5
    c = (rng.normal(size=6) + 1j * rng.normal(size=6)).astype(np.complex64)
    img = rng.normal(size=(1, 6, 6, 2)).astype(np.float32)
    ker = rng.normal(size=(3, 3, 2, 4)).astype(np.float32)
    conv_ref = np.zeros((1, 4, 4, 4))
    for y in range(4):
        for x in range(4):
            conv_ref[0, y, x] = np.einsum("hwc,hwco->o", img[0, y:y + 3, x:x + 3], ker)
    cases = [
        (api_case("tf.add", f, f), f + f),
        (api_case("tf.add", i, i), i + i),
        (api_case("tf.matMul", f, g), f.astype(np.float64) @ g),
        (api_case("tf.matMul", i.astype(np.float32), j.astype(np.float32)),
         i.astype(np.float64) @ j),
        (api_case("tf.logicalAnd", b1, b2), b1 & b2),
        (api_case("tf.add", c, c), c + c),
        (api_case("tf.conv2d", img, ker, args=(1, "valid")), conv_ref),
    ]
    results = pool.run([c for c, _ in cases])
    for (case, expected), outcomes in zip(cases, results, strict=True):
        assert set(outcomes) == set(BACKENDS)
        for name, o in outcomes.items():
            if expected.dtype == np.complex64 and name == "tfjs-wasm":
                # tfjs' own limit: the wasm backend has no complex kernels at all.
                assert (o.status, o.stage) == ("exception", "prepare"), o
                assert "Complex' not registered for backend 'wasm'" in o.message, o
                continue
            assert o.status == "ok", (case.api, name, o)
            got = o.outputs[0].to_numpy()
            assert got.shape == expected.shape, (case.api, name)
            if expected.dtype in (np.bool_, np.int32):
                assert got.dtype == expected.dtype and np.array_equal(got, expected), name
            else:
                np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4,
                                           err_msg=f"{case.api} on {name}")


def test_dtype_tfjs_lacks_and_js_errors_are_clean_exceptions(pool: Pool) -> None:
    x = np.zeros((2, 3), np.float32)
    wrong_dtype, js_error = pool.run([api_case("tf.abs", x.astype(np.float64)),
                                      api_case("tf.reshape", x, args=([4],))])
    for name in BACKENDS:
        o = wrong_dtype[name]
        assert (o.status, o.stage, o.exc_type) == ("exception", "prepare", "TypeError"), o
        assert "float64" in o.message
        o = js_error[name]
        assert (o.status, o.stage, o.exc_type) == ("exception", "call", "Error"), o
        assert "must match the product of shape" in o.message


def test_multiple_outputs_and_kwargs_object(pool: Pool) -> None:
    x = np.array([[1.0, 5.0, 3.0], [9.0, 2.0, 4.0]], np.float32)
    topk, = pool.run([api_case("tf.topk", x, args=(2, True))])
    for name, o in topk.items():
        assert o.status == "ok", o
        values, indices = (t.to_numpy() for t in o.outputs)
        assert np.array_equal(values, [[5, 3], [9, 4]]), name
        assert np.array_equal(indices, [[1, 2], [0, 2]]) and indices.dtype == np.int32, name


def test_models_agree_across_the_three_backends(pool: Pool) -> None:
    from dlfuzz.engines.model.engine import weights_key
    from dlfuzz.engines.model.seeds import SEEDS
    from dlfuzz.ir.weights import random_inputs

    rng = np.random.default_rng(0)
    model = SEEDS["lenet5"](rng)
    cases = [GraphCase("lenet5", model.graph, weights_key(model),
                       tuple(Tensor.from_numpy(x) for x in random_inputs(model.graph, rng)),
                       ("tfjs",)) for _ in range(3)]
    for outcomes in pool.run(cases):
        outs = {n: o.outputs[0].to_numpy() for n, o in outcomes.items() if o.ok}
        assert set(outs) == set(BACKENDS), outcomes
        for name in BACKENDS[1:]:
            np.testing.assert_allclose(outs[name], outs["tfjs-cpu"], rtol=1e-3, atol=1e-5)


def test_model_reproducers_run_standalone(pool: Pool, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A model bug's repro_tfjs_cpu.js / .html rebuild the model (graph.js inlined) and
    judge it: 0 with tfjs as it is, 1 with the planted Add kernel loaded first."""
    import subprocess

    monkeypatch.syspath_prepend(str(PLANTED))  # repro_command imports the preload module

    from dlfuzz.backends.tfjs.backend import TfjsCpuBackend
    from dlfuzz.backends.tfjs.webgl import TfjsWebglBackend
    from dlfuzz.engines.model.engine import weights_key
    from dlfuzz.engines.model.seeds import SEEDS
    from dlfuzz.ir.weights import random_inputs
    from dlfuzz.triage.repro import Expectation

    rng = np.random.default_rng(0)
    model = SEEDS["resnet"](rng)  # residual Adds of 8 channels: the planted kernel's reach
    case = GraphCase("resnet", model.graph, weights_key(model),
                     tuple(Tensor.from_numpy(x) for x in random_inputs(model.graph, rng)),
                     ("tfjs",))
    out = pool.run([case], only=["tfjs-cpu"])[0]["tfjs-cpu"]
    assert out.ok, out
    expected = tuple(t.to_numpy().astype(np.float64) for t in out.outputs)
    expectation = Expectation("values", expected, tuple(np.full(e.shape, 1e-4) for e in expected))
    for backend, name, planted in ((TfjsCpuBackend(), "repro.js", "planted_tfjs_add"),
                                   (TfjsWebglBackend(), "repro.html", "planted_tfjs_webgl_add")):
        script = tmp_path / name
        script.write_text(backend.repro_script(case, expectation, "resnet", "tfjs 4.22.0"))
        clean = subprocess.run(backend.repro_command(script), capture_output=True, text=True,
                               timeout=120)
        assert clean.returncode == 0 and "OK" in clean.stdout, clean.stdout + clean.stderr
        bug = subprocess.run(backend.repro_command(script, [planted]), capture_output=True,
                             text=True, timeout=120)
        assert bug.returncode == 1 and "BUG present" in bug.stdout, bug.stdout + bug.stderr


def test_crashes_and_hangs_are_outcomes_and_the_next_case_runs(planted_path: None) -> None:
    configs = [WorkerConfig(b, case_timeout_s=4, preload=("planted_tfjs_faults",))
               for b in ("tfjs-cpu", "tfjs-wasm")]
    fine = api_case("tf.neg", np.arange(6, dtype=np.float32))
    other = api_case("tf.abs", -np.arange(6, dtype=np.float32))
    cases = [api_case("tf.neg", np.zeros(13, np.float32)), fine,
             api_case("tf.neg", np.zeros(17, np.float32)), fine,
             api_case("tf.neg", np.zeros(19, np.float32)), fine, other]
    with started(*configs) as p:
        results = p.run(cases)
    for name in ("tfjs-cpu", "tfjs-wasm"):
        abort, ok1, trap, ok2, hang = (r[name] for r in results[:5])
        assert abort.status == "crash" and "SIGABRT" in abort.message, abort
        assert trap.status == "crash" and "memory access out of bounds" in trap.message, trap
        assert hang.status == "timeout", hang
        for ok in (ok1, ok2):
            assert ok.status == "ok", ok
            assert np.array_equal(ok.outputs[0].to_numpy(), -np.arange(6, dtype=np.float32))
        # Three deaths of tf.neg in the batch: its later case there is not run (no
        # outcome, nothing claimed); another API's is.
        assert name not in results[5]
        assert results[6][name].status == "ok", results[6][name]
        assert np.array_equal(results[6][name].outputs[0].to_numpy(),
                              np.arange(6, dtype=np.float32))


def _webgl_case() -> ApiCase:
    return api_case("tf.add", np.ones(4, np.float32), np.ones(4, np.float32))


def test_webgl_unavailable_is_an_error_not_a_result(monkeypatch: pytest.MonkeyPatch) -> None:
    # Chromium without any GPU path: tfjs would silently compute on its cpu backend.
    monkeypatch.setenv("DLFUZZ_CHROMIUM_GPU_ARGS", "--disable-gpu --disable-webgl "
                       "--disable-software-rasterizer")
    with Pool([WorkerConfig("tfjs-webgl", start_timeout_s=60)]) as p:
        versions = p.start()
        assert "tfjs-webgl" not in versions
        assert "WebGL is not available" in p.unavailable["tfjs-webgl"], p.unavailable
        assert p.run([_webgl_case()]) == [{}]  # no webgl outcome at all


def test_webgl_falling_back_in_the_page_is_never_a_result(planted_path: None) -> None:
    with started(WorkerConfig("tfjs-webgl", preload=("planted_tfjs_fallback",))) as p:
        outcomes = p.run([_webgl_case(), _webgl_case()])
    for r in outcomes:
        o = r["tfjs-webgl"]
        assert not o.ok and not o.outputs, o
        assert (o.stage, o.exc_type) == ("dlfuzz", "BackendFallback"), o
        assert "not webgl" in o.message


def test_an_old_release_runs_side_by_side(monkeypatch: pytest.MonkeyPatch) -> None:
    install.ensure_installed(OLD)  # a no-op once the cache has it
    assert {OLD, install.DEFAULT_VERSION} <= set(install.installed_versions())
    monkeypatch.setenv("DLFUZZ_TFJS_VERSION", OLD)
    x = np.arange(4, dtype=np.float32)
    with started(*(WorkerConfig(b) for b in ("tfjs-cpu", "tfjs-wasm"))) as p:
        assert {w.stats.version for w in p.workers.values()} == {
            f"tfjs {OLD} (cpu)", f"tfjs {OLD} (wasm)"}
        outcomes, = p.run([api_case("tf.add", x, x)])
    for o in outcomes.values():
        assert o.ok and np.array_equal(o.outputs[0].to_numpy(), x + x), o


def test_wasm_select_on_bool_branches_is_the_library_s(pool: Pool) -> None:
    """tf.where with bool branches is wrong on tfjs-wasm from the fifth element on (its
    Select kernel steps through the 1-byte bools 4 bytes at a time, found by the bool
    graph samples). graph.js spells a bool Where with logical ops for that reason; this
    test fails once tfjs fixes it, and the spelling can go."""
    c = np.array([1, 0, 1, 0, 1, 0, 1, 0], bool)
    a = np.array([1, 1, 0, 0, 1, 1, 0, 0], bool)
    b = np.array([0, 1, 1, 0, 0, 1, 1, 0], bool)
    want = np.where(c, a, b)
    (outcomes,) = pool.run([api_case("tf.where", c, a, b)], only=["tfjs-cpu", "tfjs-wasm"])
    assert all(o.ok for o in outcomes.values()), outcomes
    cpu, wasm = (outcomes[k].outputs[0].to_numpy() for k in ("tfjs-cpu", "tfjs-wasm"))
    np.testing.assert_array_equal(cpu, want)
    assert np.array_equal(wasm[:4], want[:4]) and not np.array_equal(wasm, want), wasm


def test_a_crash_reproducer_tells_a_trap_from_an_error(tmp_path: Path) -> None:
    """A TF.js crash is a wasm trap thrown as an exception: the crash reproducer must
    say BUG for it (tfjs#7605, a dilated conv2d whose padding reads out of bounds,
    still there in 4.22.0) and OK for an ordinary error, the fix of a crash on an input
    the library may refuse."""
    import subprocess

    from dlfuzz.backends.tfjs.backend import TfjsWasmBackend
    from dlfuzz.cases import Expectation

    backend = TfjsWasmBackend()
    trap = api_case("tf.conv2d", np.ones((5, 7, 10, 5), np.float32),
                    np.ones((11, 6, 5, 1), np.float32), args=([1, 1], 83, "NHWC", [10, 7]))
    refused = api_case("tf.conv2d", np.ones((5, 7, 10, 5), np.float32),
                       np.ones((11, 6, 4, 1), np.float32), args=([1, 1], 0, "NHWC", [1, 1]))
    for case, status, verdict in ((trap, 1, "BUG present"), (refused, 0, "OK")):
        script = tmp_path / "repro_tfjs_wasm.js"
        script.write_text(backend.repro_script(case, Expectation("survives"), "t",
                                               "tfjs 4.22.0"))
        proc = subprocess.run(backend.repro_command(script), capture_output=True, text=True,
                              timeout=120)
        last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr
        assert proc.returncode == status and last.startswith(verdict), proc.stdout + proc.stderr
