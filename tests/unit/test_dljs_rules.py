"""DLJSFuzzer's model rules, tensor rules and guidance (dljs_rules, dljs_ror, dljs_tensor)."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest

from dlfuzz.engines.model.dljs_rules import (
    MODEL_RULES,
    DljsSettings,
    RoundSummary,
    RuleContributions,
    apply_rule,
    contribution_rules,
    edit_distance,
    fitness,
    identity_chain,
    input_mean,
    ror,
    ror_targets,
    tournament,
)
from dlfuzz.engines.model.dljs_tensor import TENSOR_RULES, axis_of
from dlfuzz.errors import InternalError, Rejected, UsageError
from dlfuzz.ir.graph import Graph, GraphBuilder
from dlfuzz.ir.model import Model
from dlfuzz.ir.ops import get_op
from dlfuzz.ir.weights import init_model, random_inputs


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def conv_net(batch: int = 2) -> Model:
    b = GraphBuilder((batch, 6, 6, 3))
    x = b.add("Conv2D", "x0", filters=4, kernel_size=(3, 3), padding="valid")
    x = b.add("ReLU", x)
    x = b.add("MaxPool2D", x, pool_size=(2, 2))
    x = b.add("Flatten", x)
    b.add("Dense", x, units=5)
    return init_model(b.build(), rng())


def dense_net(shape: tuple[int, ...] = (2, 5)) -> Model:
    b = GraphBuilder(shape)
    b.add("Dense", "x0", units=3)
    return init_model(b.build(), rng())


def chain_with_convs() -> Model:
    """The identity chain after a few ROR insertions (conv-compatible values inside)."""
    m = identity_chain(4)
    for i, target in enumerate(("Conv2D", "ReLU", "BatchNorm")):
        m = ror(m, rng(i), target)
    return m


MODELS = {"chain": lambda: identity_chain(4), "chain+ror": chain_with_convs,
          "conv_net": conv_net}


def io_types(m: Model) -> tuple[list, list]:
    g = m.graph
    return list(g.inputs), [g.type_of(o) for o in g.outputs]


def added(parent: Model, child: Model) -> Counter:
    return Counter(child.graph.ops()) - Counter(parent.graph.ops())


def new_nodes(parent: Model, child: Model) -> list:
    old = {n.id for n in parent.graph.nodes}
    return [n for n in child.graph.nodes if n.id not in old]


# ---- seed ---------------------------------------------------------------------------------

def test_identity_chain_is_input_identities_output():
    m = identity_chain(5)
    assert m.graph.ops() == ["Identity"] * 5
    assert m.graph.inputs[0].shape == (1, 8, 8, 3) and m.graph.dtype == "float32"
    assert m.graph.type_of(m.graph.outputs[0]) == m.graph.inputs[0]
    assert [n.inputs for n in m.graph.nodes] == [("x0",), ("n0",), ("n1",), ("n2",), ("n3",)]
    assert dict(m.weights) == {}
    assert identity_chain(2, shape=(2, 4, 5, 6), dtype="float64").graph.inputs[0].dtype \
        == "float64"
    with pytest.raises(UsageError):
        identity_chain(0)


# ---- the construct rules --------------------------------------------------------------------

def _check_construct(rule: str, parent: Model, child: Model) -> None:
    """The construct each rule promises is present, wired as stated."""
    g = child.graph
    types = g.types()
    new = new_nodes(parent, child)
    by_id = {n.id: n for n in new}
    plus = added(parent, child)
    if rule == "ZDT":
        (node,) = new
        assert node.op in ("AddConst", "MulConst")
        assert child.weights[f"{node.id}.value"].shape == ()
    elif rule == "IPT":
        tr = [n for n in new if n.op == "Transpose"]
        assert len(tr) == 1
        src = types[tr[0].inputs[0]].shape
        dims = tr[0].attr("dims")
        assert list(dims) != sorted(dims)
        moved = [a for a in dims if src[a] != 1]
        assert moved == sorted(moved), "IPT's transpose must move no data"
    elif rule == "HWR":
        (red,) = [n for n in new if n.op == "ReduceMean"]
        assert red.attr("axes") == (1, 2) and red.attr("keepdims") is True
        assert plus["UpSampling2D"] == 1 and plus["Add"] == 1
    elif rule == "TOR":
        (mm,) = [n for n in new if n.op == "MatMul"]
        for v in mm.inputs:
            assert by_id[v].op == "Transpose" and by_id[v].attr("dims") == (2, 1)
    elif rule == "MOR":
        (pool,) = [n for n in new if n.op.startswith("MaxPool")]
        assert pool.attr("strides") == (1,) * get_op(pool.op).spatial
        assert pool.attr("padding") == "same" and pool.attr("pool_size")[0] in (2, 3)
        assert by_id[pool.inputs[0]].op in ("Sigmoid", "Softmax")  # activation first
    elif rule == "ESC":
        (dw,) = [n for n in new if n.op == "DepthwiseConv2D"]
        (pw,) = [n for n in new if n.op == "Conv2D"]
        assert pw.inputs == (dw.id,) and pw.attr("kernel_size") == (1, 1)
        assert dw.attr("padding") == "same"
        assert pw.attr("filters") == types[dw.inputs[0]].shape[-1]
    elif rule == "ECB":
        (conv,) = [n for n in new if n.op.startswith("Conv")]
        (bn,) = [n for n in new if n.op == "BatchNorm"]
        (relu,) = [n for n in new if n.op == "ReLU"]
        assert bn.inputs == (conv.id,) and relu.inputs == (bn.id,)
        assert conv.attr("padding") == "same"
        assert types[conv.id] == types[conv.inputs[0]]


CONSTRUCTS = [r for r in MODEL_RULES if r != "ROR"]


@pytest.mark.parametrize("model_name", list(MODELS))
@pytest.mark.parametrize("rule", CONSTRUCTS)
def test_construct_rules_keep_model_valid_and_insert_their_construct(rule, model_name):
    if rule == "ZDT":
        try:
            get_op("AddConst")
        except Rejected:
            pytest.skip("the catalog has no AddConst yet")
    parent = MODELS[model_name]()
    for seed in range(4):
        child = MODEL_RULES[rule](parent, rng(seed))
        child.check()
        assert io_types(child) == io_types(parent)
        # an insertion: every old node survives
        assert {n.id for n in parent.graph.nodes} <= {n.id for n in child.graph.nodes}
        assert new_nodes(parent, child), "the rule must add nodes"
        _check_construct(rule, parent, child)
        # every new node got its weights, every old node kept its own
        for k, v in parent.weights.items():
            assert np.array_equal(child.weights[k], v)


@pytest.mark.parametrize("rule", ["HWR", "ESC", "MOR", "ECB"])
def test_spatial_rules_reject_models_without_spatial_values(rule):
    with pytest.raises(Rejected):
        MODEL_RULES[rule](dense_net(), rng())


@pytest.mark.parametrize("rule", ["IPT", "TOR"])
def test_rank_one_graph_is_rejected(rule):
    b = GraphBuilder((4,))
    b.add("Identity", "x0")
    with pytest.raises(Rejected):
        MODEL_RULES[rule](init_model(b.build(), rng()), rng())


def test_ipt_on_value_with_unit_axis_needs_no_reshape_in_front():
    b = GraphBuilder((2, 1, 5, 3))
    b.add("Identity", "x0")
    parent = init_model(b.build(), rng())
    for seed in range(5):
        child = MODEL_RULES["IPT"](parent, rng(seed))
        new = new_nodes(parent, child)
        assert new[0].op == "Transpose"


def test_tor_on_square_rank3_needs_no_reshape():
    b = GraphBuilder((2, 4, 4))
    b.add("Tanh", "x0")
    parent = init_model(b.build(), rng())
    child = MODEL_RULES["TOR"](parent, rng())
    assert sorted(n.op for n in new_nodes(parent, child)) == ["MatMul", "Transpose",
                                                              "Transpose"]


# ---- ROR -----------------------------------------------------------------------------------

def test_ror_targets_cover_none_and_the_catalog_ops():
    targets = ror_targets()
    assert targets[-1] == "None" and len(set(targets)) == len(targets)
    for op in ("Conv2D", "Dense", "ReLU", "Add", "Flatten", "GlobalAvgPool2D", "LSTM"):
        assert op in targets
    keys = contribution_rules()
    assert "ROR" not in keys and "ROR:None" in keys and "ROR:Conv2D" in keys
    assert len(keys) == len(CONSTRUCTS) + len(targets)


# targets that must fit somewhere in the rank-4 identity chain (by insertion)
CHAIN_TARGETS = ["Conv2D", "DepthwiseConv2D", "SeparableConv2D", "Conv2DTranspose", "Dense",
                 "MaxPool2D", "AvgPool2D", "GlobalMaxPool2D", "AddConst", "PReLU", "Softmax",
                 "BatchNorm", "LayerNorm", "Add", "Maximum", "Flatten", "Reshape", "Transpose",
                 "Concat", "ZeroPadding2D", "Cropping2D", "UpSampling2D", "ReduceMax",
                 "Identity", "Dropout"]


@pytest.mark.parametrize("target", CHAIN_TARGETS)
def test_ror_inserts_target_into_identity_chain(target):
    parent = identity_chain(3)
    child = ror(parent, rng(), target)
    child.check()
    assert io_types(child) == io_types(parent)
    assert added(parent, child)[target] >= 1


def test_every_ror_target_gives_a_valid_mutant_or_rejects():
    parents = [identity_chain(3), conv_net(), dense_net((2, 4, 6))]
    for parent, target in itertools.product(parents, ror_targets()):
        try:
            child = ror(parent, rng(), target)
        except Rejected:
            continue
        child.check()
        assert io_types(child) == io_types(parent), target
        if target != "None":
            assert target in child.graph.ops()


def test_ror_replaces_a_node_keeping_its_type():
    parent = conv_net()
    replaced = 0
    for seed in range(60):  # 7 slots fit; the Conv2D's is one of them
        child = ror(parent, rng(seed), "SeparableConv2D")
        child.check()
        assert io_types(child) == io_types(parent)
        if "Conv2D" not in child.graph.ops():  # the Conv2D itself was replaced
            replaced += 1
            (sep,) = [n for n in child.graph.nodes if n.op == "SeparableConv2D"]
            assert child.graph.type_of(sep.id).shape == (2, 4, 4, 4)
            assert not any(k.startswith("n0.") for k in child.weights)  # old weights gone
    assert replaced > 0


def test_ror_none_deletes_one_shape_preserving_node():
    parent = identity_chain(4)
    child = ror(parent, rng(), "None")
    assert child.graph.ops() == ["Identity"] * 3
    assert io_types(child) == io_types(parent)
    # conv net: only ReLU keeps its input's type
    child = ror(conv_net(), rng(), "None")
    assert "ReLU" not in child.graph.ops() and len(child.graph.nodes) == 4
    with pytest.raises(Rejected):
        ror(identity_chain(1), rng(), "None")
    with pytest.raises(Rejected):
        ror(dense_net(), rng(), "None")  # Dense changes the type


def test_ror_never_subtracts_a_value_from_itself():
    parent = identity_chain(1)
    for seed in range(5):
        child = ror(parent, rng(seed), "Subtract")
        (sub,) = [n for n in child.graph.nodes if n.op == "Subtract"]
        assert sub.inputs == ("n0", "x0")


def test_ror_refuses_unknown_target_and_rejects_misfit():
    with pytest.raises(UsageError):
        ror(identity_chain(2), rng(), "NoSuchOp")
    with pytest.raises(Rejected):
        ror(identity_chain(2), rng(), "LSTM")  # rank-3 only


def test_random_walk_of_rules_stays_valid_and_grows():
    m = identity_chain(3)
    keys = contribution_rules()
    r = rng(7)
    applied = 0
    for _ in range(40):
        key = keys[int(r.integers(len(keys)))]
        try:
            child = apply_rule(key, m, r)
        except Rejected:
            continue
        child.check()
        assert io_types(child) == io_types(m)
        m, applied = child, applied + 1
    assert applied >= 15 and len(m.graph.nodes) > 3


# ---- tensor rules --------------------------------------------------------------------------

def chain_inputs(shape=(1, 8, 8, 3)) -> tuple[Model, list[np.ndarray]]:
    m = identity_chain(2, shape=shape)
    return m, random_inputs(m.graph, rng())


@pytest.mark.parametrize("rule,axis", [("WDC", 2), ("HDC", 1), ("CDC", 3), ("BDC", 0)])
def test_copy_rules_double_one_axis(rule, axis):
    m, xs = chain_inputs((1, 4, 5, 3))
    child, new = TENSOR_RULES[rule](m, xs, rng())
    assert np.array_equal(new[0], np.concatenate([xs[0], xs[0]], axis=axis))
    assert child.graph.inputs[0].shape == new[0].shape
    assert child.graph.type_of(child.graph.outputs[0]).shape == new[0].shape


@pytest.mark.parametrize("rule,axis", [("WDP", 2), ("HDP", 1), ("CDP", 3), ("BDP", 0)])
def test_pad_rules_add_zeros_along_one_axis(rule, axis):
    m, xs = chain_inputs((1, 4, 5, 3))
    x = xs[0]
    for seed in range(5):
        child, (y,) = TENSOR_RULES[rule](m, xs, rng(seed))
        grow = y.shape[axis] - x.shape[axis]
        assert 1 <= grow <= 3
        assert [d for i, d in enumerate(y.shape) if i != axis] == \
            [d for i, d in enumerate(x.shape) if i != axis]
        starts = [s for s in range(grow + 1)
                  if np.array_equal(np.take(y, range(s, s + x.shape[axis]), axis=axis), x)]
        assert starts, "the original tensor is inside the padded one"
        assert np.count_nonzero(y) == np.count_nonzero(x)  # what was added is zeros
        assert child.graph.inputs[0].shape == y.shape


def test_hwdt_swaps_height_and_width():
    m, xs = chain_inputs((1, 4, 5, 3))
    child, (y,) = TENSOR_RULES["HWDT"](m, xs, rng())
    assert y.shape == (1, 5, 4, 3) and np.array_equal(y, np.swapaxes(xs[0], 1, 2))
    assert child.graph.inputs[0].shape == (1, 5, 4, 3)


def test_rc_crops_to_a_smaller_sub_block():
    m, xs = chain_inputs((2, 4, 5, 3))
    x = xs[0]
    for seed in range(5):
        child, (y,) = TENSOR_RULES["RC"](m, xs, rng(seed))
        assert all(a <= b for a, b in zip(y.shape, x.shape, strict=True)) and y.size < x.size
        found = any(np.array_equal(x[tuple(slice(o, o + d) for o, d in zip(off, y.shape,
                                                                           strict=True))], y)
                    for off in itertools.product(*(range(b - a + 1)
                                                   for a, b in zip(y.shape, x.shape,
                                                                   strict=True))))
        assert found
        assert child.graph.inputs[0].shape == y.shape


@pytest.mark.parametrize("rule,dtype", [("DT", "float64"), ("BFT", "bfloat16")])
def test_cast_rules_change_inputs_and_model_dtype(rule, dtype):
    m = conv_net()
    xs = random_inputs(m.graph, rng())
    child, new = TENSOR_RULES[rule](m, xs, rng())
    assert child.graph.dtype == dtype and new[0].dtype.name == dtype
    assert all(w.dtype.name == dtype for w in child.weights.values())
    assert new[0].shape == xs[0].shape
    back, again = TENSOR_RULES["FT"](child, new, rng())
    assert back.graph.dtype == "float32" and again[0].dtype == np.float32


def test_ft_on_float32_model_is_rejected():
    m, xs = chain_inputs()
    with pytest.raises(Rejected):
        TENSOR_RULES["FT"](m, xs, rng())


@pytest.mark.parametrize("rule", ["WDC", "HDC", "CDC", "WDP", "HDP", "CDP"])
def test_shape_rules_reject_when_the_weights_no_longer_fit(rule):
    m = conv_net()  # Flatten + Dense fix the spatial size; Conv2D's kernel fixes the channels
    with pytest.raises(Rejected):
        TENSOR_RULES[rule](m, random_inputs(m.graph, rng()), rng())


def test_hwdt_rejects_when_the_graph_needs_the_old_width():
    b = GraphBuilder((2, 6, 7, 3))
    b.add("Conv2D", "x0", filters=2, kernel_size=(1, 7))  # 'valid': needs width >= 7
    m = init_model(b.build(), rng())
    with pytest.raises(Rejected):
        TENSOR_RULES["HWDT"](m, random_inputs(m.graph, rng()), rng())


def test_batch_rules_fit_models_with_weights():
    m = conv_net()
    xs = random_inputs(m.graph, rng())
    child, (y,) = TENSOR_RULES["BDC"](m, xs, rng())
    assert y.shape == (4, 6, 6, 3)
    assert child.graph.type_of(child.graph.outputs[0]).shape == (4, 5)


def test_rules_reject_missing_axes_and_uncroppable_inputs():
    m = dense_net((3, 5))
    xs = random_inputs(m.graph, rng())
    for rule in ("HDC", "WDP", "HWDT"):
        with pytest.raises(Rejected):
            TENSOR_RULES[rule](m, xs, rng())
    m1 = dense_net((1, 5))  # only the features can shrink, and Dense fixes them
    with pytest.raises(Rejected):
        TENSOR_RULES["RC"](m1, random_inputs(m1.graph, rng()), rng())


def test_tensor_rules_apply_the_same_change_to_every_input():
    b = GraphBuilder((1, 4, 4, 2), (1, 4, 4, 2))
    b.add("Add", "x0", "x1")
    m = init_model(b.build(), rng())
    xs = random_inputs(m.graph, rng())
    for rule in ("WDP", "RC", "CDC"):
        child, new = TENSOR_RULES[rule](m, xs, rng(3))
        assert new[0].shape == new[1].shape
        assert [t.shape for t in child.graph.inputs] == [x.shape for x in new]


def test_tensor_rule_refuses_inputs_that_do_not_match():
    m, xs = chain_inputs()
    with pytest.raises(InternalError):
        TENSOR_RULES["WDC"](m, [xs[0].astype(np.float64)], rng())
    assert set(TENSOR_RULES) == {"WDC", "HDC", "CDC", "BDC", "WDP", "HDP", "CDP", "BDP",
                                 "HWDT", "RC", "FT", "DT", "BFT"}


def test_axis_mapping_is_channels_last_from_the_right():
    assert [axis_of(n, 4) for n in "BHWC"] == [0, 1, 2, 3]
    assert [axis_of(n, 5) for n in "BHWC"] == [0, 2, 3, 4]
    assert [axis_of(n, 3) for n in "BHWC"] == [0, None, 1, 2]
    assert [axis_of(n, 2) for n in "BHWC"] == [0, None, None, 1]


# ---- guidance ------------------------------------------------------------------------------

def test_fitness_follows_the_paper():
    assert fitness(RoundSummary(inconsistency=0.4, input_mean=0.2)) == 0.4
    assert fitness(RoundSummary(crash=True, inconsistency=0.4, input_mean=0.2)) == 0.2
    assert fitness(RoundSummary(nan_bug=True, input_mean=-0.3)) == -0.3
    assert fitness(RoundSummary(inconsistency=float("inf"))) == DljsSettings().fitness_cap
    assert fitness(RoundSummary(inconsistency=float("nan"))) == 0.0
    assert input_mean([np.array([1.0, 2.0]), np.array([[3.0, 6.0]])]) == 3.0


def test_tournament_picks_the_fittest_of_the_drawn():
    pool = [("a", 0.1), ("b", 0.5), ("c", float("nan")), ("d", 0.3)]
    assert tournament(pool, rng(), k=4) == "b"
    assert tournament(pool, rng(), k=10) == "b"
    picks = Counter(tournament(pool, rng(s), k=2) for s in range(200))
    assert picks["c"] == 0  # the worst (NaN) never wins against another entry
    assert picks["b"] > picks["d"] > picks["a"] > 0
    singles = Counter(tournament(pool, rng(s), k=1) for s in range(400))
    assert set(singles) == {"a", "b", "c", "d"}
    with pytest.raises(InternalError):
        tournament([], rng())


def test_rule_contributions_start_uniform_follow_gains_and_keep_a_floor():
    rc = RuleContributions(["A", "B", "C", "D"])
    assert rc.probabilities() == {r: 0.25 for r in "ABCD"}
    rc.update("A", 2.0)  # c = 3, 1, 1, 1
    p = rc.probabilities()
    assert p["A"] == pytest.approx(0.95 * 3 / 6 + 0.05 / 4)
    assert p["B"] == pytest.approx(0.95 * 1 / 6 + 0.05 / 4)
    assert sum(p.values()) == pytest.approx(1.0)
    rc.update("B", -5.0)  # contribution below zero: only the floor is left
    p = rc.probabilities()
    assert p["B"] == pytest.approx(0.05 / 4) and p["B"] > 0
    rc.update("C", float("inf"))  # ignored, never poisons the sums
    assert np.isfinite(list(rc.probabilities().values())).all()
    picks = Counter(rc.choose(rng(s)) for s in range(2000))
    assert picks["A"] > picks["C"] > picks["B"]
    for r in "ACD":
        rc.update(r, -100.0)
    assert rc.probabilities() == {r: 0.25 for r in "ABCD"}  # all non-positive: uniform
    with pytest.raises(InternalError):
        rc.update("Z", 1.0)


def _seq(*ops: str | tuple) -> Graph:
    b = GraphBuilder((1, 6, 6, 3))
    x = "x0"
    for op in ops:
        name, attrs = (op, {}) if isinstance(op, str) else op
        x = b.add(name, x, **attrs)
    return b.build()


def test_edit_distance_is_levenshtein_over_op_sequences():
    g = _seq("ReLU", "Tanh", "Sigmoid")
    assert edit_distance(g, g) == 0
    assert edit_distance(g, _seq("ReLU", "Sigmoid")) == 1  # one deletion
    assert edit_distance(g, _seq("ReLU", "GELU", "Sigmoid")) == 1  # one substitution
    assert edit_distance(g, _seq("Sigmoid", "Tanh", "ReLU")) == 2
    assert edit_distance(_seq("Identity"), _seq(*["Identity"] * 4)) == 3
    assert edit_distance(_seq(("LeakyReLU", {"alpha": 0.1})),
                         _seq(("LeakyReLU", {"alpha": 0.2}))) == 1  # attributes count
    assert edit_distance(g, _seq("Tanh")) == edit_distance(_seq("Tanh"), g) == 2
