"""LEMON's inner-layer mutation rules (GF, WS, NEB, NAI, NS) and the rule settings.

Inner-layer rules rewrite weights only: the graph is returned unchanged. They act on a
layer's *neurons*, which LEMON leaves implicit for anything but Dense; here a neuron is
one output unit of a node (an output channel or unit), together with the
parameters that feed it ("incoming weights") and its bias:

* Dense, Conv1D/2D/3D: incoming ``kernel[..., j]`` (outputs on the last axis), ``bias[j]``.
* Conv2D/3DTranspose: incoming ``kernel[..., j, :]`` (Keras keeps the output channel on
  axis -2), ``bias[j]``.
* DepthwiseConv2D: output channel ``j = c * multiplier + m``: incoming
  ``kernel[:, :, c, m]``, ``bias[j]``.
* SeparableConv1D/2D: incoming ``pointwise_kernel[..., j]``, ``bias[j]``; the depthwise
  kernel feeds every filter, so it belongs to no single neuron and is left alone.
* SimpleRNN, LSTM, GRU: a neuron is a unit; incoming: column ``g * units + j`` of every
  gate g in ``kernel`` and in ``recurrent_kernel``; bias: those columns of ``bias``
  (both rows of GRU's).
* BatchNorm, LayerNorm: a neuron is a channel; incoming ``gamma[j]``, bias ``beta[j]``;
  moving statistics are left alone.

Other nodes with weights (PReLU slopes, DLJSFuzzer's scalar constants) have no neurons
and are never touched. A rule picks one node at random among those it applies to.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dlfuzz.errors import Rejected
from dlfuzz.ir.graph import Node
from dlfuzz.ir.model import Model

# ---- settings -----------------------------------------------------------------------------

# Replacement activations for AFRp: LEMON's relu/tanh/sigmoid/leaky_relu(0.01) plus the
# other element-wise activations of the IR. Softmax is left out (see lemon_rules.afrp), and
# so is ThresholdedReLU (theta 1 zeroes most of a random model's activations).
AFRP_ACTIVATIONS: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = (
    ("ReLU", ()), ("Tanh", ()), ("Sigmoid", ()), ("LeakyReLU", (("alpha", 0.01),)),
    ("ELU", ()), ("GELU", ()), ("PReLU", ()),
)


@dataclass(frozen=True)
class LemonRuleSettings:
    """The constants of LEMON's mutation rules (NOTES.md, "LEMON" table).

    ``neuron_fraction``: share of a layer's neurons GF, WS, NEB and NAI act on (30%;
    at least one neuron, rounded half up; NS always swaps exactly two).
    ``gaussian_sigma_factor``: GF's sigma as a multiple of the std of each weight array
    of the layer (0.1). ``la_kernel`` / ``la_pool_size``: kernel and pool window of the
    layers LA inserts ('same' padding, strides 1, so they keep the shape).
    ``la_relu_max_value``: the cap of LA's ReLU(max_value=1). ``mla_repeat``: RepeatVector
    count in MLA; ``mla_border``: elements MLA crops or pads on each side of every
    spatial axis; ``mla_upsample``: MLA's UpSampling factor. ``max_new_weights``: an
    inserted layer or bundle may add at most this many weight elements (a Dense over a
    flattened feature map grows quadratically). ``afrp_activations``: AFRp's choices as
    (op, attributes) pairs.
    """

    neuron_fraction: float = 0.3
    gaussian_sigma_factor: float = 0.1
    la_kernel: int = 3
    la_pool_size: int = 3
    la_relu_max_value: float = 1.0
    mla_repeat: int = 3
    mla_border: int = 1
    mla_upsample: int = 2
    max_new_weights: int = 1 << 20
    afrp_activations: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = AFRP_ACTIVATIONS


DEFAULT_SETTINGS = LemonRuleSettings()


class NotApplicable(Rejected):
    """The rule has nothing to act on in this model: retrying its random choices is futile."""


# ---- neurons ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Part:
    """One weight array of a node seen as a matrix with one column per neuron.

    ``role`` is "in" (incoming weights) or "bias". ``out_axis`` is the array's axis that
    indexes neurons (-1, or -2 for transposed-conv kernels); every other element of a
    column belongs to that neuron (recurrent gates and depthwise multipliers flatten into
    the last axis in the order the neuron index needs, so a plain reshape finds them).
    """

    name: str
    role: str
    out_axis: int = -1

    def matrix(self, arr: np.ndarray, n: int) -> np.ndarray:
        a = np.moveaxis(arr, self.out_axis, -1) if self.out_axis != -1 else arr
        return np.array(a, dtype=np.float64).reshape(-1, n)

    def restore(self, mat: np.ndarray, like: np.ndarray) -> np.ndarray:
        shape = list(like.shape)
        if self.out_axis != -1:
            shape.append(shape.pop(self.out_axis))
        a = mat.reshape(shape)
        if self.out_axis != -1:
            a = np.moveaxis(a, -1, self.out_axis)
        return np.ascontiguousarray(a).astype(like.dtype)


@dataclass(frozen=True)
class NeuronLayout:
    """How to find the neurons of one op kind: their count and the arrays that hold them."""

    count: Callable[[Node, dict[str, np.ndarray]], int]
    parts: tuple[Part, ...]


def _attr(name: str) -> Callable[[Node, dict[str, np.ndarray]], int]:
    return lambda node, w: int(node.attr(name))


def _depthwise_count(node: Node, w: dict[str, np.ndarray]) -> int:
    return int(w["kernel"].shape[-2] * w["kernel"].shape[-1])  # input channels x multiplier


def _channel_count(node: Node, w: dict[str, np.ndarray]) -> int:
    return int(w["gamma"].shape[0])


_DENSE = (Part("kernel", "in"), Part("bias", "bias"))
_TRANSPOSE = (Part("kernel", "in", -2), Part("bias", "bias"))
_RECURRENT = (Part("kernel", "in"), Part("recurrent_kernel", "in"), Part("bias", "bias"))
_NORM = (Part("gamma", "in"), Part("beta", "bias"))

NEURON_LAYOUTS: dict[str, NeuronLayout] = {
    "Dense": NeuronLayout(_attr("units"), _DENSE),
    **{f"Conv{n}D": NeuronLayout(_attr("filters"), _DENSE) for n in (1, 2, 3)},
    **{f"Conv{n}DTranspose": NeuronLayout(_attr("filters"), _TRANSPOSE) for n in (2, 3)},
    **{f"SeparableConv{n}D": NeuronLayout(_attr("filters"), (Part("pointwise_kernel", "in"),
                                                              Part("bias", "bias")))
       for n in (1, 2)},
    "DepthwiseConv2D": NeuronLayout(_depthwise_count, _DENSE),
    **{op: NeuronLayout(_attr("units"), _RECURRENT) for op in ("SimpleRNN", "LSTM", "GRU")},
    **{op: NeuronLayout(_channel_count, _NORM) for op in ("BatchNorm", "LayerNorm")},
}


def _count(model: Model, node: Node) -> int:
    return NEURON_LAYOUTS[node.op].count(node, model.node_weights(node.id))


def neuron_matrices(model: Model, node: Node) -> dict[str, tuple[Part, np.ndarray]]:
    """Every neuron-holding array of ``node`` as a float64 (rows, neurons) matrix."""
    n = _count(model, node)
    w = model.node_weights(node.id)
    return {p.name: (p, p.matrix(w[p.name], n)) for p in NEURON_LAYOUTS[node.op].parts
            if p.name in w}


def neuron_count(total: int, fraction: float) -> int:
    """How many of ``total`` neurons a fraction selects: rounded half up, at least one."""
    return min(total, max(1, int(fraction * total + 0.5)))


def _candidates(model: Model, min_neurons: int, min_fan_in: int = 0) -> list[Node]:
    out = []
    for node in model.graph.nodes:
        if node.op not in NEURON_LAYOUTS or _count(model, node) < min_neurons:
            continue
        fan_in = max((m.shape[0] for p, m in neuron_matrices(model, node).values()
                      if p.role == "in"), default=0)
        if fan_in >= min_fan_in:
            out.append(node)
    return out


MatrixEdit = Callable[[Part, np.ndarray, np.ndarray], None]


def _mutate_neurons(model: Model, rng: np.random.Generator, rule: str, edit: MatrixEdit,
                    settings: LemonRuleSettings, min_fan_in: int = 0,
                    exact: int | None = None) -> Model:
    """Pick a node and its neurons, let ``edit`` change the selected columns in place."""
    need = exact if exact is not None else 1
    nodes = _candidates(model, need, min_fan_in)
    if not nodes:
        raise NotApplicable(f"{rule}: no node with {need}+ neurons"
                            + (f" of fan-in {min_fan_in}+" if min_fan_in else ""))
    node = nodes[int(rng.integers(len(nodes)))]
    n = _count(model, node)
    k = exact if exact is not None else neuron_count(n, settings.neuron_fraction)
    chosen = np.sort(rng.choice(n, size=k, replace=False))
    weights = dict(model.weights)
    original = model.node_weights(node.id)
    changed = False
    for name, (part, mat) in neuron_matrices(model, node).items():
        edit(part, mat, chosen)
        new = part.restore(mat, original[name])
        changed = changed or not np.array_equal(new, original[name])
        weights[f"{node.id}.{name}"] = new
    if not changed:
        raise Rejected(f"{rule}: the selected neurons of {node.id} did not change")
    return Model(model.graph, weights).check()


# ---- the rules ----------------------------------------------------------------------------


def gf(model: Model, rng: np.random.Generator, *,
       settings: LemonRuleSettings = DEFAULT_SETTINGS) -> Model:
    """Gaussian fuzzing: N(0, sigma) noise on every parameter of 30% of a layer's neurons.

    sigma = ``gaussian_sigma_factor`` x the std of the whole weight array the parameter is
    in (kernel and bias each have their own), so noise is on the layer's own scale.
    """
    def edit(part: Part, mat: np.ndarray, cols: np.ndarray) -> None:
        sigma = settings.gaussian_sigma_factor * float(np.std(mat))
        mat[:, cols] += rng.normal(0.0, sigma, size=(mat.shape[0], len(cols)))
    return _mutate_neurons(model, rng, "GF", edit, settings)


def ws(model: Model, rng: np.random.Generator, *,
       settings: LemonRuleSettings = DEFAULT_SETTINGS) -> Model:
    """Weights shuffling: permute each selected neuron's incoming weights (not its bias).

    Each incoming array is shuffled within the neuron's column (a recurrent unit's input
    and recurrent weights are shuffled separately); nodes whose neurons have a single
    incoming weight (BatchNorm) are skipped, as shuffling one number changes nothing.
    """
    def edit(part: Part, mat: np.ndarray, cols: np.ndarray) -> None:
        if part.role != "in":
            return
        for c in cols:
            mat[:, c] = mat[rng.permutation(mat.shape[0]), c]
    return _mutate_neurons(model, rng, "WS", edit, settings, min_fan_in=2)


def neb(model: Model, rng: np.random.Generator, *,
        settings: LemonRuleSettings = DEFAULT_SETTINGS) -> Model:
    """Neuron effect block: zero the incoming weights and bias of 30% of the neurons.

    The blocked neurons output a constant (0 before the activation), so the next layers
    no longer see their effect.
    """
    def edit(part: Part, mat: np.ndarray, cols: np.ndarray) -> None:
        mat[:, cols] = 0.0
    return _mutate_neurons(model, rng, "NEB", edit, settings)


def nai(model: Model, rng: np.random.Generator, *,
        settings: LemonRuleSettings = DEFAULT_SETTINGS) -> Model:
    """Neuron activation inverse: negate the incoming weights and bias of 30% of the neurons.

    That negates the neuron's pre-activation output (for BatchNorm: gamma and beta negated
    negate the normalized channel).
    """
    def edit(part: Part, mat: np.ndarray, cols: np.ndarray) -> None:
        mat[:, cols] = -mat[:, cols]
    return _mutate_neurons(model, rng, "NAI", edit, settings)


def ns(model: Model, rng: np.random.Generator, *,
       settings: LemonRuleSettings = DEFAULT_SETTINGS) -> Model:
    """Neuron switch: swap all parameters (incoming weights and bias) of exactly 2 neurons."""
    def edit(part: Part, mat: np.ndarray, cols: np.ndarray) -> None:
        mat[:, cols] = mat[:, cols[::-1]]
    return _mutate_neurons(model, rng, "NS", edit, settings, exact=2)


INNER_RULES: dict[str, Callable[..., Model]] = {
    "GF": gf, "WS": ws, "NEB": neb, "NAI": nai, "NS": ns,
}
