"""The library records and the one resolver (dlfuzz.libraries).

The checks that need a real library run it in a subprocess, one per library, so this
process never imports TensorFlow or Keras (and their global state cannot leak into the
other unit tests); a library that is not installed is skipped.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import pytest

from dlfuzz import libraries
from dlfuzz.errors import UsageError
from dlfuzz.libraries import DTYPE_NAMES, Library, ResolveError, resolve

DL_MODULES = ("numpy", "torch", "tensorflow", "jax", "jaxlib", "keras", "onnxruntime", "onnx",
              "ml_dtypes")


def _python(code: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=300, env={**os.environ, **(env or {})})
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


# ---- the records ------------------------------------------------------------------------
def test_the_seven_libraries_in_registry_order() -> None:
    assert libraries.names() == ["numpy", "torch", "jax", "tf", "onnxruntime", "keras", "tfjs"]
    assert [lib.name for lib in libraries.all_libraries()] == libraries.names()


@pytest.mark.parametrize("name", ["numpy", "torch", "jax", "tf", "onnxruntime", "keras",
                                  "tfjs"])
def test_every_record_is_complete(name: str) -> None:
    from dlfuzz import registry
    from dlfuzz.ir.lower import LOWERINGS

    lib = libraries.get(name)
    assert isinstance(lib, Library) and lib.name == name and lib.title
    assert lib.prefixes and all(p.endswith(".") for p in lib.prefixes)
    assert lib.dtypes and set(lib.dtypes) <= set(DTYPE_NAMES)
    assert all(lib.dtype(d) for d in lib.dtypes)
    assert "{" in lib.doc_url and lib.doc_link(lib.prefixes[0] + "x").startswith("https://")
    assert lib.backends
    for backend, target in lib.backends:
        assert registry.BACKENDS[backend] == target
        assert libraries.of_backend(backend) is lib
    assert not lib.lowering or lib.lowering in LOWERINGS
    assert all(libraries.is_known(inner) for inner in lib.includes)
    assert set(lib.program_backends) <= set(lib.backend_names)
    if lib.program_files:
        assert set(lib.program_files) == {"knowledge", "context", "similarity"}
    if lib.npm:  # a JavaScript library: no Python side at all
        assert not (lib.modules or lib.distributions or lib.repro_header)
    else:
        assert lib.modules and lib.imports and lib.distributions and lib.repro_header
        assert f"import {lib.modules[0]}" in lib.repro_header


def test_records_are_frozen_values() -> None:
    lib = libraries.get("torch")
    with pytest.raises(AttributeError):
        lib.name = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        lib.dtypes["float32"] = "x"  # type: ignore[index]


def test_dtype_names_are_the_canonical_ones() -> None:
    from dlfuzz.cases import DTYPES

    assert tuple(DTYPES) == DTYPE_NAMES


def test_spellings_aliases_and_doc_links() -> None:
    assert libraries.get("jax").dtype("bool") == "jnp.bool_"
    assert libraries.get("numpy").dtype("bfloat16") == "ml_dtypes.bfloat16"
    assert libraries.get("onnxruntime").dtype("float32") == "FLOAT"
    assert libraries.get("tf").aliases == {"tf": "tensorflow"}
    assert libraries.get("jax").aliases == {"jnp": "jax.numpy"}
    assert (libraries.get("tf").doc_link("tensorflow.math.add")
            == "https://www.tensorflow.org/api_docs/python/tf/math/add")
    assert (libraries.get("torch").doc_link("torch.linalg.svd")
            == "https://pytorch.org/docs/stable/generated/torch.linalg.svd.html")
    assert libraries.get("tfjs").doc_link("tf.add").endswith("#add")


def test_unknown_library_and_dtype_are_usage_errors() -> None:
    with pytest.raises(UsageError, match=r"unknown library 'pytorch'.*torch, jax"):
        libraries.get("pytorch")
    with pytest.raises(UsageError, match=r"'complex128'.*'tfjs'"):
        libraries.get("tfjs").dtype("complex128")
    assert libraries.of_backend("keras-jax") is libraries.get("keras")
    assert libraries.of_backend("my.plugin:Backend") is None


# ---- the resolver (standard library only) -------------------------------------------------
def test_resolve_dotted_colon_and_nested() -> None:
    import collections.abc
    import os.path

    assert resolve("os.path.join") is os.path.join
    assert resolve("os.path:join") is os.path.join
    assert resolve("collections.abc.Mapping.get") is collections.abc.Mapping.get
    assert resolve("collections.abc:Mapping.get") is collections.abc.Mapping.get
    assert resolve("json.decoder.JSONDecoder.decode") is json.decoder.JSONDecoder.decode


@pytest.mark.parametrize(("target", "cause", "says"), [
    ("os.path.no_such_fn", AttributeError, "os.path has no attribute 'no_such_fn'"),
    ("os.no_sub.fn", ModuleNotFoundError, "No module named 'os.no_sub'"),
    ("no_such_package_xyz.fn", ModuleNotFoundError, "no module 'no_such_package_xyz'"),
    ("os.path:nope", AttributeError, "os.path has no attribute 'nope'"),
    ("no_such_package_xyz:f", ModuleNotFoundError, "cannot import no_such_package_xyz"),
])
def test_resolve_fails_clearly(target: str, cause: type, says: str) -> None:
    with pytest.raises(ResolveError) as info:
        resolve(target)
    assert isinstance(info.value, UsageError)
    assert f"cannot resolve {target!r}" in str(info.value) and says in str(info.value)
    assert type(info.value.__cause__) is cause


def test_import_imports_no_dl_library() -> None:
    out = _python(f"""
        import sys
        import dlfuzz.libraries as L
        from dlfuzz.errors import UsageError
        L.names(); L.get("tf").doc_link("tensorflow.math.add")
        for lib in L.all_libraries():
            if not lib.npm:
                try:
                    L.version(lib.name)  # read from metadata, not by importing
                except UsageError:
                    pass  # not installed here
        print([m for m in {DL_MODULES!r} if m in sys.modules])
        """)
    assert out.strip() == "[]"


# ---- real libraries (one subprocess each) ---------------------------------------------------
REAL = {
    "numpy": ("numpy", ["numpy.linalg.svd", "np.fft.fft", "numpy.add"], "numpy.linalg.nope"),
    "torch": ("torch", ["torch.linalg.svd", "torch.nn.functional.relu", "torch.Tensor.add",
                        "torch.special.erf"], "torch.linalg.nope"),
    "jax": ("jax", ["jax.numpy.fft.fft", "jnp.sum", "jax.lax.conv", "jax.scipy.special.erf"],
            "jax.numpy.nope"),
    "tf": ("tensorflow", ["tf.math.add", "tensorflow.linalg.svd", "tensorflow.nn.relu",
                          "tensorflow.experimental.numpy.sum"], "tensorflow.math.nope"),
    "onnxruntime": ("onnxruntime", ["onnxruntime.InferenceSession",
                                    "onnxruntime.SessionOptions"], "onnxruntime.nope"),
    "keras": ("keras", ["keras.layers.Dense", "keras.ops.matmul"], "keras.layers.Nope"),
}


@pytest.mark.parametrize("name", list(REAL))
def test_resolve_and_version_of_real_library(name: str) -> None:
    module, targets, bad = REAL[name]
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed")
    out = _python(f"""
        import json
        import importlib
        import {module}
        import numpy as np
        from dlfuzz import libraries
        ALIAS = {{"np": "numpy", "jnp": "jax.numpy", "tf": "tensorflow"}}
        found = {{}}
        for target in {targets!r}:
            root, _, rest = target.partition(".")
            obj = importlib.import_module(ALIAS.get(root, root))
            for attr in rest.split("."):
                obj = getattr(obj, attr)
            found[target] = libraries.resolve(target) is obj
        try:
            libraries.resolve({bad!r})
            error = ""
        except libraries.ResolveError as exc:
            error = str(exc)
        print(json.dumps({{"found": found, "error": error,
                          "version": libraries.version({name!r}),
                          "own": {module}.__version__}}))
        """, env={"KERAS_BACKEND": "torch", "TF_CPP_MIN_LOG_LEVEL": "3",
                  "JAX_PLATFORMS": "cpu"})
    got = json.loads(out.strip().splitlines()[-1])
    assert got["found"] == dict.fromkeys(targets, True)
    assert got["error"].startswith(f"cannot resolve {bad!r}")
    assert bad.rpartition(".")[2] in got["error"]
    assert got["version"] == got["own"]
