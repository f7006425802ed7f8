"""Lowerings: each library's model code, emitted as Python source from a graph.

One module per library turns a graph into the source of a standalone program fragment.
The same text is what a worker executes and what a bug's reproducer contains, so a
reproducer is exactly the code that showed the bug, written as plain code of that
library (torch.nn.functional, tf.nn, jax.lax, onnx.helper, keras.layers).

The contract every lowering module keeps (``LOWERINGS`` names them):

* ``emit(graph, probe=False) -> str`` returns source that imports only its library and
  numpy at the top and defines ``build(W, **options)``. ``W`` maps ``"<node>.<weight>"``
  to a numpy array in the graph's dtype (bfloat16 arrays are ``ml_dtypes.bfloat16``;
  the source converts them exactly). ``build`` returns ``model(*inputs)``: it takes the
  library's native tensors (numpy arrays for ONNX Runtime; numpy or backend tensors for
  Keras) and returns a tuple of native tensors: the graph outputs in order, or with
  ``probe=True`` the value of every node, in node order (for layer localization).
* Lowerings of libraries with autodiff (PyTorch, JAX, TensorFlow) also take
  ``train=True``: ``build`` then accepts the library's own tensors in ``W`` and uses them
  as they are (no copy), and the model records gradients, so a training step can call
  ``build`` inside the differentiated function and get gradients for the weights.
* The computation follows docs/ir.md exactly, in the graph's dtype, without any
  randomness; options are backend knobs (ONNX Runtime: ``optimize=True|False``).
* Each node becomes a few lines tagged ``# <id> <Op>`` so a reader can follow the graph.
* No module here imports its library at module level: they only build strings.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dlfuzz.ir.graph import Graph
from dlfuzz.libraries import LIBRARIES, resolve

# Lowering name (a library record's ``lowering``) -> its module, ``<name>_lower``.
LOWERINGS: dict[str, str] = {lib.lowering: f"dlfuzz.ir.lower.{lib.lowering}_lower"
                             for lib in LIBRARIES if lib.lowering}


def emit(lowering: str, graph: Graph, probe: bool = False, train: bool = False) -> str:
    emitter: Callable[..., str] = resolve(f"{LOWERINGS[lowering]}:emit")
    if train:  # only the lowerings of autodiff libraries know the option
        return emitter(graph, probe=probe, train=True)
    return emitter(graph, probe=probe)


def build(source: str, weights: dict[str, Any], name: str = "model", **options: Any
          ) -> Callable[..., tuple[Any, ...]]:
    """Execute emitted source (inside a worker) and build its model callable."""
    namespace: dict[str, Any] = {"__name__": f"dlfuzz_{name}"}
    exec(compile(source, f"<dlfuzz {name}>", "exec"), namespace)  # noqa: S102 - our code
    return namespace["build"](weights, **options)
