"""Model reduction passes: smaller candidates stay valid and compute what they should.

The passes are run on small IR models and their candidates executed by the real torch
lowering: a width cut must keep the leading channels' values (the kept slice of the
weights), and every candidate must pass the IR's own check.
"""

from __future__ import annotations

import numpy as np
import pytest
from model_support import case_of

from dlfuzz import registry
from dlfuzz.cases import GraphCase
from dlfuzz.ir.graph import GraphBuilder
from dlfuzz.ir.model import Model
from dlfuzz.ir.weights import init_model
from dlfuzz.kinds.graph_reduce import (
    cut_after,
    drop_prefix,
    fit_weights,
    model_weight,
    shrink_shapes,
    shrink_widths,
    suffix_from,
)


@pytest.fixture(scope="module")
def torch_backend():
    backend = registry.load("backend", "torch")()
    backend.setup()
    return backend


def conv_dense(rng: np.random.Generator) -> Model:
    b = GraphBuilder((2, 6, 6, 3))
    x = b.add("Conv2D", "x0", filters=4, kernel_size=(3, 3), padding="valid")
    x = b.add("ReLU", x)
    x = b.add("Flatten", x)
    b.add("Dense", x, units=5)
    return init_model(b.build(), rng)


def weights_of(case: GraphCase) -> dict[str, np.ndarray]:
    return {k: t.to_numpy() for k, t in case.weights}


def test_width_cut_keeps_the_leading_filters(torch_backend) -> None:
    rng = np.random.default_rng(0)
    case = case_of(conv_dense(rng), rng)
    conv_id = case.graph.nodes[0].id
    narrow = [c for c in shrink_widths(case) if c.graph.nodes[0].attr("filters") == 1]
    assert narrow, "no candidate with one filter"
    small = narrow[0]
    w = weights_of(small)
    assert w[f"{conv_id}.kernel"].shape == (3, 3, 3, 1)
    dense = small.graph.nodes[-1]
    assert w[f"{dense.id}.kernel"].shape == (16, 5)  # 4 x 4 positions x 1 channel
    assert model_weight(small) < model_weight(case)
    # The conv's own output is the original's first channel, computed by torch.
    full = next(c for c in cut_after(case) if c.graph.outputs == (conv_id,))
    cut = next(c for c in cut_after(small) if c.graph.outputs == (conv_id,))
    (before,) = torch_backend.run_graph(full)
    (after,) = torch_backend.run_graph(cut)
    np.testing.assert_allclose(after, before[..., :1], rtol=1e-6, atol=1e-6)


def test_input_channels_shrink_with_the_kernels(torch_backend) -> None:
    rng = np.random.default_rng(1)
    case = case_of(conv_dense(rng), rng)
    fewer = [c for c in shrink_shapes(case) if c.graph.inputs[0].shape[-1] < 3]
    assert fewer, "the channel axis was never shrunk (weights not fitted?)"
    for c in fewer:
        channels = c.graph.inputs[0].shape[-1]
        kernel = weights_of(c)[f"{c.graph.nodes[0].id}.kernel"]
        assert kernel.shape[2] == channels
        np.testing.assert_array_equal(
            kernel, weights_of(case)[f"{case.graph.nodes[0].id}.kernel"][:, :, :channels])
        (out,) = torch_backend.run_graph(c)
        assert out.shape == (2, 5) and np.isfinite(out).all()


def test_recurrent_units_shrink(torch_backend) -> None:
    rng = np.random.default_rng(2)
    b = GraphBuilder((2, 5, 3))
    x = b.add("LSTM", "x0", units=4, return_sequences=True)
    b.add("GRU", x, units=3)
    case = case_of(init_model(b.build(), rng), rng)
    candidates = list(shrink_widths(case))
    widths = sorted((c.graph.nodes[0].attr("units"), c.graph.nodes[1].attr("units"))
                    for c in candidates)
    assert (1, 3) in widths and (2, 3) in widths and (4, 1) in widths
    for c in candidates:
        Model(c.graph, weights_of(c)).check()
        (out,) = torch_backend.run_graph(c)
        assert out.shape == (2, c.graph.nodes[1].attr("units"))


def test_fit_weights_refuses_to_grow() -> None:
    rng = np.random.default_rng(3)
    model = conv_dense(rng)
    wider = model.graph.with_nodes(
        [model.graph.nodes[0].with_attrs(filters=8), *model.graph.nodes[1:]])
    assert fit_weights(wider, dict(model.weights)) is None
    assert fit_weights(model.graph, dict(model.weights)) is not None


def torch_values(backend):
    """The probe values a sound backend gives the reduction (here torch)."""
    def values(case: GraphCase) -> dict[str, np.ndarray]:
        outs = backend.run_graph(case.with_probe(True))
        found = {x: t.to_numpy() for x, t in zip(case.graph.input_names, case.tensors,
                                                 strict=True)}
        found.update({n.id: o for n, o in zip(case.graph.nodes, outs, strict=True)})
        return found
    return values


def test_drop_prefix_keeps_a_multi_node_tail(torch_backend) -> None:
    rng = np.random.default_rng(4)
    b = GraphBuilder((1, 8, 8, 2))
    x = b.add("Conv2D", "x0", filters=3, kernel_size=(3, 3), padding="valid")
    x = b.add("Cropping2D", x, cropping=((1, 1), (1, 1)))
    x = b.add("ZeroPadding2D", x, padding=((1, 1), (1, 1)))
    b.add("MaxPool2D", x, pool_size=(2, 2))
    case = case_of(init_model(b.build(), rng), rng)
    (full,) = torch_backend.run_graph(case)
    tails = list(drop_prefix(torch_values(torch_backend))(case))
    assert [[n.op for n in c.graph.nodes] for c in tails] == [
        ["ZeroPadding2D", "MaxPool2D"],
        ["Cropping2D", "ZeroPadding2D", "MaxPool2D"]]
    for c in tails:
        assert c.graph.input_names == ("x0",) and not c.weights
        (out,) = torch_backend.run_graph(c)
        np.testing.assert_allclose(out, full, rtol=1e-6, atol=1e-6)


def test_suffix_keeps_other_graph_inputs_in_order() -> None:
    b = GraphBuilder((2, 4), (2, 4))
    x = b.add("ReLU", "x1")
    y = b.add("Tanh", "x0")
    b.add("Add", y, x)
    g = b.build()
    smaller, sources = suffix_from(g, "n0")
    assert sources == ["x0", "n0"]
    assert [n.inputs for n in smaller.nodes] == [("x0",), ("n1", "x1")]
