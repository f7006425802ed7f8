"""Seeds from model files: Keras 3 (``.keras``/``.h5``) and ONNX (``.onnx``) into the IR.

Each importer maps the file's layers (nodes) one by one to IR ops with a registry of
handlers keyed by the layer class (ONNX ``op_type``), copies the trained weights into the
IR's weight names, and checks the result. Anything the IR cannot express *exactly* is
refused with a UsageError naming the layer, its class, the file and what is supported:
a seed that silently computes something else would make every later finding wrong.

``keras_import`` and ``onnx_import`` hold the two importers (see the latter's docstring
for the NCHW to channels-last conversion), ``import_net`` what they share.
"""

from __future__ import annotations

from pathlib import Path

from dlfuzz.engines.model.import_net import DEFAULT_BATCH
from dlfuzz.engines.model.keras_import import import_keras
from dlfuzz.engines.model.onnx_import import import_onnx
from dlfuzz.ir.model import Model


def from_keras(path: str | Path, batch: int = DEFAULT_BATCH) -> Model:
    """A Keras 3 model file as an IR model (batch: the model's static one, else ``batch``)."""
    return import_keras(path, batch)


def from_onnx(path: str | Path, batch: int = DEFAULT_BATCH) -> Model:
    """An ONNX model file as an IR model with the ONNX model's (NCHW) interface."""
    return import_onnx(path, batch)
