"""Which layer's backward is wrong: the first one, from the output back, that is wrong alone.

A training-step finding (``cases/train.py``) says only "backend B's gradients of this
model are off". Backpropagation runs the layers from the output back to the input, and
a wrong layer spoils every gradient computed after it: the weights of every layer before
it, the graph inputs. So the layer to blame is the first one *in backward order* whose
own backward is wrong. Each layer is run alone as a training step of its own, fed the
values its inputs had in the model (a forward probe run on a sound backend of another
library) with its own weights, on B (and B's eager mode when B compiles) and the sound
backend. A layer is wrong alone when the gradient oracle blames B for the same symptom on
its one-layer step, or when B's float64 directional derivative of the layer differs
from the sound backend's by more than float64 rounding while the sound one agrees with
its finite differences (``oracles/gradient.py``: a layer alone is judged more sharply
than a model, whose finite differences allow 1e-4 of the derivative's magnitude; a
planted wrong tanh backward, 0.2 % off the derivative of a Conv2D + Tanh model's lone
Tanh, was under that allowance). Walking from the output end, the first layer wrong alone
is the suspect, and the finding is filed under that layer kind, LEMON's unit of a model
bug. All layers of all findings of a batch go to the workers in one round trip.

When no layer is wrong alone (a bug that needs a fusion of several layers, or rounding
that only adds up over the model), the finding keeps the model's label.
"""

from __future__ import annotations

from typing import Any

from dlfuzz.cases.grad import checks_of, has_self_check
from dlfuzz.cases.train import TrainCase
from dlfuzz.oracles.localize import Runner, isolated


def sound_backend(case: TrainCase, guilty: str, outcomes: dict[str, Any],
                  library_of: dict[str, str], compiled: dict[str, bool],
                  blamed: set[str]) -> str:
    """An eager backend of another library than ``guilty``'s, not blamed itself, whose
    step ran and checked itself in float64: its forward values feed the layers, and its
    float64 derivative of each layer is what the guilty one's is compared with."""
    for backend, outcome in outcomes.items():
        if (library_of.get(backend) != library_of.get(guilty) and not compiled.get(backend)
                and backend not in blamed and has_self_check(checks_of(outcome))):
            return backend
    return ""


def layer_steps(runner: Runner, case: TrainCase, sound: str
                ) -> list[tuple[str, str, TrainCase]]:
    """(node id, op, one-layer training step) per layer, the output end first, each fed
    what a probe run of the model on ``sound`` gave its inputs; [] when the probe fails."""
    probe = runner([case.base.with_probe(True)], [sound])[0].get(sound)
    nodes = case.graph.nodes
    if probe is None or not probe.ok or len(probe.outputs) != len(nodes):
        return []
    values = {x: t.to_numpy() for x, t in zip(case.graph.input_names, case.tensors,
                                               strict=True)}
    values.update({n.id: t.to_numpy() for n, t in zip(nodes, probe.outputs, strict=True)})
    steps = []
    for node, single in isolated(case.base, values):
        step = TrainCase(single, case.seed)
        if step.trained or step.wrt:
            steps.append((node.id, node.op, step))
    return steps
