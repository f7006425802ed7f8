"""Seed models: structure faithful to their architectures, deterministic, any float dtype;
``load_seed`` resolves names and dlfuzz model files and explains what it cannot load."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from dlfuzz.engines.model.seeds import SEEDS, load_seed
from dlfuzz.errors import UsageError
from dlfuzz.ir.graph import Graph
from dlfuzz.ir.model import Model
from dlfuzz.ir.serialize import save_model

# name -> (input shape without batch, classes, op kinds with their minimum counts)
EXPECTED: dict[str, tuple[tuple[int, ...], int, dict[str, int]]] = {
    "lenet5": ((28, 28, 1), 10, {"Conv2D": 2, "Flatten": 1, "Dense": 3, "Softmax": 1}),
    "alexnet": ((32, 32, 3), 10, {"Conv2D": 5, "MaxPool2D": 3, "Dense": 3, "Dropout": 2,
                                  "Softmax": 1}),
    "resnet": ((16, 16, 3), 10, {"Conv2D": 6, "BatchNorm": 6, "Add": 2,
                                 "GlobalAvgPool2D": 1, "Dense": 1}),
    "mobilenet": ((32, 32, 3), 10, {"DepthwiseConv2D": 3, "BatchNorm": 7, "Conv2D": 4,
                                    "GlobalAvgPool2D": 1, "Dense": 1}),
    "vgg": ((32, 32, 3), 10, {"Conv2D": 4, "MaxPool2D": 2, "Flatten": 1, "Dense": 2,
                              "Softmax": 1}),
    "lstm": ((10, 8), 5, {"LSTM": 2, "Dense": 1, "Softmax": 1}),
    "gru": ((10, 8), 5, {"GRU": 2, "Dense": 1, "Softmax": 1}),
}


def seed(name: str, rng_seed: int = 0, **kw: object) -> Model:
    return SEEDS[name](np.random.default_rng(rng_seed), **kw)


def producer(g: Graph, value: str) -> str:
    return g.node(value).op


def test_every_seed_is_listed() -> None:
    assert set(SEEDS) == set(EXPECTED) | {"identity"}


def test_identity_seed_is_dljsfuzzers_chain() -> None:
    g = seed("identity").graph
    assert g.ops() == ["Identity"] * 10 and g.inputs[0].shape == (2, 8, 8, 3)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_seed_builds_checks_and_has_its_architecture(name: str) -> None:
    model = seed(name).check()
    g = model.graph
    shape, classes, ops = EXPECTED[name]
    assert [t.shape for t in g.inputs] == [(2, *shape)]
    assert g.type_of(g.outputs[0]).shape == (2, classes)
    counts = Counter(g.ops())
    for op, n in ops.items():
        assert counts[op] >= n, (op, counts)
    assert all(np.isfinite(w).all() for w in model.weights.values())
    # a classifier head: the last op is a Softmax over the class axis (resnet/mobilenet too)
    assert g.nodes[-1].op == "Softmax"


def test_lenet5_keeps_the_original_layer_sizes() -> None:
    g = seed("lenet5").graph
    convs = [n for n in g.nodes if n.op == "Conv2D"]
    assert [(n.attr("filters"), n.attr("kernel_size"), n.attr("padding")) for n in convs] == [
        (6, (5, 5), "same"), (16, (5, 5), "valid")]
    assert [n.attr("units") for n in g.nodes if n.op == "Dense"] == [120, 84, 10]
    assert g.type_of(next(n.id for n in g.nodes if n.op == "Flatten")).shape == (2, 400)


def test_resnet_has_an_identity_and_a_projection_skip() -> None:
    g = seed("resnet").graph
    adds = [n for n in g.nodes if n.op == "Add"]
    # identity block: one operand is a value also read by the residual branch (the skip)
    first = adds[0]
    assert any(len(g.consumers(v)) >= 2 and producer(g, v) == "ReLU" for v in first.inputs)
    # projection block: one operand is BN(Conv2D 1x1, strides 2)
    projected = [g.node(g.node(v).inputs[0]) for v in adds[1].inputs
                 if producer(g, v) == "BatchNorm"]
    assert any(c.op == "Conv2D" and c.attr("kernel_size") == (1, 1)
               and c.attr("strides") == (2, 2) for c in projected)


def test_mobilenet_blocks_are_depthwise_separable_with_relu6() -> None:
    g = seed("mobilenet").graph
    for dw in (n for n in g.nodes if n.op == "DepthwiseConv2D"):
        bn = g.consumers(dw.id)[0]
        relu = g.consumers(bn.id)[0]
        pointwise = g.consumers(relu.id)[0]
        assert (bn.op, relu.op, relu.attr("max_value")) == ("BatchNorm", "ReLU", 6.0)
        assert pointwise.op == "Conv2D" and pointwise.attr("kernel_size") == (1, 1)


def test_vgg_convs_are_3x3_same() -> None:
    convs = [n for n in seed("vgg").graph.nodes if n.op == "Conv2D"]
    assert {(n.attr("kernel_size"), n.attr("padding")) for n in convs} == {((3, 3), "same")}


@pytest.mark.parametrize("name,cell", [("lstm", "LSTM"), ("gru", "GRU")])
def test_recurrent_seeds_stack_two_layers(name: str, cell: str) -> None:
    cells = [n for n in seed(name).graph.nodes if n.op == cell]
    assert [(n.attr("units"), n.attr("return_sequences")) for n in cells] == [(16, True),
                                                                              (8, False)]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_seed_is_deterministic_per_rng_seed(name: str) -> None:
    assert seed(name, 7).digest() == seed(name, 7).digest()
    assert seed(name, 7).digest() != seed(name, 8).digest()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_float64_variant_has_the_same_weights(name: str) -> None:
    m32, m64 = seed(name, 3), seed(name, 3, dtype="float64")
    assert m64.graph.dtype == "float64" and m64.graph.nodes == m32.graph.nodes
    assert set(m64.weights) == set(m32.weights)
    for k, w in m64.weights.items():
        assert w.dtype == np.float64
        np.testing.assert_array_equal(w.astype(np.float32), m32.weights[k])


def test_batch_size_is_honoured() -> None:
    g = seed("resnet", batch=5).graph
    assert g.inputs[0].shape[0] == 5 and g.type_of(g.outputs[0]).shape == (5, 10)


def test_load_seed_by_name_matches_the_builder() -> None:
    got = load_seed("mobilenet", np.random.default_rng(4), batch=3, dtype="float64")
    assert got.digest() == seed("mobilenet", 4, batch=3, dtype="float64").digest()


def test_load_seed_from_json_rebatches_and_converts(tmp_path) -> None:
    original = seed("lenet5", 1)
    path = save_model(original, tmp_path / "m.json")
    got = load_seed(str(path), np.random.default_rng(99), batch=3, dtype="float64")
    assert got.graph.inputs[0].shape == (3, 28, 28, 1) and got.graph.dtype == "float64"
    assert got.graph.ops() == original.graph.ops()
    for k, w in original.weights.items():
        np.testing.assert_array_equal(got.weights[k], w.astype(np.float64))


def test_unknown_seed_name_is_explained() -> None:
    with pytest.raises(UsageError) as err:
        load_seed("lenet", np.random.default_rng(0))
    msg = str(err.value)
    assert "'lenet'" in msg and all(name in msg for name in SEEDS) and ".onnx" in msg


def test_missing_seed_file_is_explained(tmp_path) -> None:
    missing = tmp_path / "nope.onnx"
    with pytest.raises(UsageError) as err:
        load_seed(str(missing), np.random.default_rng(0))
    assert str(missing) in str(err.value) and "does not exist" in str(err.value)
    assert "lenet5" in str(err.value)


def test_unreadable_seed_file_is_explained(tmp_path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{ not json")
    with pytest.raises(UsageError) as err:
        load_seed(str(bad), np.random.default_rng(0))
    assert str(bad) in str(err.value)


def test_bad_dtype_and_batch_are_refused() -> None:
    with pytest.raises(UsageError, match="int32"):
        load_seed("vgg", np.random.default_rng(0), dtype="int32")
    with pytest.raises(UsageError, match="batch"):
        load_seed("vgg", np.random.default_rng(0), batch=0)
