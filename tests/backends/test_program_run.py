"""Programs (ProgramCase) in real workers: round trips of every seed, the engine's levels.

* Disassembling a seed and assembling its own blocks back gives a program whose RESULT
  is bit for bit the seed's (torch in the torch worker, Keras in the keras-torch worker),
  and the bare template (no hidden layer) runs too: MoCo's t0 must be runnable.
* Backends that do not take programs refuse them before running anything.
* Two levels of the derivation tree on torch: children fit the shapes their parent
  recorded (context parameters), most positive nodes run and negative nodes are rejected.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from dlfuzz.backends.base import StageError
from dlfuzz.backends.torch_backend import TorchCompileBackend
from dlfuzz.cases import ProgramCase
from dlfuzz.engines.program.assemble import assemble, decode_shapes
from dlfuzz.engines.program.engine import ProgramEngine
from dlfuzz.engines.program.seeds import SEEDS, seed_source
from dlfuzz.engines.program.template import disassemble
from dlfuzz.executor.pool import Pool, WorkerConfig


def _cases(name: str) -> list[ProgramCase]:
    library = SEEDS[name].library
    source = seed_source(name)
    template, blocks = disassemble(source, library, origin=name)
    return [ProgramCase(name, source, library, node=f"{name}-seed"),
            ProgramCase(name, assemble(template, blocks), library, node=f"{name}-assembled"),
            ProgramCase(name, assemble(template, [None] * len(blocks)), library,
                        node=f"{name}-bare")]


@pytest.fixture(scope="module")
def torch_pool() -> Iterator[Pool]:
    with Pool([WorkerConfig("torch", case_timeout_s=60)]) as pool:
        pool.start()
        yield pool


def _round_trips(pool: Pool, backend: str, library: str) -> None:
    names = sorted(n for n, s in SEEDS.items() if s.library == library)
    cases = [c for n in names for c in _cases(n)]
    results = pool.run(cases)
    problems = []
    for k, name in enumerate(names):
        seed, assembled, bare = (results[3 * k + i][backend] for i in range(3))
        if not (seed.ok and assembled.ok):
            problems.append(f"{name}: {seed.status} / {assembled.status} {assembled.message}")
            continue
        for a, b in zip(seed.outputs[:3], assembled.outputs[:3], strict=True):
            if not np.array_equal(a.to_numpy(), b.to_numpy()):
                problems.append(f"{name}: assembled program computes other values")
        if not bare.ok:
            problems.append(f"{name}: bare template fails: {bare.exc_type}: {bare.message}")
        shapes = decode_shapes(assembled.outputs[3].to_numpy().tolist())
        if sorted(shapes) != list(range(len(shapes))) or not shapes:
            problems.append(f"{name}: slot shapes not recorded: {shapes}")
    assert not problems, "\n".join(problems)


def test_every_torch_seed_round_trips(torch_pool: Pool) -> None:
    _round_trips(torch_pool, "torch", "torch")


def test_every_keras_seed_round_trips() -> None:
    with Pool([WorkerConfig("keras-torch", case_timeout_s=60)]) as pool:
        pool.start()
        _round_trips(pool, "keras-torch", "keras")


def test_program_outcomes_and_refusals(torch_pool: Pool) -> None:
    raising = ProgramCase("x", "import torch\nraise ValueError('no')\n", "torch", node="r")
    silent = ProgramCase("x", "import torch\nX = 1\n", "torch", node="s")
    broken = ProgramCase("x", "def (:\n", "torch", node="b")
    out = [r["torch"] for r in torch_pool.run([raising, silent, broken])]
    assert (out[0].status, out[0].exc_type, out[0].stage) == ("exception", "ValueError", "call")
    assert out[1].stage == "dlfuzz" and out[2].stage == "dlfuzz"
    with pytest.raises(StageError) as err:
        TorchCompileBackend().run(raising)
    assert err.value.stage == "prepare"
    assert "torch-compile" in ProgramEngine(libraries=("torch",), seed_programs=(
        "torch_lenet_seq",)).unsupported_backends(raising)


def test_two_levels_fit_their_context(torch_pool: Pool) -> None:
    engine = ProgramEngine(seed=3, libraries=("torch",), seed_programs=("torch_lenet_seq",))
    seen: list[tuple[ProgramCase, dict]] = []
    for _ in range(4):  # root, level 1 (slot 0), level 2 (slot 1), level 3 (slot 2)
        cases = engine.propose(200)
        results = torch_pool.run(cases)
        for case, outcomes in zip(cases, results, strict=True):
            engine.feedback(case, outcomes, [])
            seen.append((case, outcomes))
    edges = [dict(c.edge) for c, _ in seen]
    assert {e["block"] for e in edges} >= {-1, 0, 1, 2}
    positive = [o["torch"] for c, o in seen if not c.negative and dict(c.edge)["block"] >= 0]
    negative = [o["torch"] for c, o in seen if c.negative]
    assert positive and negative
    assert sum(o.ok for o in positive) >= 0.6 * len(positive)
    assert sum(not o.ok for o in negative) >= 0.6 * len(negative)
    # context parameters: a Conv2d's in_channels is the channel count that its program
    # recorded entering its slot (the parent recorded the same, and the child was fitted)
    fitted = 0
    for case, outcome in seen:
        slot = dict(case.edge)["block"]
        block = case.parts[1][slot] if slot >= 0 else None
        o = outcome["torch"]
        if block is not None and block.api == "torch.nn.Conv2d" and o.ok:
            channels = decode_shapes(o.outputs[3].to_numpy().tolist())[slot][1]
            assert block.values()["in_channels"] == channels, block.expression()
            fitted += 1
    assert fitted
    assert engine.stats["ran"] > 0 and {"AR", "RG", "BC"} <= {e["operator"] for e in edges}
