"""JAX op by op and ``jax.jit`` (XLA on CPU). 64-bit types are enabled, as NumPy has them."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

from dlfuzz.backends._threads import worker_threads
from dlfuzz.backends.base import Backend
from dlfuzz.cases import Call
from dlfuzz.libraries import get

LIBRARY = get("jax")


class JaxBackend(Backend):
    name = "jax"
    forkable = True  # import and setup leave one thread (executor.zygote)
    compiles_per_signature = True  # each primitive, per new signature, even eagerly
    library = LIBRARY.name
    repro_import = LIBRARY.repro_header
    # Asynchronous dispatch: jax.numpy.lcm on int32 INT_MIN hangs, and its reproducer,
    # which exits after the call returns, said "returned normally" in 2 s.
    repro_wait = "jax.block_until_ready(result)"
    lowering = LIBRARY.lowering
    case_kinds = ("api", "graph", "grad", "train")

    def setup(self) -> None:
        if worker_threads() == 1:
            flags = os.environ.get("XLA_FLAGS", "")
            os.environ["XLA_FLAGS"] = (flags + " --xla_cpu_multi_thread_eigen=false").strip()
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)
        from dlfuzz.backends.compile_cache import enable_jax_cache

        enable_jax_cache(jax)  # compiled primitives kept across workers and campaigns
        self.jax, self.jnp = jax, jnp

    def version(self) -> str:
        return self.jax.__version__

    def to_native(self, array: np.ndarray) -> Any:
        return self.jnp.asarray(array)

    def to_numpy(self, value: Any) -> np.ndarray:
        return np.asarray(value)

    def native_dtype(self, name: str) -> Any:
        return self.jnp.bool_ if name == "bool" else getattr(self.jnp, name)

    def is_tensor(self, value: Any) -> bool:
        return isinstance(value, self.jax.Array)

    # ---- gradients: jax.vjp (reverse), jax.jvp (forward) --------------------------------
    def floating(self, native: Any) -> bool:
        return bool(self.jnp.issubdtype(native.dtype, self.jnp.floating))

    def vjp(self, g: Callable[[list[Any], list[Any]], list[Any]], primals: list[Any],
            natives: list[Any], cotangents: list[Any], key: Any) -> list[Any]:
        return list(_vjp(self.jax, g, primals, natives, cotangents))

    def jvp(self, g: Callable[[list[Any], list[Any]], list[Any]], primals: list[Any],
            natives: list[Any], tangents: list[Any]) -> list[Any]:
        _, out = self.jax.jvp(lambda *ps: g(list(ps), natives), tuple(primals), tuple(tangents))
        return list(out)

    def repro_setup(self) -> str:
        return 'jax.config.update("jax_enable_x64", True)'

    def repro_gradient(self) -> str:
        return _JAX_GRADIENT.replace("BACKWARD", self.repro_backward())

    def repro_backward(self) -> str:
        """``_backward(ps, cs)``: the pullback as this mode runs it."""
        return ("def _backward(f, ps, cs):\n"
                "    return jax.vjp(lambda *p: f(*p), *ps)[1](cs)\n")

    def repro_tensor(self, values: str, dtype: str, shape: tuple[int, ...]) -> str:
        return f"jnp.array({values}, dtype={self.repro_dtype(dtype)}).reshape({shape!r})"

    def repro_dtype(self, name: str) -> str:
        return LIBRARY.dtype(name)

    def repro_model_input(self, name: str) -> str:
        return f"jnp.asarray({name})"

    def repro_helpers(self) -> str:
        return ("def _as_list(t):\n"
                "    a = np.asarray(t)\n"
                "    return (a.astype(np.float64) if a.dtype == jnp.bfloat16 else a).tolist()\n")


class JaxJitBackend(JaxBackend):
    name = "jax-jit"
    compiled = True
    case_timeout_factor = 6.0

    def compile(self, call: Call, fn: Callable[..., Any], examples: list[Any],
                used: list[int]) -> Callable[..., Any]:
        return self.jax.jit(self.bind(call, fn, used)).lower(*examples).compile()

    def compile_model(self, model: Callable[..., Any]) -> Callable[..., Any]:
        return self.jax.jit(model)

    def vjp(self, g: Callable[[list[Any], list[Any]], list[Any]], primals: list[Any],
            natives: list[Any], cotangents: list[Any], key: Any) -> list[Any]:
        """``jax.jit`` of the whole backward, compiled once per call and signature."""
        jax = self.jax
        compiled = self.compiled_once(("grad", key), lambda: jax.jit(
            lambda ps, ns, cs: _vjp(jax, g, ps, ns, cs)))
        return list(compiled(primals, natives, cotangents))

    def repro_compile_model(self, name: str) -> str:
        return f"{name} = jax.jit({name})"

    def repro_backward(self) -> str:
        return ("def _backward(f, ps, cs):\n"
                "    return jax.jit(lambda ps, cs: jax.vjp(lambda *p: f(*p), *ps)[1](cs))(ps, cs)\n")

    def repro_call(self, call_expr: str, tensor_names: list[str]) -> str:
        params = ", ".join(tensor_names)
        return f"jax.jit(lambda {params}: {call_expr})({params})"


_JAX_GRADIENT = '''
def _floating(t):
    return isinstance(t, jax.Array) and jnp.issubdtype(t.dtype, jnp.floating)


def _numpy(t):
    return np.asarray(t)


def _tensor(a):
    return jnp.asarray(a)


BACKWARD

def _vjp(f, primals, cots):
    return list(_backward(f, list(primals), [jnp.asarray(c) for c in cots]))


def _jvp(f, primals, tangents):
    return list(jax.jvp(lambda *ps: f(*ps), tuple(primals),
                        tuple(jnp.asarray(t) for t in tangents))[1])
'''


def _vjp(jax: Any, g: Callable[[list[Any], list[Any]], list[Any]], primals: list[Any],
         natives: list[Any], cotangents: list[Any]) -> tuple[Any, ...]:
    _, pullback = jax.vjp(lambda *ps: g(list(ps), natives), *primals)
    grads: tuple[Any, ...] = pullback(list(cotangents))
    return grads
