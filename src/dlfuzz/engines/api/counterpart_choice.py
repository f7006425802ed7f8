"""Which counterparts a case of an API campaign carries.

The API engine composes groups of inputs; each case it builds calls the API and, for
every other library of the campaign, one of the API's validated counterparts (same-name
functions, compositions, LLM-written ones) that applies to its values. Rebuilding a case
(reduction) keeps the counterparts it was compared with, and an API's first signature
leans to the dtypes they were validated on (``typegen.Lean``). What the campaign's
libraries are and what each counterpart accepts is all this needs; it knows nothing of
groups, edges or the schedule.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from dlfuzz.cases import DTYPES, ApiCase
from dlfuzz.engines.api.libspecs import LibSpec

KINDS = ("same-name", "composition", "llm")  # the counterparts a case may carry


class CounterpartChoice:
    """An API's counterparts in the campaign's other libraries, by API path."""

    def __init__(self, table: Mapping[str, Sequence[Any]], libraries: Iterable[str]) -> None:
        self.table = {api: list(cps) for api, cps in table.items()}
        self.libraries = frozenset(libraries)

    @classmethod
    def built_in(cls, spec_libraries: Iterable[str], libraries: Iterable[str]
                 ) -> CounterpartChoice:
        """The built-in counterpart files of these spec libraries."""
        from dlfuzz.engines.api.counterparts import load_counterparts
        from dlfuzz.engines.api.counterparts.model import FILE_LIBRARIES

        table: dict[str, list[Any]] = {}
        for lib in sorted(spec_libraries):
            if lib not in FILE_LIBRARIES:
                continue
            for api, cps in load_counterparts(lib).items():
                table.setdefault(api, []).extend(cp for cp in cps if cp.kind in KINDS)
        return cls(table, libraries)

    def runs_here(self, api: str) -> bool:
        """Whether a counterpart of ``api`` is in a library of the campaign."""
        return any(cp.library in self.libraries for cp in self.table.get(api, ()))

    def _others(self, spec: LibSpec) -> list[Any]:
        """The API's counterparts in the campaign's libraries other than its own."""
        return [cp for cp in self.table.get(spec.api, ())
                if cp.library in self.libraries and cp.library != spec.library]

    def pick(self, spec: LibSpec, values: Mapping[str, Any], rng: np.random.Generator
             ) -> list[Any]:
        """One validated counterpart per other library of the campaign, chosen at random
        among those that apply to these values (validated dtypes, default-only
        parameters left at their defaults)."""
        by_lib: dict[str, list[Any]] = {}
        for cp in self._others(spec):
            applies = getattr(cp, "applies", None)
            if applies is None or applies(values):
                by_lib.setdefault(cp.library, []).append(cp)
        return [cps[int(rng.integers(len(cps)))] for _, cps in sorted(by_lib.items())]

    def same_as(self, spec: LibSpec, like: ApiCase) -> list[Any]:
        """The counterparts ``like`` called (a rebuilt case keeps its comparison)."""
        targets = {lib: call.target for lib, call in like.calls if lib != spec.library}
        return [cp for cp in self.table.get(spec.api, ())
                if targets.get(cp.library) == cp.target]

    def first(self, spec: LibSpec) -> list[Any]:
        """One counterpart per other library of the campaign: the first listed."""
        out: dict[str, Any] = {}
        for cp in self._others(spec):
            out.setdefault(cp.library, cp)
        return [out[lib] for lib in sorted(out)]

    def dtypes(self, spec: LibSpec) -> frozenset[str]:
        """The dtypes the API's counterparts in the campaign's other libraries were
        validated on (every dtype where one has no list)."""
        out: set[str] = set()
        for cp in self._others(spec):
            out.update(getattr(cp, "dtypes", ()) or DTYPES)
        return frozenset(out)
