"""Keras 3 on each of its backends, one worker each (Keras picks its backend at import).

``keras-tf``, ``keras-jax`` and ``keras-torch`` run the same Keras model code; Keras'
own layers are the code under test, on three very different engines. The worker sets
``KERAS_BACKEND`` before importing Keras; JAX gets 64-bit types as the jax backend does.
"""

from __future__ import annotations

import os
from typing import Any, ClassVar

import numpy as np

from dlfuzz.backends._threads import worker_threads
from dlfuzz.backends.base import Backend
from dlfuzz.libraries import get

LIBRARY = get("keras")


class KerasBackend(Backend):
    name = "keras-tf"
    forkable = True  # import and setup leave one thread (executor.zygote)
    library = "keras-tf"
    keras_backend: ClassVar[str] = "tensorflow"
    lowering = LIBRARY.lowering
    case_kinds = ("graph", "program")
    case_timeout_factor = 2.0

    @property
    def repro_import(self) -> str:  # type: ignore[override]
        lines = ["import os", f'os.environ["KERAS_BACKEND"] = "{self.keras_backend}"']
        if self.keras_backend == "jax":
            lines += ["import jax", 'jax.config.update("jax_enable_x64", True)']
        return "\n".join([*lines, LIBRARY.repro_header])

    @property
    def repro_env(self) -> dict[str, str]:
        """Environment a reproducer run with preloads needs: a preload that imports Keras
        runs before the script's own ``KERAS_BACKEND`` line (``dlfuzz reproduce``)."""
        return {"KERAS_BACKEND": self.keras_backend}

    def setup(self) -> None:
        os.environ["KERAS_BACKEND"] = self.keras_backend
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        threads = worker_threads()
        if self.keras_backend == "jax":
            os.environ.setdefault("JAX_PLATFORMS", "cpu")
            import jax

            jax.config.update("jax_enable_x64", True)
        elif self.keras_backend == "torch":
            import torch

            torch.set_num_threads(threads)
        else:
            import tensorflow as tf

            tf.config.threading.set_intra_op_parallelism_threads(threads)
            tf.config.threading.set_inter_op_parallelism_threads(threads)
        import keras

        if keras.backend.backend() != self.keras_backend:
            raise RuntimeError(f"Keras came up on {keras.backend.backend()}, not "
                               f"{self.keras_backend} (was keras imported before setup?)")
        self.keras = keras

    def version(self) -> str:
        return f"{self.keras.__version__} ({self.keras_backend})"

    def program_reset(self) -> None:
        # Keras' advice between models: without it layer names and graph state pile up
        # across programs, a growth of Keras' bookkeeping rather than a leak.
        self.keras.backend.clear_session()

    def to_native(self, array: np.ndarray) -> Any:
        return array

    def to_numpy(self, value: Any) -> np.ndarray:
        return np.asarray(self.keras.ops.convert_to_numpy(value))

    def native_dtype(self, name: str) -> Any:
        return name

    def is_tensor(self, value: Any) -> bool:
        return not isinstance(value, tuple | list) and value is not None

    def repro_helpers(self) -> str:
        return ("def _as_list(t):\n"
                "    a = np.asarray(keras.ops.convert_to_numpy(t))\n"
                "    return (a.astype(np.float64) if a.dtype.name == 'bfloat16' else a).tolist()\n")


class KerasJaxBackend(KerasBackend):
    name = "keras-jax"
    library = "keras-jax"
    keras_backend = "jax"


class KerasTorchBackend(KerasBackend):
    name = "keras-torch"
    library = "keras-torch"
    keras_backend = "torch"
