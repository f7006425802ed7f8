"""Hand-written knowledge for the TensorFlow extractor (``tf_apis``): what no docstring,
op definition or Python check states. Kept apart from ``data/tf.json`` so that a
regenerated file keeps it; the tables are data, in ``hints/tf.json`` (read and checked by
``hintfiles``), and this module holds the logic around them.

- ``EXCLUDE``: public functions that are not tensor computations (control flow,
  graph building, tracing, I/O set-up); not listed at all.
- ``SKIP``: tensor APIs listed but not fuzzed, with why (string tensors, sparse tensors,
  callables as required arguments).
- ``NAMES``: parameter-name conventions shared across TF (``axis``, ``keepdims``,
  ``padding``...). ``force`` makes the entry win over the op definition (``axis`` is an
  int32 *input* of ``Sum`` but a Python int to the caller); ``cons`` are constraint
  templates, ``{p}`` the parameter and ``{t}`` the API's first tensor parameter.
- ``HINTS``: per API: ``params`` (field overrides), ``constraints`` (C++ checks, source
  ``hand``), ``drop`` (parameters not passed), ``random``, ``skip``.
- ``BROADCAST_OPS``: raw ops whose two first tensor inputs broadcast against each other;
  ``NONZERO_DIVISOR``: integer division by zero is an error, not a value, so the divisor
  stays positive.
"""

from __future__ import annotations

from typing import Any

from dlfuzz.specgen import hintfiles

_TABLES = hintfiles.load("tf")
EXCLUDE: frozenset[str] = _TABLES["exclude"]
SKIP: dict[str, str] = _TABLES["skip"]
_RANDOM: frozenset[str] = _TABLES["random"]
NAMES: dict[str, dict[str, Any]] = _TABLES["names"]
BROADCAST_OPS: frozenset[str] = _TABLES["broadcast_ops"]
NONZERO_DIVISOR: frozenset[str] = _TABLES["nonzero_divisor"]
HINTS: dict[str, dict[str, Any]] = _TABLES["apis"]


def is_random(api: str) -> bool:
    short = api.rsplit(".", 1)[1]
    return short in _RANDOM or short.startswith("random_")


def broadcast(a: str, b: str, rank: int = 4) -> list[str]:
    return [f"{a}.ndims <= {i} or {b}.ndims <= {i} or {a}.shape[-{i + 1}] == "
            f"{b}.shape[-{i + 1}] or {a}.shape[-{i + 1}] == 1 or {b}.shape[-{i + 1}] == 1"
            for i in range(rank)]
