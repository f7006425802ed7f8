"""Severity from what happened: each class from the symptoms and details oracles emit."""

from __future__ import annotations

import numpy as np
import pytest

from dlfuzz.cases import ApiCase, Call, Finding, Ref, Tensor
from dlfuzz.triage.severity import SEVERITIES, finding_severity, most_severe, severity_of


def case_of(*arrays: np.ndarray) -> ApiCase:
    return ApiCase("torch.exp", tuple(Tensor.from_numpy(a) for a in arrays),
                   (("torch", Call("torch.exp", (Ref(0),))),))


FINITE = case_of(np.array([1.0, 2.0], np.float32))
INF = case_of(np.array([1.0, np.inf], np.float32))


@pytest.mark.parametrize("symptom", ["crash", "timeout", "oom"])
def test_signals_hangs_and_oom_are_crashes(symptom: str) -> None:
    assert severity_of(symptom, {}) == "crash"


def test_finite_inputs_off_the_reference_are_a_wrong_result() -> None:
    assert severity_of("numeric", {"special_values": ""}, FINITE) == "wrong-result"
    # NaN out of finite inputs with a finite reference is a wrong result too.
    assert severity_of("nan", {"special_values": ""}, FINITE) == "wrong-result"


@pytest.mark.parametrize("details", [
    {"special_values": "inputs hold nan, -inf"},
    {"special_values": "reference holds inf"},
    {"special_values": "", "ill_conditioned": True, "condition_number": 1e12},
])
def test_special_values_or_ill_conditioning_make_a_special_value(details) -> None:
    assert severity_of("numeric", details, FINITE) == "special-value"
    assert severity_of("nan", details, FINITE) == "special-value"


@pytest.mark.parametrize("special", ["", "inputs hold -inf; reference holds nan"])
def test_a_demoted_numeric_finding_is_an_inconsistency(special) -> None:
    # e.g. tf floordiv(-inf, 1) = -inf where the float64 reference computes NaN
    for symptom in ("numeric", "nan"):
        sev = severity_of(symptom, {"special_values": special, "demoted": "only dlfuzz's "
                                    "counterpart disagrees"}, FINITE)
        assert sev == "inconsistency"


def test_a_finding_without_the_special_values_key_looks_at_the_inputs() -> None:
    # Stored by an earlier oracle: the inputs decide.
    assert severity_of("numeric", {}, INF) == "special-value"
    assert severity_of("numeric", {}, FINITE) == "wrong-result"
    # An explicit "" from the oracle wins over the inputs (it knows better).
    assert severity_of("numeric", {"special_values": ""}, INF) == "wrong-result"


@pytest.mark.parametrize(("symptom", "details", "expected"), [
    ("status", {"kind": "mode"}, "inconsistency"),
    ("status", {"kind": "internal"}, "inconsistency"),
    ("status", {"kind": "cross-backend"}, "inconsistency"),
    ("status", {"kind": "internal error"}, "inconsistency"),
    ("status", {"kind": "valid program raised"}, "validation"),
    ("shape", {}, "inconsistency"),
    ("nondeterministic", {}, "inconsistency"),
    ("boundary", {"constraint": "p <= 1"}, "validation"),
    ("performance", {}, "performance"),
])
def test_every_other_symptom_has_its_class(symptom, details, expected) -> None:
    assert severity_of(symptom, details) == expected


def test_the_class_never_depends_on_the_api() -> None:
    a = Finding("differential", "numeric", "torch.linalg.inv", "torch", "call", "m", "s", "c",
                (("special_values", ""),))
    b = Finding("differential", "numeric", "torch.exp", "torch", "call", "m", "s2", "c",
                (("special_values", ""),))
    assert finding_severity(a) == finding_severity(b) == "wrong-result"


def test_most_severe_follows_the_listing_order() -> None:
    assert SEVERITIES[:2] == ("crash", "wrong-result")
    assert most_severe("validation", "crash", "special-value") == "crash"
    assert most_severe("inconsistency", "special-value") == "special-value"


def test_a_demoted_finding_is_never_a_crash_or_a_wrong_result() -> None:
    demoted = {"demoted": "documented: XLA max/min NaN semantics", "special_values": ""}
    assert severity_of("crash", demoted) == "inconsistency"
    assert severity_of("numeric", demoted, FINITE) == "inconsistency"
