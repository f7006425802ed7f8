"""Lowering to JAX: a graph becomes plain ``jax.numpy`` / ``jax.lax`` / ``jax.nn`` code.

The emitted source enables x64 right after its imports (float64 graphs need it), converts
every weight once in ``build()`` with ``jnp.asarray`` (ml_dtypes bfloat16 arrays are
taken as they are), and returns ``model(*inputs)``: a pure function of jax arrays, so
``jax.jit(model)`` compiles it (``build(W, jit=True)`` returns it jitted). Matmuls and
convolutions pass ``precision=PREC`` (``lax.Precision.HIGHEST``) so float32 stays float32
on accelerators that would otherwise use TF32; nothing is upcast, scalars are Python
numbers (weakly typed), so every value keeps the graph's dtype.

Per-op emitters live in ``jax_lower_ops``, the node loop and naming shared with the
PyTorch lowering in ``context``; this module holds the program skeleton, so a reader of
an emitted reproducer sees one or a few lines per node, each tagged ``# <id> <Op>``.
"""

from __future__ import annotations

from dlfuzz.ir.graph import GRAPH_DTYPES, Graph
from dlfuzz.ir.lower.context import lower_nodes
from dlfuzz.ir.lower.jax_lower_ops import EMITTERS, Ctx
from dlfuzz.libraries import get

JNP_DTYPES = {d: get("jax").dtype(d) for d in GRAPH_DTYPES}

# Names the emitted program uses itself; a graph value may not shadow them.
RESERVED = frozenset({"jax", "jnp", "lax", "np", "DTYPE", "PREC", "W", "build", "model",
                      "jit", "h", "c", "xw", "seq", "options"})

# The emitted program's imports (kept out of column 0 of this module: it imports no
# library itself).
_IMPORTS = "\n".join(['import jax', 'import jax.numpy as jnp', 'from jax import lax'])

HEADER = '''{imports}

jax.config.update("jax_enable_x64", True)

DTYPE = {dtype}
PREC = lax.Precision.HIGHEST  # float32 matmul/conv in float32 (no TF32 on GPUs)


def build(W, jit=False):
    """Weights converted once; returns model(*inputs) -> tuple (jitted with jit=True)."""'''


def emit(graph: Graph, probe: bool = False, train: bool = False) -> str:
    """Source of a standalone JAX program computing ``graph`` (see the package contract).

    ``train`` changes nothing: ``jnp.asarray`` takes traced weights as they are, so
    ``build`` inside a differentiated function already lets gradients reach them."""
    low = lower_nodes(graph, probe, Ctx, EMITTERS, RESERVED)
    body = [f"{x} = jnp.asarray({x})" for x in low.params] + low.body
    body.append(f"return ({', '.join(low.results)}{',' if len(low.results) == 1 else ''})")
    out = [HEADER.format(imports=_IMPORTS, dtype=JNP_DTYPES[graph.dtype])]
    out += ["    " + line for line in low.setup]
    out += ["", f"    def model({', '.join(low.params)}):"]
    out += ["        " + line for line in body]
    out += ["", "    return jax.jit(model) if jit else model", ""]
    return "\n".join(out)
