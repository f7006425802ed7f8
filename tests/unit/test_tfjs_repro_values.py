"""Expected values written into TF.js reproducers compare equal to what the script reads."""

import numpy as np

from dlfuzz.backends.tfjs.repro import _flat, js_literal


def test_bool_expectations_are_numbers() -> None:
    # The script reads outputs through Number(); a literal `false` would never equal 0,
    # so the reproducer of a backend that is right (tf.any of an empty tensor = false)
    # reported "got 0, expected false".
    assert js_literal(_flat(np.array(False))) == "[0]"
    assert js_literal(_flat(np.array([[True, False]]))) == "[1, 0]"


def test_other_expectations_keep_their_values() -> None:
    assert js_literal(_flat(np.array([1.5, np.nan], dtype=np.float32))) == "[1.5, NaN]"
    assert _flat(np.array([1 + 2j], dtype=np.complex64)) == [1.0, 2.0]
