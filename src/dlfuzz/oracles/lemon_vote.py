"""LEMON's inconsistency measure and vote: D_MAD of library pairs and the library they share.

The model engine's guidance sums D_MAD into its ACC signal; the differential oracle puts
LEMON's verdict beside its own on every numeric model finding (``lemon_details``). The
constants are LEMON's (shared/papers/NOTES.md) and live in ``LemonSettings``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from dlfuzz.cases import Outcome


@dataclass(frozen=True)
class LemonSettings:
    threshold: float = 0.4  # T: a library pair with D_MAD above it is inconsistent
    mh_p: float = 0.0  # acceptance base; 0 means 1 / number of rules (LEMON's code)
    pool_max: int = 51  # seed pool size
    degenerate_share: float = 0.95  # same argmax on this share of inputs everywhere
    duplicate_dmad: float = 0.005  # inconsistencies closer than this are one
    localize_eps: float = 1e-7  # the + 1e-7 of R_a


def d_mad(theta_j: float, theta_k: float) -> float:
    """|theta_j - theta_k| / (theta_j + theta_k), 0 when both are 0."""
    total = theta_j + theta_k
    return 0.0 if total == 0 else abs(theta_j - theta_k) / total


def theta(output: np.ndarray, reference: np.ndarray) -> float:
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(output.astype(np.float64) - reference.astype(np.float64))
    value = float(np.mean(diff)) if diff.size else 0.0
    return value if np.isfinite(value) else float("inf")


def pair_dmads(outputs: Mapping[str, np.ndarray], reference: np.ndarray | None = None,
               floor: float | None = None) -> dict[tuple[str, str], float]:
    """D_MAD of every pair of backends on one input (``g`` = median when not given).

    Every theta gets ``floor`` added (default: the output dtype's absolute tolerance).
    LEMON measured distances to ground-truth labels, which are large for every library;
    against a reference output two correct libraries are at rounding-noise distance
    (1e-8 vs 3e-8 would be a D_MAD of 0.5), and the floor keeps noise from voting.
    """
    if floor is None:
        from dlfuzz.oracles.tolerances import tolerance_for

        first = next(iter(outputs.values()), None)
        floor = tolerance_for(first.dtype.name).atol if first is not None else 0.0
    names = sorted(outputs)
    if len(names) < 2:
        return {}
    if reference is None:
        stack = np.stack([outputs[n].astype(np.float64) for n in names])
        reference = np.median(stack, axis=0)
    thetas = {n: theta(outputs[n], reference) + floor for n in names}
    out = {}
    for a, b in combinations(names, 2):
        ta, tb = thetas[a], thetas[b]
        out[(a, b)] = 1.0 if (np.isinf(ta) != np.isinf(tb)) else (
            0.0 if np.isinf(ta) else d_mad(ta, tb))
    return out


def lemon_vote(dmads: Mapping[tuple[str, str], float], threshold: float) -> str:
    """The library shared by every pair over the threshold ("" when none or ambiguous)."""
    over = [pair for pair, v in dmads.items() if v > threshold]
    if not over:
        return ""
    shared = set(over[0])
    for pair in over[1:]:
        shared &= set(pair)
    return next(iter(shared)) if len(shared) == 1 else ""


def lemon_details(outcomes: dict[str, Outcome], reference_outputs: Sequence[np.ndarray]
                  ) -> tuple[tuple[str, Any], ...]:
    """LEMON's own verdict beside ours: D_MAD of every library pair against the reference
    output, and the library shared by the pairs over LEMON's threshold T."""
    firsts = {b: o.outputs[0].to_numpy() for b, o in outcomes.items()
              if o.ok and o.outputs and reference_outputs
              and o.outputs[0].shape == reference_outputs[0].shape}
    if len(firsts) < 2 or not reference_outputs:
        return ()
    dmads = pair_dmads(firsts, reference_outputs[0])
    threshold = LemonSettings().threshold
    worst = max(dmads.values(), default=0.0)
    return (("lemon_max_dmad", round(worst, 4)), ("lemon_vote", lemon_vote(dmads, threshold)))
