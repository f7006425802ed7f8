"""ONNX Runtime: ``ort`` with every graph optimization, ``ort-noopt`` with none.

The pair is a compile/eager pair of one library: the optimizer (constant folding, node
fusions, layout transforms) must not change what a model computes, so ``ort`` is judged
against ``ort-noopt`` for mode inconsistencies the way ``torch-compile`` is against
``torch``. ONNX Runtime runs models only (there is no API-level binding).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dlfuzz.backends.base import Backend
from dlfuzz.cases import DTYPES
from dlfuzz.libraries import get

LIBRARY = get("onnxruntime")


class OrtBackend(Backend):
    name = "ort"
    library = LIBRARY.name
    compiled = True  # the optimizing mode of the pair
    case_timeout_factor = 3.0
    lowering = LIBRARY.lowering
    case_kinds = ("graph",)
    repro_import = LIBRARY.repro_header
    optimize = True

    def setup(self) -> None:
        import onnx
        import onnxruntime

        self.onnx, self.ort = onnx, onnxruntime
        onnxruntime.set_default_logger_severity(3)

    def version(self) -> str:
        return f"{self.ort.__version__} (onnx {self.onnx.__version__})"

    def to_native(self, array: np.ndarray) -> Any:
        return array

    def to_numpy(self, value: Any) -> np.ndarray:
        return np.asarray(value)

    def native_dtype(self, name: str) -> Any:
        return DTYPES[name]

    def build_options(self) -> dict[str, Any]:
        return {"optimize": self.optimize}

    def compile_model(self, model: Callable[..., Any]) -> Callable[..., Any]:
        return model  # the session built with optimizations is the compiled form


class OrtNoOptBackend(OrtBackend):
    name = "ort-noopt"
    compiled = False
    case_timeout_factor = 1.0
    optimize = False
