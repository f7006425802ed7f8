"""Models on disk: ``model.json`` (the graph) + ``model.npz`` (weights), losslessly.

The JSON is meant to be read and edited by hand; loading checks it completely and names
the file and key of anything wrong. bfloat16 arrays (which ``.npz`` cannot describe) are
stored as their uint16 bit patterns and listed under ``"bfloat16"`` in the JSON.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from dlfuzz.cases import DTYPES
from dlfuzz.errors import UsageError
from dlfuzz.ir.graph import Graph, InvalidGraph, Node, TensorType, freeze_attrs
from dlfuzz.ir.model import Model
from dlfuzz.store.artifacts import write_atomic

FORMAT = "dlfuzz-model"
VERSION = 1


def graph_from_dict(data: Any, where: str = "graph") -> Graph:
    """The inverse of ``Graph.to_dict``; errors name the key that is wrong."""
    try:
        inputs = tuple(TensorType(tuple(int(d) for d in t["shape"]), str(t["dtype"]))
                       for t in data["inputs"])
        nodes = []
        for i, n in enumerate(data["nodes"]):
            attrs = n.get("attrs", {})
            if not isinstance(attrs, dict):
                raise TypeError(f"nodes[{i}].attrs must be an object")
            nodes.append(Node(str(n["id"]), str(n["op"]), tuple(str(v) for v in n["inputs"]),
                              freeze_attrs(attrs)))
        outputs = tuple(str(v) for v in data["outputs"])
    except (KeyError, TypeError, ValueError) as exc:
        raise UsageError(f"{where}: malformed graph ({type(exc).__name__}: {exc}); expected "
                         f"keys inputs[{{shape, dtype}}], nodes[{{id, op, inputs, attrs}}], "
                         f"outputs") from None
    g = Graph(inputs, tuple(nodes), outputs)
    try:
        return g.check()
    except InvalidGraph as exc:
        raise UsageError(f"{where}: invalid graph: {exc}") from None


def model_to_arrays(model: Model) -> tuple[dict[str, np.ndarray], list[str]]:
    arrays, bf16 = {}, []
    for k, v in model.weights.items():
        if v.dtype == DTYPES["bfloat16"]:
            arrays[k] = v.view(np.uint16)
            bf16.append(k)
        else:
            arrays[k] = v
    return arrays, bf16


def save_model(model: Model, path: str | Path) -> Path:
    """Write ``path`` (.json) and the weights beside it (same stem, .npz)."""
    path = Path(path)
    weights_path = path.with_suffix(".npz")
    arrays, bf16 = model_to_arrays(model)
    named: dict[str, Any] = arrays  # numpy's stub reads ** as possibly allow_pickle
    tmp = weights_path.with_name(weights_path.name + ".tmp.npz")
    np.savez(tmp, **named)
    tmp.replace(weights_path)
    doc = {"format": FORMAT, "version": VERSION, "graph": model.graph.to_dict(),
           "weights": weights_path.name, "bfloat16": bf16}
    write_atomic(path, json.dumps(doc, indent=1).encode())
    return path


def load_model(path: str | Path) -> Model:
    path = Path(path)
    try:
        doc = json.loads(path.read_text())
    except OSError as exc:
        raise UsageError(f"cannot read model file {path}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}: not JSON (line {exc.lineno}, column {exc.colno}: "
                         f"{exc.msg})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise UsageError(f"{path}: not a dlfuzz model (expected \"format\": \"{FORMAT}\")")
    graph = graph_from_dict(doc.get("graph"), f"{path}: key 'graph'")
    weights_path = path.parent / str(doc.get("weights", path.with_suffix(".npz").name))
    try:
        with np.load(weights_path) as npz:
            weights = {k: npz[k] for k in npz.files}
    except OSError as exc:
        raise UsageError(f"{path}: cannot read its weights {weights_path}: {exc}") from None
    for k in doc.get("bfloat16", []):
        weights[k] = weights[k].view(DTYPES["bfloat16"])
    try:
        return Model(graph, weights).check()
    except InvalidGraph as exc:
        raise UsageError(f"{path}: weights do not fit the graph: {exc}") from None
