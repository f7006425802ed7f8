"""What a new signature costs the campaign's backends, measured from feedback.

A signature (shapes, dtypes, static arguments) costs a compilation in JAX (even op by
op), jax.jit, torch.compile and XLA: 50 ms to seconds; in numpy or eager torch it costs
nothing. The API engine marks each group's first case; the slowest backend's time on
those against every other case (exponential averages) gives what a new signature costs,
and from it how large a group grows (``grown``), how often a rule API draws a new
signature rather than a pooled one (``new_signature_p``: compilation kept at about
``COMPILE_SHARE`` of the time, never less often than ``NEW_SIGNATURE_MIN``), and, per
library from its own backends' times, whether a first group's edge members may each take
a signature of their own (``of_library``).
"""

from __future__ import annotations

from collections.abc import Mapping

from dlfuzz.cases import ApiCase, Outcome
from dlfuzz.libraries import name_of_backend

# Without an explicit group size, groups of per-library APIs grow with what a new
# signature costs: a group gets as many cases as the measured first-case / later-case
# cost ratio (the time of compiling a signature over running it again; compilation is
# then about half of the time, ``COMPILE_SHARE``), never fewer than the drawn base size,
# at most GROUP_MAX. In JAX eager a new signature costs ~100 ms and a later case ~1 ms:
# groups of 4-8 left 90% of the time in compilation (42 cases/s on numpy+torch+jax+tf,
# benchmarks/throughput.py); numpy and torch eager pay nothing for a new signature and
# keep small groups. Each API still gets the same share of cases (its energy picks
# groups): only how many come per compilation changes. The cap is a trade: 64 gave 190
# cases/s against 75 for 16, but a quarter of the signatures per input (a conv2d bug
# needing stride 2 with dilation 2 was missed within 1,200 inputs in one run of three).
# Rule APIs (shape rules: the numpy set) keep their base sizes: their bugs are
# shape-dependent and their signature pools already adapt reuse to the cost
# (``new_signature_p``); grown groups there left a planted cumsum bug needing an axis
# of 7 unconfirmed for minutes.
GROUP_MAX = 16
NEW_SIGNATURE_MIN = 0.1
COMPILE_SHARE = 0.5
COST_EMA = 0.05  # smoothing of the measured first-case and later-case costs


class SignatureCosts:
    """The measured cost of a new signature; ``adaptive``: groups grow with it (without
    an explicit group size)."""

    def __init__(self, adaptive: bool = True) -> None:
        self.adaptive = adaptive
        self.first_ids: set[str] = set()  # ids of first cases of a new signature
        # (first-case, later-case) EMAs of the API's own library's time, per library
        self.own: dict[str, list[float]] = {}
        self.first = 0.0  # EMA of the slowest backend's time on a first case
        self.later = 0.0  # EMA of the same for every other case

    def grown(self, size: int) -> int:
        """A group's size given its drawn base size: the measured compile-cost ratio,
        within [size, GROUP_MAX] (``size`` itself with an explicit group size)."""
        if not self.adaptive or self.later <= 0:
            return size
        ratio = self.first / self.later
        return int(max(size, min(GROUP_MAX, ratio)))

    def new_signature_p(self, group: int) -> float:
        """How often to draw a new signature, from the measured compile overhead."""
        extra = self.first - self.later
        if extra <= 0:
            return 1.0
        # compile share = p * extra / (p * extra + group * later) <= COMPILE_SHARE
        p = COMPILE_SHARE * group * max(self.later, 1e-6) / ((1 - COMPILE_SHARE) * extra)
        return float(min(1.0, max(NEW_SIGNATURE_MIN, p)))

    def of_library(self, library: str) -> float:
        """What a new signature costs ``library`` (seconds): its own backends' measured
        time on a group's first case over its later ones; 0 before it is measured."""
        first, later = self.own.get(library, (0.0, 0.0))
        return max(0.0, first - later)

    def measure(self, case: ApiCase, outcomes: Mapping[str, Outcome]) -> None:
        """The cost of a new signature: a group's first case against its later ones."""
        cost = max((o.duration_s for o in outcomes.values()), default=0.0)
        if case.calls:
            library = case.calls[0][0]
            own = max((o.duration_s for b, o in outcomes.items()
                       if name_of_backend(b) == library), default=cost)
            ema = self.own.setdefault(library, [0.0, 0.0])
            k = 0 if case.id in self.first_ids else 1
            ema[k] = own if not ema[k] else ema[k] + COST_EMA * (own - ema[k])
        if case.id in self.first_ids:
            self.first_ids.discard(case.id)
            self.first += COST_EMA * (cost - self.first)
        else:
            self.later += COST_EMA * (cost - self.later)
