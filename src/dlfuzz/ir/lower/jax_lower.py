"""Lowering to JAX: a graph becomes plain ``jax.numpy`` / ``jax.lax`` / ``jax.nn`` code.

The emitted source enables x64 right after its imports (float64 graphs need it), converts
every weight once in ``build()`` with ``jnp.asarray`` (ml_dtypes bfloat16 arrays are
taken as they are), and returns ``model(*inputs)``: a pure function of jax arrays, so
``jax.jit(model)`` compiles it (``build(W, jit=True)`` returns it jitted). Matmuls and
convolutions pass ``precision=PREC`` (``lax.Precision.HIGHEST``) so float32 stays float32
on accelerators that would otherwise use TF32; nothing is upcast, scalars are Python
numbers (weakly typed), so every value keeps the graph's dtype.

Per-op emitters live in ``jax_lower_ops``; this module holds the program skeleton and
the naming, so a reader of an emitted reproducer sees one or a few lines per node, each
tagged ``# <id> <Op>``.
"""

from __future__ import annotations

import keyword
import re

from dlfuzz.ir.graph import Graph
from dlfuzz.ir.lower.jax_lower_ops import EMITTERS, Ctx
from dlfuzz.ir.model import weight_shapes

JNP_DTYPES = {"float16": "jnp.float16", "bfloat16": "jnp.bfloat16",
              "float32": "jnp.float32", "float64": "jnp.float64"}

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


class _Names:
    """Python identifiers for graph values and weights: the value's own name when usable."""

    def __init__(self) -> None:
        self.taken: set[str] = set(RESERVED)

    def get(self, wanted: str) -> str:
        name = re.sub(r"\W", "_", wanted)
        if not name or name[0].isdigit() or keyword.iskeyword(name):
            name = f"v_{name}"
        base, i = name, 1
        while name in self.taken:
            name, i = f"{base}_{i}", i + 1
        self.taken.add(name)
        return name


def emit(graph: Graph, probe: bool = False) -> str:
    """Source of a standalone JAX program computing ``graph`` (see the package contract)."""
    types = graph.types()
    names = _Names()
    var = {v: names.get(v) for v in graph.input_names}
    setup: list[str] = []
    body: list[str] = [f"{var[x]} = jnp.asarray({var[x]})" for x in graph.input_names]
    for node in graph.nodes:
        var[node.id] = names.get(node.id)
        ctx = Ctx(node=node, ins=[var[v] for v in node.inputs],
                  out=var[node.id], in_types=[types[v] for v in node.inputs],
                  out_type=types[node.id], weight_shapes=weight_shapes(graph, node),
                  names=names.get)
        lines = EMITTERS[node.op](ctx)
        tag = f"  # {node.id} {node.op}"
        setup += [line + tag for line in ctx.setup]
        body += [line + tag for line in lines]
    results = [var[n.id] for n in graph.nodes] if probe else [var[v] for v in graph.outputs]
    body.append(f"return ({', '.join(results)}{',' if len(results) == 1 else ''})")
    args = ", ".join(var[x] for x in graph.input_names)
    out = [HEADER.format(imports=_IMPORTS, dtype=JNP_DTYPES[graph.dtype])]
    out += ["    " + line for line in setup]
    out += ["", f"    def model({args}):"]
    out += ["        " + line for line in body]
    out += ["", "    return jax.jit(model) if jit else model", ""]
    return "\n".join(out)
