"""Where candidates come from, besides name matching: compositions, modes, precision.

* compositions: every function registered with ``@composes`` in ``compose_torch``,
  ``compose_tf`` and ``compose_jax`` (it takes the API's parameter names: every value is
  passed by keyword);
* modes: the API itself on its library's compiled backend (``torch-compile`` only for a
  fixed subset, ``TORCH_COMPILE_MAX`` APIs: each of its compilations costs seconds);
* precision: the API itself with floating inputs upcast to float64 (``precision.py``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from dlfuzz.engines.api.counterparts.model import MODE_BACKENDS, Counterpart
from dlfuzz.engines.api.libspecs import LibSpec

TORCH_COMPILE_MAX = 40
_MODES_OF = {lib: backend for backend, lib in MODE_BACKENDS.items()}


def _testable(spec: LibSpec) -> bool:
    return not spec.skip and not spec.random


def composition_candidates(specs: Mapping[str, LibSpec]) -> list[Counterpart]:
    from dlfuzz.engines.api.counterparts import (  # noqa: F401 - their registrations
        compose_jax,
        compose_jax_tf,
        compose_tf,
        compose_torch,
    )
    from dlfuzz.engines.api.counterparts.compose_common import REGISTRY

    out = []
    for c in REGISTRY:
        spec = specs.get(c.api)
        if spec is None or not _testable(spec) or spec.library == c.library:
            continue
        out.append(Counterpart(c.api, c.library, "composition", c.target,
                               requires_default=c.requires_default))
    return out


def own_call(spec: LibSpec) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(positional names, dropped names) of the spec's own call, as ``libdraw.call_for``
    passes it: positional parameters, then leading required ``either`` ones, variadic
    spread (marked ``*``)."""
    args: list[str] = []
    leading = True
    for p in spec.params:
        if p.passing == "variadic":
            args.append("*" + p.name)
            leading = False
        elif p.passing == "positional" or (leading and p.passing == "either"
                                            and not p.optional):
            args.append(p.name)
        else:
            leading = False
    return tuple(args), ()


def _stable(api: str) -> str:
    return hashlib.blake2b(api.encode(), digest_size=8).hexdigest()


def mode_candidates(specs: Mapping[str, LibSpec], torch_compile_max: int = TORCH_COMPILE_MAX,
                    prefer: frozenset[str] = frozenset()) -> list[Counterpart]:
    """The API on its compiled backend; torch-compile for at most ``torch_compile_max``
    APIs (those in ``prefer`` first, then a fixed pseudo-random choice)."""
    out = []
    torch_apis = sorted((a for a, s in specs.items() if s.library == "torch" and _testable(s)),
                        key=lambda a: (a not in prefer, _stable(a)))
    chosen_torch = set(torch_apis[:torch_compile_max])
    for api, spec in sorted(specs.items()):
        if not _testable(spec) or spec.library not in _MODES_OF:
            continue
        if spec.library == "torch" and api not in chosen_torch:
            continue
        args, _ = own_call(spec)
        out.append(Counterpart(api, _MODES_OF[spec.library], "mode", api, args=args))
    return out


def precision_candidates(specs: Mapping[str, LibSpec]) -> list[Counterpart]:
    """The API computed in float64, for APIs taking low-precision floating tensors."""
    from dlfuzz.specgen.counterparts.inputs import LOW, dtypes_for

    out = []
    for api, spec in sorted(specs.items()):
        if not _testable(spec) or not set(dtypes_for(spec)) & LOW:
            continue
        args, _ = own_call(spec)
        out.append(Counterpart(api, spec.library, "precision", api, args=args))
    return out
