"""Reading a crashed worker's output (oracles/crash_log.py).

The texts are excerpts of real worker output: TensorFlow 2.21's abort in
``tensor_scatter_nd_sub``, XLA's uncaught ``BadStatusOrAccess`` under
``jax.numpy.eye(2**40, 2**40)``, and faulthandler's extension-module list.
"""

from __future__ import annotations

from dlfuzz.oracles.crash_log import (
    KEEP,
    crash_state,
    fatal_message,
    kept_output,
    native_frames,
    state_slug,
)
from dlfuzz.triage.root_cause import key_parts

TF_ABORT = """\
WARNING: All log messages before absl::InitializeLog() is called are written to STDERR
I0000 00:00:1796194796.767997    3395 cudart_stub.cc:31] Could not find cuda drivers on your machine, GPU will not be used.
E0000 00:00:1796194797.575810    3395 cuda_platform.cc:52] failed call to cuInit: INTERNAL: CUDA error
F0000 00:00:1796194797.597083    3395 tensor_shape.cc:362] Check failed: d < dims() (1 vs. 1)
*** Check failure stack trace: ***
    @     0x7f2bc3b1d314  absl::lts_20250814::log_internal::LogMessage::SendToLog()
    @     0x7f2bc3b1d296  absl::lts_20250814::log_internal::LogMessage::Flush()
    @     0x7f2bc374915c  tensorflow::TensorShapeBase<>::dim_size()
    @     0x7f2bab02225d  tensorflow::TensorScatterOp<>::Compute()
    @     0x7f2bc1660e80  tensorflow::ThreadPoolDevice::Compute()
    @     0x7f2bc160e778  tensorflow::(anonymous namespace)::SingleThreadedExecutorImpl::Run()
    @     0x7f2bcbadc04c  pybind11::cpp_function::initialize<>()::{lambda()#1}::__invoke()
Fatal Python error: Aborted

Current thread 0x00007f2bd2a4f740 (most recent call first):
  File "/venv/lib/python3.11/site-packages/tensorflow/python/ops/gen_array_ops.py", line 12139 in tensor_scatter_sub

Extension modules: numpy._core._multiarray_umath, numpy.linalg._umath_linalg, scipy._lib._ccallback_c, sklearn.utils._openmp_helpers (total: 132)
"""

XLA_THROW = """\
terminate called after throwing an instance of 'absl::lts_20260107::BadStatusOrAccess'
  what():  Bad StatusOr access: INVALID_ARGUMENT: overflow in static extent product: dimensions=[1099511627776, 1099511627776].
Fatal Python error: Aborted
"""


def test_the_check_message_and_where_it_failed() -> None:
    assert fatal_message(TF_ABORT) == "Check failed: d < dims() (1 vs. 1) (tensor_shape.cc:362)"


def test_an_uncaught_exception_is_named_with_its_what() -> None:
    assert fatal_message(XLA_THROW).startswith(
        "uncaught absl::lts_20260107::BadStatusOrAccess: Bad StatusOr access: "
        "INVALID_ARGUMENT: overflow in static extent product")


def test_frames_leave_out_logging_and_templates() -> None:
    frames = native_frames(TF_ABORT)
    assert frames[:4] == ["TensorShapeBase::dim_size", "TensorScatterOp::Compute",
                          "ThreadPoolDevice::Compute", "SingleThreadedExecutorImpl::Run"]
    assert not any("LogMessage" in f for f in frames)


def test_the_state_is_the_top_three_frames() -> None:
    state = crash_state(TF_ABORT)
    assert state == ("TensorShapeBase::dim_size < TensorScatterOp::Compute < "
                     "ThreadPoolDevice::Compute")
    assert state_slug(state) == ("tensorshapebase.dimsize<tensorscatterop.compute<"
                                 "threadpooldevice.compute")


def test_a_throw_without_stack_is_keyed_by_its_message_without_numbers() -> None:
    other_size = XLA_THROW.replace("1099511627776, 1099511627776", "4294967296, 8")
    assert crash_state(XLA_THROW) == crash_state(other_size) != ""
    assert "lts_" not in crash_state(XLA_THROW)  # absl's versioned namespace varies


def test_no_state_without_a_native_message() -> None:
    assert crash_state("Fatal Python error: Segmentation fault\n") == ""
    assert fatal_message("Fatal Python error: Segmentation fault\n") == ""


def test_kept_output_starts_at_the_fatal_line_without_the_module_list() -> None:
    kept = kept_output("x" * 5000 + "\n" + TF_ABORT)
    assert kept.startswith("F0000") and "Extension modules" not in kept
    assert len(kept) <= KEEP
    assert kept_output("z" * 5000 + "\n" + XLA_THROW).startswith("terminate called")
    tail = kept_output("y" * 5000 + "\nExtension modules: a, b (total: 2)\n")
    assert "Extension modules" not in tail and len(tail) <= KEEP


def test_the_state_replaces_the_api_in_the_key_for_crashes_only() -> None:
    details = {"crash_state": crash_state(TF_ABORT)}
    sub = key_parts("tensorflow.tensor_scatter_nd_sub", "crash", "SIGABRT: x", details)
    add = key_parts("tensorflow.tensor_scatter_nd_add", "crash", "SIGABRT: x", details)
    assert sub == add == ("at:tensorshapebase.dimsize<tensorscatterop.compute<"
                          "threadpooldevice.compute", "abort")
    plain = key_parts("tensorflow.tensor_scatter_nd_sub", "crash", "SIGABRT: x", {})
    assert plain == ("tensorscatterndsub", "abort")
