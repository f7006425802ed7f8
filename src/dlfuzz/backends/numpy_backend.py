"""NumPy: the float64 reference library and an ordinary backend."""

from __future__ import annotations

from typing import Any

import numpy as np

from dlfuzz.backends.base import Backend
from dlfuzz.cases import DTYPES
from dlfuzz.libraries import get

LIBRARY = get("numpy")


class NumpyBackend(Backend):
    name = "numpy"
    forkable = True  # import and setup leave one thread (executor.zygote)
    library = LIBRARY.name
    repro_import = LIBRARY.repro_header

    def version(self) -> str:
        return np.__version__

    def to_native(self, array: np.ndarray) -> Any:
        # NumPy has no bfloat16 of its own; ml_dtypes' bfloat16 is not an inexact type to
        # numpy (nanmean, isnan paths treat it as opaque), so results would be artefacts
        # of the pairing, not of NumPy. Reject it the way a library rejects a dtype.
        if array.dtype.name == "bfloat16":
            raise TypeError("numpy does not support bfloat16 (no native dtype)")
        return array

    def to_numpy(self, value: Any) -> np.ndarray:
        return np.asarray(value)

    def native_dtype(self, name: str) -> Any:
        return DTYPES[name].type

    def is_tensor(self, value: Any) -> bool:
        return isinstance(value, np.ndarray | np.generic)

    def repro_tensor(self, values: str, dtype: str, shape: tuple[int, ...]) -> str:
        return f"np.array({values}, dtype={self.repro_dtype(dtype)}).reshape({shape!r})"

    def repro_dtype(self, name: str) -> str:
        return LIBRARY.dtype(name)

    def repro_helpers(self) -> str:
        return ("def _as_list(t):\n"
                "    a = np.asarray(t)\n"
                "    return (a.astype(np.float64) if a.dtype == ml_dtypes.bfloat16 else a).tolist()\n")
