"""TensorFlow eager and ``tf.function(jit_compile=True)`` (XLA)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

from dlfuzz.backends._threads import worker_threads
from dlfuzz.backends.base import Backend
from dlfuzz.cases import ApiCase, Call
from dlfuzz.libraries import get

LIBRARY = get("tf")


class TfBackend(Backend):
    name = "tf"
    forkable = True  # import and setup leave one thread (executor.zygote)
    library = LIBRARY.name
    repro_import = LIBRARY.repro_header
    lowering = LIBRARY.lowering
    case_kinds = ("api", "graph", "grad", "train")

    def setup(self) -> None:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        import tensorflow as tf

        threads = worker_threads()
        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(threads)
        self.tf = tf
        self._numpy_behavior = False

    def run_api(self, case: ApiCase) -> tuple[np.ndarray, ...]:
        """API calls run under TF's NumPy behaviour (``tnp`` functions, NumPy methods on
        tensors), as their reproducers do (``repro_setup``). It is switched on at the
        first API case, not at start: it is process-wide and changes type promotion
        (``tf.nn.gelu`` of a bfloat16 tensor then returns float64), and models run in TF's
        default mode, as a user's model and the model reproducer do."""
        self.prepare_api()
        return super().run_api(case)

    def prepare_api(self) -> None:
        if not self._numpy_behavior:
            self.tf.experimental.numpy.experimental_enable_numpy_behavior(
                prefer_float32=False)
            self._numpy_behavior = True

    # ---- gradients: GradientTape (reverse), ForwardAccumulator (forward) ----------------
    def floating(self, native: Any) -> bool:
        return bool(native.dtype.is_floating)

    def vjp(self, g: Callable[[list[Any], list[Any]], list[Any]], primals: list[Any],
            natives: list[Any], cotangents: list[Any], key: Any) -> list[Any]:
        return _tape(self.tf, g, primals, natives, cotangents)

    def total(self, native: Any) -> Any:
        return self.tf.reduce_sum(native)

    def jvp(self, g: Callable[[list[Any], list[Any]], list[Any]], primals: list[Any],
            natives: list[Any], tangents: list[Any]) -> list[Any]:
        tf = self.tf
        with tf.autodiff.ForwardAccumulator(primals, tangents) as acc:
            outs = g(primals, natives)
        zero = tf.UnconnectedGradients.ZERO
        return [acc.jvp(o, unconnected_gradients=zero) for o in outs]

    def version(self) -> str:
        return self.tf.__version__

    def to_native(self, array: np.ndarray) -> Any:
        return self.tf.constant(array)

    def to_numpy(self, value: Any) -> np.ndarray:
        return value.numpy()

    def native_dtype(self, name: str) -> Any:
        return getattr(self.tf, name)

    def is_tensor(self, value: Any) -> bool:
        return isinstance(value, self.tf.Tensor | self.tf.Variable)

    def repro_setup(self) -> str:
        return "tnp.experimental_enable_numpy_behavior(prefer_float32=False)"

    def repro_gradient(self) -> str:
        return _TF_GRADIENT.replace("BACKWARD", self.repro_backward())

    def repro_backward(self) -> str:
        """``_backward(f, ps, cs)``: the tape as this mode runs it."""
        return "_backward = _tape\n"

    def repro_tensor(self, values: str, dtype: str, shape: tuple[int, ...]) -> str:
        return (f"tf.reshape(tf.constant({values}, dtype={self.repro_dtype(dtype)}), "
                f"{list(shape)!r})")

    def repro_dtype(self, name: str) -> str:
        return LIBRARY.dtype(name)

    def repro_model_input(self, name: str) -> str:
        return f"tf.constant({name})"

    def repro_helpers(self) -> str:
        return ("def _as_list(t):\n"
                "    a = np.asarray(t.numpy() if hasattr(t, 'numpy') else t)\n"
                "    return (a.astype(np.float64) if a.dtype.name == 'bfloat16' else a).tolist()\n")


class TfXlaBackend(TfBackend):
    name = "tf-xla"
    compiled = True
    compiles_per_signature = True
    case_timeout_factor = 6.0

    def compile(self, call: Call, fn: Callable[..., Any], examples: list[Any],
                used: list[int]) -> Callable[..., Any]:
        function = self.tf.function(self.bind(call, fn, used), jit_compile=True,
                                    autograph=False)
        return function.get_concrete_function(*examples)

    def compile_model(self, model: Callable[..., Any]) -> Callable[..., Any]:
        return self.tf.function(model, jit_compile=True, autograph=False)

    def vjp(self, g: Callable[[list[Any], list[Any]], list[Any]], primals: list[Any],
            natives: list[Any], cotangents: list[Any], key: Any) -> list[Any]:
        """The tape and its backward in one XLA-compiled function, per call and signature."""
        tf = self.tf
        compiled = self.compiled_once(("grad", key), lambda: tf.function(
            lambda ps, ns, cs: _tape(tf, g, ps, ns, cs), jit_compile=True, autograph=False))
        return list(compiled(primals, natives, cotangents))

    def repro_compile_model(self, name: str) -> str:
        return f"{name} = tf.function({name}, jit_compile=True, autograph=False)"

    def repro_backward(self) -> str:
        return ("def _backward(f, ps, cs):\n"
                "    return tf.function(lambda ps, cs: _tape(f, ps, cs), jit_compile=True,\n"
                "                       autograph=False)(ps, cs)\n")

    def repro_call(self, call_expr: str, tensor_names: list[str]) -> str:
        params = ", ".join(tensor_names)
        return (f"tf.function(lambda {params}: {call_expr}, jit_compile=True)({params})")


_TF_GRADIENT = '''
def _floating(t):
    return isinstance(t, tf.Tensor) and t.dtype.is_floating


def _numpy(t):
    return t.numpy()


def _tensor(a):
    return tf.constant(a)


def _tape(f, ps, cs):
    with tf.GradientTape() as tape:
        for p in ps:
            tape.watch(p)
        outs = f(*ps)
    return tape.gradient(outs, list(ps), output_gradients=list(cs),
                         unconnected_gradients=tf.UnconnectedGradients.ZERO)


BACKWARD

def _vjp(f, primals, cots):
    return list(_backward(f, list(primals), [tf.constant(c) for c in cots]))


def _jvp(f, primals, tangents):
    with tf.autodiff.ForwardAccumulator(list(primals), [tf.constant(t) for t in tangents]) as acc:
        outs = f(*primals)
    return [acc.jvp(o, unconnected_gradients=tf.UnconnectedGradients.ZERO) for o in outs]
'''


def _tape(tf: Any, g: Callable[[list[Any], list[Any]], list[Any]], primals: list[Any],
          natives: list[Any], cotangents: list[Any]) -> list[Any]:
    with tf.GradientTape() as tape:
        for p in primals:
            tape.watch(p)
        outs = g(list(primals), list(natives))
    grads = tape.gradient(outs, list(primals), output_gradients=list(cotangents),
                          unconnected_gradients=tf.UnconnectedGradients.ZERO)
    return list(grads)
