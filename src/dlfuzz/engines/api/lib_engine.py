"""``LibApiEngine``: the API-level engine over per-library specs (TensorJSFuzz + DLLens).

Each group of cases is one API of one library (``torch.nn.functional.conv2d``), drawn by
the generator of the campaign (``random``: no type information; ``typed``: TensorJSFuzz
Algorithm 1; ``adjust``: Algorithm 1 + Algorithm 2; ``z3``: solved constraints with
blocking clauses). A case carries the API's own call plus one validated counterpart per
other library of the campaign (DLLens), so the differential oracle and the float64
reference judge compare an API with its counterparts; the compiled backends of the API's
library (``torch-compile``, ``jax-jit``, ``tf-xla``) are the "mode" counterparts.

A share of the cases (``violate_share``) are *violate-mode* inputs that break exactly one
constraint of the spec: the API must reject them with a clean exception, and one that
returns is a boundary bug (``oracles/boundary.py``). Only constraints that the library's
own code or errors vouch for (validation, error, signature, hand) are violated, never
guesses from prose or an LLM: those may be wrong, and a wrong constraint would turn a
legal input into a false report.

Feedback refines specs during the campaign (DLLens' error-feedback constraints): an
intended-valid input that the API rejects with a message the feedback table understands
adds a constraint, kept only if every input that ran before still satisfies it.
"""

from __future__ import annotations

import difflib
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from dlfuzz.cases import ApiCase, DType, Finding, Outcome
from dlfuzz.engines.api.constraints import Env, holds, make
from dlfuzz.engines.api.engine import COSTLY, ApiStats
from dlfuzz.engines.api.libspecs import LIBRARY_FILES, LibSpec, load_file, load_library
from dlfuzz.engines.api.settings import GENERATORS, ApiEngineSettings
from dlfuzz.engines.base import Engine
from dlfuzz.errors import UsageError

GROUP_SIZE = (4, 8)
# Constraints a violate-mode input may break: those the library's own code, errors or
# operator definitions vouch for. Prose, LLM and hand-written ones can be narrower than
# what the library accepts, and breaking a wrong constraint makes a false report.
VIOLATE_SOURCES = frozenset({"validation", "error", "signature"})
RECENT_OK = 16  # ok draws remembered per API, to check a learned constraint against
MAX_LEARNED = 8  # error-feedback constraints added per API in one campaign


class LibApiEngine(Engine):
    """Proposes ``ApiCase`` objects for the per-library APIs of the chosen libraries."""

    name = "api"
    case_kind = "api"
    settings_class = ApiEngineSettings

    def __init__(self, seed: int = 0, libraries: Sequence[str] = ("torch", "jax"),
                 apis: Iterable[str] | None = None, generator: str = "adjust",
                 violate_share: float = 0.1, spec_files: Sequence[str] = (),
                 specials: bool = True,
                 specs: Mapping[str, LibSpec] | None = None,
                 counterparts: Mapping[str, Sequence[Any]] | None = None,
                 group_size: tuple[int, int] | None = None) -> None:
        if generator not in GENERATORS:
            raise UsageError(f"--generator {generator!r}: choose one of {', '.join(GENERATORS)}")
        if not 0.0 <= violate_share <= 1.0:
            raise UsageError(f"--violate-share {violate_share!r}: give a share in [0, 1]")
        self.libraries = tuple(libraries)
        table = dict(specs) if specs is not None else _load(self.libraries, spec_files)
        table = {k: s for k, s in table.items() if not s.skip and s.library in self.libraries}
        if apis is not None:
            table = _select(table, list(apis))
        if not table:
            raise UsageError(f"no API spec for the libraries {', '.join(self.libraries)}; "
                             f"built-in specs exist for {', '.join(LIBRARY_FILES)} "
                             "(or give --spec-file)")
        self.specs: dict[str, LibSpec] = table
        self.names = sorted(table)
        self.mode = generator
        self.violate_share = violate_share
        self.specials = specials
        # Inputs per signature. Larger groups raise TF's and JAX's cases/s (a new shape
        # costs them a kernel set-up or a compilation) but lower the signatures tried
        # per second, which shape-dependent bugs need: see docs/performance.md.
        self.group_size = group_size or GROUP_SIZE
        self.seed = seed
        self.counterparts = (dict(counterparts) if counterparts is not None
                             else _load_counterparts(self.libraries))
        self.stats: dict[str, ApiStats] = {n: ApiStats() for n in self.names}
        self.learned: dict[str, list[str]] = {}
        self.violations: dict[str, int] = {}
        self._violate_specs: dict[str, tuple[LibSpec, Any]] = {}
        self._recent_ok: dict[str, deque[dict[str, Any]]] = {}
        self._draws: dict[str, Any] = {}  # case id -> Draw, for error feedback
        self._pending: list[ApiCase] = []
        self._cdf: np.ndarray | None = None
        self.reseed(None)

    def reseed(self, batch: int | None) -> None:
        from dlfuzz.engines.api.libgen import LibGenerator

        entropy = [self.seed] if batch is None else [self.seed, batch]
        streams = np.random.SeedSequence(entropy).spawn(2)
        self.rng = np.random.default_rng(streams[0])
        self.generator = LibGenerator(np.random.default_rng(streams[1]), mode=self.mode,
                                      specials=self.specials)
        self._pending = []

    # ---- Engine protocol ----------------------------------------------------------------
    def propose(self, n: int) -> list[ApiCase]:
        out: list[ApiCase] = []
        while len(out) < n:
            if not self._pending:
                self._pending = self._next_group()
            take = min(n - len(out), len(self._pending))
            out.extend(self._pending[:take])
            del self._pending[:take]
        return out

    def feedback(self, case: Any, outcomes: Mapping[str, Outcome],
                 findings: Sequence[Finding]) -> None:
        stats = self.stats.get(getattr(case, "api", ""))
        draw = self._draws.pop(getattr(case, "id", ""), None)
        if stats is None or case.invalid:
            return
        spec = self.specs[case.api]
        own = [o for b, o in outcomes.items() if _library_of(b) == spec.library]
        stats.tried += 1
        stats.ran_somewhere += any(o.ok for o in own)
        stats.ran_everywhere += bool(outcomes) and all(o.ok for o in outcomes.values())
        stats.costly += any(o.status in COSTLY for o in outcomes.values())
        stats.findings += len(findings)
        self._cdf = None
        if draw is None or not own:
            return
        if any(o.ok for o in own):
            self._recent_ok.setdefault(case.api, deque(maxlen=RECENT_OK)).append(draw.values)
            return
        rejected = next((o for o in own if o.status == "exception" and o.stage == "call"), None)
        if rejected is not None:
            self._learn(spec, draw, rejected)

    # ---- internals ----------------------------------------------------------------------
    def _next_group(self) -> list[ApiCase]:
        if self._cdf is None:
            weights = np.array([self.stats[n].weight for n in self.names])
            self._cdf = np.cumsum(weights) / weights.sum()
        index = int(np.searchsorted(self._cdf, self.rng.random(), side="right"))
        spec = self.specs[self.names[min(index, len(self.names) - 1)]]
        lo, hi = self.group_size
        size = int(self.rng.integers(lo, hi + 1))
        if self.violate_share and self.rng.random() < self.violate_share:
            draws = self._violate(spec, size)
            if draws:
                return [self._case(spec, d) for d in draws]
        return [self._case(spec, d) for d in self.generator.group(spec, size)]

    def _violate(self, spec: LibSpec, size: int) -> list[Any]:
        """Violate-mode draws (one signature) breaking a constraint the library vouches
        for: type bounds (rank, dtype list, range) partly come from prose and can be
        narrower than what the library accepts, so only trusted constraints are broken."""
        cached = self._violate_specs.get(spec.api)
        if cached is None or cached[0] is not spec:
            cached = (spec, self._violate_spec(spec))
            self._violate_specs[spec.api] = cached
        if cached[1] is None:
            return []
        target, texts = cached[1]
        draws = self.generator.violate_group(target, size, bounds=False, only=texts)
        if draws:
            key = f"{spec.api}: {draws[0].violated}"
            self.violations[key] = self.violations.get(key, 0) + len(draws)
        return draws

    @staticmethod
    def _violate_spec(spec: LibSpec) -> tuple[LibSpec, frozenset[str]] | None:
        """The spec violate mode works on (every constraint must still hold but the one
        broken; ranges of the parameters trusted constraints name are opened, so that
        ``not (p < 0 or p > 1)`` can be broken with p drawn in [0, 1]) and the texts of
        the constraints it may break."""
        trusted = tuple(c for c in spec.constraints if c.source in VIOLATE_SOURCES)
        # What the library's own checks or errors say about a parameter governs what its
        # signature's annotations suggest (``jax.lax.sort_key_val``'s ``dimension`` is
        # annotated as an index yet checked as ``-ndims <= dimension < ndims``).
        checked = frozenset().union(*(c.names for c in trusted if c.source != "signature"))
        trusted = tuple(c for c in trusted
                        if c.source != "signature" or not c.names & checked)
        if not trusted:
            return None
        named = frozenset().union(*(c.names for c in trusted))
        params = tuple(replace(p, range=None) if p.name in named and p.range else p
                       for p in spec.params)
        return replace(spec, params=params), frozenset(c.text for c in trusted)

    def is_deterministic(self, case: ApiCase) -> bool:
        """Whether the case's API gives the same bits for the same input (not dropout)."""
        spec = self.specs.get(case.api)
        return spec is not None and not spec.random

    def broken_constraints(self, case: ApiCase) -> list[str] | None:
        """The constraints of its spec a case breaks (the boundary oracle's check)."""
        from dlfuzz.engines.api.libgen import values_of

        spec = self.specs.get(case.api)
        if spec is None:
            return None
        try:
            values = values_of(case, spec)
        except Exception:  # noqa: BLE001 - not one of ours: no verdict either way
            return None
        if any(not p.optional and p.name not in values for p in spec.params):
            return ["a required parameter is missing"]
        env = Env(_with_defaults(spec, values))
        return [c.text for c in spec.constraints if not holds(c, env)]

    def _case(self, spec: LibSpec, draw: Any) -> ApiCase:
        from dlfuzz.engines.api.libgen import to_case

        case = to_case(draw, self._pick_counterparts(spec, draw.values))
        if len(self._draws) > 4096:
            self._draws.pop(next(iter(self._draws)))
        self._draws[case.id] = draw
        return case

    def _pick_counterparts(self, spec: LibSpec, values: Mapping[str, Any]) -> list[Any]:
        """One validated counterpart per other library of the campaign, chosen at random
        among those that apply to these values (validated dtypes, default-only
        parameters left at their defaults)."""
        by_lib: dict[str, list[Any]] = {}
        for cp in self.counterparts.get(spec.api, ()):
            applies = getattr(cp, "applies", None)
            if applies is not None and not applies(values):
                continue
            if cp.library in self.libraries and cp.library != spec.library:
                by_lib.setdefault(cp.library, []).append(cp)
        return [cps[int(self.rng.integers(len(cps)))] for _, cps in sorted(by_lib.items())]

    def _learn(self, spec: LibSpec, draw: Any, outcome: Outcome) -> None:
        from dlfuzz.engines.api.errorfeedback.engine import constraints_from_error

        learned = self.learned.setdefault(spec.api, [])
        if len(learned) >= MAX_LEARNED:
            return
        try:
            texts = constraints_from_error(spec.library, outcome.exc_type, outcome.message, draw)
        except Exception:  # noqa: BLE001 - feedback is best effort, never a campaign crash
            return
        known = {c.text for c in spec.constraints}
        ok_before = list(self._recent_ok.get(spec.api, ()))
        added = []
        for text in texts:
            if text in known or text in learned:
                continue
            try:
                constraint = make(text, "error", spec.names)
            except UsageError:
                continue
            if all(holds(constraint, Env(_with_defaults(spec, v))) for v in ok_before):
                added.append(constraint)
                learned.append(text)
        if added:
            self.specs[spec.api] = replace(spec, constraints=spec.constraints + tuple(added))

    # ---- for the campaign, triage and reports ------------------------------------------
    def unsupported_backends(self, case: Any) -> frozenset[str]:
        spec = self.specs.get(getattr(case, "api", ""))
        if spec is None or not spec.unsupported:
            return frozenset()
        dtypes = {t.dtype for t in case.tensors} | {
            v.name for _, v in case.params if isinstance(v, DType)}
        out = set()
        for key, _ in spec.unsupported:
            backend, _, dtype = key.partition(":")
            if not dtype or dtype in dtypes:
                out.add(backend)
        return frozenset(out)

    def rebuild(self, api: str, tensors: Iterable[Any], params: Any = (),
                like: ApiCase | None = None) -> ApiCase:
        """A case for reducers: ``like`` with these tensors and only these parameters.

        The tensors keep their parameters (the order ``to_case`` gave them), the
        counterparts stay the ones ``like`` was compared with, so the finding's signature
        can still hold.
        """
        from dlfuzz.engines.api.libgen import rebuild, values_of

        spec = self.specs[api]
        if like is None:
            raise ValueError("LibApiEngine.rebuild needs the case to rebuild from (like=)")
        keep = set(dict(params)) | {p.name for p in spec.params if not p.optional}
        values = values_of(like.with_tensors(tuple(tensors)), spec)
        values = {k: v for k, v in values.items() if k in keep or _is_array_value(v)}
        return rebuild(spec, values, self._same_counterparts(spec, like), like.expect)

    def _same_counterparts(self, spec: LibSpec, like: ApiCase) -> list[Any]:
        targets = {lib: call.target for lib, call in like.calls if lib != spec.library}
        return [cp for cp in self.counterparts.get(spec.api, ())
                if targets.get(cp.library) == cp.target]

    def summary(self) -> dict[str, dict[str, float]]:
        return {n: {"tried": s.tried, "ran_somewhere": s.ran_somewhere,
                    "ran_everywhere": s.ran_everywhere, "costly": s.costly,
                    "findings": s.findings, "valid_rate": round(s.valid_rate, 3),
                    "learned": len(self.learned.get(n, ()))}
                for n, s in self.stats.items()}


def _is_array_value(value: Any) -> bool:
    return isinstance(value, np.ndarray) or (
        isinstance(value, list) and bool(value) and all(isinstance(v, np.ndarray) for v in value))


def _library_of(backend: str) -> str:
    """The library of a backend name (``torch-compile`` -> ``torch``)."""
    return backend.split("-", 1)[0]


def _with_defaults(spec: LibSpec, values: Mapping[str, Any]) -> dict[str, Any]:
    out = {p.name: p.default for p in spec.params if p.optional}
    out.update(values)
    return out


def _load(libraries: Sequence[str], spec_files: Sequence[str]) -> dict[str, LibSpec]:
    table: dict[str, LibSpec] = {}
    if spec_files:
        for path in spec_files:
            for spec in load_file(Path(path)):
                table[spec.api] = spec
        return table
    for lib in libraries:
        if lib in LIBRARY_FILES:
            table.update(load_library(lib))
    return table


def _load_counterparts(libraries: Sequence[str]) -> dict[str, list[Any]]:
    from dlfuzz.engines.api.counterparts import load_counterparts

    out: dict[str, list[Any]] = {}
    for lib in libraries:
        if lib not in LIBRARY_FILES:
            continue
        for api, cps in load_counterparts(lib).items():
            out.setdefault(api, []).extend(cp for cp in cps if cp.kind in (
                "same-name", "composition", "llm"))
    return out


def _select(table: Mapping[str, LibSpec], wanted: list[str]) -> dict[str, LibSpec]:
    """APIs by full path, by leaf name (every library's), or ``group:NAME``."""
    out: dict[str, LibSpec] = {}
    for item in wanted:
        if item.startswith("group:"):
            members = {k: s for k, s in table.items() if s.group == item[6:]}
            if not members:
                groups = sorted({s.group for s in table.values() if s.group})
                raise UsageError(f"unknown API group {item[6:]!r}; groups: {', '.join(groups)}")
            out.update(members)
            continue
        hits = {k: s for k, s in table.items() if k == item or k.endswith("." + item)}
        if not hits:
            close = difflib.get_close_matches(item, list(table), n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise UsageError(f"unknown API {item!r}{hint}")
        out.update(hits)
    return out
