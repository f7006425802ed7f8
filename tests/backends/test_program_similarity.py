"""The shipped similarity table against tau recomputed with the real embedding model."""

from __future__ import annotations

import pytest

from dlfuzz.engines.program import knowledge as kb
from dlfuzz.engines.program import similarity as sim

PAIRS = {
    "torch": [("torch.nn.Conv2d", "torch.nn.Conv1d"), ("torch.nn.ReLU", "torch.nn.ReLU6"),
              ("torch.nn.LSTM", "torch.nn.GRU"), ("torch.nn.BatchNorm2d",
                                                  "torch.nn.InstanceNorm2d")],
    "keras": [("keras.layers.Conv2D", "keras.layers.Conv1D"),
              ("keras.layers.LSTM", "keras.layers.GRU"),
              ("keras.layers.MaxPooling2D", "keras.layers.AveragePooling2D")],
}


@pytest.fixture(scope="module")
def model():
    return sim.load_model()


@pytest.mark.parametrize("library", ["torch", "keras"])
def test_recomputed_tau_matches_the_table(model, library: str) -> None:
    specs = kb.load_kb(library)
    for a, b in PAIRS[library]:
        va, vb = sim.embed(model, [sim.definition_text(specs[a]), sim.definition_text(specs[b])])
        tau = sim.tau(sim.cosine(va, vb), specs[a], specs[b])
        table = dict(sim.similar(library, a))
        assert b in table, (a, b)
        assert abs(table[b] - tau) < 2e-3, (a, b, table[b], tau)


def test_conv_neighbours_are_convolutions() -> None:
    top = [a for a, _ in sim.similar("torch", "torch.nn.Conv2d")[:5]]
    assert {"torch.nn.Conv1d", "torch.nn.Conv3d", "torch.nn.ConvTranspose2d"} <= set(top)
    top = [a for a, _ in sim.similar("keras", "keras.layers.Conv2D")[:5]]
    assert {"keras.layers.Conv1D", "keras.layers.Conv3D"} <= set(top)
    top = [a for a, _ in sim.similar("torch", "torch.nn.ReLU")[:8]]
    assert "torch.nn.Conv2d" not in top and "torch.nn.ReLU6" in top
