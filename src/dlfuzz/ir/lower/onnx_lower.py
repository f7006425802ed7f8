"""ONNX lowering: a graph becomes onnx.helper code building a ModelProto run by ONNX Runtime.

The emitted source builds the model once in ``build(W, optimize=True)``: one or a few
``helper.make_node`` calls per graph node (tagged ``# n3 Conv2D``), the weights as
initializers (Keras layouts rearranged into ONNX's there, once), ``onnx.checker``, then an
``onnxruntime.InferenceSession`` on the CPU provider with one thread and the whole
optimizer on or off (``optimize``). ``model(*inputs)`` feeds numpy arrays as ``x0, x1...``
and returns the fetched numpy arrays.

Opset 21 (IR version 10): LayerNormalization needs 17 and Gelu 20, and ONNX Runtime 1.31
implements every op used here at 21. ONNX is channels-first for Conv, pooling and
BatchNormalization, so those nodes sit between two Transposes (the optimizer is free to
cancel them; with ``optimize=False`` they run as written). ONNX Runtime reads bfloat16
only through OrtValues, so a bfloat16 model binds its inputs and outputs as OrtValues
over uint16 views (most CPU kernels then refuse bfloat16 with NOT_IMPLEMENTED, which is
the library's answer, not the lowering's). Float attributes (LeakyRelu alpha, epsilon...)
are float32 in ONNX protobuf, so a float64 graph sees them rounded to float32.
Softplus, Softsign, SELU, HardSigmoid and Mish have no float64 CPU kernel in ONNX Runtime
1.31: a float64 graph spells them with primitives that do (see ``onnx_lower_ops``); SiLU
(no ONNX op before opset 24) and Square are ``Mul`` everywhere.

This module assembles the program; the builder the op emitters write through is
``onnx_context`` and the emitters themselves are ``onnx_lower_ops``.
"""

from __future__ import annotations

from dlfuzz.ir.graph import GRAPH_DTYPES, Graph
from dlfuzz.ir.lower.onnx_context import HELPERS, Ctx
from dlfuzz.ir.lower.onnx_lower_ops import EMITTERS
from dlfuzz.ir.types import TensorType
from dlfuzz.libraries import get

OPSET = 21
IR_VERSION = 10

# TensorProto member per graph dtype.
TENSOR_TYPES = {d: get("onnxruntime").dtype(d) for d in GRAPH_DTYPES}

def emit(graph: Graph, probe: bool = False) -> str:
    """Source of a module defining ``build(W, optimize=True) -> model``."""
    types = graph.types()
    ctx = Ctx(types)
    for n in graph.nodes:
        ctx.lines.append(f"# {n.id} {n.op}")
        EMITTERS[n.op](ctx, n)
    fetch = [n.id for n in graph.nodes] if probe else list(graph.outputs)
    # A graph output that is a graph input still needs a node producing it.
    for v in dict.fromkeys(fetch):
        if v in graph.input_names:
            ctx.lines.append(f"# {v}.out: the graph input {v} as an output")
            ctx.node("Identity", [v], f"{v}.out")
    fetch = [f"{v}.out" if v in graph.input_names else v for v in fetch]
    inputs = [f"helper.make_tensor_value_info({name!r}, DT, {list(t.shape)!r})"
              for name, t in zip(graph.input_names, graph.inputs, strict=True)]
    outputs = [f"helper.make_tensor_value_info({v!r}, DT, {list(_out_type(types, v))!r})"
               for v in dict.fromkeys(fetch)]
    return _render(graph, ctx, inputs, outputs, fetch, types)


def _out_type(types: dict[str, TensorType], name: str) -> tuple[int, ...]:
    return types[name.removesuffix(".out")].shape


def _render(graph: Graph, ctx: Ctx, inputs: list[str], outputs: list[str], fetch: list[str],
            types: dict[str, TensorType]) -> str:
    body = "\n".join(f"    {line}" for line in ctx.lines)
    helpers = "".join(f"\n\n{HELPERS[h].strip()}\n" for h in sorted(ctx.helpers))
    bf16 = graph.dtype == "bfloat16"
    run = _RUN_BF16 if bf16 else _RUN
    shapes = "" if not bf16 else (
        "    shapes = {" + ", ".join(f"{v!r}: {_out_type(types, v)!r}"
                                    for v in dict.fromkeys(fetch)) + "}\n")
    return (_HEADER.format(imports=_IMPORTS, nodes=len(graph.nodes), opset=OPSET, dtype=graph.dtype,
                           tensor_type=TENSOR_TYPES[graph.dtype], helpers=helpers)
            + _BUILD_START + body + "\n\n"
            + _BUILD_END.format(inputs=_list_lines(inputs), outputs=_list_lines(outputs),
                                opset=OPSET, ir_version=IR_VERSION,
                                names=list(graph.input_names), fetch=fetch)
            + shapes + run)


def _list_lines(items: list[str]) -> str:
    return "".join(f"\n        {item}," for item in items)


# The emitted program's imports (kept out of column 0 of this module: it imports no
# library itself).
_IMPORTS = "\n".join(['import numpy as np', 'import onnx', 'import onnxruntime as ort', 'from onnx import TensorProto, helper, numpy_helper'])

_HEADER = '''"""dlfuzz model: {nodes} node(s) as an ONNX graph (opset {opset}) run by ONNX Runtime."""

{imports}

DT = TensorProto.{tensor_type}  # the graph computes in {dtype}
NP = helper.tensor_dtype_to_np_dtype(DT)
{helpers}

'''

_BUILD_START = '''def build(W, optimize=True):
    """The ONNX Runtime session for this graph; ``model(*inputs)`` runs it."""
    nodes, inits = [], []

    def node(op, inputs, outputs, **attrs):
        outputs = [outputs] if isinstance(outputs, str) else outputs
        name = next(filter(None, outputs))  # an RNN may leave its first output unnamed
        nodes.append(helper.make_node(op, inputs, outputs, name=name, **attrs))

    def const(name, value, dtype=NP):
        inits.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))

'''

_BUILD_END = '''    graph = helper.make_graph(nodes, "dlfuzz", [{inputs}
    ], [{outputs}
    ], initializer=inits)
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", {opset})],
                              ir_version={ir_version}, producer_name="dlfuzz")
    onnx.checker.check_model(proto)
    options = ort.SessionOptions()
    options.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_ALL if optimize
                                        else ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(proto.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    names = {names!r}
    fetch = {fetch!r}
'''

_RUN = '''
    def model(*inputs):
        return tuple(session.run(fetch, dict(zip(names, inputs, strict=True))))

    return model
'''

# ONNX Runtime's numpy bridge has no bfloat16: bind OrtValues over uint16 views instead.
_RUN_BF16 = '''
    def value(bits):
        return ort.OrtValue.ortvalue_from_numpy_with_onnx_type(bits, DT)

    def model(*inputs):
        binding = session.io_binding()
        feeds = [value(np.ascontiguousarray(x, dtype=NP).view(np.uint16)) for x in inputs]
        outs = {name: np.empty(shape, np.uint16) for name, shape in shapes.items()}
        results = {name: value(out) for name, out in outs.items()}  # views of outs
        for name, feed in zip(names, feeds, strict=True):
            binding.bind_ortvalue_input(name, feed)
        for name, result in results.items():
            binding.bind_ortvalue_output(name, result)
        session.run_with_iobinding(binding)
        return tuple(outs[name].view(NP) for name in fetch)

    return model
'''
