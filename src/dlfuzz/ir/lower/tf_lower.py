"""TensorFlow lowering: a graph as plain ``tf.nn`` / ``tf.math`` code (channels-last).

TensorFlow's native layout is the IR's (NHWC, Keras kernel layouts, 'same' padding with
the extra element after), so most nodes are one ``tf.nn`` call. The op emitters live in
``tf_lower_ops``; this module assembles the program: a ``_const`` helper that turns each
weight into a constant once in ``build`` (bfloat16 through float32, which is exact), the
recurrent helpers a graph needs (a Python loop over the static time steps, so the model
stays a plain function that ``tf.function(jit_compile=True)`` compiles), and ``model``.

Where a CPU kernel lacks a dtype (float64 MaxPool3D/AvgPool3D) the float64 program spells
the op with other TensorFlow ops instead of upcasting; float16/bfloat16 keep the natural
call even where TensorFlow then refuses it. Depthwise convolutions with unequal strides,
which TensorFlow documents as unsupported, run at stride 1 and are subsampled in every
dtype.
"""

from __future__ import annotations

from dlfuzz.ir.graph import Graph
from dlfuzz.ir.lower.tf_lower_ops import EMITTERS, HELPERS, Ctx

# The emitted program's imports (kept out of column 0 of this module: it imports no
# library itself).
_IMPORTS = "\n".join(['import numpy as np', 'import tensorflow as tf'])

_HEADER = '''\
"""dlfuzz model {digest}: TensorFlow, {dtype}, channels-last."""
{imports}

DTYPE = tf.{dtype}


def _const(a):
    """A weight as a constant in DTYPE; bfloat16 goes through float32 (exact). A tensor
    (a training step's parameter, watched by a tape) is cast, so gradients reach it."""
    if isinstance(a, (tf.Tensor, tf.Variable)):
        return tf.cast(a, DTYPE)
    a = np.asarray(a)
    if a.dtype.name == "bfloat16":
        a = a.astype(np.float32)
    return tf.cast(tf.constant(a), DTYPE)
'''


def _tagged(lines: list[str], tag: str, indent: str) -> list[str]:
    """Every line of a node carries ``# <id> <Op>`` so a reader can map code to graph."""
    return [f"{indent}# {tag}: {line[2:]}" if line.startswith("# ") else f"{indent}{line}  # {tag}"
            for line in lines]


def emit(graph: Graph, probe: bool = False, train: bool = False) -> str:
    """The program for ``graph``: defines ``build(W, **options) -> model(*inputs)``.

    ``train`` changes nothing: ``_const`` passes tensors through, so ``build`` under a
    ``GradientTape`` already lets gradients reach the weights.

    ``model`` returns the graph outputs in order, or with ``probe=True`` every node's
    value in node order.
    """
    graph.check()
    ctx = Ctx(graph)
    body: list[str] = []
    for node in graph.nodes:
        ctx.node = node
        tag = f"{node.id} {node.op}"
        code = EMITTERS[node.op](node, [*node.inputs], ctx)
        body += _tagged(code, tag, " " * 8)
    results = [n.id for n in graph.nodes] if probe else list(graph.outputs)
    params = ", ".join(graph.input_names)
    out = [_HEADER.format(imports=_IMPORTS, digest=graph.digest(), dtype=graph.dtype)]
    out += [HELPERS[h] for h in sorted(ctx.helpers)]
    out.append("\ndef build(W, **options):")
    out.append('    """Weights converted once; options are unused by TensorFlow eager."""')
    out += ["    " + line for line in ctx.build_lines]
    out.append("")
    out.append(f"    def model({params}):")
    out += body
    out.append(f"        return ({', '.join(results)}{',' if len(results) == 1 else ''})")
    out.append("")
    out.append("    return model")
    return "\n".join(out) + "\n"
