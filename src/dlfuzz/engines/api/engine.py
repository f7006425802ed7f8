"""``ApiEngine``: the API-level engine over format-2 specs (TensorJSFuzz + DLLens).

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

APIs with a shape rule (``"shapes"``, such as the numpy spec set that ``--engine
numpy-api`` runs, ``NumpyApiEngine``) are drawn by ``rulegen`` instead: the rule relates
the tensors' shapes, and each API keeps a pool of signatures whose reuse adapts to what
the backends charge for a new one (see ``NEW_SIGNATURE_MIN``). Such an API is
library-neutral: its cases call it wherever a library of the campaign has it (its own
or a counterpart), and it counts as valid when any backend runs it.

APIs are picked by energy (``schedule.py``, an AFL-style power schedule): valid rate
and yield (the share of an API's cases that showed something new) raise it, each case
that hangs or kills a worker halves it, and a floor keeps every API in play; violate
mode leans toward APIs whose rejections come from native code; an API not tried yet is
charged its module's measured cost. Until every API has had two groups, half of the
groups (``COVERAGE_SHARE``) go to the API visited least (the cheapest first) instead, so
no API is left unvisited by chance while others get their tenth group. A share of the
valid groups (``edge_share``) are edge inputs (``edges.py``): integer
extremes, one special float argument, a scalar outside its range, an empty dimension,
or (from the violate share) a rank outside its bound. Which of an API's groups are edge ones is stratified,
not drawn (``schedule.edge_visit``): its first group is one, so an API visited once or
twice in a broad campaign is pushed to an edge at least once; that first group keeps
half its members ordinary (``FIRST_ORDINARY``), so the same visit tries both, and the
last of those are variants of its signature, in a low dtype (on the API's own library),
with every knob at its upper bound (where the spec has two knobs or more) and with a
long axis (``FIRST_VARIANTS``). A scalar pushed outside a
range that the library's own check vouches for must be rejected: such an edge input is
judged as a violate-mode one (``_judged``). Everything random comes from streams seeded
by (seed, batch), so a seed (with the same feedback) reproduces the same cases.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from dlfuzz.cases import ApiCase, DType, Finding, Outcome
from dlfuzz.engines.api.constraints import Env, holds, make, provenance
from dlfuzz.engines.api.counterpart_choice import CounterpartChoice
from dlfuzz.engines.api.edges import edge_group, newly_broken, unsorted_fills
from dlfuzz.engines.api.gradients import GradientQueue
from dlfuzz.engines.api.libgen import corner_params
from dlfuzz.engines.api.libspecs import LIBRARY_FILES, LibSpec, load_set, load_table, select_apis
from dlfuzz.engines.api.rulegen import RuleGenerator, Signature, subnormals_for
from dlfuzz.engines.api.schedule import (
    NATIVE_ERRORS,
    ApiPicker,
    ApiStats,
    edge_visit,
    message_key,
    violate_share,
)
from dlfuzz.engines.api.settings import GENERATORS, ApiEngineSettings, NumpyApiEngineSettings
from dlfuzz.engines.api.signature_costs import SignatureCosts
from dlfuzz.engines.api.typegen import Lean, plan_of
from dlfuzz.engines.base import Engine, EngineSettings
from dlfuzz.errors import UsageError
from dlfuzz.libraries import name_of_backend

GROUP_SIZE = (4, 8)
# Valid groups pushed to an edge of the value space (integer extremes, one special float
# argument, a scalar outside its range, an empty dimension: ``edges.py``). Where known
# bugs of released libraries are; the rest stays with ordinary values, which the
# differential oracle judges best.
EDGE_SHARE = 0.35
# Of the violate-mode groups, this share breaks a tensor's rank bound instead (an edge
# input: ``_break_rank``), where aborts on unsupported ranks are.
RANK_EDGE_P = 0.5
# Of an API's first group (an edge group), this share of the members keep ordinary
# values. A broad campaign gives most APIs one group in 300 s: all of it at an edge, an
# API reached once never had the ordinary inputs that the differential oracle, the
# dtype oracle and gradient cases judge best (docs/recall.md, session 23: five plants'
# APIs reached, each with one all-edge group, three of the plants needing ordinary
# inputs).
FIRST_ORDINARY = 0.5
# Of those ordinary members, the last ones are variants of the group's signature, in
# this order, as many as there are ordinary members after the first: a group shares one
# signature, and a broad campaign gives most APIs one group, so each variant is a
# signature that API would otherwise not get:
# * "low": its floating tensors in bfloat16 or float16 (one of them at random, then
#   the other one as the third variant; a template in one low dtype gets the other),
#   where the spec allows it. The dtype oracle judges a low-precision input against the same
#   library in float64, the only check of an API no other library has; a torch
#   ``hardswish`` wrong in bfloat16 alone was reached with 8 ordinary float32 members
#   and missed, and with one low dtype drawn it is missed in half the first visits.
# * "long": one axis of one tensor made long, in float32 (``LibGenerator.stretched``):
#   a scan or reduction along an axis past a vector's width.
# The low one runs on the API's own library alone, where the dtype oracle judges it
# against the same library in float64; the long one keeps its counterparts (a float32
# result is judged only where backends disagree: alone it would be judged by nothing).
# With counterparts for both and both low dtypes they cost 30-40 % of the cases a
# four-library campaign ran per second (benchmarks/throughput.py, 48-50 against 56-85
# cases/s; each variant a compilation in JAX), and a comparison of bfloat16 results
# across libraries adds their roundings' disagreements, not a check of the API.
# * "corner": every knob (a bounded integer argument of a narrow range: stride,
#   dilation, groups, kernel size, padding) at its upper bound at once, shapes repaired
#   to fit (``LibGenerator.cornered``), where the spec has two knobs or more. Each
#   group draws one combination of them, and a conv2d wrong only at stride 2 with
#   dilation 2 was reached and missed with one or two groups. It keeps its counterparts
#   (a wrong result there is judged against the other libraries).
FIRST_VARIANTS = ("low", "corner", "long", "low")
LOW_PRECISION = ("bfloat16", "float16")
# An API's first group (with adaptive group sizes) has room for one ordinary member and
# every variant that applies in its ordinary half (the corner applies to about one API
# in twelve: ``first_size``). Groups of a cheap library are drawn small (4-8
# cases: a new signature costs torch nothing), and a first group of 7 had room for the
# low variant in one dtype and the long one: a torch ``hardswish`` wrong in bfloat16 was
# reached in a 300 s campaign with its float16 variant only.
FIRST_SIZE = math.ceil((1 + sum(v != "corner" for v in FIRST_VARIANTS)) / FIRST_ORDINARY)
# The edge half of an API's first group, where a new signature costs the API's own
# library little (its measured first-case over later-case time under SPREAD_COST_S:
# torch and TF eager, against about 0.1 s for JAX's compilations; ``SignatureCosts``),
# gives each member a mechanism of its own (``edge_group(spread=True)``) and its last
# member a tensor of a rank outside its bounds (``_break_rank``). A visit with one
# mechanism for the whole half tried one of an API's three to eight: a torch ``dropout``
# accepting ``p`` outside [0, 1] was reached and missed, its first group's half spent on
# NaN in ``input``; and a rank that aborts came only with violate mode, which reaches an
# API in one group in twenty. The members with a signature of their own run on the
# API's library alone (``Draw.meta["alone"]``): their counterparts' compilations (JAX's
# for a torch API) halved the cases of a 300 s campaign when they ran everywhere, and
# what those members are for (a crash, an abort, a rejection) needs no other library.
SPREAD_COST_S = 0.02
# Signature reuse (rule APIs and per-library APIs alike): each API keeps a pool of
# signatures, and a group draws a new one as often as what a new signature costs allows
# (``SignatureCosts.new_signature_p``), always while the pool is under POOL_MIN. A
# reused signature gets fresh values and a fresh value profile.
POOL_MIN = 2
POOL_MAX = 32
COSTLY = frozenset({"timeout", "crash", "oom"})
# The counters of an API's stats a resumed campaign restores (what ``api_stats`` stored).
RESTORED = ("tried", "ran_somewhere", "edge_tried", "edge_ran", "ran_everywhere", "costly",
            "crashes", "findings", "novel", "violate_tried", "violate_native", "seconds",
            "groups")
# Constraints a violate-mode input may break: those the library's own code, errors or
# operator definitions vouch for. Prose, LLM and hand-written ones can be narrower than
# what the library accepts, and breaking a wrong constraint makes a false report.
VIOLATE_SOURCES = frozenset({"validation", "error", "signature"})
# A constraint learned from error messages during the campaign is broken on purpose only
# once this many cases' rejections gave it: one message generalised by a pattern is weak
# evidence ("div_trunc not implemented for ComplexFloat" learned as "input is not
# complex64", which holds only with a rounding mode). Before that it only steers generation.
MIN_REJECTIONS = 2
RECENT_OK = 16  # ok draws remembered per API, to check a learned constraint against
MAX_LEARNED = 8  # error-feedback constraints added per API in one campaign
# A proposed case whose input tensors hold more bytes than this is dropped (and counted):
# the most a worker sends back per case (``executor.worker.MAX_OUTPUT_BYTES``). The
# setters keep generation far below it (``setters.ELEMENTS_CAP``); this is the last
# guard, so that no path to a huge input (a CI campaign once drew a 4 GiB one) can stop
# a campaign or spend minutes of a worker on one case.
MAX_CASE_BYTES = 64 << 20


class ApiEngine(Engine):
    """Proposes ``ApiCase`` objects for the APIs of the chosen libraries."""

    name = "api"
    case_kind = "api"
    settings_class: ClassVar[type[EngineSettings]] = ApiEngineSettings
    # Half the case limit while fuzzing (5 s of the default 10): a hang held its batch,
    # and every other worker, for the whole limit (a 300 s campaign on numpy, torch,
    # jax and tf spent about 100 s of its workers' time in 10 timeouts), where of about
    # 9,000 case runs there in 100 s no API case ran past 1.2 s and one gradient case
    # past 3 s (3.5 s). A case cut short is re-run with the full limit by triage before
    # anything is claimed, so a hang is still a hang of the full limit.
    first_limit_share: ClassVar[float] = 0.5

    def __init__(self, seed: int = 0, libraries: Sequence[str] = ("torch", "jax"),
                 apis: Iterable[str] | None = None, generator: str = "adjust",
                 violate_share: float = 0.1, edge_share: float = EDGE_SHARE,
                 spec_files: Sequence[str] = (),
                 specials: bool = True,
                 specs: Mapping[str, LibSpec] | None = None,
                 counterparts: Mapping[str, Sequence[Any]] | None = None,
                 group_size: tuple[int, int] | None = None,
                 signature_inputs: int = 0,
                 gradients: bool = True) -> None:
        if generator not in GENERATORS:
            raise UsageError(f"--generator {generator!r}: choose one of {', '.join(GENERATORS)}")
        if not 0.0 <= violate_share <= 1.0:
            raise UsageError(f"--violate-share {violate_share!r}: give a share in [0, 1]")
        if not 0.0 <= edge_share <= 1.0:
            raise UsageError(f"--edge-share {edge_share!r}: give a share in [0, 1]")
        self.libraries = tuple(libraries)
        if not self.libraries:
            raise UsageError("the API engine needs at least one library; give e.g. "
                             "--backends torch,jax")
        table = dict(specs) if specs is not None else load_table(self.libraries, spec_files)
        table = {k: s for k, s in table.items()
                 if not s.skip and (s.library in self.libraries or s.shapes)}
        if apis is not None:
            table = select_apis(table, list(apis))
        spec_libraries = {s.library for s in table.values()}
        self.counterparts = (CounterpartChoice(counterparts, self.libraries)
                             if counterparts is not None
                             else CounterpartChoice.built_in(spec_libraries, self.libraries))
        # A rule API runs wherever a library of the campaign has it (its own or a
        # counterpart); a per-library API only where its own library is under test.
        table = {k: s for k, s in table.items()
                 if s.library in self.libraries or self.counterparts.runs_here(k)}
        if not table:
            raise UsageError(f"no API spec for the libraries {', '.join(self.libraries)}; "
                             f"built-in specs exist for {', '.join(LIBRARY_FILES)} "
                             "(or give --spec-file)")
        self.specs: dict[str, LibSpec] = table
        self.names = sorted(table)
        self.mode = generator
        self.violate_share = violate_share
        self.edge_share = edge_share
        self.specials = specials
        # Inputs per signature. Larger groups raise TF's and JAX's cases/s (a new shape
        # costs them a kernel set-up or a compilation) but lower the signatures tried
        # per second, which shape-dependent bugs need: see docs/performance.md.
        self.group_size = group_size or GROUP_SIZE
        # What a new signature costs: groups grow with it without an explicit size.
        self.costs = SignatureCosts(adaptive=group_size is None)
        # --signature-inputs N: N inputs per signature and a new signature for every
        # group, whatever the machine measures: a campaign whose signatures (the shapes
        # and static arguments a shape-dependent bug needs) do not depend on how fast
        # this machine compiles.
        self.fixed_signatures = signature_inputs > 0
        if self.fixed_signatures:
            self.group_size = (signature_inputs, signature_inputs)
            self.costs.adaptive = False
        if not 1 <= self.group_size[0] <= self.group_size[1]:
            raise UsageError(f"group_size {self.group_size!r} must be (low, high) with "
                             "1 <= low <= high")
        self.seed = seed
        # Backward passes of cases that ran (engines/api/gradients.py); None: --no-gradients.
        self.gradients = GradientQueue() if gradients else None
        self.stats: dict[str, ApiStats] = {n: ApiStats() for n in self.names}
        self.learned: dict[str, list[str]] = {}
        self.violations: dict[str, int] = {}
        # (api, learned constraint) -> cases whose rejection gave it (independent evidence)
        self.rejections: dict[tuple[str, str], int] = {}
        self._violate_specs: dict[str, tuple[LibSpec, Any]] = {}
        self._recent_ok: dict[str, deque[dict[str, Any]]] = {}
        self._draws: dict[str, Any] = {}  # case id -> Draw, for error feedback
        self._pending: list[ApiCase] = []
        self.oversized = 0  # cases dropped for MAX_CASE_BYTES
        # Rule APIs: signature pools and the measured cost of a new signature.
        self.rulegen = RuleGenerator(subnormals=subnormals_for(self.libraries))
        self.pools: dict[str, list[Signature]] = {}
        # Per-library APIs: templates of signatures drawn before (``_valid_group``).
        self.templates: dict[str, list[Any]] = {}
        self._edge_turns: dict[str, int] = {}  # per API: the next edge mechanism's turn
        self.picker = ApiPicker(self.names, self.stats, seed)  # which API each group gets
        self.reseed(None)

    def reseed(self, batch: int | None) -> None:
        """Restart the random streams from (seed, batch): a campaign resumed at batch N
        proposes what an uninterrupted one would have (given the same feedback)."""
        from dlfuzz.engines.api.libgen import LibGenerator

        entropy = [self.seed] if batch is None else [self.seed, batch]
        streams = np.random.SeedSequence(entropy).spawn(3)
        self.rng = np.random.default_rng(streams[0])
        self.generator = LibGenerator(np.random.default_rng(streams[1]), mode=self.mode,
                                      specials=self.specials)
        self.rulegen.rng = np.random.default_rng(streams[2])
        self._pending = []
        self.picker.credit = 0.0  # which of a batch's groups cover: from 0 each batch

    # ---- Engine protocol ----------------------------------------------------------------
    def propose(self, n: int) -> list[Any]:
        out: list[Any] = self.gradients.take(n) if self.gradients is not None else []
        while len(out) < n:
            if not self._pending:
                self._pending = self._within_size(self._next_group())
            take = min(n - len(out), len(self._pending))
            out.extend(self._pending[:take])
            del self._pending[:take]
        return out

    def _within_size(self, cases: list[ApiCase]) -> list[ApiCase]:
        """``cases`` without those whose inputs exceed ``MAX_CASE_BYTES``."""
        kept = [c for c in cases if sum(len(t.data) for t in c.tensors) <= MAX_CASE_BYTES]
        self.oversized += len(cases) - len(kept)
        return kept

    def feedback(self, case: Any, outcomes: Mapping[str, Outcome],
                 findings: Sequence[Finding]) -> None:
        if getattr(case, "kind", "api") == "grad":
            if self.gradients is not None:
                self.gradients.counts["gradient_cases_run"] += 1
                self.gradients.counts["gradient_findings"] += len(findings)
            return
        stats = self.stats.get(getattr(case, "api", ""))
        draw = self._draws.pop(getattr(case, "id", ""), None)
        if stats is None:
            return
        spec = self.specs[case.api]
        own = [o for b, o in outcomes.items()
               if spec.shapes or name_of_backend(b) == spec.library]
        self.picker.stale()
        # What the case showed, for the yield: each backend's outcome kind (with the
        # exception's message, numbers left out) and each finding's signature.
        keys = {f"{b}:{o.status}" + (f":{message_key(o.exc_type, o.message)}"
                                     if not o.ok else "") for b, o in outcomes.items()}
        keys |= {f.signature for f in findings}
        stats.novel += stats.observe(keys)
        stats.costly += any(o.status in COSTLY for o in outcomes.values())
        stats.crashes += any(o.status == "crash" for o in outcomes.values())
        stats.findings += len(findings)
        stats.seconds += max((o.duration_s for o in outcomes.values()), default=0.0)
        if case.invalid:
            stats.violate_tried += 1
            stats.violate_native += any(o.status == "exception" and o.exc_type in
                                        NATIVE_ERRORS for o in own)
            return
        if self.gradients is not None:
            self.gradients.offer(case, outcomes, findings, not spec.random)
        self.costs.measure(case, outcomes)
        stats.tried += 1
        stats.ran_somewhere += any(o.ok for o in own)
        if case.expect.startswith(("edge:", "outside:")):
            stats.edge_tried += 1
            stats.edge_ran += any(o.ok for o in own)
        stats.ran_everywhere += bool(outcomes) and all(o.ok for o in outcomes.values())
        if draw is None or not own:
            return
        if any(o.ok for o in own):
            self._recent_ok.setdefault(case.api, deque(maxlen=RECENT_OK)).append(draw.values)
            return
        rejected = next((o for o in own if o.status == "exception" and o.stage == "call"), None)
        if rejected is not None and not draw.edge:  # an edge may be rejected: no lesson
            self._learn(spec, draw, rejected)

    # ---- internals ----------------------------------------------------------------------
    def _next_group(self) -> list[ApiCase]:
        name = self.picker.pick(self.rng)
        spec = self.specs[name]
        lo, hi = self.group_size
        size = int(self.rng.integers(lo, hi + 1))
        if spec.shapes:
            return self._rule_group(spec, size)
        size = self.costs.grown(size)
        if self.violate_share and self.rng.random() < violate_share(
                self.violate_share, self.stats[spec.api]):
            if self.edge_share and self.rng.random() < RANK_EDGE_P:
                draws = self._break_rank(spec, size)
            else:
                draws = self._violate(spec, size)
            if draws:
                return [self._case(spec, d) for d in draws]
        if self.costs.adaptive and self.edge_share < 1.0 and not self.stats[spec.api].groups:
            size = max(size, first_size(spec))  # room for every variant
        draws, template = self._valid_group(spec, size)
        new = template is not None
        stats = self.stats[spec.api]
        stats.groups += 1
        keep = len(draws)
        if edge_visit(self.edge_share, stats.groups - 1):
            # (Not where every group is to be an edge one: edge_share 1.)
            first = stats.groups == 1 and self.edge_share < 1.0
            keep = int(len(draws) * FIRST_ORDINARY) if first else 0
            spread = first and self.costs.of_library(spec.library) < SPREAD_COST_S
            edged = edge_group(draws[keep:], self.rng, self._edge_turn(spec.api), spread)
            if edged:
                draws = draws[:keep] + [self._judged(spec, e, d) for e, d in
                                        zip(edged, draws[keep:], strict=True)]
            if spread and len(draws) > keep + 1:
                draws[-1:] = [replace(d, meta={**d.meta, "alone": True})
                              for d in self._break_rank(spec, 1)] or draws[-1:]
        if stats.groups == 1 and template is not None:
            draws = self._with_variants(spec, template, draws, keep)
        cases = [self._case(spec, d) for d in draws]
        if new and cases:
            self.costs.first_ids.add(cases[0].id)
        return cases

    def _judged(self, spec: LibSpec, draw: Any, before: Any) -> Any:
        """What an edge draw that breaks a constraint of the spec is judged as: one that
        its valid draw (``before``) kept; one the generator could not satisfy in the
        first place stays as it was.

        A scalar pushed outside its range that breaks exactly one constraint violate mode
        may break (the library's own check vouches for it), or a vouched constraint on
        that scalar alone beside others, becomes a violate-mode draw: the API must
        reject it, and the boundary oracle judges that. Left an edge, an accepted
        ``dropout(p=1.5)`` was seen by nobody; violate mode itself reaches a given API in
        about one group in twenty. (``dropout`` checks ``0 <= p <= 1`` alone, and its
        spec also relates ``p`` to ``training``: breaking both is still a ``p`` its own
        check rejects.)

        A broken relation between parameters puts the draw outside the documented domain
        (``Draw.outside``): no result or rejection is right there, so only crashes, hangs
        and nondeterminism are judged. A special value in ``clip_value_max`` below
        ``clip_value_min`` made a false wrong-result report (TF documents that the
        minimum must not exceed the maximum), and so would an integer extreme used as an
        index past its tensor's end. So does a tensor the spec fills sorted (a search
        sequence) that the edge left unsorted: binary searches of different libraries
        part ways on it. A broken constraint on one parameter alone (its
        range, ``y.min >= 1``, ``p > 0``) is what the mechanism pushes on purpose: that
        draw stays an edge one, judged as before."""
        broken = newly_broken(before, draw)
        unsorted = unsorted_fills(spec, before, draw)
        if not broken:
            return replace(draw, outside=unsorted[0]) if unsorted else draw
        if draw.edge.startswith("outside-range:"):
            target = self._violate_target(spec)
            vouched = [c for c in broken if target is not None and c.text in target[1]
                       and (len(broken) == 1 or len(c.names) == 1)]
            if vouched:
                return replace(draw, violated=vouched[0].text, edge="")
        relations = [c.text for c in broken if len(c.names) > 1] + unsorted
        return replace(draw, outside=relations[0]) if relations else draw

    def _violate_target(self, spec: LibSpec) -> tuple[LibSpec, frozenset[str]] | None:
        """``_violate_spec`` of this spec, cached until the spec learns a constraint."""
        cached = self._violate_specs.get(spec.api)
        if cached is None or cached[0] is not spec:
            cached = (spec, self._violate_spec(spec, self._weak(spec.api)))
            self._violate_specs[spec.api] = cached
        target: tuple[LibSpec, frozenset[str]] | None = cached[1]
        return target

    def _valid_group(self, spec: LibSpec, size: int) -> tuple[list[Any], Any]:
        """A group of valid draws: of a new signature, or (as often as the measured
        compile cost asks, ``SignatureCosts.new_signature_p``) of one drawn before with
        fresh values; and the new signature's template (None for one drawn before)."""
        pool = self.templates.setdefault(spec.api, [])
        if self._wants_new(pool, size):
            # An API's first signature leans to what its counterparts judge (``Lean``).
            lean = Lean(self.counterparts.dtypes(spec)) if not self.stats[spec.api].groups \
                else None
            draws, template = self.generator.new_group(spec, size, lean)
            if template.plan.spec is spec:
                self._keep(pool, template)
            return draws, template
        template = pool[int(self.rng.integers(len(pool)))]
        if template.plan.spec is not spec:  # the spec learned a constraint since
            pool.remove(template)
            return self._valid_group(spec, size)
        return self.generator.regroup(template, size), None

    def _with_variants(self, spec: LibSpec, template: Any, draws: list[Any],
                       ordinary: int) -> list[Any]:
        """An API's first group with its last ordinary members replaced by variants of
        its signature (``FIRST_VARIANTS``), those that apply and keep every constraint;
        the low-precision one runs on the API's own library alone."""
        variants: list[Any] = []
        lows = list(self.rng.permutation(LOW_PRECISION))  # a second "low" takes the other
        for variant in FIRST_VARIANTS:
            if len(variants) >= ordinary - 1:
                break
            if variant == "low":
                made = self.generator.lowered(template, str(lows.pop(0)), 1)
            elif variant == "corner":
                made = self.generator.cornered(template, 1)
            else:
                made = self.generator.stretched(template, 1)
            variants += [replace(d, meta={**d.meta, "variant": variant}) for d in made
                         if all(holds(c, d.env()) for c in spec.constraints)]
        if not variants:
            return draws
        at = ordinary - len(variants)
        return draws[:at] + variants + draws[ordinary:]

    def _edge_turn(self, api: str) -> int:
        """This API's next edge turn: its edge groups take the mechanisms that apply in
        turn (from a random start), so few visits still see each mechanism once."""
        turn = self._edge_turns.get(api)
        if turn is None:
            turn = int(self.rng.integers(1 << 16))
        self._edge_turns[api] = turn + 1
        return turn

    # ---- rule APIs: signature pools ---------------------------------------------------
    def _rule_group(self, spec: LibSpec, size: int) -> list[ApiCase]:
        sig, new = self._signature(spec, size)
        cases = [self.rulegen.case(sig) for _ in range(size)]
        if new:
            self.costs.first_ids.add(cases[0].id)
        return cases

    def _signature(self, spec: LibSpec, group: int) -> tuple[Signature, bool]:
        """A new signature, or a pooled one with a fresh value profile; and which."""
        pool = self.pools.setdefault(spec.api, [])
        if self._wants_new(pool, group):
            drawn = self.rulegen.params(spec)
            sig = self.rulegen.signature(spec, self.counterparts.pick(spec, drawn[2], self.rng),
                                         own=spec.library in self.libraries, drawn=drawn)
            self._keep(pool, sig)
            return sig, True
        sig = pool[int(self.rng.integers(len(pool)))]
        return replace(sig, profile=self.rulegen.profile(spec)), False

    def _wants_new(self, pool: list[Any], group: int) -> bool:
        """Whether a group draws a new signature rather than one of ``pool``."""
        if self.fixed_signatures:
            return True
        return len(pool) < POOL_MIN or self.rng.random() < self.costs.new_signature_p(group)

    def _keep(self, pool: list[Any], item: Any) -> None:
        """Add a new signature to a pool, replacing a random one once it is full."""
        if len(pool) < POOL_MAX:
            pool.append(item)
        else:
            pool[int(self.rng.integers(len(pool)))] = item

    def _violate(self, spec: LibSpec, size: int) -> list[Any]:
        """Violate-mode draws (one signature) breaking a constraint the library vouches
        for: type bounds (rank, dtype list, range) partly come from prose and can be
        narrower than what the library accepts, so only trusted constraints are broken."""
        violate = self._violate_target(spec)
        if violate is None:
            return []
        target, texts = violate
        draws = self.generator.violate_group(target, size, bounds=False, only=texts)
        if draws:
            key = f"{spec.api}: {draws[0].violated}"
            self.violations[key] = self.violations.get(key, 0) + len(draws)
        return draws

    def _break_rank(self, spec: LibSpec, size: int) -> list[Any]:
        """Edge draws with one tensor's rank outside its spec's bound, every constraint
        still holding. Rank bounds partly come from prose (a library may accept more), so
        these are edge inputs, not violate-mode ones: nobody judges their acceptance,
        but a library that aborts on a rank it does not support (a failed CHECK) is
        seen by the crash oracle."""
        from dlfuzz.engines.api.libgen import rank_bounds

        texts = rank_bounds(spec)
        if not texts:
            return []
        draws = self.generator.violate_group(spec, size, bounds=True, only=texts)
        return [replace(d, violated="", edge=f"rank:{d.violated.partition('.ndims')[0]}")
                for d in draws]

    def _weak(self, api: str) -> frozenset[str]:
        """Constraints learned in this campaign from fewer than ``MIN_REJECTIONS`` cases."""
        return frozenset(t for t in self.learned.get(api, ())
                         if self.rejections.get((api, t), 0) < MIN_REJECTIONS)

    @staticmethod
    def _violate_spec(spec: LibSpec, weak: frozenset[str] = frozenset()
                      ) -> tuple[LibSpec, frozenset[str]] | None:
        """The spec violate mode works on (every constraint must still hold but the one
        broken; ranges of the parameters trusted constraints name are opened, so that
        ``not (p < 0 or p > 1)`` can be broken with p drawn in [0, 1]) and the texts of
        the constraints it may break."""
        trusted = tuple(c for c in spec.constraints
                        if c.source in VIOLATE_SOURCES and c.text not in weak)
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

    def counters(self) -> Mapping[str, int]:
        """Gradient cases queued and run, their findings, and oversized cases dropped."""
        counts = dict(self.gradients.counts) if self.gradients is not None else {}
        if self.oversized:
            counts["oversized_cases_dropped"] = self.oversized
        return counts

    def is_deterministic(self, case: ApiCase) -> bool:
        """Whether the case's API gives the same bits for the same input (not dropout)."""
        spec = self.specs.get(case.api)
        return spec is not None and not spec.random

    def broken_constraints(self, case: ApiCase) -> list[str] | None:
        """The constraints of its spec a case breaks (the boundary oracle's check), less
        those it breaks only through a parameter already out of its own range: a
        relation that names a parameter whose constraint on it alone is broken
        (``dropout``'s ``training == False or 0 <= p <= 1`` beside ``0 <= p <= 1``).
        Acceptance then shows the missing check of that parameter, which its own
        constraint names; left ambiguous, an accepted ``p = -0.001`` was judged by
        nobody."""
        from dlfuzz.engines.api.libgen import values_of

        spec = self.specs.get(case.api)
        if spec is None:
            return None
        if spec.shapes and not spec.constraints:
            return []  # valid by its rule
        try:
            values = values_of(case, spec)
        except Exception:  # noqa: BLE001 - not one of ours: no verdict either way
            return None
        if any(not p.optional and p.name not in values for p in spec.params):
            return ["a required parameter is missing"]
        env = Env(_with_defaults(spec, values))
        broken = [c for c in spec.constraints if not holds(c, env)]
        alone = {name for c in broken if len(c.names) == 1 for name in c.names}
        return [c.text for c in broken if len(c.names) == 1 or not c.names & alone]

    def _case(self, spec: LibSpec, draw: Any) -> ApiCase:
        from dlfuzz.engines.api.libgen import to_case

        # A low-precision variant of a first signature (``_with_variants``) runs on its
        # own library alone, judged against the same library in float64; so does a
        # spread edge member with a signature of its own (``SPREAD_COST_S``).
        alone = draw.meta.get("variant") == "low" or draw.meta.get("alone")
        case = to_case(draw, [] if alone else self.counterparts.pick(spec, draw.values,
                                                                      self.rng))
        if len(self._draws) > 4096:
            self._draws.pop(next(iter(self._draws)))
        self._draws[case.id] = draw
        return case

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
            if text in learned:  # another case's rejection says it again
                self.rejections[(spec.api, text)] = self.rejections.get((spec.api, text), 0) + 1
                self._violate_specs.pop(spec.api, None)  # it may have become trusted
                continue
            if text in known:
                continue
            try:
                why = " ".join(f"{outcome.exc_type}: {outcome.message}".split())[:300]
                constraint = make(text, "error", spec.names, why=why)
            except UsageError:
                continue
            if all(holds(constraint, Env(_with_defaults(spec, v))) for v in ok_before):
                added.append(constraint)
                learned.append(text)
                self.rejections[(spec.api, text)] = 1
        if added:
            self.specs[spec.api] = replace(spec, constraints=spec.constraints + tuple(added))

    # ---- for the campaign, triage and reports ------------------------------------------
    def constraint_source(self, case: Any) -> str:
        """Where the constraint a violate-mode case breaks comes from (``provenance``):
        a constraint learned in this campaign says how many rejections gave it."""
        spec = self.specs.get(getattr(case, "api", ""))
        broken = str(getattr(case, "expect", "")).partition(":")[2]
        if spec is None or not broken:
            return ""
        for c in spec.constraints:
            if c.text == broken:
                count = self.rejections.get((spec.api, c.text), 0)
                if count:
                    c = replace(c, rejections=count)
                return provenance(c, spec.api, _shown_path(spec.source))
        return ""

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
        if spec.shapes:
            from dlfuzz.engines.api import rulegen

            cps = (self.counterparts.same_as(spec, like) if like is not None
                   else self.counterparts.first(spec))
            return rulegen.rebuild(spec, tensors, params, cps,
                                   own=spec.library in self.libraries)
        if like is None:
            raise ValueError("ApiEngine.rebuild needs the case to rebuild from (like=)")
        keep = set(dict(params)) | {p.name for p in spec.params if not p.optional}
        values = values_of(like.with_tensors(tuple(tensors)), spec)
        values = {k: v for k, v in values.items() if k in keep or _is_array_value(v)}
        return rebuild(spec, values, self.counterparts.same_as(spec, like), like.expect)

    def api_stats(self) -> dict[str, dict[str, float]]:
        return {n: row for n, row in self.summary().items() if row["tried"]
                or row["violate_tried"]}

    def load_api_stats(self, rows: dict[str, dict[str, float]]) -> None:
        for name, row in rows.items():
            stats = self.stats.get(name)
            if stats is None:
                continue
            for key in RESTORED:  # each counter keeps its type (int counts, float seconds)
                setattr(stats, key, type(getattr(stats, key))(row.get(key, 0)))
        # Visits in any mode are not stored: valid groups stand for them, so a resumed
        # campaign's coverage groups go on to the APIs least tried.
        self.picker.restore({n: s.groups for n, s in self.stats.items()})

    def summary(self) -> dict[str, dict[str, float]]:
        """Per API: cases, valid rate, yield, findings, crashes, energy (``schedule``),
        the constraints learned and the backward passes proposed (``backward``; at a point
        whose floating inputs hold both signs, ``backward_two_sided``) in this run."""
        queue = self.gradients
        return {n: {**s.row(), "learned": len(self.learned.get(n, ())),
                    "backward": queue.taken[n] if queue is not None else 0,
                    "backward_two_sided": queue.two_sided[n] if queue is not None else 0}
                for n, s in self.stats.items()}


def first_size(spec: LibSpec) -> int:
    """The least size of an API's first group: one ordinary member and every variant
    of ``FIRST_VARIANTS`` that applies in its ordinary half (``FIRST_ORDINARY``)."""
    if not corner_params(plan_of(spec)):
        return FIRST_SIZE
    return math.ceil((1 + len(FIRST_VARIANTS)) / FIRST_ORDINARY)


def _is_array_value(value: Any) -> bool:
    return isinstance(value, np.ndarray) or (
        isinstance(value, list) and bool(value) and all(isinstance(v, np.ndarray) for v in value))


def _shown_path(path: str) -> str:
    """A spec file as a report names it: relative to the dlfuzz source tree if inside."""
    if not path:
        return ""
    here = Path(__file__).resolve().parents[3]  # the folder holding the dlfuzz package
    try:
        return str(Path(path).resolve().relative_to(here))
    except ValueError:
        return path


def _with_defaults(spec: LibSpec, values: Mapping[str, Any]) -> dict[str, Any]:
    out = {p.name: p.default for p in spec.params if p.optional}
    out.update(values)
    return out


class NumpyApiEngine(ApiEngine):
    """``--engine numpy-api``: the engine over the numpy spec set (numpy-like functions
    with their torch, jax and tf counterparts), in larger signature groups."""

    name = "numpy-api"
    settings_class = NumpyApiEngineSettings  # the set's APIs are drawn by their rules

    def __init__(self, seed: int = 0, libraries: Sequence[str] = ("numpy", "torch", "jax", "tf"),
                 apis: Iterable[str] | None = None, group_size: tuple[int, int] = (8, 16),
                 signature_inputs: int = 0, gradients: bool = True, **options: Any) -> None:
        super().__init__(seed=seed, libraries=libraries, apis=apis, specs=load_set("numpy"),
                         group_size=group_size, signature_inputs=signature_inputs,
                         gradients=gradients, **options)
