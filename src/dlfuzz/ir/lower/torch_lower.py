"""Lowering to PyTorch: a graph becomes plain functional torch code (``torch``, ``F``).

The emitted source converts every weight once in ``build()`` (``_w``: numpy to a DTYPE
tensor; ml_dtypes bfloat16 goes through float32, which is exact), permutes Keras kernels
to torch's layouts there, and loads recurrent layers into ``torch.nn.LSTM/GRU/RNN``
modules (eval mode, no grad). It returns ``model(*inputs)``: a plain function of torch
tensors running under ``torch.no_grad()``, so ``torch.compile(model)`` compiles it
(``build(W, compile=True)`` returns it compiled; ``device="cuda"`` puts the weights
there, for inputs on that device). Nothing is upcast: weights are DTYPE
and scalars are Python numbers, so every value keeps the graph's dtype.

Per-op emitters live in ``torch_lower_ops``, the node loop and naming shared with the JAX
lowering in ``context``; this module holds the program skeleton, so a reader of an
emitted reproducer sees one or a few lines per node, each tagged ``# <id> <Op>``.
"""

from __future__ import annotations

from dlfuzz.ir.graph import GRAPH_DTYPES, Graph
from dlfuzz.ir.lower.context import lower_nodes
from dlfuzz.ir.lower.torch_lower_ops import EMITTERS, Ctx
from dlfuzz.libraries import get

TORCH_DTYPES = {d: get("torch").dtype(d) for d in GRAPH_DTYPES}

RECURRENT = ("SimpleRNN", "LSTM", "GRU")

# Names the emitted program uses itself; a graph value may not shadow them.
RESERVED = frozenset({"torch", "F", "np", "DTYPE", "W", "build", "model", "options",
                      "compile", "device", "_w", "array"})

# The emitted program's imports (kept out of column 0 of this module: it imports no
# library itself).
_IMPORTS = "\n".join(['import numpy as np', 'import torch', 'import torch.nn.functional as F'])

HEADER = '''{imports}

DTYPE = {dtype}


def build(W, compile=False, device="cpu", **options):
    """Weights converted once (on ``device``); returns model(*inputs) -> tuple."""

    def _w(array):
        """A numpy weight as a new DTYPE tensor (bfloat16 exactly, through float32); a
        torch tensor (a training step's parameter) is used as it is, so gradients reach it."""
        if isinstance(array, torch.Tensor):
            return array.to(device=device, dtype=DTYPE)
        array = np.asarray(array)
        if array.dtype.name == "bfloat16":
            array = array.astype(np.float32)
        return torch.tensor(array, dtype=DTYPE, device=device)

'''


def emit(graph: Graph, probe: bool = False, train: bool = False) -> str:
    """Source of a standalone PyTorch program computing ``graph`` (see the package contract).

    ``train``: the model records gradients (``torch.enable_grad()`` in place of
    ``torch.no_grad()``); recurrent layers, whose weights are copied into ``torch.nn``
    modules, cannot be differentiated with respect to those weights and are refused.
    """
    if train and any(op in RECURRENT for op in graph.ops()):
        raise ValueError("a training step of a recurrent layer is not lowered to PyTorch "
                         "(its weights are copied into a torch.nn module)")
    low = lower_nodes(graph, probe, Ctx, EMITTERS, RESERVED)
    setup, body, results, params = low.setup, low.body, low.results, ", ".join(low.params)
    out = [HEADER.format(imports=_IMPORTS, dtype=TORCH_DTYPES[graph.dtype]).rstrip("\n")] + [""] * bool(setup)
    out += [f"    {line}" for line in setup]
    grad = "enable_grad" if train else "no_grad"
    out += ["", f"    def model({params}):", f"        with torch.{grad}():"]
    out += [f"            {line}" for line in body]
    out += [f"            return ({''.join(r + ', ' for r in results).rstrip()})", ""]
    if any(op in RECURRENT for op in graph.ops()):
        out += ["    if compile:  # Dynamo runs frames with nn.LSTM/GRU/RNN eagerly unless allowed",
                "        torch._dynamo.config.allow_rnn = True"]
    out += ["    return torch.compile(model) if compile else model", ""]
    return "\n".join(out)
