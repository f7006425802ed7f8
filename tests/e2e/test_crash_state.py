"""Crash states from real aborts: one failing place is one root cause, however reached.

TensorFlow 2.21's ``tensor_scatter_nd_add``, ``_sub`` and ``_max`` all abort (a failed
``CHECK`` in ``TensorShapeBase::dim_size``, called by ``TensorScatterOp::Compute``) when
the indices have more dimensions than the updates allow. A real TF worker runs each;
the crash oracle's finding must carry the CHECK message (not only "SIGABRT") and the
native frames, and the three must share one root-cause key, while an abort elsewhere
(the per-channel fake quantization of a scalar, tensorflow#117842) keeps its own.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from dlfuzz.cases import ApiCase, Call, Ref, Tensor
from dlfuzz.executor.pool import Worker, WorkerConfig
from dlfuzz.oracles.base import OracleContext
from dlfuzz.oracles.crash import CrashOracle
from dlfuzz.triage.root_cause import Backends, root_cause_key

SCATTERS = ("tensor_scatter_nd_add", "tensor_scatter_nd_sub", "tensor_scatter_nd_max")


@pytest.fixture(scope="module")
def tf_worker() -> Iterator[Worker]:
    # TF turns its oneDNN passes on by default only on CPUs with AVX-512 or AMX
    # features; the depthwise abort below is in a oneDNN layout pass, and on an AVX2
    # machine TF raises a clean error there instead. The worker inherits the variable,
    # also when it restarts after an abort (so it stays set for the whole module).
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TF_ENABLE_ONEDNN_OPTS", "1")
        w = Worker(WorkerConfig("tf", case_timeout_s=60.0, start_timeout_s=180.0))
        w.start()
        yield w
        w.close()


def _scatter(op: str) -> ApiCase:
    tensors = (Tensor.from_numpy(np.zeros(1, np.float64)),
               Tensor.from_numpy(np.zeros((1, 1, 1), np.int32)),
               Tensor.from_numpy(np.ones(1, np.float64)))
    return ApiCase(f"tensorflow.{op}", tensors,
                   (("tf", Call(f"tensorflow.{op}", (Ref(0), Ref(1), Ref(2)))),))


def _crash_key(worker: Worker, case: ApiCase) -> tuple[str, str]:
    (outcome,) = worker.run([case])
    assert outcome.status == "crash", (outcome.status, outcome.message)
    ctx = OracleContext(None, {"tf": "tf"}, {"tf": False})
    (found,) = CrashOracle().check(case, {"tf": outcome}, ctx)
    key = root_cause_key(found, case, Backends({"tf": "tf"}, {"tf": False}), [found])
    return key, found.message


def test_three_apis_aborting_in_one_kernel_are_one_root_cause(tf_worker: Worker) -> None:
    results = [_crash_key(tf_worker, _scatter(op)) for op in SCATTERS]
    keys = {key for key, _ in results}
    assert len(keys) == 1, keys
    (key,) = keys
    assert key.startswith("tf/at:") and "tensorscatterop.compute" in key, key
    assert key.endswith("/abort"), key
    for _, message in results:
        assert "SIGABRT" in message and "Check failed: d < dims()" in message, message
        assert "tensor_shape.cc" in message, message


def test_an_abort_in_another_kernel_keeps_its_own_key(tf_worker: Worker) -> None:
    scatter_key, _ = _crash_key(tf_worker, _scatter("tensor_scatter_nd_add"))
    # tensorflow#117842: a scalar input to the per-channel fake quantization fails a
    # CHECK in its own kernel.
    api = "tensorflow.quantization.fake_quant_with_min_max_vars_per_channel"
    quant = ApiCase(api, (Tensor.from_numpy(np.array(1.0, np.float32)),
                          Tensor.from_numpy(np.array([-1.0], np.float32)),
                          Tensor.from_numpy(np.array([1.0], np.float32))),
                    (("tf", Call(api, kwargs=(("inputs", Ref(0)), ("min", Ref(1)),
                                              ("max", Ref(2))))),))
    key, message = _crash_key(tf_worker, quant)
    assert key.startswith("tf/at:") and key != scatter_key, (key, scatter_key)
    assert "Check failed" in message, message


def test_a_deep_python_stack_does_not_push_the_native_one_out(tf_worker: Worker) -> None:
    """``depthwise_conv2d`` and ``separable_conv2d`` (a depthwise convolution inside) with
    a stride of 2**31 + 1 abort in TF's oneDNN layout pass, and faulthandler then prints
    about 30 Python frames of TF's dispatch layers: an 8 KB tail lost the native stack's
    head, so each was filed under its own API. One place, one root cause."""
    one = Tensor.from_numpy(np.ones((), np.float32))
    depthwise = ApiCase("tensorflow.nn.depthwise_conv2d", (
        Tensor.from_numpy(np.ones((1, 1, 1), np.float32)), one), (("tf", Call(
            "tensorflow.nn.depthwise_conv2d", (Ref(0), Ref(1), (2**31 + 1, 1, 1, 1), "VALID"))),))
    separable = ApiCase("tensorflow.nn.separable_conv2d", (
        Tensor.from_numpy(np.ones((0, 2, 1), np.float32)), one,
        Tensor.from_numpy(np.ones((1, 1, 1, 1), np.float32))), (("tf", Call(
            "tensorflow.nn.separable_conv2d",
            (Ref(0), Ref(1), Ref(2), (1, 1, 1, 2**31 + 1), "SAME"))),))
    keys = {_crash_key(tf_worker, case)[0] for case in (depthwise, separable)}
    assert len(keys) == 1, keys
    (key,) = keys
    assert key.startswith("tf/at:") and "copyattrsconv" in key, key
