"""The numeric comparison the oracles rest on: NaN, Inf, ints, complex, sensitivity."""

import ml_dtypes
import numpy as np

from dlfuzz.oracles.compare import deviation, round_to
from dlfuzz.oracles.tolerances import ASSERT_CLOSE, EXACT, d_mad, max_abs, mean_abs, tolerance_for

F32 = ASSERT_CLOSE["float32"]


def test_equal_values_and_nan_positions_agree():
    a = np.array([1.0, np.nan, np.inf, -np.inf, -0.0], dtype=np.float32)
    assert deviation(a, a.copy(), F32).ratio == 0.0


def test_nan_where_finite_is_flagged_non_finite():
    d = deviation(np.array([1.0, np.nan], np.float32), np.array([1.0, 2.0], np.float32), F32)
    assert d.ratio == float("inf") and d.bad == 1 and d.non_finite


def test_infinities_of_opposite_sign_differ():
    d = deviation(np.array([np.inf]), np.array([-np.inf]), F32)
    assert d.bad == 1


def test_within_and_beyond_tolerance():
    e = np.array([100.0], np.float64)
    assert deviation(np.array([100.0001], np.float32), e, F32).ratio < 1.0
    assert deviation(np.array([100.01], np.float32), e, F32).ratio > 1.0


def test_sensitivity_widens_only_where_given():
    a, e = np.array([1.0, 1.0]), np.array([1.5, 1.5])
    d = deviation(a, e, F32, sensitivity=np.array([1.0, 0.0]))
    assert d.bad == 1


def test_integers_compare_exactly():
    assert deviation(np.array([1, 2], np.int64), np.array([1, 3], np.int32), EXACT).bad == 1
    assert tolerance_for("int8") == EXACT


def test_complex_and_shape_mismatch():
    a = np.array([1 + 1j], np.complex64)
    assert deviation(a, a.astype(np.complex128), tolerance_for("complex64")).ratio == 0.0
    assert deviation(np.zeros(3), np.zeros(4), F32).shape_mismatch


def test_round_to_follows_the_output_dtype():
    r = round_to(np.array([1e6, 1.0 + 2**-12]), np.zeros(2, np.float16))
    assert np.isinf(r[0]) and r[1] == 1.0
    b = round_to(np.array([1.0 + 2**-10]), np.zeros(1, ml_dtypes.bfloat16))
    assert b.dtype == ml_dtypes.bfloat16


def test_paper_metrics():
    a, b = np.array([1.0, 2.0]), np.array([1.5, 2.0])
    assert max_abs(a, b) == 0.5 and mean_abs(a, b) == 0.25
    assert d_mad(a, a, a) == 0.0 and d_mad(b, a, a) == 1.0


def test_epsilon_of_every_floating_dtype():
    from dlfuzz.oracles.tolerances import epsilon

    assert epsilon("bfloat16") == 2.0**-7 and epsilon("float16") == 2.0**-10
    assert epsilon("float32") == 2.0**-23 and epsilon("complex64") == 2.0**-23
    assert epsilon("int32") == 0.0


def test_overflow_of_the_output_dtype_is_detected():
    from dlfuzz.oracles.reference import _overflows

    ref = np.array([1.0, -278784.0, 0.0])
    assert _overflows(ref, round_to(ref, np.zeros(3, np.float16)))
    assert not _overflows(ref, round_to(ref, np.zeros(3, np.float32)))
    assert not _overflows(np.array([np.inf]), np.array([np.inf], np.float16))
