"""When a -0 among the inputs makes a disagreement a special-value one."""

import numpy as np

from dlfuzz.cases import ApiCase, Call, Ref, Tensor
from dlfuzz.oracles.special import special_phrase

F32 = np.float32


def _case(x: np.ndarray) -> ApiCase:
    return ApiCase("torch.max_pool1d", (Tensor.from_numpy(x),),
                   (("torch", Call("torch.max_pool1d", (Ref(0),))),))


def test_a_finite_wrong_value_where_zero_is_expected_is_not_about_the_sign_of_zero() -> None:
    # ONNX Runtime's Pad+MaxPool fold gave -1 where 0 is right; the input happened to
    # hold a -0 elsewhere. The sign of zero plays no part: a wrong result, not special.
    case = _case(np.array([0.0, -0.0, -1.0, 2.0], F32))
    actual = np.array([-1.0, 2.0], F32)
    expected = np.array([0.0, 2.0])
    assert special_phrase(case, (actual,), (expected,), (np.array([True, False]),)) == ""


def test_a_minus_zero_input_counts_when_zeros_or_infinities_disagree() -> None:
    case = _case(np.array([-0.0, 1.0], F32))
    mask = np.array([True, False])
    # 1/x at -0: -inf where the reference says +inf, or -0 against +0
    assert special_phrase(case, (np.array([-np.inf, 1.0], F32),),
                          (np.array([np.inf, 1.0]),), (mask,)).startswith("inputs hold -0")
    assert special_phrase(case, (np.array([-0.0, 1.0], F32),),
                          (np.array([0.0, 1.0]),), (mask,)) == "inputs hold -0"


def test_inputs_at_the_top_of_the_range_make_a_special_value_disagreement() -> None:
    """``jnp.linalg.tensorsolve(3.4e38, -3.4e38)`` is -0 in jax, not -1: the reciprocal
    of 3.4e38 is subnormal and XLA flushes it. Inputs beyond 1/tiny are the edge of the
    range, not the ordinary inputs a wrong-result class speaks of."""
    top = float(np.finfo(F32).max)
    case = _case(np.array([top, -top], F32))
    mask = np.array([True])
    phrase = special_phrase(case, (np.array([-0.0], F32),), (np.array([-1.0]),), (mask,))
    assert "top of their dtype's range" in phrase
    # an ordinary large value (1e30 in float32) is not the edge: a wrong result stays one
    case = _case(np.array([1e30, -1e30], F32))
    assert special_phrase(case, (np.array([-0.0], F32),), (np.array([-1.0]),), (mask,)) == ""
    # float16's edge is much lower: 2e4 is beyond 1/tiny (16384)
    case = _case(np.array([2e4, 1.0], np.float16))
    assert special_phrase(case, (np.array([0.5], np.float16),), (np.array([1.0]),),
                          (mask,)) != ""
