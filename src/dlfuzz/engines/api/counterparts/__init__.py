"""Validated counterparts of per-library APIs (DLLens §III-A), by kind.

``load_counterparts(library)`` is what engines use; ``python -m
dlfuzz.specgen.counterparts validate`` (offline) regenerates the data files
(``data/counterparts/<library>.json``). No deep learning library is imported here:
compositions import theirs inside their bodies, in their library's worker.
"""

from dlfuzz.engines.api.counterparts.model import (
    CONVERSIONS,
    KINDS,
    MODE_BACKENDS,
    Counterpart,
    CounterpartFile,
    NotApplicable,
    dtype_key,
    dump,
    load_counterparts,
    load_file,
)

__all__ = ["CONVERSIONS", "KINDS", "MODE_BACKENDS", "Counterpart", "CounterpartFile",
           "NotApplicable", "dtype_key", "dump", "load_counterparts", "load_file"]
