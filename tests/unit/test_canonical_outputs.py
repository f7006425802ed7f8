"""Unordered outputs compared as such (``oracles/canonical.py``), on plain arrays.

Eigenvalues in another order must agree, a truly different eigenvalue must not; sets
compare as sets; tie-broken indices are left out only where inputs tie; eigenvectors
compare by their residual, whatever their scaling or phase.
"""

from __future__ import annotations

import numpy as np

from dlfuzz.cases import ApiCase, Call, Ref, Tensor
from dlfuzz.engines.api.libspecs import compare_modes
from dlfuzz.oracles.canonical import canonical, eigen_residual_ok, has_ties, sort_values
from dlfuzz.oracles.compare import agree


def case_of(api: str, *arrays: np.ndarray) -> ApiCase:
    refs = tuple(Ref(i) for i in range(len(arrays)))
    return ApiCase(api, tuple(Tensor.from_numpy(a) for a in arrays),
                   (("numpy", Call("numpy.identity", refs)),))


def same(case: ApiCase, a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...]) -> bool:
    return agree(canonical(case, a), canonical(case, b))


EIGVALS = np.array([1.469 + 0.642j, 1.469 - 0.642j, -1.897 + 0j, -0.517 + 0j], np.complex64)


def test_spec_files_mark_the_unordered_outputs():
    assert compare_modes("torch.linalg.eigvals") == {0: "sorted"}
    assert compare_modes("torch.linalg.eig") == {0: "sorted", 1: "residual"}
    assert compare_modes("tensorflow.math.argmax") == {0: "skip-on-ties"}
    assert compare_modes("tensorflow.unique") == {0: "set", 1: "skip"}
    assert compare_modes("torch.sin") == {}


def test_eigenvalues_in_another_order_agree():
    case = case_of("torch.linalg.eigvals", np.eye(4, dtype=np.float32))
    shuffled = EIGVALS[[2, 0, 1, 3]]
    assert not agree((EIGVALS,), (shuffled,))  # element by element they differ
    assert same(case, (EIGVALS,), (shuffled,))


def test_a_conjugate_pair_whose_real_parts_differ_by_a_rounding_keeps_one_order():
    a = np.array([0.5 + 1e-7 + 2j, 0.5 - 2j, 3 + 0j], np.complex64)
    b = np.array([0.5 - 1e-7 - 2j, 3 + 0j, 0.5 + 2j], np.complex64)
    case = case_of("torch.linalg.eigvals", np.eye(3, dtype=np.float32))
    assert same(case, (a,), (b,))
    assert sort_values(a)[0].imag < 0 and sort_values(b)[0].imag < 0


def test_a_truly_different_eigenvalue_still_disagrees():
    case = case_of("torch.linalg.eigvals", np.eye(4, dtype=np.float32))
    other = EIGVALS.copy()
    other[3] = -0.6
    assert not same(case, (EIGVALS,), (other[[1, 0, 3, 2]],))
    conjugated = EIGVALS.copy()
    conjugated[2] = -1.897 + 0.1j  # same real parts, one imaginary part off
    assert not same(case, (EIGVALS,), (conjugated,))


def test_sets_compare_as_sets():
    x = np.array([3.0, 1.0, 3.0, 2.0], np.float32)
    case = case_of("tensorflow.unique", x)
    first_seen = (np.array([3.0, 1.0, 2.0], np.float32), np.array([0, 1, 0, 2], np.int32))
    ascending = (np.array([1.0, 2.0, 3.0], np.float32), np.array([2, 0, 2, 1], np.int32))
    assert same(case, first_seen, ascending)
    missing = (np.array([1.0, 3.0, 4.0], np.float32), np.array([2, 0, 2, 1], np.int32))
    assert not same(case, first_seen, missing)


def test_indices_are_not_compared_where_inputs_tie_and_are_where_they_do_not():
    tied = case_of("tensorflow.math.argmax", np.array([[1.0, 5.0, 5.0]], np.float32))
    assert has_ties(tied)
    assert same(tied, (np.array([1]),), (np.array([2]),))
    distinct = case_of("tensorflow.math.argmax", np.array([[1.0, 5.0, 4.0]], np.float32))
    assert not has_ties(distinct)
    assert not same(distinct, (np.array([1]),), (np.array([2]),))
    with_nan = case_of("tensorflow.math.argmax", np.array([[1.0, np.nan, 4.0]], np.float32))
    assert has_ties(with_nan)
    # bfloat16 too (numpy sees ml_dtypes' bfloat16 as kind "V"): else only the float64
    # reference run skipped the index output, and argmin of [nan, 0] became a shape bug.
    import ml_dtypes

    bf16 = case_of("numpy.argmin", np.array([np.nan, 0.0]).astype(ml_dtypes.bfloat16))
    assert bf16.tensors[0].dtype == "bfloat16" and has_ties(bf16)


def test_eigenvectors_compare_by_residual_whatever_their_scale_or_phase():
    rng = np.random.default_rng(5)
    a = rng.uniform(-2, 2, (4, 4))
    w, v = np.linalg.eig(a)
    rotated = v * np.exp(1j * rng.uniform(0, 6, 4)) * rng.uniform(0.5, 2, 4)
    case = case_of("torch.linalg.eig", a)
    assert not agree((w, v), (w, rotated))
    order = [2, 0, 3, 1]
    assert same(case, (w, v), (w[order], rotated[:, order]))
    assert eigen_residual_ok(a, w, rotated).all()
    wrong = rotated.copy()
    wrong[:, 0] = rng.uniform(-1, 1, 4)
    assert not eigen_residual_ok(a, w, wrong)[0]
    assert not same(case, (w, v), (w, wrong))


def test_entries_apply_only_to_the_fullest_form_of_a_call():
    # svd without vectors returns its singular values alone: compared elementwise.
    case = case_of("torch.linalg.svd", np.eye(2, dtype=np.float32))
    s = np.array([2.0, 1.0], np.float32)
    assert not same(case, (s,), (s[::-1],))
    u = np.eye(2, dtype=np.float32)
    assert same(case, (u, s, u), (-u, s, -u))  # signs of singular vectors are free
    assert not same(case, (u, s, u), (u, s[::-1], u))
