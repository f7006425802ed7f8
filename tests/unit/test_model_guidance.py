"""LEMON's guidance pieces: D_MAD, voting, ACC, degenerate filter, roulette, MH, R_a."""

import numpy as np

from dlfuzz.engines.model.guidance import (
    MetropolisHastings,
    SeedEntry,
    SeedPool,
    accumulated_inconsistency,
    d_mad,
    degenerate,
    lemon_vote,
    pair_dmads,
)
from dlfuzz.oracles.localize import localize


def test_d_mad_definition() -> None:
    assert d_mad(0.0, 0.0) == 0.0
    assert d_mad(1.0, 3.0) == 0.5
    assert d_mad(2.0, 2.0) == 0.0


def test_vote_names_the_library_shared_by_inconsistent_pairs() -> None:
    g = np.ones((2, 10))
    outs = {"torch": (g + 2e-3).astype(np.float32), "jax": (g + 1e-8).astype(np.float32),
            "tf": (g - 3e-8).astype(np.float32)}
    dmads = pair_dmads(outs, g)
    assert dmads[("jax", "tf")] < 0.4 < dmads[("jax", "torch")]
    assert lemon_vote(dmads, 0.4) == "torch"
    # Without the tolerance floor rounding noise alone would pass LEMON's threshold.
    assert pair_dmads(outs, g, floor=0.0)[("jax", "tf")] > 0.4
    assert lemon_vote({("a", "b"): 0.1}, 0.4) == ""


def test_acc_grows_with_inconsistency() -> None:
    g = np.linspace(-1, 1, 20).reshape(2, 10)
    same = [{"a": g, "b": g.copy(), "c": g.copy()}]
    off = [{"a": g + 0.5, "b": g.copy(), "c": g.copy()}]
    assert accumulated_inconsistency(same) == 0.0
    assert accumulated_inconsistency(off) > 1.0


def test_degenerate_needs_one_argmax_everywhere() -> None:
    one_hot = np.zeros((1, 5))
    one_hot[0, 2] = 1
    assert degenerate([{"a": one_hot, "b": one_hot}] * 4, 0.95)
    varied = [{"a": np.roll(one_hot, k, axis=1), "b": one_hot} for k in range(4)]
    assert not degenerate(varied, 0.95)


def test_roulette_prefers_rarely_selected_seeds_and_caps_the_pool() -> None:
    pool = SeedPool(max_size=3)
    for name in "abc":
        pool.add(SeedEntry(None, name, initial=(name == "a"), acc=float(ord(name))))
    pool.entries[0].selected = 100
    rng = np.random.default_rng(0)
    picks = [pool.select(rng).name for _ in range(50)]
    assert picks.count("a") < 5
    pool.add(SeedEntry(None, "d", acc=1000.0))
    assert len(pool.entries) == 3 and "a" in [e.name for e in pool.entries]
    assert "b" not in [e.name for e in pool.entries]  # the lowest-ACC mutant left


def test_metropolis_hastings_favours_amplifying_rules() -> None:
    mh = MetropolisHastings(["good", "bad1", "bad2", "bad3"])
    for _ in range(10):
        mh.record("good", True)
        for r in ("bad1", "bad2", "bad3"):
            mh.record(r, False)
    assert mh.ranking()[0] == "good"
    rng = np.random.default_rng(1)
    picks = [mh.choose(rng) for _ in range(400)]
    assert picks.count("good") > 100  # uniform would be ~100


def test_r_a_points_at_the_layer_that_introduces_the_difference() -> None:
    x = np.ones((2, 4))
    a = [x, x * 2, x * 2 + 1]
    b = [x, x * 2 + 0.5, x * 2 + 1.5]  # node 1 introduces 0.5, node 2 passes it on
    index, ratios = localize(a, b, [[], [0], [1]])
    assert index == 1 and ratios[2] < ratios[1]


def test_r_a_ignores_rounding_noise_and_says_when_nothing_is_off() -> None:
    x = np.ones((2, 4), np.float32)
    a = [x, x + np.float32(2.4e-7), x * 2 + 0.5]  # node 1: two ulps of wobble
    b = [x, x, x * 2]
    index, ratios = localize(a, b, [[], [0], [1]])
    assert ratios[1] > 1  # LEMON's formula alone: any wobble after an exact node counts
    index, ratios = localize(a, b, [[], [0], [1]], dtype="float32")
    assert index == 2 and ratios[1] == float("-inf")
    assert localize(b, b, [[], [0], [1]], dtype="float32")[0] == -1


def test_the_layer_that_introduces_a_difference_beats_the_one_that_amplifies_it() -> None:
    x = np.linspace(-1, 1, 8).reshape(2, 4)
    a = [x, x + 1e-9, (x + 1e-9) * 1000]  # node 1 is wrong (in float64), node 2 scales
    b = [x, x, x * 1000]
    lemon, ratios = localize(a, b, [[], [0], [1]])
    assert lemon == 2 and ratios[2] > ratios[1]  # R_a alone blames the amplifier
    index, _ = localize(a, b, [[], [0], [1]], dtype="float64")
    assert index == 1


def test_a_second_sound_backend_sets_each_nodes_noise() -> None:
    x = np.linspace(-1, 1, 8).reshape(2, 4).astype(np.float32)
    wobble = np.float32(1e-4)  # far above 16 ulps, yet two sound libraries differ as much
    a = [x, x + wobble, x * 3]
    b = [x, x, x * 3 + 1]
    c = [x, x - wobble, x * 3 + 1]
    index, ratios = localize(a, b, [[], [0], [1]], dtype="float32")
    assert index == 1  # without the second backend the wobble looks like the fault
    index, ratios = localize(a, b, [[], [0], [1]], dtype="float32", values_c=c)
    assert index == 2 and ratios[1] == float("-inf")


def test_a_nan_both_sides_pass_on_is_no_difference() -> None:
    """A NaN input that every node passes on, then a pool that drops it on one side: the
    pool is where the values part (ORT's MaxPool ignores NaN), not the first node."""
    nan = np.nan
    first = np.array([nan, 1.0, 2.0])  # e.g. MulConst of a NaN input: NaN on both sides
    a = [first, first * 1.0, np.array([2.0])]  # guilty: the pool dropped the NaN
    b = [first, first * 1.0, np.array([nan])]
    index, _ = localize(a, b, [[], [0], [1]], dtype="float32")
    assert index == 2


def test_a_sum_within_its_summation_error_bound_is_rounding() -> None:
    """ORT's float32 ReduceSum of 5,541 values that cancel: 4.7e-4 off torch's pairwise
    sum is far inside the probabilistic summation bound (0.08 here); a sum off by 1,
    one term dropped, is not (though inside the worst-case bound, 2.9)."""
    from dlfuzz.cases import GraphCase, Tensor
    from dlfuzz.ir.graph import GraphBuilder
    from dlfuzz.oracles.localize import within_accumulation

    b = GraphBuilder((1, 5541))
    b.add("ReduceSum", "x0", axes=(1,), keepdims=True)
    x = np.random.default_rng(0).standard_normal((1, 5541)).astype(np.float32)
    case = GraphCase("m", b.build(), (), (Tensor.from_numpy(x),), ("torch",))
    exact = np.array([[x.astype(np.float64).sum()]])
    assert within_accumulation(case, 0, [exact + 4.7e-4], [exact])
    assert not within_accumulation(case, 0, [exact + 1.0], [exact])
    # Not a sum: never rounding by this rule.
    b = GraphBuilder((1, 5541))
    b.add("ReduceMax", "x0", axes=(1,), keepdims=True)
    maxed = GraphCase("m", b.build(), (), (Tensor.from_numpy(x),), ("torch",))
    assert not within_accumulation(maxed, 0, [exact + 4.7e-4], [exact])


def test_a_normalization_within_its_affine_rounding_is_rounding() -> None:
    """tf-xla's float32 LayerNorm over two equal values of -302.5 (eps 8.5e-5) gave
    4.12e-4 where the answer is 0: TF's x * s + (beta - mean * s) with one product
    contracted into a multiply-add, a fifth of u * |x * s|. A LayerNorm off by 0.5 (a
    wrong formula) is not within it, nor is a layer that does not normalize; BatchNorm
    is judged with its moving statistics."""
    from dlfuzz.cases import GraphCase, Tensor
    from dlfuzz.ir.graph import GraphBuilder
    from dlfuzz.oracles.localize import within_normalization

    b = GraphBuilder((1, 1, 2))
    b.add("LayerNorm", "x0", epsilon=8.535484969457006e-05)
    x = np.full((1, 1, 2), -302.5, np.float32)
    weights = (("n0.gamma", Tensor.from_numpy(np.ones(2, np.float32))),
               ("n0.beta", Tensor.from_numpy(np.zeros(2, np.float32))))
    case = GraphCase("m", b.build(), weights, (Tensor.from_numpy(x),), ("tf",))
    exact = np.zeros((1, 1, 2))
    assert within_normalization(case, 0, [exact + 4.12e-4], [exact])
    assert not within_normalization(case, 0, [exact + 0.5], [exact])
    b = GraphBuilder((1, 1, 2))
    b.add("Softsign", "x0")
    other = GraphCase("m", b.build(), (), (Tensor.from_numpy(x),), ("tf",))
    assert not within_normalization(other, 0, [exact + 4.12e-4], [exact])
    # BatchNorm: x near its moving mean, s = 1 / sqrt(1e-4) = 100; |x * s| = 3e4.
    b = GraphBuilder((1, 2))
    b.add("BatchNorm", "x0", epsilon=1e-4)
    stats = {"gamma": 1.0, "beta": 0.0, "moving_mean": 300.0, "moving_variance": 0.0}
    weights = tuple((f"n0.{k}", Tensor.from_numpy(np.full(2, v, np.float32)))
                    for k, v in stats.items())
    x = np.full((1, 2), 300.0, np.float32)
    case = GraphCase("m", b.build(), weights, (Tensor.from_numpy(x),), ("tf",))
    exact = np.zeros((1, 2))
    assert within_normalization(case, 0, [exact + 1e-3], [exact])
    assert not within_normalization(case, 0, [exact + 0.1], [exact])
