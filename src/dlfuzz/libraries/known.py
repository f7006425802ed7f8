"""The libraries dlfuzz knows, one ``Library`` record each, and the lookup by name.

Order matters: it is the order backends are listed in (``dlfuzz backends``, the
registry) and the order tables built from these records iterate in.
"""

from __future__ import annotations

from dlfuzz.errors import UsageError
from dlfuzz.libraries.record import DTYPE_NAMES, Library

_FLOATS = ("float16", "bfloat16", "float32", "float64")
_ONNX_TYPES = {"bool": "BOOL", "float16": "FLOAT16", "bfloat16": "BFLOAT16", "float32": "FLOAT",
               "float64": "DOUBLE", "complex64": "COMPLEX64", "complex128": "COMPLEX128",
               **{n: n.upper() for n in DTYPE_NAMES if n.startswith(("int", "uint"))}}

NUMPY = Library(
    name="numpy", title="NumPy", modules=("numpy",), imports=("import numpy as np",),
    prefixes=("numpy.",),
    dtypes={n: "ml_dtypes.bfloat16" if n == "bfloat16" else f"np.{n}" for n in DTYPE_NAMES},
    distributions=("numpy",),
    repro_header="import numpy as np\nimport ml_dtypes  # bfloat16 for numpy",
    doc_url="https://numpy.org/doc/stable/reference/generated/{api}.html",
    backends=(("numpy", "dlfuzz.backends.numpy_backend:NumpyBackend"),),
    numpy_module="numpy", linalg_module="numpy.linalg",
)

TORCH = Library(
    name="torch", title="PyTorch", modules=("torch",), imports=("import torch",),
    prefixes=("torch.",), dtypes={n: f"torch.{n}" for n in DTYPE_NAMES},
    distributions=("torch",), repro_header="import torch",
    doc_url="https://pytorch.org/docs/stable/generated/{api}.html",
    backends=(("torch", "dlfuzz.backends.torch_backend:TorchBackend"),
              ("torch-compile", "dlfuzz.backends.torch_backend:TorchCompileBackend")),
    lowering="torch",
    namespaces=("torch", "torch.nn.functional", "torch.linalg", "torch.special", "torch.fft"),
    numpy_module="torch", linalg_module="torch.linalg", api_spec="torch.json",
    layers="torch.nn.",
    program_files={"knowledge": "torch_nn.json", "context": "torch_context.json",
                   "similarity": "torch_similarity.json"},
    program_backends=("torch",),
    autodiff=True,
)

JAX = Library(
    name="jax", title="JAX", modules=("jax", "jaxlib"),
    imports=("import jax", "import jax.numpy as jnp"), prefixes=("jax.",),
    dtypes={n: "jnp.bool_" if n == "bool" else f"jnp.{n}" for n in DTYPE_NAMES},
    distributions=("jax", "jaxlib"),
    repro_header="import jax\nimport jax.numpy as jnp\nimport numpy as np",
    doc_url="https://docs.jax.dev/en/latest/_autosummary/{api}.html",
    backends=(("jax", "dlfuzz.backends.jax_backend:JaxBackend"),
              ("jax-jit", "dlfuzz.backends.jax_backend:JaxJitBackend")),
    lowering="jax",
    namespaces=("jax.numpy", "jax.nn", "jax.lax", "jax.scipy.special", "jax.numpy.linalg",
                "jax.numpy.fft", "jax.scipy.linalg", "jax.ops"),
    numpy_module="jax.numpy", linalg_module="jax.numpy.linalg", api_spec="jax.json",
    autodiff=True,
)

TF = Library(
    name="tf", title="TensorFlow", modules=("tensorflow",),
    imports=("import tensorflow as tf",), prefixes=("tensorflow.",),
    dtypes={n: f"tf.{n}" for n in DTYPE_NAMES}, distributions=("tensorflow",),
    repro_header=("import numpy as np\nimport tensorflow as tf\n"
                  "import tensorflow.experimental.numpy as tnp"),
    doc_url="https://www.tensorflow.org/api_docs/python/{path}",
    backends=(("tf", "dlfuzz.backends.tf_backend:TfBackend"),
              ("tf-xla", "dlfuzz.backends.tf_backend:TfXlaBackend")),
    lowering="tf", includes=("keras",),
    namespaces=("tensorflow.math", "tensorflow.nn", "tensorflow.linalg", "tensorflow.signal",
                "tensorflow.image", "tensorflow.bitwise", "tensorflow"),
    numpy_module="tensorflow.experimental.numpy", linalg_module="tensorflow.linalg",
    api_spec="tf.json",
    autodiff=True,
)

ONNXRUNTIME = Library(
    name="onnxruntime", title="ONNX Runtime", modules=("onnxruntime",),
    imports=("import onnxruntime",), prefixes=("onnxruntime.",),
    dtypes=_ONNX_TYPES,  # onnx.TensorProto member names (models only; no API targets)
    distributions=("onnxruntime", "onnx"),
    repro_header="import numpy as np\nimport onnx\nimport onnxruntime",
    doc_url="https://onnx.ai/onnx/operators/onnx__{leaf}.html",
    backends=(("ort", "dlfuzz.backends.ort_backend:OrtBackend"),
              ("ort-noopt", "dlfuzz.backends.ort_backend:OrtNoOptBackend")),
    lowering="onnx",
)

KERAS = Library(
    name="keras", title="Keras", modules=("keras",), imports=("import keras",),
    prefixes=("keras.",), dtypes={n: n for n in DTYPE_NAMES},  # Keras takes dtype names
    distributions=("keras",), repro_header="import numpy as np\nimport keras",
    doc_url="https://keras.io/search.html?query={api}",
    backends=(("keras-tf", "dlfuzz.backends.keras_backend:KerasBackend"),
              ("keras-jax", "dlfuzz.backends.keras_backend:KerasJaxBackend"),
              ("keras-torch", "dlfuzz.backends.keras_backend:KerasTorchBackend")),
    lowering="keras", layers="keras.layers.",
    program_files={"knowledge": "keras_layers.json", "context": "keras_context.json",
                   "similarity": "keras_similarity.json"},
    program_backends=("keras-tf", "keras-jax", "keras-torch"),
)

TFJS = Library(
    name="tfjs", title="TensorFlow.js", modules=(), imports=(), prefixes=("tf.",),
    dtypes={n: n for n in ("float32", "int32", "bool", "complex64")},  # tf.tensor(v, s, 'x')
    npm="@tensorflow/tfjs",
    default_release="4.22.0",
    release_env="DLFUZZ_TFJS_VERSION",
    doc_url="https://js.tensorflow.org/api/latest/#{leaf}",
    backends=(("tfjs-cpu", "dlfuzz.backends.tfjs.backend:TfjsCpuBackend"),
              ("tfjs-wasm", "dlfuzz.backends.tfjs.backend:TfjsWasmBackend"),
              ("tfjs-webgl", "dlfuzz.backends.tfjs.webgl:TfjsWebglBackend")),
    api_spec="tfjs.json",
    autodiff=True,  # reverse mode only (tf.grads), float32: no float64 self-check
    gradient_self_check=False,
)

LIBRARIES: tuple[Library, ...] = (NUMPY, TORCH, JAX, TF, ONNXRUNTIME, KERAS, TFJS)
_BY_NAME = {lib.name: lib for lib in LIBRARIES}
_BY_BACKEND = {backend: lib for lib in LIBRARIES for backend in lib.backend_names}


def names() -> list[str]:
    """Every library name, in registry order."""
    return list(_BY_NAME)


def all_libraries() -> tuple[Library, ...]:
    return LIBRARIES


def get(name: str) -> Library:
    """The record of library ``name``; a UsageError naming the known ones otherwise."""
    lib = _BY_NAME.get(name)
    if lib is None:
        raise UsageError(f"unknown library {name!r}; known libraries: {', '.join(_BY_NAME)}")
    return lib


def is_known(name: str) -> bool:
    return name in _BY_NAME


def of_backend(backend: str) -> Library | None:
    """The library a built-in backend runs (``keras-jax`` -> Keras); None for a plugin."""
    return _BY_BACKEND.get(backend)


def name_of_backend(backend: str) -> str:
    """The library name of a backend (``torch-compile`` -> ``torch``; a plugin backend:
    the part before its first dash)."""
    lib = of_backend(backend)
    return lib.name if lib is not None else backend.split("-", 1)[0]
