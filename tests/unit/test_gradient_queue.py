"""Which API cases get a backward pass (``engines/api/gradients.py``), without workers:
the outcomes are made by hand, the rules are the queue's."""

from __future__ import annotations

import numpy as np

from dlfuzz.cases import ApiCase, Call, Outcome, Ref, Tensor
from dlfuzz.cases.grad import GradCase, direction, structured
from dlfuzz.engines.api.gradients import (
    FIRST_SHARE,
    MAX_ELEMENTS,
    QUEUE,
    SHARE,
    GradientQueue,
)


def _case(api: str, *arrays: np.ndarray, params: tuple = (), expect: str = "valid") -> ApiCase:
    refs = tuple(Ref(i) for i in range(len(arrays)))
    return ApiCase(api, tuple(Tensor.from_numpy(a) for a in arrays),
                   (("torch", Call(api, refs)),), params, expect)


def _ok(*arrays: np.ndarray) -> dict[str, Outcome]:
    return {"torch": Outcome("torch", "ok", tuple(Tensor.from_numpy(a) for a in arrays))}


X = np.array([[0.5, -1.0], [2.0, 0.25]], np.float32)


def _offered(case: ApiCase, outcomes: dict[str, Outcome] | None = None) -> list[GradCase]:
    queue = GradientQueue()
    queue.offer(case, outcomes or _ok(X), [], deterministic=True)
    return queue.take(100)


def test_an_ordinary_case_is_queued_once_and_a_batch_takes_its_share() -> None:
    queue = GradientQueue()
    for k in range(40):
        queue.offer(_case("torch.tanh", X + k), _ok(X), [], deterministic=True)
    queued = len(queue.waiting)
    assert 4 <= queued < 40  # the first ones always, then fewer: the probability halves
    assert queue.take(20) == []  # 0.4 gradient cases owed: none yet, the rest carried
    taken = queue.take(40)  # 0.4 + 0.8 of the share, and as much for a first pass
    assert len(taken) == 2 and isinstance(taken[0], GradCase)
    assert taken[0].base.tensors[0].to_numpy().tolist() == X.tolist()  # oldest first
    assert taken[1].base.tensors[0].to_numpy().tolist() != X.tolist()
    assert len(queue.take(int(5 / SHARE))) == 5
    queue.waiting.clear()
    for _ in range(10):  # a share the queue cannot fill is not saved up past one batch's
        queue.take(1000)
    assert queue.credit <= SHARE * 1000


def test_the_apis_served_least_go_first_and_the_most_served_are_dropped() -> None:
    """A busy API's backlog does not crowd out an API that never had a backward pass:
    a batch takes the least served APIs first, and a full queue drops the oldest case of
    the most served API (first-in-first-out left tf.tanh without one in a 300 s
    campaign of 450 APIs)."""
    from dlfuzz.engines.api import gradients

    queue = GradientQueue()
    busy = [_case(f"torch.busy{k % 3}", X + k) for k in range(gradients.QUEUE * 3)]
    for case in busy:
        queue.offer(case, _ok(X), [], deterministic=True)
    assert len(queue.waiting) <= gradients.QUEUE
    queue.take(int(30 / SHARE))  # 33 taken: a first pass and ten of each busy API
    assert dict(queue.taken) == {"torch.busy0": 11, "torch.busy1": 11, "torch.busy2": 11}
    for k in range(100 * gradients.QUEUE):  # a fresh input each time
        if len(queue.waiting) == gradients.QUEUE:
            break
        queue.offer(_case("torch.busy0", X - k), _ok(X), [], deterministic=True)
    queue.offer(_case("torch.tanh", X), _ok(X), [], deterministic=True)  # queue full
    assert len(queue.waiting) == gradients.QUEUE
    assert queue.counts["gradient_cases_dropped"] >= 1
    first = queue.take(int(1 / SHARE) + 1)
    assert first[0].api == "torch.tanh"  # never served: ahead of the backlog


def test_an_api_never_served_keeps_its_one_waiting_case() -> None:
    """Among APIs none of which had a backward pass yet, a full queue drops a case of
    the API with the most waiting, not the oldest case: an API visited once (its one
    ordinary group) is not pushed out by another's many cases (with coverage groups, a
    TF.js + TensorFlow campaign queued 1,025 and dropped 587 before serving tf.tanh)."""
    from dlfuzz.engines.api import gradients

    queue = GradientQueue()
    queue.offer(_case("torch.tanh", X), _ok(X), [], deterministic=True)  # the oldest
    for k in range(gradients.QUEUE * 4):
        queue.offer(_case(f"torch.other{k % 8}", X + k), _ok(X), [], deterministic=True)
    assert len(queue.waiting) == gradients.QUEUE
    assert queue.counts["gradient_cases_dropped"] >= 1
    assert [c.api for c in queue.waiting].count("torch.tanh") == 1
    assert [c.api for c in queue.take(int(1 / SHARE) + 1)][0] == "torch.tanh"  # oldest


def test_points_with_both_signs_are_preferred() -> None:
    """A backward pass at a point of one sign checks one branch of a derivative that
    branches on the sign (a TF.js + TensorFlow campaign whose tf.tanh backward passes
    fell on non-negative inputs missed a plant wrong where the output is negative): an
    API's waiting first case gives way to one with both signs, and an API served only
    at one-sided points is served again before one served at a two-sided point."""
    positive = np.abs(X) + 0.5
    queue = GradientQueue()
    queue.offer(_case("torch.tanh", positive), _ok(X), [], deterministic=True)
    queue.offer(_case("torch.other", X), _ok(X), [], deterministic=True)
    queue.offer(_case("torch.tanh", X), _ok(X), [], deterministic=True)  # both signs
    assert [c.api for c in queue.waiting] == ["torch.tanh", "torch.other"]
    assert queue.waiting[0].base.tensors[0].to_numpy().tolist() == X.tolist()
    later = GradientQueue()
    later.offer(_case("torch.relu", positive), _ok(X), [], deterministic=True)
    later.offer(_case("torch.tanh", X), _ok(X), [], deterministic=True)
    assert {c.api for c in later.take(int(2 / SHARE))} == {"torch.relu", "torch.tanh"}
    assert dict(later.two_sided) == {"torch.relu": 0, "torch.tanh": 1}  # findings --stats
    later.offer(_case("torch.tanh", X - 0.1), _ok(X), [], deterministic=True)
    later.offer(_case("torch.relu", positive + 1), _ok(X), [], deterministic=True)
    assert [c.api for c in later.take(int(1 / SHARE))] == ["torch.relu"]  # the older waits


def test_apis_never_served_get_first_passes_beyond_the_share() -> None:
    """With many APIs waiting, the share alone serves fewer cases than there are APIs
    (a TF.js + TensorFlow campaign: 366 backward passes for about 450 APIs, tf.tanh
    not among them); first passes come from a credit of their own, and cost at most one
    gradient case per API over a campaign."""
    queue = GradientQueue()
    for k in range(40):
        queue.offer(_case(f"torch.api{k}", X + k), _ok(X), [], deterministic=True)
    taken = queue.take(1000)  # 20 of the share and 20 first passes
    assert len(taken) == round(1000 * (SHARE + FIRST_SHARE)) == 40
    assert len({c.api for c in taken}) == 40
    assert queue.counts["gradient_apis_served"] == 40
    many = GradientQueue()  # more APIs than the queue holds: none loses its first pass
    apis = 3 * QUEUE
    for k in range(apis):
        many.offer(_case(f"torch.api{k}", X + k), _ok(X), [], deterministic=True)
    many.offer(_case("torch.api0", X - 1), _ok(X), [], deterministic=True)  # a second
    assert len(many.waiting) == apis and many.counts["gradient_cases_dropped"] == 1
    served = {c.api for _ in range(apis) for c in many.take(25)}
    assert served == {f"torch.api{k}" for k in range(apis)}
    one = GradientQueue()  # one API: first passes add a single case in all
    served = 0
    for k in range(50):
        for j in range(4):
            one.offer(_case("torch.tanh", X + k * 4 + j), _ok(X), [], deterministic=True)
        served += len(one.take(100))
    assert served <= SHARE * 50 * 100 + 1


def test_cases_whose_gradient_says_nothing_are_not_queued() -> None:
    nan = np.array([np.nan, 1.0], np.float32)
    assert _offered(_case("torch.tanh", nan)) == []
    assert _offered(_case("torch.tanh", X, expect="invalid:x")) == []
    assert _offered(_case("torch.tanh", X, expect="edge:special-one:x")) == []
    assert _offered(_case("torch.tanh", np.zeros((0, 2), np.float32))) == []
    assert _offered(_case("torch.tanh", np.ones(MAX_ELEMENTS + 1, np.float32))) == []
    assert _offered(_case("torch.abs", np.array([1, 2], np.int64)),
                    _ok(np.array([1, 2], np.int64))) == []
    queue = GradientQueue()
    queue.offer(_case("torch.rand_like", X), _ok(X), [], deterministic=False)
    assert queue.take(100) == []
    # an edge input whose floats stay ordinary qualifies
    assert len(_offered(_case("torch.tanh", X, expect="edge:rank:x"))) == 1


def test_an_input_the_apis_own_library_rejects_gets_no_backward_pass() -> None:
    """``tf.gather_nd`` with an index past the end: TF raises, JAX's composition clamps.
    The counterpart's gradient there is on ground the API never defined: not queued.
    Where the API's own library computes, the counterparts' gradients are judged."""
    params, index = np.array([0.0], np.float32), np.array([[1]], np.int32)
    case = ApiCase("tensorflow.gather_nd", (Tensor.from_numpy(params), Tensor.from_numpy(index)),
                   (("jax", Call("compose.tf_gather_nd", (Ref(0), Ref(1)))),
                    ("tf", Call("tensorflow.gather_nd", (Ref(0), Ref(1))))))
    jax_ok = Outcome("jax", "ok", (Tensor.from_numpy(params),))
    tf_raised = Outcome("tf", "exception", exc_type="InvalidArgumentError",
                        message="indices[0] = [1] does not index into param shape [1]")
    assert _offered(case, {"jax": jax_ok, "tf": tf_raised}) == []
    tf_ok = Outcome("tf", "ok", (Tensor.from_numpy(params),))
    assert len(_offered(case, {"jax": jax_ok, "tf": tf_ok})) == 1
    assert len(_offered(case, {"jax": jax_ok})) == 1  # tf not in the campaign
    xla_failed = Outcome("tf-xla", "exception", exc_type="InvalidArgumentError",
                         message="no XLA kernel")  # a compiled mode alone says nothing
    assert len(_offered(case, {"jax": jax_ok, "tf": tf_ok, "tf-xla": xla_failed})) == 1


def test_half_inputs_are_differentiated_in_float32() -> None:
    half = X.astype(np.float16)
    (grad,) = _offered(_case("torch.tanh", half), _ok(half))
    assert grad.base.tensors[0].dtype == "float32"
    assert grad.base.tensors[0].to_numpy().tolist() == half.astype(np.float32).tolist()


def test_documented_conventions_shape_or_skip_the_case() -> None:
    # eigh reads the lower triangle: the input is made symmetric from it, the
    # eigenvectors (compared by residual) get no cotangent.
    (eigh,) = _offered(_case("torch.linalg.eigh", X), _ok(X[0], X))
    sym = eigh.base.tensors[0].to_numpy()
    assert sym.tolist() == [[0.5, 2.0], [2.0, 0.25]]
    assert eigh.structure == ((0, "symmetric-lower"),) and eigh.still
    v = direction(eigh.seed, 0, (2, 2), eigh.structure_of(0))
    assert np.array_equal(v, v.T)
    upper = _offered(_case("torch.linalg.eigh", X, params=(("UPLO", "U"),)), _ok(X[0], X))
    assert upper[0].base.tensors[0].to_numpy().tolist() == [[0.5, -1.0], [-1.0, 0.25]]
    # a triangular factor keeps its triangle
    (inv,) = _offered(_case("torch.cholesky_inverse", X))
    assert inv.base.tensors[0].to_numpy().tolist() == [[0.5, 0.0], [2.0, 0.25]]
    assert _offered(_case("torch.nn.functional.ctc_loss", X)) == []
    assert _offered(_case("torch.nn.functional.embedding", np.array([0, 1]), X,
                          params=(("padding_idx", 0),))) == []
    assert len(_offered(_case("torch.nn.functional.embedding", np.array([0, 1]), X))) == 1
    assert _offered(_case("torch.put", X, np.array([1, 1]), np.array([1.0, 2.0], np.float32))
                    ) == []


def test_structured_batches_of_matrices() -> None:
    a = np.arange(8, dtype=np.float64).reshape(2, 2, 2)
    s = structured(a, "symmetric-upper")
    assert np.array_equal(s, np.swapaxes(s, -1, -2))
    assert np.array_equal(np.triu(s), np.triu(a))
    assert structured(np.ones(3), "lower").tolist() == [1.0, 1.0, 1.0]  # not a matrix
