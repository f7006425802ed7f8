"""A library is never found guilty on the word of dlfuzz's own re-implementations alone.

A case of ``torch.nn.functional.hardshrink`` runs torch's function and, as its JAX and TF
counterparts, two compositions dlfuzz wrote (``compose_jax``, ``compose_tf``). Their
float64 results are voters of the reference like any library's: when both compositions
agree with each other and not with torch, torch is found guilty although only dlfuzz's
code disagrees with it (the hardshrink compositions once mapped NaN to 0 where torch
propagates it, and three such reports were filed as torch bugs).

The rule: a guilty verdict must rest on at least one implementation that is not
dlfuzz-written — a library's own function (the API's own library in float64, or another
library's function of the same meaning). When every library of the reference computed the
case through a dlfuzz-written counterpart (a composition or an LLM-written function), the
finding is kept but demoted (``demoted`` detail, the shared contract: listed, never as a
crash or wrong result). A composition found guilty itself is dlfuzz's own fault and is
counted by the differential oracle, never filed against a library.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from dlfuzz.cases import ApiCase, Finding

DLFUZZ_PREFIX = "dlfuzz."  # a call target dlfuzz wrote (composition, LLM runner)


def written_by_dlfuzz(case: ApiCase, library: str) -> bool:
    """Whether ``case`` computes with ``library`` through a dlfuzz-written function."""
    call = case.call_for(library) if hasattr(case, "call_for") else None
    return call is not None and call.target.startswith(DLFUZZ_PREFIX)


def counterpart_only(case: ApiCase, reference_libraries: Iterable[str]) -> str:
    """The demotion reason when every library the reference rests on is a dlfuzz-written
    counterpart ("" when at least one is a library's own implementation)."""
    libraries = list(dict.fromkeys(reference_libraries))
    if not libraries or not all(written_by_dlfuzz(case, lib) for lib in libraries):
        return ""
    names = []
    for lib in libraries:
        call = case.call_for(lib)
        target = call.target.rsplit(".", 1)[-1] if call is not None else "?"
        names.append(f"{lib} {target}")
    verb = "disagrees" if len(names) == 1 else "disagree"
    return f"only dlfuzz's counterpart {', '.join(names)} {verb}"


def demote_counterpart_only(f: Finding, case: ApiCase,
                            reference_libraries: Iterable[str]) -> Finding:
    """``f`` with the ``demoted`` detail set when its verdict rests only on
    dlfuzz-written counterparts (the differential oracle's one hook)."""
    reason = counterpart_only(case, reference_libraries)
    if not reason:
        return f
    earlier = f.detail("demoted")  # a documented difference, say: both reasons are kept
    if earlier:
        reason = f"{earlier}; {reason}"
    details = tuple(sorted([*(kv for kv in f.details if kv[0] != "demoted"),
                            ("demoted", reason)]))
    return replace(f, details=details)
