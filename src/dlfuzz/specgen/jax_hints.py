"""Hand-written knowledge for the JAX extractor (``jax_apis.py``): what extraction cannot see.

Three kinds of entries, each kept small on purpose (everything else is extracted); they
are data, in ``hints/jax.json`` (read and checked by ``hintfiles``):

* ``SKIP``: APIs listed in ``data/jax.json`` but not fuzzed, with the reason (callables,
  collectives that need a named mapped axis, I/O, dtype metadata, structured arguments
  that the spec format cannot express).
* ``NAME_KINDS``: how a parameter is generated when its annotation says little (a bare
  ``ArrayLike`` named ``indices`` is an integer tensor; ``axis`` is an axis of the first
  tensor). These are conventions of the NumPy API that JAX follows.
* ``HINTS``: per-API overrides: parameter fields (``rank``, ``dtypes``, ``values``,
  ``range``, ...), parameters to drop or add, and constraints marked ``"from": "hand"``.
  Used where the check lives in C++/XLA (conv window sizes, slice bounds), in code
  ``validation`` cannot translate (loops, aliases), or where a structured argument is
  restricted to a simple form (conv ``dimension_numbers`` left at None, string padding).
  Keys besides ``params``: ``drop``, ``add``, ``constraints``, ``broadcast`` (groups of
  tensors that must broadcast), ``axes`` (more axis-list parameters), ``own_axes`` (axis
  parameters whose range the entry states itself), ``random``, ``specials``, ``notes``.
"""

from __future__ import annotations

from typing import Any

from dlfuzz.specgen import hintfiles

_TABLES = hintfiles.load("jax")
SKIP: dict[str, str] = _TABLES["skip"]
# Parameters never generated (left to their defaults): placement, output buffers, options
# that only select an implementation.
DROP: frozenset[str] = _TABLES["drop"]
# name -> LibParam fields for parameters whose annotation is vague (ArrayLike, int, Any).
NAME_KINDS: dict[str, dict[str, Any]] = _TABLES["name_kinds"]
# Axis-like parameter names and whether JAX accepts negative values for them (jax.lax
# does not, jax.numpy does). The axis refers to the first tensor parameter unless HINTS
# say otherwise.
AXIS_NAMES: frozenset[str] = _TABLES["axis_names"]
AXES_NAMES: frozenset[str] = _TABLES["axes_names"]
HINTS: dict[str, dict[str, Any]] = _TABLES["apis"]
