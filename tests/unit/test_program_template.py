"""Disassembly and assembly of seed programs (text only: no deep learning library runs).

Running the assembled programs is tests/backends/test_program_run.py.
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np
import pytest

from dlfuzz.engines.program.assemble import assemble, decode_shapes
from dlfuzz.engines.program.template import Block, Raw, callee_for, disassemble
from dlfuzz.engines.program.tree import OK, Node, prune
from dlfuzz.errors import UsageError

MODULE_SEED = '''\
import numpy as np
import torch
from torch import nn

SEED = 0


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.relu1 = nn.ReLU()
        self.pool1 = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(6, 16, kernel_size=5)
        self.flatten = nn.Flatten()
        self.fc = nn.LazyLinear(NUM_CLASSES)

    def forward(self, x):
        x = self.conv1(x)
        x = self.relu1(x)
        x = self.pool1(x)
        x = self.conv2(x)
        x = torch.relu(x)
        x = self.flatten(x)
        x = self.fc(x)
        return x


model = Net()
'''

SEQ_SEED = '''\
import torch.nn as nn

NUM_CLASSES = 10
model = nn.Sequential(
    nn.Conv2d(1, 6, kernel_size=5, padding=2),
    nn.ReLU(),
    nn.MaxPool2d(kernel_size=2),
    nn.Dropout(p=0.25),
    nn.Flatten(),
    nn.LazyLinear(NUM_CLASSES),
)
RESULT = {}
'''

KERAS_SEED = '''\
import keras
from keras import layers

inputs = keras.Input(shape=(28, 28, 1))
x = layers.Conv2D(6, kernel_size=5, padding="same")(inputs)
x = layers.MaxPooling2D(pool_size=2)(x)
y = layers.Conv2D(6, 1)(x)
x = layers.Add()([x, y])
x = layers.Dense(84, activation="relu")(x)
x = layers.GlobalAveragePooling2D()(x)
outputs = layers.Dense(NUM_CLASSES)(x)
model = keras.Model(inputs, outputs)
'''


def test_sequential_blocks_are_the_hidden_layers() -> None:
    template, blocks = disassemble(SEQ_SEED, "torch")
    assert template.style == "sequential" and template.n_slots == 3
    assert [b.api for b in blocks] == ["torch.nn.ReLU", "torch.nn.MaxPool2d", "torch.nn.Dropout"]
    assert blocks[2].values() == {"p": 0.25}
    # the input layer and the head stay in the template
    assert "nn.Conv2d(1, 6" in template.source and "nn.LazyLinear" in template.source
    assert "nn.ReLU()" not in template.source


def test_round_trip_text_is_the_seed_with_recording_off() -> None:
    template, blocks = disassemble(SEQ_SEED, "torch")
    again = assemble(template, blocks, record=False)
    assert ast.dump(ast.parse(again)) == ast.dump(ast.parse(SEQ_SEED))
    recorded = assemble(template, blocks)
    assert "register_forward_pre_hook" in recorded and "SLOT_SHAPES" in recorded
    ast.parse(recorded)


def test_sequential_recording_hooks_the_layer_reading_each_slot() -> None:
    template, blocks = disassemble(SEQ_SEED, "torch")
    only_last = assemble(template, [None, None, blocks[2]])
    # slots 0 and 1 are empty: the Dropout at position 1 reads all three activations
    assert "{0: 1, 1: 1, 2: 1}" in only_last
    assert "{0: 1, 1: 2, 2: 3}" in assemble(template, blocks)


def test_module_style_maps_init_definitions_to_forward_uses() -> None:
    template, blocks = disassemble(MODULE_SEED, "torch")
    assert template.style == "module"
    assert [(b.name, b.api) for b in blocks] == [
        ("relu1", "torch.nn.ReLU"), ("pool1", "torch.nn.MaxPool2d"),
        ("conv2", "torch.nn.Conv2d")]
    assert blocks[2].args == (("#0", 6), ("#1", 16), ("kernel_size", 5))
    again = assemble(template, blocks, record=False)
    assert ast.dump(ast.parse(again)) == ast.dump(ast.parse(MODULE_SEED))
    bare = assemble(template, [None, None, None])
    assert "self.conv2" not in bare and "x = torch.relu(x)" in bare
    assert "record_slot(2, x)" in bare and "SLOT_SHAPES = {}" in bare


def test_functional_style_keeps_branches_and_head_in_the_template() -> None:
    template, blocks = disassemble(KERAS_SEED, "keras")
    assert template.style == "functional"
    assert [b.api for b in blocks] == ["keras.layers.MaxPooling2D", "keras.layers.Dense"]
    assert "layers.Add()" in template.source and "GlobalAveragePooling2D" in template.source
    again = assemble(template, blocks, record=False)
    assert ast.dump(ast.parse(again)) == ast.dump(ast.parse(KERAS_SEED))
    assert "record_slot(1, x)" in assemble(template, blocks)


def test_block_rendering_and_replacement() -> None:
    block = Block(0, "torch.nn.Conv2d", "nn.Conv2d",
                  (("in_channels", 6), ("out_channels", Raw("NUM_CLASSES")),
                   ("padding", "same"), ("eps", 0.1)))
    assert block.expression() == ("nn.Conv2d(in_channels=6, out_channels=NUM_CLASSES, "
                                  "padding='same', eps=0.1)")
    moved = block.with_args({"in_channels": 6}, api="torch.nn.Conv1d")
    assert moved.expression() == "nn.Conv1d(in_channels=6)"
    assert callee_for("layers.Dense", "keras.layers.Dense", "keras.layers.Conv1D") == \
        "layers.Conv1D"
    assert callee_for("nn.ReLU", "torch.nn.ReLU", "torch.nn.modules.foo.Bar") == \
        "torch.nn.modules.foo.Bar"


def test_bad_seeds_get_usage_errors() -> None:
    with pytest.raises(UsageError, match="not valid Python"):
        disassemble("def broken(:\n", "torch")
    with pytest.raises(UsageError, match="Sequential"):
        disassemble("import torch\nx = 1\n", "torch", style="sequential")
    with pytest.raises(UsageError, match="Input"):
        disassemble("import keras\nx = 1\n", "keras")


def test_decode_shapes() -> None:
    assert decode_shapes([0, 2, 20, 6, 3, 4, 20, 6, 14, 14]) == {0: (20, 6),
                                                                 3: (20, 6, 14, 14)}
    assert decode_shapes([]) == {}


def test_pruning_keeps_half_of_each_class_and_drops_failures() -> None:
    rng = np.random.default_rng(0)
    nodes = [Node(f"n{i}", 1, (), klass="AR:a", state=OK) for i in range(4)]
    nodes += [Node(f"m{i}", 1, (), klass="RG:p:legal", state=OK) for i in range(3)]
    nodes += [Node("neg", 1, (), klass="BC", state=OK, negative=True),
              Node("bad", 1, (), klass="AR:b", state="failed")]
    kept = prune(nodes, rng)
    assert sum(n.klass == "AR:a" for n in kept) == 2
    assert sum(n.klass == "RG:p:legal" for n in kept) == 2
    assert {n.id for n in kept}.isdisjoint({"neg", "bad"})
    assert len(prune(nodes, rng, limit=1)) == 1


# ---- the program oracles, on hand-made outcomes (no library runs) ---------------------

def _outcome(backend: str, rss: float = 300.0, loss: float = 1.0, status: str = "ok",
             message: str = "", exc_type: str = "") -> Any:
    from dlfuzz.cases import Outcome, Tensor

    if status != "ok":
        return Outcome(backend, status, exc_type=exc_type, message=message)
    outs = (np.full((2, 3), loss, np.float32), np.array([loss]), np.array([loss]),
            np.array([0, 2, 20, 6]), np.array([rss]))
    return Outcome(backend, "ok", tuple(Tensor.from_numpy(a) for a in outs), duration_s=0.1)


def _program(operator: str = "RG", expect: str = "valid", library: str = "torch",
             n: int = 0) -> Any:
    from dlfuzz.cases import ProgramCase

    edge = (("seed", "s"), ("block", 0), ("api", "torch.nn.Dropout"), ("param", "p"),
            ("operator", operator), ("value", "1.1"))
    return ProgramCase("torch.nn.Dropout", f"# {n}\n", library, expect, edge=edge, seed="s")


def _ctx() -> Any:
    from dlfuzz.oracles.base import OracleContext

    return OracleContext(None, {}, {})  # type: ignore[arg-type]


def test_state_oracle_verdicts() -> None:
    from dlfuzz.oracles.program import ProgramStateOracle

    oracle, ctx = ProgramStateOracle(), _ctx()
    accepted = oracle.check(_program("BC", "invalid:p"), {"torch": _outcome("torch")}, ctx)
    assert [f.symptom for f in accepted] == ["boundary"]
    assert accepted[0].detail("edge_param") == "p"
    rejected = _outcome("torch", status="exception", exc_type="ValueError", message="p bad")
    assert oracle.check(_program("BC", "invalid:p"), {"torch": rejected}, ctx) == []
    shape = _outcome("torch", status="exception", exc_type="RuntimeError",
                     message="mat1 and mat2 shapes cannot be multiplied (20x400 and 84x10)")
    assert oracle.check(_program(), {"torch": shape}, ctx) == []
    assert ctx.stats["program_generation_failures"] == 1
    internal = _outcome("torch", status="exception", exc_type="RuntimeError",
                        message="INTERNAL ASSERT FAILED at foo.cpp")
    assert [f.symptom for f in oracle.check(_program(), {"torch": internal}, ctx)] == ["status"]
    crash = _outcome("torch", status="crash", exc_type="SIGSEGV")
    assert [f.symptom for f in oracle.check(_program(), {"torch": crash}, ctx)] == ["crash"]


def test_cross_oracle_needs_a_clear_majority() -> None:
    from dlfuzz.oracles.program import KerasCrossOracle

    oracle, ctx = KerasCrossOracle(), _ctx()
    case = _program(library="keras")
    close = {b: _outcome(b, loss=1.0 + 1e-5 * i) for i, b in
             enumerate(("keras-tf", "keras-jax", "keras-torch"))}
    assert oracle.check(case, close, ctx) == []
    off = dict(close, **{"keras-jax": _outcome("keras-jax", loss=1.5)})
    found = oracle.check(case, off, ctx)
    assert [(f.symptom, f.guilty_backend) for f in found] == [("numeric", "keras-jax")]
    split = {"keras-tf": _outcome("keras-tf", loss=1.0), "keras-jax": _outcome("keras-jax", loss=1.5),
             "keras-torch": _outcome("keras-torch", loss=2.0)}
    assert oracle.check(case, split, ctx) == []


def test_performance_oracle_reports_a_leak_not_a_high_water_mark() -> None:
    from dlfuzz.oracles.program import PerformanceOracle

    leak, steps, ctx = PerformanceOracle(), PerformanceOracle(), _ctx()
    found_leak, found_steps = [], []
    for i in range(40):
        probe = _program("probe", n=i)
        found_leak += leak.check(probe, {"torch": _outcome("torch", rss=300 + 10 * i)}, ctx)
        # a bigger model now and then raises the resident size; the template never does
        big = 300 + 30 * (i // 5)
        steps.check(_program(n=100 + i), {"torch": _outcome("torch", rss=big)}, ctx)
        found_steps += steps.check(probe, {"torch": _outcome("torch", rss=big)}, ctx)
    assert found_leak and found_leak[0].symptom == "performance"
    assert found_leak[0].detail("metric") == "memory" and len(found_leak[0].detail("curve")) > 20
    assert not found_steps
