"""Severity of a bug, from what happened (never from which API it was).

A maintainer triages by consequence: a crash or a wrong number on ordinary inputs first,
then results that differ only where IEEE special values or ill-conditioned inputs are
involved, then disagreements about status/shape/dtype, then validation gaps, then
performance. The oracles say what they saw (``Finding.symptom``) and, by the shared
detail keys, whether special values (``special_values``), an ill-conditioned input
(``ill_conditioned``) or a documented/order-dependent/re-implementation difference
(``demoted``) is involved; this module maps that to one class:

* ``crash``: the worker died (signal, abort), hung past the limit, or ran out of memory.
* ``wrong-result``: a numeric, NaN or gradient symptom on finite, valid, well-conditioned inputs,
  off the float64 reference beyond the dtype tolerance, and not demoted.
* ``special-value``: the numeric disagreement involves NaN/±Inf/overflow or an
  ill-conditioned input (IEEE-fixed deviations are still reported, in this class).
* ``inconsistency``: status, shape or dtype differs between libraries or modes,
  nondeterminism, and every demoted numeric finding (with or without special values).
* ``validation``: an invalid input accepted (boundary), or a valid input rejected.
* ``performance``: time or memory that keeps growing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dlfuzz.cases.core import COMPLEX_DTYPES, FLOAT_DTYPES

# The order findings and reports list bugs in (most important first).
SEVERITIES: tuple[str, ...] = ("crash", "wrong-result", "special-value", "inconsistency",
                               "validation", "performance")

# Symptoms whose class does not depend on the details.
_BY_SYMPTOM = {
    "crash": "crash", "timeout": "crash", "oom": "crash",
    "boundary": "validation",
    "nondeterministic": "inconsistency",
    "shape": "inconsistency", "dtype": "inconsistency",
    "performance": "performance",
}
# A wrong gradient is a wrong number too (issue: the precision rules apply to it).
_NUMERIC = ("numeric", "nan", "gradient")
# Status findings (``details["kind"]``) that mean "a valid input was rejected"; every
# other status finding (mode, internal, cross-backend) is an inconsistency.
_REJECTED_VALID = ("valid program raised", "rejected valid")


def rank(severity: str) -> int:
    """Sort key: crash first, unknown classes last."""
    return SEVERITIES.index(severity) if severity in SEVERITIES else len(SEVERITIES)


def most_severe(*severities: str) -> str:
    return min((s for s in severities if s), key=rank, default="inconsistency")


def severity_of(symptom: str, details: Mapping[str, Any], case: Any = None) -> str:
    """The class of a finding with ``symptom`` and ``details`` (see the module doc).

    ``case`` is looked at only when the oracle did not say whether special values are
    involved (a finding stored before the ``special_values`` key existed): then inputs
    holding NaN or ±Inf count as special values.
    """
    fixed = _BY_SYMPTOM.get(symptom)
    if fixed is not None:
        # A demoted finding is never a crash (nor a wrong result, below).
        return "inconsistency" if fixed == "crash" and details.get("demoted") else fixed
    if symptom == "status":
        kind = str(details.get("kind", ""))
        return "validation" if kind in _REJECTED_VALID else "inconsistency"
    if symptom not in _NUMERIC or details.get("demoted"):
        # Demoted: dlfuzz itself does not hold the blamed library wrong (a documented
        # difference, an order-dependent NaN/Inf, only its own re-implementation or a
        # NaN of the reference's own arithmetic disagrees), so it ranks below the
        # special-value deviations a standard decides, special values or not.
        return "inconsistency"
    special = details.get("special_values")
    if special is None and case is not None:
        special = "inputs hold nan or inf" if inputs_hold_specials(case) else ""
    if special or details.get("ill_conditioned"):
        return "special-value"
    return "wrong-result"


def finding_severity(finding: Any, case: Any = None) -> str:
    """``severity_of`` for a ``Finding`` (or anything with ``symptom`` and ``details``)."""
    return severity_of(finding.symptom, dict(finding.details), case)


def inputs_hold_specials(case: Any) -> bool:
    """Whether any floating or complex input (or weight) of ``case`` holds NaN or ±Inf."""
    tensors = list(getattr(case, "tensors", ()) or ())
    tensors += [t for _, t in getattr(case, "weights", ()) or ()]
    for t in tensors:
        name = getattr(t, "dtype", "")
        if name not in FLOAT_DTYPES and name not in COMPLEX_DTYPES:
            continue
        arr = t.to_numpy()
        if name in FLOAT_DTYPES:
            arr = arr.astype(np.float64)  # bfloat16 has no isfinite of its own
        if arr.size and not np.all(np.isfinite(arr)):
            return True
    return False
