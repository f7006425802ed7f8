"""The determinism oracle's bit comparison (the re-run itself is in tests/e2e)."""

import numpy as np

from dlfuzz.oracles.determinism import _max_difference, same_bits


def test_same_bits_treats_nan_as_equal_and_sees_one_ulp() -> None:
    a = np.array([1.0, np.nan, 3.0], dtype=np.float32)
    assert same_bits([a], [a.copy()])
    b = a.copy()
    b[2] = np.nextafter(np.float32(3.0), np.float32(4.0))
    assert not same_bits([a], [b])
    assert _max_difference([a], [b]) != "0"


def test_same_bits_checks_dtype_shape_and_count() -> None:
    a = np.arange(6, dtype=np.int32)
    assert not same_bits([a], [a.astype(np.int64)])
    assert not same_bits([a], [a.reshape(2, 3)])
    assert not same_bits([a], [a, a])
    assert same_bits([a, a.astype(bool)], [a.copy(), a.astype(bool)])


def test_max_difference_of_scalar_outputs() -> None:
    # A 0-d output (a reduction to a scalar) that differs between two runs: the message
    # must name the difference, not stop the campaign with an internal error.
    a, b = np.array(25472, dtype=np.int32), np.array(25456, dtype=np.int32)
    assert not same_bits([a], [b])
    assert _max_difference([a], [b]) == "16"
    assert _max_difference([np.array(np.nan)], [np.array(1.0)]) == "inf"
