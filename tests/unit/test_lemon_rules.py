"""LEMON's mutation rules: each mutant is valid, keeps the model's I/O types and differs
from its parent exactly as the rule says; a rule with nothing to act on refuses."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from dlfuzz.engines.model import lemon_rules
from dlfuzz.engines.model.lemon_inner import (
    DEFAULT_SETTINGS,
    LemonRuleSettings,
    NotApplicable,
    neuron_matrices,
)
from dlfuzz.engines.model.lemon_rules import (
    INNER_RULES,
    INTACT_RULES,
    LA_LAYERS,
    LEMON_RULES,
    MLA_BUNDLES,
    apply_rule,
)
from dlfuzz.errors import Rejected, UsageError
from dlfuzz.ir.graph import GraphBuilder
from dlfuzz.ir.model import Model
from dlfuzz.ir.ops import get_op
from dlfuzz.ir.weights import init_model

# ---- seed-like models ---------------------------------------------------------------------


def _model(b: GraphBuilder, seed: int = 0) -> Model:
    return init_model(b.build(), np.random.default_rng(seed))


def lenet() -> Model:
    b = GraphBuilder((2, 28, 28, 1))
    x = b.add("Conv2D", "x0", filters=6, kernel_size=(5, 5), padding="same")
    x = b.add("MaxPool2D", b.add("ReLU", x))
    x = b.add("Conv2D", x, filters=16, kernel_size=(5, 5))
    x = b.add("Flatten", b.add("MaxPool2D", b.add("ReLU", x)))
    x = b.add("ReLU", b.add("Dense", x, units=120))
    x = b.add("Tanh", b.add("Dense", x, units=84))
    b.add("Softmax", b.add("Dense", x, units=10))
    return _model(b)


def mlp() -> Model:
    b = GraphBuilder((2, 20))
    x = b.add("Tanh", b.add("Dense", "x0", units=16))
    x = b.add("ReLU", b.add("Dense", x, units=16))
    b.add("Softmax", b.add("Dense", x, units=4))
    return _model(b)


def conv1d() -> Model:
    b = GraphBuilder((2, 32, 3))
    x = b.add("ReLU", b.add("Conv1D", "x0", filters=8, kernel_size=(3,), padding="same"))
    x = b.add("MaxPool1D", b.add("BatchNorm", x))
    x = b.add("ELU", b.add("Conv1D", x, filters=8, kernel_size=(3,), padding="same"))
    b.add("Dense", b.add("GlobalAvgPool1D", x), units=3)
    return _model(b)


def lstm() -> Model:
    b = GraphBuilder((2, 10, 6))
    x = b.add("LSTM", "x0", units=6, return_sequences=True)
    x = b.add("GRU", x, units=8)
    b.add("Sigmoid", b.add("Dense", x, units=4))
    return _model(b)


def mobile() -> Model:
    """Depthwise, separable, transposed conv and BatchNorm: the less obvious neurons."""
    b = GraphBuilder((2, 8, 8, 3))
    x = b.add("DepthwiseConv2D", "x0", depth_multiplier=2, padding="same")
    x = b.add("SeparableConv2D", x, filters=5, padding="same")
    x = b.add("Conv2DTranspose", x, filters=4, strides=(2, 2), padding="same")
    x = b.add("BatchNorm", x)
    b.add("Dense", b.add("GlobalMaxPool2D", x), units=2)
    return _model(b)


def volume() -> Model:
    b = GraphBuilder((2, 4, 5, 6, 2))
    x = b.add("ReLU", b.add("Conv3D", "x0", filters=3, padding="same"))
    b.add("Dense", b.add("GlobalAvgPool3D", x), units=2)
    return _model(b)


SEEDS: dict[str, Callable[[], Model]] = {
    "lenet": lenet, "mlp": mlp, "conv1d": conv1d, "lstm": lstm, "mobile": mobile,
    "volume": volume,
}


def dense_softmax() -> Model:
    """Its only activation is the output: nothing to remove, switch or replace."""
    b = GraphBuilder((2, 5))
    b.add("Softmax", b.add("Dense", "x0", units=3))
    return _model(b)


def no_weights() -> Model:
    b = GraphBuilder((2, 6, 4))
    b.add("Flatten", b.add("ReLU", "x0"))
    return _model(b)


# ---- helpers ------------------------------------------------------------------------------


def check_mutant(parent: Model, child: Model, digest: str) -> None:
    """Valid, same input and output types, and the parent left as it was."""
    child.check()
    assert child.graph.inputs == parent.graph.inputs
    out = [parent.graph.type_of(v) for v in parent.graph.outputs]
    assert [child.graph.type_of(v) for v in child.graph.outputs] == out
    assert parent.digest() == digest
    assert child.digest() != parent.digest()


def run(rule: str, parent: Model, seed: int = 0, **kw) -> Model:
    digest = parent.digest()
    child = apply_rule(rule, parent, np.random.default_rng(seed), **kw)
    check_mutant(parent, child, digest)
    return child


def added_nodes(parent: Model, child: Model) -> list:
    old = {n.id for n in parent.graph.nodes}
    return [n for n in child.graph.nodes if n.id not in old]


def assert_weights_kept(parent: Model, child: Model, ids: set[str]) -> None:
    for k, v in parent.weights.items():
        if k.split(".")[0] in ids:
            np.testing.assert_array_equal(child.weights[k], v)


# ---- registries ---------------------------------------------------------------------------


def test_registries_hold_the_twelve_rules() -> None:
    assert set(INTACT_RULES) == {"LR", "LS", "LC", "LA", "MLA", "AFRm", "AFRp"}
    assert set(INNER_RULES) == {"GF", "WS", "NEB", "NAI", "NS"}
    assert LEMON_RULES == {**INTACT_RULES, **INNER_RULES}
    s = LemonRuleSettings()
    assert (s.neuron_fraction, s.gaussian_sigma_factor, s.la_kernel) == (0.3, 0.1, 3)


def test_apply_rule_errors() -> None:
    with pytest.raises(UsageError):
        apply_rule("XX", mlp(), np.random.default_rng(0))
    with pytest.raises(NotApplicable):
        apply_rule("AFRm", dense_softmax(), np.random.default_rng(0))


def test_apply_rule_retries_then_gives_up(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[LemonRuleSettings] = []

    def flaky(model: Model, rng: np.random.Generator, *, settings: LemonRuleSettings) -> Model:
        calls.append(settings)
        if len(calls) < 3:
            raise Rejected("not this time")
        return model

    monkeypatch.setitem(lemon_rules.LEMON_RULES, "FLAKY", flaky)
    custom = LemonRuleSettings(neuron_fraction=0.5)
    model = mlp()
    assert apply_rule("FLAKY", model, np.random.default_rng(0), settings=custom) is model
    assert calls == [custom] * 3
    calls.clear()
    with pytest.raises(Rejected, match="2 attempts: not this time"):
        apply_rule("FLAKY", model, np.random.default_rng(0), attempts=2)


# ---- intact-layer rules -------------------------------------------------------------------


# No two type-keeping nodes of one type (LS), no activation (mobile), only an output one.
NOT_APPLICABLE = {("LS", "lenet"), ("LS", "lstm"), ("LS", "mobile"), ("LS", "volume"),
                  ("AFRm", "mobile"), ("AFRp", "mobile"), ("AFRm", "lstm")}


@pytest.mark.parametrize("seed_name", sorted(SEEDS))
@pytest.mark.parametrize("rule", sorted(INTACT_RULES))
def test_intact_rules_give_valid_mutants(seed_name: str, rule: str) -> None:
    parent = SEEDS[seed_name]()
    for seed in range(4):
        try:
            run(rule, parent, seed)
            assert (rule, seed_name) not in NOT_APPLICABLE
        except NotApplicable:
            assert (rule, seed_name) in NOT_APPLICABLE


@pytest.mark.parametrize("seed_name", ["lenet", "mlp", "conv1d", "lstm"])
def test_lr_removes_one_type_keeping_node(seed_name: str) -> None:
    parent = SEEDS[seed_name]()
    g = parent.graph
    for seed in range(5):
        child = run("LR", parent, seed)
        gone = [n for n in g.nodes if n.id not in {m.id for m in child.graph.nodes}]
        assert len(gone) == 1 and len(child.graph.nodes) == len(g.nodes) - 1
        (node,) = gone
        assert len(node.inputs) == 1 and g.type_of(node.inputs[0]) == g.type_of(node.id)
        assert node.id not in g.outputs
        for n in child.graph.nodes:  # readers now read its input, nothing else changed
            old = g.node(n.id)
            assert (n.op, n.attrs) == (old.op, old.attrs)
            assert n.inputs == tuple(node.inputs[0] if v == node.id else v for v in old.inputs)
        assert not any(k.startswith(node.id + ".") for k in child.weights)
        assert_weights_kept(parent, child, {n.id for n in child.graph.nodes})


def test_ls_swaps_two_layers_of_one_type() -> None:
    for parent in (mlp(), conv1d()):
        g = parent.graph
        for seed in range(5):
            child = run("LS", parent, seed)
            assert [n.id for n in child.graph.nodes] == [n.id for n in g.nodes]
            diff = [n for n in child.graph.nodes
                    if (n.op, n.attrs) != (g.node(n.id).op, g.node(n.id).attrs)
                    or any(not np.array_equal(v, parent.weights[f"{n.id}.{k}"])
                           for k, v in child.node_weights(n.id).items()
                           if f"{n.id}.{k}" in parent.weights)]
            assert len(diff) == 2
            a, b = diff
            assert g.type_of(a.id) == g.type_of(b.id) == g.type_of(a.inputs[0])
            assert (a.op, a.attrs) == (g.node(b.id).op, g.node(b.id).attrs)
            assert (b.op, b.attrs) == (g.node(a.id).op, g.node(a.id).attrs)
            for x, y in ((a, b), (b, a)):
                wx, wy = child.node_weights(x.id), parent.node_weights(y.id)
                assert wx.keys() == wy.keys()
                assert all(np.array_equal(wx[k], wy[k]) for k in wx)
            assert [n.inputs for n in child.graph.nodes] == [n.inputs for n in g.nodes]


def test_ls_refuses_without_two_layers_of_one_type() -> None:
    with pytest.raises(NotApplicable):
        LEMON_RULES["LS"](lenet(), np.random.default_rng(0))  # all its type-keepers differ


@pytest.mark.parametrize("seed_name", sorted(SEEDS))
def test_lc_copies_a_layer_after_itself(seed_name: str) -> None:
    parent = SEEDS[seed_name]()
    g = parent.graph
    for seed in range(4):
        child = run("LC", parent, seed)
        (copy,) = added_nodes(parent, child)
        (orig_id,) = copy.inputs
        orig = g.node(orig_id)
        assert (copy.op, copy.attrs) == (orig.op, orig.attrs)
        assert g.type_of(orig_id) == g.type_of(orig.inputs[0])
        cg = child.graph
        assert cg.index(copy.id) == cg.index(orig_id) + 1
        assert [n.id for n in cg.consumers(orig_id)] == [copy.id]
        assert orig_id not in cg.outputs
        wc, wo = child.node_weights(copy.id), parent.node_weights(orig_id)
        assert wc.keys() == wo.keys()
        for k in wc:
            np.testing.assert_array_equal(wc[k], wo[k])
            assert wc[k] is not wo[k]


@pytest.mark.parametrize("seed_name", ["lenet", "mlp", "conv1d", "lstm", "volume"])
def test_la_adds_one_layer_that_keeps_its_input_type(seed_name: str) -> None:
    parent = SEEDS[seed_name]()
    for seed in range(6):
        child = run("LA", parent, seed)
        (new,) = added_nodes(parent, child)
        assert new.op in LA_LAYERS
        (src,) = new.inputs
        assert child.graph.type_of(new.id) == parent.graph.type_of(src)
        a = new.a
        if "kernel_size" in a:
            assert set(a["kernel_size"]) == {3} and set(a["strides"]) == {1}
            assert a["padding"] == "same"
        if "pool_size" in a:
            assert set(a["pool_size"]) == {3} and set(a["strides"]) == {1}
        if new.op == "ReLU":
            assert a["max_value"] == 1.0
        assert_weights_kept(parent, child, {n.id for n in parent.graph.nodes})


# Which seed each LA layer and MLA bundle is exercised on.
_LA_HOST = {1: "conv1d", 2: "lenet", 3: "volume"}


@pytest.mark.parametrize("layer", sorted(LA_LAYERS))
def test_every_la_layer_can_be_added(layer: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lemon_rules, "LA_LAYERS", {layer: LA_LAYERS[layer]})
    parent = SEEDS[_LA_HOST.get(get_op(layer).spatial, "mlp")]()
    (new,) = added_nodes(parent, run("LA", parent))
    assert new.op == layer


_MLA_HOST = {"flatten": "mlp", "repeat_vector": "mlp", "cropping": "lenet",
             "zero_padding": "conv1d", "upsampling": "conv1d", "global_pool": "lenet",
             "recurrent": "lstm"}
_MLA_FIRST = {"flatten": "Flatten", "repeat_vector": "RepeatVector", "cropping": "Cropping",
              "zero_padding": "ZeroPadding", "upsampling": "UpSampling",
              "global_pool": "Global", "recurrent": ""}


@pytest.mark.parametrize("bundle", sorted(MLA_BUNDLES))
def test_every_mla_bundle_restores_its_input_type(bundle: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lemon_rules, "MLA_BUNDLES", {bundle: MLA_BUNDLES[bundle]})
    parent = SEEDS[_MLA_HOST[bundle]]()
    seen = set()
    for seed in range(6):
        child = run("MLA", parent, seed)
        new = added_nodes(parent, child)
        assert new and new[0].op.startswith(_MLA_FIRST[bundle])
        (src,) = new[0].inputs
        for prev, nxt in zip(new, new[1:], strict=False):  # one chain, in order
            assert nxt.inputs == (prev.id,)
        end = new[-1].id
        assert child.graph.type_of(end) == parent.graph.type_of(src)
        readers = {n.id for n in parent.graph.consumers(src)}
        assert {n.id for n in child.graph.consumers(end)} == readers
        assert all(n.inputs == (end,) or src not in n.inputs for n in child.graph.nodes
                   if n.id in readers)
        seen.add((src, tuple(n.op for n in new)))
    assert len(seen) >= 2  # the closing layer (or the position) varies


def test_mla_refuses_when_nothing_fits(monkeypatch: pytest.MonkeyPatch) -> None:
    b = GraphBuilder((5,))  # rank 1: no bundle (nor LA layer) applies
    b.add("Tanh", b.add("ReLU", "x0"))
    for rule in ("MLA", "LA"):
        with pytest.raises(NotApplicable):
            LEMON_RULES[rule](_model(b), np.random.default_rng(0))
    monkeypatch.setattr(lemon_rules, "MLA_BUNDLES", {"flatten": MLA_BUNDLES["flatten"]})
    tight = LemonRuleSettings(max_new_weights=10)  # the smallest, Dense(4), has 20
    with pytest.raises(Rejected, match="weights"):
        LEMON_RULES["MLA"](mlp(), np.random.default_rng(0), settings=tight)


@pytest.mark.parametrize("seed_name", ["lenet", "mlp", "conv1d", "volume"])
def test_afrm_removes_one_inner_activation(seed_name: str) -> None:
    parent = SEEDS[seed_name]()
    g = parent.graph
    for seed in range(4):
        child = run("AFRm", parent, seed)
        gone = [n for n in g.nodes if n.id not in {m.id for m in child.graph.nodes}]
        assert len(gone) == 1 and get_op(gone[0].op).family == "activation"
        assert gone[0].id not in g.outputs


@pytest.mark.parametrize("maker", [dense_softmax, no_weights, mobile])
def test_afrm_refuses_without_removable_activation(maker: Callable[[], Model]) -> None:
    model = maker()
    if maker is no_weights:  # its only activation is not an output: remove it, then refuse
        model = run("AFRm", model)
    with pytest.raises(NotApplicable):
        LEMON_RULES["AFRm"](model, np.random.default_rng(0))


@pytest.mark.parametrize("seed_name", ["lenet", "mlp", "conv1d", "lstm"])
def test_afrp_replaces_one_activation_kind(seed_name: str) -> None:
    parent = SEEDS[seed_name]()
    g = parent.graph
    allowed = {op for op, _ in DEFAULT_SETTINGS.afrp_activations}
    for seed in range(6):
        child = run("AFRp", parent, seed)
        assert [n.id for n in child.graph.nodes] == [n.id for n in g.nodes]
        diff = [n for n in child.graph.nodes if n != g.node(n.id)]
        assert len(diff) == 1
        new, old = diff[0], g.node(diff[0].id)
        assert get_op(old.op).family == "activation" and old.op != "Softmax"
        assert new.op in allowed and new.op != old.op and new.inputs == old.inputs
        if new.op == "LeakyReLU":
            assert new.attr("alpha") == 0.01
        assert set(child.node_weights(new.id)) == ({"alpha"} if new.op == "PReLU" else set())


def test_afrp_refuses_on_softmax_only() -> None:
    with pytest.raises(NotApplicable):
        LEMON_RULES["AFRp"](dense_softmax(), np.random.default_rng(0))


# ---- inner-layer rules --------------------------------------------------------------------


def changed_node(parent: Model, child: Model) -> str:
    assert child.graph == parent.graph
    assert child.weights.keys() == parent.weights.keys()
    ids = {k.split(".")[0] for k, v in parent.weights.items()
           if not np.array_equal(child.weights[k], v)}
    assert len(ids) == 1
    return ids.pop()


def neuron_diff(parent: Model, child: Model) -> tuple[str, int, dict, dict]:
    """(node, neuron count, parent matrices, child matrices) of the one changed node."""
    node_id = changed_node(parent, child)
    node = parent.graph.node(node_id)
    before = {k: m for k, (p, m) in neuron_matrices(parent, node).items()}
    after = {k: m for k, (p, m) in neuron_matrices(child, node).items()}
    n = next(iter(before.values())).shape[1]
    for k, v in parent.node_weights(node_id).items():  # nothing outside the neurons moved
        if k not in before:
            np.testing.assert_array_equal(child.node_weights(node_id)[k], v)
    return node_id, n, before, after


def thirty_percent(n: int) -> int:
    """LEMON's 30% of a layer's neurons, rounded half up, at least one."""
    return {1: 1, 2: 1, 3: 1, 4: 1, 5: 2, 6: 2, 8: 2, 10: 3, 16: 5, 84: 25, 120: 36}[n]


def changed_columns(before: dict, after: dict) -> set[int]:
    return {int(c) for k in before for c in np.nonzero((before[k] != after[k]).any(0))[0]}


@pytest.mark.parametrize("seed_name", sorted(SEEDS))
@pytest.mark.parametrize("rule", ["GF", "NEB", "NAI"])
def test_neuron_rules_touch_thirty_percent(seed_name: str, rule: str) -> None:
    parent = SEEDS[seed_name]()
    for seed in range(5):
        child = run(rule, parent, seed)
        _, n, before, after = neuron_diff(parent, child)
        cols = changed_columns(before, after)
        assert len(cols) == thirty_percent(n)
        for k in before:
            rest = [c for c in range(n) if c not in cols]
            np.testing.assert_array_equal(after[k][:, rest], before[k][:, rest])
            sel = sorted(cols)
            if rule == "NEB":
                assert not after[k][:, sel].any()
            elif rule == "NAI":
                np.testing.assert_allclose(after[k][:, sel], -before[k][:, sel])


def test_gf_sigma_is_a_tenth_of_the_weights_std() -> None:
    parent = lenet()
    for seed in range(8):
        child = run("GF", parent, seed)
        node_id, n, before, after = neuron_diff(parent, child)
        kernel = before.get("kernel", before.get("gamma"))
        if kernel.size < 2000:
            continue
        sel = sorted(changed_columns(before, after))
        noise = (after["kernel"] - kernel)[:, sel]
        assert 0.08 < noise.std() / kernel.std() < 0.12
        return
    raise AssertionError("no large layer was fuzzed")


@pytest.mark.parametrize("seed_name", ["lenet", "mlp", "conv1d", "lstm", "mobile"])
def test_ws_shuffles_incoming_weights_of_selected_neurons(seed_name: str) -> None:
    parent = SEEDS[seed_name]()
    for seed in range(5):
        child = run("WS", parent, seed)
        node_id, n, before, after = neuron_diff(parent, child)
        cols = changed_columns(before, after)
        assert 1 <= len(cols) <= thirty_percent(n)
        for k in before:
            if k in ("bias", "beta"):
                np.testing.assert_array_equal(after[k], before[k])
            for c in cols:
                np.testing.assert_array_equal(np.sort(after[k][:, c]), np.sort(before[k][:, c]))


def test_ws_refuses_on_single_weight_neurons() -> None:
    b = GraphBuilder((2, 5))
    b.add("BatchNorm", "x0")
    model = _model(b)
    with pytest.raises(NotApplicable):
        LEMON_RULES["WS"](model, np.random.default_rng(0))
    run("NAI", model)  # other rules do act on BatchNorm channels


@pytest.mark.parametrize("seed_name", sorted(SEEDS))
def test_ns_swaps_exactly_two_neurons(seed_name: str) -> None:
    parent = SEEDS[seed_name]()
    for seed in range(5):
        child = run("NS", parent, seed)
        _, n, before, after = neuron_diff(parent, child)
        cols = sorted(changed_columns(before, after))
        assert len(cols) == 2
        a, b = cols
        for k in before:
            np.testing.assert_array_equal(after[k][:, a], before[k][:, b])
            np.testing.assert_array_equal(after[k][:, b], before[k][:, a])


@pytest.mark.parametrize("rule", sorted(INNER_RULES))
def test_inner_rules_refuse_without_weights(rule: str) -> None:
    with pytest.raises(NotApplicable):
        LEMON_RULES[rule](no_weights(), np.random.default_rng(0))


# ---- what a neuron is, checked on the raw arrays ------------------------------------------


def _only(parent: Model, child: Model, op: str) -> tuple[dict, dict]:
    node_id = changed_node(parent, child)
    assert parent.graph.node(node_id).op == op
    return parent.node_weights(node_id), child.node_weights(node_id)


def _ns_on(model: Model, op: str) -> tuple[dict, dict]:
    for seed in range(50):
        child = run("NS", model, seed)
        node_id = changed_node(model, child)
        if model.graph.node(node_id).op == op:
            return _only(model, child, op)
    raise AssertionError(f"NS never picked {op}")


def test_recurrent_neuron_is_a_unit_across_all_gates() -> None:
    old, new = _ns_on(lstm(), "LSTM")
    units = old["recurrent_kernel"].shape[0]
    moved = sorted({c % units for c in np.nonzero((old["kernel"] != new["kernel"]).any(0))[0]})
    assert len(moved) == 2
    a, b = moved
    for name in ("kernel", "recurrent_kernel", "bias"):
        for g in range(4):  # LSTM gates i, f, c, o
            np.testing.assert_array_equal(new[name][..., g * units + a],
                                          old[name][..., g * units + b])


def test_transposed_conv_neuron_is_axis_minus_two() -> None:
    old, new = _ns_on(mobile(), "Conv2DTranspose")
    moved = np.nonzero((old["kernel"] != new["kernel"]).any(axis=(0, 1, 3)))[0]
    assert len(moved) == 2
    a, b = moved
    np.testing.assert_array_equal(new["kernel"][:, :, a, :], old["kernel"][:, :, b, :])
    assert new["bias"][a] == old["bias"][b]


def test_depthwise_neuron_is_channel_times_multiplier() -> None:
    old, new = _ns_on(mobile(), "DepthwiseConv2D")
    m = old["kernel"].shape[3]
    moved = np.nonzero(old["bias"] != new["bias"])[0]
    assert len(moved) == 2
    a, b = moved
    np.testing.assert_array_equal(new["kernel"][:, :, a // m, a % m],
                                  old["kernel"][:, :, b // m, b % m])


def test_separable_neuron_leaves_depthwise_kernel() -> None:
    old, new = _ns_on(mobile(), "SeparableConv2D")
    np.testing.assert_array_equal(new["depthwise_kernel"], old["depthwise_kernel"])
    assert (old["pointwise_kernel"] != new["pointwise_kernel"]).any()


def test_batchnorm_neuron_is_gamma_and_beta() -> None:
    old, new = _ns_on(conv1d(), "BatchNorm")
    for name in ("moving_mean", "moving_variance"):
        np.testing.assert_array_equal(new[name], old[name])
    moved = np.nonzero(old["gamma"] != new["gamma"])[0]
    assert len(moved) == 2 and (old["beta"][moved] == new["beta"][moved[::-1]]).all()


def test_rules_chain_to_higher_order() -> None:
    model, rng = lenet(), np.random.default_rng(3)
    for name in ["LA", "MLA", "GF", "LC", "NS", "AFRp", "LR", "NEB"]:
        digest = model.digest()
        child = apply_rule(name, model, rng)
        check_mutant(model, child, digest)
        model = child
