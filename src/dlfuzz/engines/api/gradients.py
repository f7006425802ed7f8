"""Which API cases get their backward pass checked, and when (``--no-gradients`` off).

Differentiability shows only after the forward pass: a case qualifies once it ran on
some autodiff library that checks itself with a floating output (not TF.js alone, see
``cases.grad.checks_itself``), on finite, non-empty floating inputs
(float16 and bfloat16 ones are differentiated in float32) of a deterministic API, as
a valid input or an edge input whose floating inputs stay ordinary (``EDGES``; not a
violate-mode one), without a finding of its own, and small enough for finite
differences to stay cheap. A qualifying case is queued as a ``GradCase`` with a
probability that falls with the gradient cases its API already had (every API gets its
first ones soon; a busy API keeps a floor), and later batches carry ``SHARE`` of
gradient cases, plus up to ``FIRST_SHARE`` more for APIs that never had one. Points
whose floating inputs hold both signs are preferred (``ONE_SIDED``): an API's waiting
first case gives way to such a one, and a one-sided backward pass counts half when the
least served APIs are picked.

Documented conventions of the libraries' gradients (``data/gradient_conventions.json``)
shape the case: an input the API reads one triangle of is made symmetric (or
triangular) and the checks' direction kept so; APIs with an argument that changes the
gradient by design (embedding's ``padding_idx``), with writes through repeated indices,
or with undefined losses on random inputs (CTC) get no gradient case. Outputs the spec
compares other than element by element (eigenvectors) get no cotangent.

All choices are functions of the case's id and of counts, never of measured times or of
draws of the engine's random streams: turning gradients on or off leaves the API cases
an engine proposes for a given feedback unchanged, and a seed gives the same campaign on
any machine.
"""

from __future__ import annotations

import functools
import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dlfuzz.cases import FLOAT_DTYPES, INT_DTYPES, ApiCase, Finding, GradCase, Outcome, Tensor
from dlfuzz.cases.grad import GRAD_DTYPES, checks_itself, differentiable_dtypes, structured
from dlfuzz.engines.api.libspecs import compare_modes
from dlfuzz.libraries import of_backend

CONVENTIONS = Path(__file__).resolve().parent / "data" / "gradient_conventions.json"

HALF = ("float16", "bfloat16")
# Gradient cases per API case proposed, carried over between batches. A gradient case
# costs about 12 API cases of the mix (docs/performance.md), so 2 % of the cases take
# about a fifth of the workers' time; in a campaign directed at a few cheap APIs, where
# nearly every case qualifies, a larger share would spend most of the time on backward
# passes (15 % did: 80 % of a cumsum campaign's time).
SHARE = 0.02
# Gradient cases waiting. Past it, the oldest case of the API with the most gradient
# cases proposed and waiting is dropped, never the one waiting case of an API that had
# no backward pass yet (the queue grows past QUEUE by at most one case per such API);
# a batch takes the APIs with the fewest proposed first, the oldest among equals.
# In a campaign whose APIs queue twice what the share runs (TF.js with TensorFlow: 450
# APIs), first-in-first-out left tf.tanh without one backward pass in 300 s. The length
# sets only how long a case waits, not how many are served (that is the share): there,
# 256 waiting cases meant about two minutes from a forward pass to its backward one,
# and 64 hold enough to choose the APIs never served among them.
QUEUE = 64
# First backward passes per API case proposed, on top of SHARE: a waiting case of an API
# that never had a backward pass is served from this credit before the share is spent.
# Most gradient bugs are API-wide (a wrong derivative formula), so an API's first
# backward pass is worth the most, and with SHARE alone a campaign of many APIs serves
# fewer cases than there are APIs: a 20,000-case TF.js + TensorFlow campaign ran 366
# backward passes for about 450 APIs and, on a slower machine, never served tf.tanh.
# The extra cost is bounded by one gradient case per API over the whole campaign.
FIRST_SHARE = 0.02
MAX_ELEMENTS = 4096  # input elements of a gradient case (finite differences: 5 forwards)
# Edge inputs (engines/api/edges.py) whose floating inputs stay ordinary numbers: an
# integer argument at its extremes, another rank, two equal scalars, a scalar outside
# its documented range. Not the empty, large or special-value ones.
EDGES = frozenset({"int-extremes", "rank", "equal-scalars", "outside-range"})
FLOOR = 0.1  # an API's queueing probability never falls below this
HALF_LIFE = 4  # gradient cases after which an API's probability has halved
# What a backward pass whose floating inputs keep one sign counts for, against 1 for one
# with negative and positive elements, when a batch picks the least served APIs: many
# derivative formulas branch on the sign of the input (relu, abs, where, a wrong formula
# only where the output is negative), and a one-sided point checks one branch. About three
# in ten of tf.tanh's non-empty inputs have no negative element (most of them one or two
# elements): with one or two backward passes per API, a TF.js + TensorFlow campaign in
# CI missed a tanh backward planted wrong where the output is negative (most likely so;
# what its tf.tanh passes got was not recorded).
ONE_SIDED = 0.5


class GradientQueue:
    """Gradient cases derived from the feedback of API cases, waiting to be proposed."""

    def __init__(self) -> None:
        self.waiting: list[GradCase] = []  # in the order queued
        self.queued: Counter[str] = Counter()  # per API: gradient cases queued so far
        self.taken: Counter[str] = Counter()  # per API: gradient cases proposed so far
        self.two_sided: Counter[str] = Counter()  # per API: proposed at a point of both signs
        self.counts: Counter[str] = Counter()
        self.credit = 0.0  # gradient cases owed to the batches so far (SHARE per case)
        self.first_credit = 0.0  # first backward passes owed (FIRST_SHARE per case)

    def offer(self, case: ApiCase, outcomes: Mapping[str, Outcome],
              findings: Sequence[Finding], deterministic: bool) -> None:
        """Queue the backward pass of ``case`` if it qualifies (see the module doc)."""
        if findings or not deterministic or not _ordinary(case.expect):
            return
        if any(t.dtype in HALF for t in case.tensors):
            # Half inputs are differentiated in float32 (exact: every half value is a
            # float32 one), where finite differences can judge the result.
            case = case.with_tensors(tuple(
                Tensor.from_numpy(t.to_numpy().astype(np.float32)) if t.dtype in HALF else t
                for t in case.tensors))
        if not differentiable_dtypes(case.tensors):
            return
        if any(t.size == 0 for t in case.tensors if t.dtype in GRAD_DTYPES):
            return
        convention = conventions().get(case.api, {})
        if convention.get("skip") or set(convention.get("unless_params", ())) & {
                k for k, _ in case.params}:
            return
        if convention.get("unique_integers") and any(
                t.dtype in INT_DTYPES and len(np.unique(t.to_numpy())) < t.size
                for t in case.tensors):
            return
        if sum(t.size for t in case.tensors) > MAX_ELEMENTS:
            return
        if not any(_differentiable_outcome(b, o) for b, o in outcomes.items()):
            return
        if _rejected_by_its_library(case, outcomes):
            return
        for t in case.tensors:
            if t.dtype in GRAD_DTYPES and not np.all(np.isfinite(t.to_numpy())):
                return
        token = int(case.id[:8], 16)
        p = max(FLOOR, 0.5 ** (self.queued[case.api] / HALF_LIFE))
        if (token % 10_000) / 10_000 >= p:
            return
        structure = _structure(convention, dict(case.params), len(case.tensors))
        if structure:
            case = case.with_tensors(tuple(
                Tensor.from_numpy(structured(t.to_numpy(), dict(structure)[i]))
                if i in dict(structure) else t for i, t in enumerate(case.tensors)))
        self.counts["gradient_apis_queued"] += not self.queued[case.api]
        self.queued[case.api] += 1
        self.counts["gradient_cases_queued"] += 1
        grad = GradCase(case, token, _still(case.api, outcomes), structure)
        if not self.taken[case.api] and _both_signs(case):
            # An API's first backward pass at a point with both signs rather than one:
            # the newcomer takes the place of its one-sided waiting case.
            sided = next((k for k, c in enumerate(self.waiting)
                          if c.api == case.api and not _both_signs(c.base)), None)
            if sided is not None:
                self.waiting[sided] = grad
                self.counts["gradient_cases_dropped"] += 1
                return
        self.waiting.append(grad)
        if len(self.waiting) > QUEUE:
            # The oldest case of the API with the most cases served and waiting goes: an
            # API that never had a backward pass keeps its one waiting case, while
            # one that queued five from a group of sixteen loses one of those. When
            # every waiting case is such a single, none goes: dropping one would cost
            # its API its first backward pass until a later visit (with a bounded queue,
            # about 450 APIs arriving faster than the shares served them, a TF.js +
            # TensorFlow campaign of 20,000 cases served 213 and not tf.tanh).
            waiting = Counter(c.api for c in self.waiting)
            spare = [k for k, c in enumerate(self.waiting)
                     if self.taken[c.api] or waiting[c.api] > 1]
            if spare:
                drop = max(spare, key=lambda k: (
                    self.taken[self.waiting[k].api] + waiting[self.waiting[k].api], -k))
                del self.waiting[drop]
                self.counts["gradient_cases_dropped"] += 1

    def take(self, n: int) -> list[GradCase]:
        """The gradient cases a batch of ``n`` cases carries: first, up to
        ``FIRST_SHARE`` of ``n`` cases of APIs never served (the oldest first); then
        ``SHARE`` of ``n``, the APIs with the fewest gradient cases proposed first, the
        oldest among equals. Fractions carry to the next batch; a share the queue cannot
        fill is not saved up."""
        self.first_credit = min(self.first_credit + FIRST_SHARE * n,
                                max(1.0, FIRST_SHARE * n))
        self.credit = min(self.credit + SHARE * n, max(1.0, SHARE * n))
        out = []
        while self.first_credit >= 1:
            fresh = next((j for j, c in enumerate(self.waiting)
                          if self.taken[c.api] == 0), None)
            if fresh is None:
                break
            out.append(self._serve(fresh))
            self.first_credit -= 1
        k = min(len(self.waiting), math.floor(self.credit))
        self.credit -= k
        for _ in range(k):
            out.append(self._serve(min(range(len(self.waiting)),
                                       key=lambda j: (self._served(self.waiting[j].api), j))))
        return out

    def _serve(self, index: int) -> GradCase:
        case = self.waiting.pop(index)
        if not self.taken[case.api]:
            self.counts["gradient_apis_served"] += 1
        self.taken[case.api] += 1
        self.two_sided[case.api] += _both_signs(case.base)
        return case

    def _served(self, api: str) -> float:
        """The API's backward passes proposed, a one-sided one counting ``ONE_SIDED``."""
        return self.two_sided[api] + ONE_SIDED * (self.taken[api] - self.two_sided[api])


@functools.lru_cache(maxsize=1)
def conventions() -> dict[str, dict[str, Any]]:
    """API -> its documented gradient convention (``data/gradient_conventions.json``)."""
    table: dict[str, dict[str, Any]] = json.loads(CONVENTIONS.read_text())["apis"]
    return table


def _structure(convention: Mapping[str, Any], params: Mapping[str, Any], n: int
               ) -> tuple[tuple[int, str], ...]:
    """(input index, ``cases.grad.STRUCTURES`` entry) per structured input; the triangle
    follows the call's ``upper``, ``lower`` or ``UPLO`` argument (lower by default)."""
    upper = bool(params.get("upper", False)) or params.get("lower", True) is False or \
        str(params.get("UPLO", "L")).upper() == "U"
    side = "upper" if upper else "lower"
    out = []
    for key, kind in convention.get("structure", {}).items():
        index = int(key)
        if index < n:
            out.append((index, f"symmetric-{side}" if kind == "symmetric" else side))
    return tuple(out)


def _both_signs(case: ApiCase) -> bool:
    """Whether the case's floating inputs hold a negative and a positive element."""
    signs = 0
    for t in case.tensors:
        if t.dtype in GRAD_DTYPES:
            values = t.to_numpy()
            signs |= int(bool((values < 0).any())) | 2 * int(bool((values > 0).any()))
    return signs == 3


def _still(api: str, outcomes: Mapping[str, Outcome]) -> tuple[int, ...]:
    """Outputs compared other than element by element (``compare`` modes of the spec:
    eigenvectors, sets, sorted values) get no cotangent: their order or sign is free,
    so a gradient through them is a convention. The modes apply to calls that returned
    more outputs than the highest index named (``oracles/canonical.py``)."""
    modes = compare_modes(api)
    if not modes:
        return ()
    returned = max((len(o.outputs) for o in outcomes.values() if o.ok), default=0)
    return tuple(sorted(modes)) if returned > max(modes) else ()


def _ordinary(expect: str) -> bool:
    kind, _, rest = expect.partition(":")
    return kind == "valid" or (kind == "edge" and rest.partition(":")[0] in EDGES)


def _rejected_by_its_library(case: ApiCase, outcomes: Mapping[str, Outcome]) -> bool:
    """Whether the API's own library ran the input and none of its backends returned (a
    compiled mode alone failing, XLA lacking a kernel, says nothing of the domain): an
    input outside the API's domain. A counterpart that still computes there is on ground nobody
    defined (``tf.gather_nd`` with an index past the end, which TF and torch reject: the
    JAX composition clamps it going forward and drops it going backward, JAX's documented
    out-of-bounds behaviour, and was filed as a wrong reverse-mode derivative)."""
    own = {lib for lib, call in case.calls if call.target == case.api}
    ran = [outcome.ok for backend, outcome in outcomes.items()
           if (library := of_backend(backend)) is not None and library.name in own]
    return bool(ran) and not any(ran)


def _differentiable_outcome(backend: str, outcome: Outcome) -> bool:
    record = of_backend(backend)
    return (record is not None and checks_itself(record.name) and outcome.ok
            and any(t.dtype in FLOAT_DTYPES for t in outcome.outputs))
