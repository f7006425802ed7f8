"""Standalone reproducers of model bugs: the minimal model as plain code of one library.

The script is the lowering's own source (the exact code the worker ran: torch.nn.functional,
tf.nn, jax.lax, onnx.helper + onnxruntime, or keras.layers), followed by the weights
loaded from ``model.npz`` beside it, the inputs, one run, and the same check as API
reproducers: exit 1 while the bug is present, 0 once it is fixed.
"""

from __future__ import annotations

from dlfuzz.backends.base import Backend
from dlfuzz.cases import GraphCase
from dlfuzz.store.artifacts import npz_bytes
from dlfuzz.triage.repro import Expectation, _values, literal, waits_for_result
from dlfuzz.triage.repro_verdict import VERDICT, quiet_header, values_check

INLINE_LIMIT = 4096  # inputs with more elements are read from model.npz


def model_npz(case: GraphCase) -> bytes:
    """Weights (``w/<name>``) and inputs (``x<i>``); bfloat16 stored as float32 (exact)."""
    arrays = {}
    for name, t in case.weights:
        arrays[f"w/{name}"] = t.to_numpy()
    for i, t in enumerate(case.tensors):
        arrays[f"x{i}"] = t.to_numpy()
    return npz_bytes(arrays)


def model_reproducer(backend: Backend, case: GraphCase, expectation: Expectation, title: str,
                     version: str = "") -> str:
    from dlfuzz.ir.lower import emit
    from dlfuzz.ir.render import to_text

    source = emit(backend.lowering, case.graph)
    dtype = case.graph.dtype
    cast = ".astype(ml_dtypes.bfloat16)" if dtype == "bfloat16" else ""
    graph_text = "\n".join("#   " + line for line in to_text(case.graph).splitlines())
    lines = [
        '"""' + f"dlfuzz reproducer: {title}",
        "",
        f"Backend: {backend.name}{' ' + version if version else ''}. Needs only that library",
        "(and numpy); the weights are in model.npz beside this file.",
        "Exit status: 1 while the bug is present, 0 once it is fixed; the last line printed",
        "is the verdict.",
        '"""',
        "# The model (dlfuzz IR):",
        graph_text,
        *quiet_header(backend.name),
        "import math",
        "import signal",
        "import sys",
        "",
        "import numpy as np",
        backend.repro_import,
    ]
    if dtype == "bfloat16":
        lines.append("import ml_dtypes")
    lines += [
        "",
        "# ---- the model, as dlfuzz ran it " + "-" * 40,
        source.rstrip(),
        "# " + "-" * 72,
        "",
        backend.repro_helpers().rstrip(),
        "",
        VERDICT.strip(),
        "",
        "_NPZ = np.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'model.npz'))",
        f"W = {{k[2:]: _NPZ[k]{cast} for k in _NPZ.files if k.startswith('w/')}}",
    ]
    for i, t in enumerate(case.tensors):
        if t.size <= INLINE_LIMIT:
            arr = t.to_numpy()
            np_dtype = "ml_dtypes.bfloat16" if t.dtype == "bfloat16" else f"np.{t.dtype}"
            lines.append(f"x{i} = np.array({_values(arr)}, dtype={np_dtype})"
                         f".reshape({t.shape!r})")
        else:
            lines.append(f"x{i} = _NPZ['x{i}']{cast}")
    options = ", ".join(f"{k}={v!r}" for k, v in backend.build_options().items())
    names = [f"x{i}" for i in range(len(case.tensors))]
    args = ", ".join(backend.repro_model_input(n) for n in names)
    lines += ["", f"signal.alarm({int(expectation.timeout_s)})  # a hang ends the script",
              f"model = build(W{', ' + options if options else ''})"]
    compile_line = backend.repro_compile_model("model")
    if compile_line:
        lines.append(compile_line)
    if expectation.kind == "survives":
        lines += [
            "# the bug kills or hangs the process; running or raising is the fix",
            "try:",
            f"    result = model({args})",
            *waits_for_result(backend.repro_wait),
            "except Exception as exc:  # right: an error the caller can handle",
            '    _verdict(0, f"OK: the model raised {type(exc).__name__}: {exc}")',
            '_verdict(0, "OK: the model ran normally")',
        ]
    elif expectation.kind == "runs":
        lines += [
            "try:",
            f"    result = model({args})",
            *waits_for_result(backend.repro_wait),
            "except Exception as exc:  # the bug: this model must run",
            '    _verdict(1, f"BUG present: the model raised {type(exc).__name__}: {exc}")',
            '_verdict(0, "OK: the model ran normally")',
        ]
    else:
        if expectation.note:
            lines.append(f"# {expectation.note}")
        lines.append(f"result = model({args})")
        lines.append(values_check("the model", expectation.expected, expectation.allowed,
                                  literal))
    return "\n".join(lines).rstrip() + "\n"
