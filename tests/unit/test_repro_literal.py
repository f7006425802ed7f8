"""Reproducer literals parse back to the exact same bits."""

import math

import ml_dtypes
import numpy as np

from dlfuzz.backends.numpy_backend import NumpyBackend
from dlfuzz.backends.torch_backend import TorchCompileBackend
from dlfuzz.cases import ApiCase, Call, DType, Ref, Tensor
from dlfuzz.triage.repro import Expectation, call_source, literal, reproducer


def test_literals_round_trip_exactly():
    for dtype in (np.float16, np.float32, np.float64, ml_dtypes.bfloat16):
        arr = np.array([0.1, -0.0, 1e-40, 3.0e38, np.nan, np.inf, -np.inf], dtype=np.float64)
        with np.errstate(over="ignore"):
            arr = arr.astype(dtype)
        back = np.array(eval(literal(arr.astype(np.float64).tolist())), dtype=np.float64)
        back = back.astype(dtype)
        assert arr.tobytes() == back.tobytes()
    assert math.copysign(1, eval(literal(-0.0))) == -1


def test_call_source_names_library_and_arguments():
    b = NumpyBackend()
    call = Call("numpy.sum", (Ref(0),), (("axis", (0, 1)), ("dtype", DType("float64"))))
    expr, extra = call_source(call, b)
    assert expr == "np.sum(x0, axis=(0, 1), dtype=np.float64)" and extra == ""
    expr, extra = call_source(Call("mypkg.mod.fn", (Ref(1),)), b)
    assert expr == "mypkg.mod.fn(x1)" and extra == "import mypkg.mod"


def test_compiled_reproducer_wraps_the_call():
    case = ApiCase("add", (Tensor.from_numpy(np.ones(2, np.float32)),) * 2,
                   (("torch", Call("torch.add", (Ref(0), Ref(1)))),))
    text = reproducer(TorchCompileBackend(), case, Expectation("runs"), "t")
    assert "torch.compile(lambda x0, x1: torch.add(x0, x1), dynamic=False)(x0, x1)" in text
    compile(text, "repro.py", "exec")
