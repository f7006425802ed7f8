"""The differential oracle on real numpy and torch workers: unordered outputs and verdicts
that rest only on dlfuzz-written counterparts.

numpy and torch (LAPACK ``geev`` behind both) return the eigenvalues of the same float32
matrix in different orders for many matrices; neither is wrong. The test finds such a
matrix, checks that element by element the two disagree (an API without the ``compare``
entry is suspicious), and that as ``torch.linalg.eigvals`` (eigenvalues compared sorted)
and ``torch.linalg.eig`` (eigenvectors by residual) nothing is suspicious or found.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from real_workers import COMPILED, LIBRARY_OF, make_judge, outcome, started_pool

from dlfuzz.cases import ApiCase, Call, Ref, Tensor
from dlfuzz.executor.pool import Pool
from dlfuzz.oracles.base import OracleContext
from dlfuzz.oracles.compare import agree
from dlfuzz.oracles.differential import DifferentialOracle


@pytest.fixture(scope="module")
def pool() -> Iterator[Pool]:
    with started_pool() as p:
        yield p


def check(pool: Pool, case: ApiCase, outcomes=None):
    judge, _ = make_judge(pool)
    ctx = OracleContext(judge, LIBRARY_OF, COMPILED)
    if outcomes is None:
        outcomes = pool.run([case])[0]
    return DifferentialOracle().check(case, outcomes, ctx), ctx, outcomes


def eig_case(api: str, a: np.ndarray, numpy_target: str, torch_target: str) -> ApiCase:
    return ApiCase(api, (Tensor.from_numpy(a),), (
        ("numpy", Call(numpy_target, (Ref(0),))), ("torch", Call(torch_target, (Ref(0),)))))


def matrix_in_another_order(pool: Pool) -> np.ndarray:
    """A float32 matrix whose eigenvalues numpy and torch list in different orders."""
    rng = np.random.default_rng(0)
    candidates = [rng.uniform(-2, 2, (4, 4)).astype(np.float32) for _ in range(40)]
    cases = [eig_case("eigvals", a, "numpy.linalg.eigvals", "torch.linalg.eigvals")
             for a in candidates]
    for a, res in zip(candidates, pool.run(cases), strict=True):
        x, y = (res[b].outputs[0].to_numpy() for b in ("numpy", "torch"))
        if not agree((x,), (y,)) and agree((np.sort_complex(x),), (np.sort_complex(y),)):
            return a
    pytest.fail("no matrix among 40 has its eigenvalues in another order in numpy and torch")


def test_eigenvalues_in_another_order_are_no_finding(pool: Pool):
    a = matrix_in_another_order(pool)
    # Without the spec's "compare" entry, element by element: the pair disagrees.
    plain = eig_case("eigvals", a, "numpy.linalg.eigvals", "torch.linalg.eigvals")
    _, ctx, _ = check(pool, plain)
    assert ctx.stats["suspicious"] == 1
    # As torch.linalg.eigvals (eigenvalues compared sorted): nothing to judge.
    case = eig_case("torch.linalg.eigvals", a, "numpy.linalg.eigvals", "torch.linalg.eigvals")
    found, ctx, _ = check(pool, case)
    assert found == [] and ctx.stats["suspicious"] == 0


def test_eigenvectors_are_compared_by_residual(pool: Pool):
    a = matrix_in_another_order(pool)
    case = eig_case("torch.linalg.eig", a, "numpy.linalg.eig", "torch.linalg.eig")
    found, ctx, outcomes = check(pool, case)
    assert found == [] and ctx.stats["suspicious"] == 0
    # A wrong eigenvector is still one: torch's first column replaced.
    w, v = (t.to_numpy() for t in outcomes["torch"].outputs)
    v = v.copy()
    v[:, 0] = v[:, 1]
    broken = dict(outcomes, torch=outcome("torch", w, v))
    _, ctx, _ = check(pool, case, broken)
    assert ctx.stats["suspicious"] == 1


def test_a_truly_different_eigenvalue_is_still_blamed(pool: Pool):
    a = np.diag(np.array([1.0, 2.0, 3.0], np.float32)) + np.triu(np.ones((3, 3), np.float32), 1)
    case = eig_case("torch.linalg.eigvals", a, "numpy.linalg.eigvals", "torch.linalg.eigvals")
    outcomes = pool.run([case])[0]
    wrong = outcomes["torch"].outputs[0].to_numpy().copy()
    wrong[np.argmax(wrong.real)] += 0.5
    found, ctx, _ = check(pool, case, dict(outcomes, torch=outcome("torch", wrong[::-1])))
    assert [f.guilty_backend for f in found] == ["torch"]
    assert not found[0].detail("demoted")


# ---- verdicts resting on dlfuzz-written counterparts only ------------------------------
COMPOSED = "dlfuzz.engines.api.counterparts.no_such_composition"


def voted_case(numpy_target: str) -> ApiCase:
    """tf's own API, with numpy and torch computing it through the given targets."""
    x = Tensor.from_numpy(np.array([0.25, -1.0, 2.0], np.float32))
    return ApiCase("tensorflow.nn.relu", (x,), (
        ("tf", Call("tensorflow.nn.relu", (Ref(0),))),
        ("numpy", Call(numpy_target, (Ref(0),))),
        ("torch", Call(COMPOSED, (Ref(0),)))))


def voted_outcomes() -> dict:
    right = np.array([0.25, 0.0, 2.0], np.float32)
    # The float64 re-runs fail (no such function), so the three outcomes vote: the two
    # counterparts agree, tf's own result is the odd one out.
    return {"tf": outcome("tf", right + np.float32(1.0)),
            "numpy": outcome("numpy", right), "torch": outcome("torch", right)}


def test_a_verdict_resting_only_on_dlfuzz_counterparts_is_demoted(pool: Pool):
    found, _, _ = check(pool, voted_case(COMPOSED), voted_outcomes())
    (f,) = found
    assert f.guilty_backend == "tf" and f.detail("method") == "vote"
    assert f.detail("demoted") == ("only dlfuzz's counterpart numpy no_such_composition, "
                                   "torch no_such_composition disagree")


def test_a_verdict_with_one_library_function_among_its_voters_stands(pool: Pool):
    found, _, _ = check(pool, voted_case("numpy.maximum_no_such"), voted_outcomes())
    (f,) = found
    assert f.guilty_backend == "tf" and f.detail("demoted") is None
