"""PyTorch eager and ``torch.compile`` (Inductor, C++ code generation on CPU)."""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from dlfuzz.backends._threads import worker_threads
from dlfuzz.backends.base import Backend
from dlfuzz.cases import DTYPES, Call
from dlfuzz.libraries import get

LIBRARY = get("torch")

_BFLOAT16 = DTYPES["bfloat16"]


class TorchBackend(Backend):
    name = "torch"
    forkable = True  # import and setup leave one thread (executor.zygote)
    library = LIBRARY.name
    repro_import = LIBRARY.repro_header
    lowering = LIBRARY.lowering
    case_kinds: ClassVar[tuple[str, ...]] = ("api", "graph", "program", "grad", "train")

    def setup(self) -> None:
        import torch

        self.torch = torch
        torch.set_num_threads(worker_threads())

    def version(self) -> str:
        return self.torch.__version__

    def to_native(self, array: np.ndarray) -> Any:
        # The array is the worker's own fresh copy (Tensor.to_numpy): no second copy.
        if array.dtype == _BFLOAT16:
            return self.torch.from_numpy(array.view(np.int16)).view(self.torch.bfloat16)
        return self.torch.from_numpy(array)

    def to_numpy(self, value: Any) -> np.ndarray:
        torch = self.torch
        t = value.detach().cpu().resolve_conj().resolve_neg()
        if t.dtype == torch.bfloat16:
            import ml_dtypes

            return t.contiguous().view(torch.int16).numpy().view(ml_dtypes.bfloat16)
        return t.numpy()

    def native_dtype(self, name: str) -> Any:
        return getattr(self.torch, name)

    def is_tensor(self, value: Any) -> bool:
        return isinstance(value, self.torch.Tensor)

    # ---- gradients: autograd (reverse), torch.func.jvp (forward) ------------------------
    def floating(self, native: Any) -> bool:
        return bool(native.dtype.is_floating_point)

    def vjp(self, g: Callable[[list[Any], list[Any]], list[Any]], primals: list[Any],
            natives: list[Any], cotangents: list[Any], key: Any) -> list[Any]:
        torch = self.torch
        leaves = [p.detach().clone().requires_grad_(True) for p in primals]
        with torch.enable_grad():
            outs = self.traced(g, key)(leaves, natives)
        return _autograd(torch, outs, leaves, cotangents)

    def traced(self, g: Callable[..., Any], key: Any) -> Callable[..., Any]:
        """``g`` as this mode runs it: itself in eager mode."""
        return g

    def jvp(self, g: Callable[[list[Any], list[Any]], list[Any]], primals: list[Any],
            natives: list[Any], tangents: list[Any]) -> list[Any]:
        _, out = self.torch.func.jvp(lambda *ps: tuple(g(list(ps), natives)), tuple(primals),
                                     tuple(tangents))
        return list(out)

    def repro_tensor(self, values: str, dtype: str, shape: tuple[int, ...]) -> str:
        return f"torch.tensor({values}, dtype={self.repro_dtype(dtype)}).reshape({shape!r})"

    def repro_dtype(self, name: str) -> str:
        return LIBRARY.dtype(name)

    def repro_model_input(self, name: str) -> str:
        return (f"(torch.from_numpy({name}.view(np.int16)).view(torch.bfloat16) "
                f"if {name}.dtype.name == 'bfloat16' else torch.from_numpy({name}))")

    def repro_gradient(self) -> str:
        return _TORCH_GRADIENT.replace("COMPILE(f)", self.repro_compiled_gradient("f"))

    def repro_compiled_gradient(self, name: str) -> str:
        """The function a gradient reproducer differentiates (compiled in compile mode)."""
        return name

    def repro_helpers(self) -> str:
        return ("def _as_list(t):\n"
                "    if isinstance(t, torch.Tensor):\n"
                "        t = t.detach().resolve_conj().resolve_neg()\n"
                "        return (t.double() if t.dtype == torch.bfloat16 else t).tolist()\n"
                "    return t\n")


class TorchCompileBackend(TorchBackend):
    name = "torch-compile"
    compiled = True
    compiles_per_signature = True
    case_kinds = ("api", "graph", "grad", "train")  # programs run eagerly only (the torch backend)
    case_timeout_factor = 12.0

    def setup(self) -> None:
        super().setup()
        import torch._dynamo

        config = torch._dynamo.config
        for knob in ("cache_size_limit", "recompile_limit", "accumulated_cache_size_limit",
                     "accumulated_recompile_limit"):
            if hasattr(config, knob):
                setattr(config, knob, 1 << 20)
        config.suppress_errors = False
        # Without this Dynamo runs any model with an RNN module entirely eagerly, and
        # compiled-vs-eager would compare eager with eager.
        if hasattr(config, "allow_rnn"):
            config.allow_rnn = True
        self._serial = 0

    def compile(self, call: Call, fn: Callable[..., Any], examples: list[Any],
                used: list[int]) -> Callable[..., Any]:
        bound = self.bind(call, fn, used)
        # A fresh code object per specialization: Dynamo keys its cache on code objects,
        # and sharing one across thousands of calls would make guard checks linear.
        self._serial += 1
        code = bound.__code__.replace(co_name=f"dlfuzz_case_{self._serial}")
        fresh = types.FunctionType(code, bound.__globals__, code.co_name, bound.__defaults__,
                                   bound.__closure__)
        return self.torch.compile(fresh, dynamic=False, fullgraph=False)

    def traced(self, g: Callable[..., Any], key: Any) -> Callable[..., Any]:
        """``g`` compiled once per call and input signature: AOTAutograd traces its
        backward too, which ``torch.autograd.grad`` then runs compiled."""
        def build() -> Callable[..., Any]:
            self._serial += 1
            code = g.__code__.replace(co_name=f"dlfuzz_grad_{self._serial}")
            fresh = types.FunctionType(code, g.__globals__, code.co_name, g.__defaults__,
                                       g.__closure__)
            return self.torch.compile(fresh, dynamic=False, fullgraph=False)

        compiled = self.compiled_once(("grad", key), build)
        return compiled

    def compile_model(self, model: Callable[..., Any]) -> Callable[..., Any]:
        # Default dynamic-shape policy: a second input shape recompiles with symbolic
        # shapes, the cache-reuse path DLJSFuzzer's tensor mutations aim at.
        return self.torch.compile(model, fullgraph=False)

    def repro_compile_model(self, name: str) -> str:
        return (f"torch._dynamo.config.allow_rnn = True  # compile RNN modules too\n"
                f"{name} = torch.compile({name})")

    def repro_call(self, call_expr: str, tensor_names: list[str]) -> str:
        params = ", ".join(tensor_names)
        return f"torch.compile(lambda {params}: {call_expr}, dynamic=False)({params})"

    def repro_compiled_gradient(self, name: str) -> str:
        return f"torch.compile({name}, dynamic=False)"


_TORCH_GRADIENT = '''
def _floating(t):
    return isinstance(t, torch.Tensor) and t.dtype.is_floating_point


def _numpy(t):
    return t.detach().numpy()


def _tensor(a):
    return torch.from_numpy(np.ascontiguousarray(a))


def _vjp(f, primals, cots):
    leaves = [p.detach().clone().requires_grad_(True) for p in primals]
    outs = COMPILE(f)(*leaves)
    pairs = [(o, _tensor(c)) for o, c in zip(outs, cots) if o.requires_grad]
    if not pairs:
        return [torch.zeros_like(x) for x in leaves]
    grads = torch.autograd.grad([o for o, _ in pairs], leaves,
                                grad_outputs=[c for _, c in pairs], allow_unused=True)
    return [torch.zeros_like(x) if g is None else g for g, x in zip(grads, leaves)]


def _jvp(f, primals, tangents):
    return list(torch.func.jvp(lambda *ps: tuple(f(*ps)), tuple(primals),
                               tuple(_tensor(t) for t in tangents))[1])
'''


def _autograd(torch: Any, outs: list[Any], leaves: list[Any], cotangents: list[Any]
              ) -> list[Any]:
    """``J^T c`` by ``torch.autograd.grad``; zeros for a leaf no output depends on."""
    pairs = [(o, c) for o, c in zip(outs, cotangents, strict=True) if o.requires_grad]
    if not pairs:
        return [torch.zeros_like(x) for x in leaves]
    grads = torch.autograd.grad([o for o, _ in pairs], leaves,
                                grad_outputs=[c for _, c in pairs], allow_unused=True)
    return [torch.zeros_like(x) if gr is None else gr for gr, x in zip(grads, leaves,
                                                                      strict=True)]
