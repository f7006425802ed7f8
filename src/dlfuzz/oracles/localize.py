"""Which layer is wrong: LEMON's R_a over a probe run, else the first wrong model prefix.

A model-level finding first only says "backend B's output is off". The model is re-run
with ``probe=True`` (every node's value is an output) on B and on one or two backends that
agree with the reference. A node is *off* when B's value differs from the sound one's by
more than rounding noise: more than 4x what the two sound backends differ by at that node
(summation order, cancellation: the noise the node really has), and at least 16 units in
the last place of the tensor's scale. Among the off nodes whose inputs are all within
noise (where a difference is introduced, not passed on) the one with the largest
R_a = (delta_cur - delta_pre) / (delta_pre + 1e-7) is the suspect, and the finding is
about that layer kind. LEMON's R_a alone blames whichever layer amplifies most, which is
often a MatMul downstream of a small error, and counts any wobble after an exact node.

A probe run can hide the bug: making every value an output stops a graph optimizer from
fusing nodes (ONNX Runtime folds a Pad into the MaxPool after it only when the Pad's
value is used nowhere else), so a fusion bug leaves no trace in it. When no node of the
probe run is off, the model is cut after a node (that node's value the only output, so
the optimizer sees the same pattern the model had) and a binary search over the
topological order finds the first prefix whose output is off; its last node is the
suspect. All localizations of a batch share each round trip to the workers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import ml_dtypes
import numpy as np

from dlfuzz.cases import DTYPES, GraphCase, Outcome, Tensor
from dlfuzz.errors import Rejected
from dlfuzz.ir.graph import Graph, Node
from dlfuzz.ir.model import Model
from dlfuzz.ir.ops.logic import decide
from dlfuzz.oracles.tolerances import epsilon, tolerance_for

# Runs cases on backends (the judge's runner runs any kind of case).
Runner = Callable[[Sequence[Any], Sequence[str]], list[dict[str, Outcome]]]
NOISE_ULPS = 16.0  # the least difference counted, in units in the last place of the scale
NOISE_FACTOR = 4.0  # times the difference of two sound backends at the same node


@dataclass(frozen=True)
class Suspect:
    node: str  # "" when the runs failed or showed no difference
    op: str
    ratio: float  # R_a, or for "prefix" the excess over noise (inf: only the guilty fails)
    against: str  # the sound backend compared with
    method: str = "R_a"  # or "prefix": the first model prefix whose output is wrong
    # Which rounding bound the suspect stays within ("" none): "accumulation", a sum
    # (``ACCUMULATING``) off from the sound backend by no more than summing in its dtype
    # in any order gives; "normalization", a LayerNorm/BatchNorm off by no more than its
    # affine form's rounding (``NORMALIZING``); "threshold" or "subnormal", a decision
    # (``DECIDING``) whose operands explain it. Rounding, not a bug.
    rounding: str = ""


# Reductions that add their inputs: IEEE fixes no summation order. Summing n terms in
# any order is promised within (n - 1) * u * sum(|x|) of the truth (u the unit roundoff;
# Higham, Accuracy and Stability of Numerical Algorithms, 4.2), and with rounding errors
# that behave as random, within about lambda * sqrt(n) * u * sum(|x|) (Higham and Mary,
# probabilistic error analysis, 2019). The worst case is too loose to judge by (a sum
# off by 1.0 of 5,541 standard-normal terms is inside it), so the bound used is the
# probabilistic one with lambda = 4: ``SUM_LAMBDA * sqrt(n) * eps / 2 * sum(|x|)``.
# ORT's float32 ReduceSum of 5,541 values cancelling to -158.2 was filed at 2 tolerances
# off the float64 reference, 0.6 % of that bound. Value: divide the bound by n (a mean).
ACCUMULATING = {"ReduceSum": False, "ReduceMean": True}
SUM_LAMBDA = 4.0
# Normalizations compute gamma * (x - mean) / sqrt(var + eps) + beta, and libraries are
# free to compute it as x * s + (beta - mean * s), s = gamma / sqrt(var + eps) (TF's
# batch_normalization does). Where x is close to its mean that cancels: each product
# carries a rounding of |x * s|, and XLA contracting one of them into a fused multiply-add
# leaves that rounding in the result. A float32 LayerNorm over two equal values of -302.5
# (eps 8.5e-5, s = 108) gave 4.1e-4 on tf-xla where the true result is 0: a fifth of
# u * |x * s|. The bound: ``NORM_LAMBDA * u * (|x * s| + |mean * s| + |beta|)``, u the
# unit roundoff; a wrong formula (epsilon misplaced, a wrong axis) is off by the output's
# own magnitude, far beyond it unless the layer cancels anyway. Value: where (mean, var)
# come from: the input over its last axis (LayerNorm), the moving statistics (BatchNorm).
NORMALIZING = {"LayerNorm": "input", "BatchNorm": "moving"}
NORM_LAMBDA = 2.0
# Kinds that decide (``ir/ops/logic.py``): a comparison or a truth value (x != 0) is a
# step, and a correct library may land on the other side of it when the operands sit on
# it within rounding. Where a decision differs, the node is not at fault when each run
# decided right on the operands it had (the difference came from upstream, within noise:
# torch's float64 GELU(-17.25) cancels to 0 where tf's erfc gives -9.7e-66, and a Where on
# x * GELU(x) then picks the other operand), when the operands are within NOISE_ULPS of
# the step, or when an operand is subnormal: XLA (jax-jit, tf-xla) and TensorFlow flush
# subnormals to zero on the CPU by design, so logical_not(1.4e-45) is 1 there, and a
# float64 reference of tf and jax says 5e-324 <= 0. Value: the operands that decide.
DECIDING = {"Compare": (0, 1), "Logical": (0, 1), "LogicalNot": (0,), "Where": (0,)}


def excess(a: np.ndarray, b: np.ndarray, dtype: str, c: np.ndarray | None = None) -> float:
    """How far ``a`` (guilty) is from ``b`` (sound) in units of the noise allowance, which
    is the larger of NOISE_ULPS ulps of the values' scale and NOISE_FACTOR times the
    largest difference between ``b`` and ``c`` (a second sound backend); inf on a shape or
    NaN/Inf mismatch, 0 when the values agree."""
    if a.shape != b.shape:
        return float("inf")
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    if not a64.size:
        return 0.0
    if not np.array_equal(np.isfinite(a64), np.isfinite(b64)):
        return float("inf")
    fin = np.isfinite(a64)
    # NaN where both have NaN is agreement: without equal_nan a NaN input made the first
    # node that passes it on look off, and every model with a NaN input was blamed on
    # its first layer (an ORT MaxPool that drops NaN was filed as a MulConst bug).
    if not np.array_equal(a64[~fin], b64[~fin], equal_nan=True):
        return float("inf")
    diff = float(np.max(np.abs(a64[fin] - b64[fin]), initial=0.0))
    if diff == 0.0:
        return 0.0
    scale = max(float(np.max(np.abs(b64[fin]), initial=0.0)), 1e-30)
    allowed = NOISE_ULPS * max(epsilon(dtype), 1e-16) * scale
    if c is not None and c.shape == b.shape:
        c64 = c.astype(np.float64)
        both = fin & np.isfinite(c64)
        if both.any():
            allowed = max(allowed, NOISE_FACTOR * float(np.max(np.abs(c64[both] - b64[both]))))
    return diff / allowed


def localize(values_a: Sequence[np.ndarray], values_b: Sequence[np.ndarray],
             inputs_of: Sequence[Sequence[int]], eps: float = 1e-7,
             dtype: str | None = None, values_c: Sequence[np.ndarray] | None = None
             ) -> tuple[int, list[float]]:
    """LEMON's R_a over a probe run of two libraries (``values_c``: a second sound one).
    ``inputs_of[i]`` lists the probe indices node ``i`` reads (graph inputs are absent:
    they are identical on both sides). Without ``dtype`` this is LEMON's rule: the
    largest R_a. With it, only off nodes are candidates (R_a = -inf for the others), those
    that introduce a difference first; index -1 when no node is off. Returns (index, R)."""
    deltas = []
    for a, b in zip(values_a, values_b, strict=True):
        if a.shape != b.shape:
            deltas.append(float("inf"))
            continue
        with np.errstate(invalid="ignore", over="ignore"):
            d = np.abs(a.astype(np.float64) - b.astype(np.float64))
        d = np.where(np.isnan(a) & np.isnan(b), 0.0, d)
        value = float(np.mean(d)) if d.size else 0.0
        deltas.append(value if np.isfinite(value) else float("inf"))
    ratios = []
    for i, cur in enumerate(deltas):
        pre = max((deltas[j] for j in inputs_of[i]), default=0.0)
        if np.isinf(cur):
            ratios.append(float("inf") if not np.isinf(pre) else 0.0)
        else:
            ratios.append((cur - pre) / (pre + eps))
    if dtype is None:
        return (int(np.argmax(ratios)) if ratios else -1), ratios
    off = [excess(a, b, dtype, None if values_c is None else values_c[i]) > 1.0
           for i, (a, b) in enumerate(zip(values_a, values_b, strict=True))]
    ratios = [r if off[i] else float("-inf") for i, r in enumerate(ratios)]
    introducers = [i for i in range(len(ratios))
                   if off[i] and not any(off[j] for j in inputs_of[i])]
    pool = introducers or [i for i in range(len(ratios)) if off[i]]
    if not pool:
        return -1, ratios
    return max(pool, key=lambda i: (ratios[i], -i)), ratios


def inputs_of(case: GraphCase) -> list[list[int]]:
    """For each node, the probe indices (node positions) of the node values it reads."""
    position = {n.id: i for i, n in enumerate(case.graph.nodes)}
    return [[position[v] for v in n.inputs if v in position] for n in case.graph.nodes]


class Request(NamedTuple):
    case: GraphCase
    guilty: str
    sound: str
    second: str = ""  # another sound backend, for the noise each node really has


def _wanted(requests: Sequence[Request]) -> list[str]:
    return sorted({b for r in requests for b in (r.guilty, r.sound, r.second) if b})


def _values(outcome: Outcome | None, count: int) -> list[np.ndarray] | None:
    if outcome is None or not outcome.ok or len(outcome.outputs) != count:
        return None
    return [t.to_numpy() for t in outcome.outputs]


def localize_many(runner: Runner, requests: Sequence[tuple[GraphCase, str, str] | Request]
                  ) -> list[Suspect]:
    """``requests`` are (case, guilty backend, sound backend[, second sound backend]);
    one Suspect each."""
    if not requests:
        return []
    reqs = [Request(*r) for r in requests]
    runs = runner([r.case.with_probe(True) for r in reqs], _wanted(reqs))
    out: list[Suspect] = []
    hidden: list[int] = []
    for k, (r, run) in enumerate(zip(reqs, runs, strict=True)):
        count = len(r.case.graph.nodes)
        values_a, values_b = _values(run.get(r.guilty), count), _values(run.get(r.sound), count)
        index = -1
        if values_a is not None and values_b is not None:
            values_c = _values(run.get(r.second), count) if r.second else None
            index, ratios = localize(values_a, values_b, inputs_of(r.case),
                                     dtype=r.case.graph.dtype, values_c=values_c)
        if index < 0:  # nothing off, or a probe that fails: try the prefixes
            out.append(Suspect("", "", 0.0, r.sound))
            hidden.append(k)
            continue
        node = r.case.graph.nodes[index]
        assert values_a is not None and values_b is not None  # index >= 0 needs both
        rounding = ("accumulation" if within_accumulation(r.case, index, values_a, values_b)
                    else "normalization" if within_normalization(r.case, index, values_a,
                                                                 values_b)
                    else within_threshold(r.case, index, values_a, values_b)
                    or through_a_step(r.case, index, values_a, values_b))
        out.append(Suspect(node.id, node.op, float(ratios[index]), r.sound,
                           rounding=rounding))
    if hidden:
        for k, suspect in zip(hidden, first_wrong_prefix(runner, [reqs[k] for k in hidden]),
                              strict=True):
            if suspect.node:
                out[k] = suspect
    return out


def within_accumulation(case: GraphCase, index: int, values_a: Sequence[np.ndarray],
                        values_b: Sequence[np.ndarray]) -> bool:
    """Whether node ``index``, a sum (``ACCUMULATING``), differs between the guilty run
    (``values_a``) and the sound one (``values_b``) by no more than the probabilistic
    summation bound over each output's terms (the sound run's input values)."""
    node = case.graph.nodes[index]
    mean = ACCUMULATING.get(node.op)
    if mean is None:
        return False
    x = _input_values(case, index, values_b)
    if x is None:
        return False
    axes = tuple(node.a["axes"])
    wide = np.abs(x.astype(np.float64))
    if not np.all(np.isfinite(wide)):
        return False
    terms = int(np.prod([x.shape[a] for a in axes]))
    bound = SUM_LAMBDA * np.sqrt(terms) * epsilon(case.graph.dtype) / 2 * wide.sum(
        axis=axes, keepdims=bool(node.a["keepdims"]))
    if mean:
        bound = bound / max(terms, 1)
    a, b = values_a[index].astype(np.float64), values_b[index].astype(np.float64)
    if a.shape != b.shape or a.shape != bound.shape:
        return False
    with np.errstate(invalid="ignore"):
        return bool(np.all(np.abs(a - b) <= bound))


def _input_values(case: GraphCase, index: int, values: Sequence[np.ndarray]
                  ) -> np.ndarray | None:
    """What node ``index`` read as its first input in a probe run (``values``)."""
    return _operand(case, index, 0, values)


def within_normalization(case: GraphCase, index: int, values_a: Sequence[np.ndarray],
                         values_b: Sequence[np.ndarray]) -> bool:
    """Whether node ``index``, a normalization (``NORMALIZING``), differs between the
    guilty run (``values_a``) and the sound one (``values_b``) by no more than the
    rounding of its affine form x * s + (beta - mean * s) on the sound run's input."""
    node = case.graph.nodes[index]
    stats = NORMALIZING.get(node.op)
    x = _input_values(case, index, values_b)
    if stats is None or x is None:
        return False
    weights = {k.split(".", 1)[1]: t.to_numpy().astype(np.float64)
               for k, t in case.weights if k.split(".", 1)[0] == node.id}
    wide = x.astype(np.float64)
    if stats == "input":
        mean = wide.mean(axis=-1, keepdims=True)
        var = ((wide - mean) ** 2).mean(axis=-1, keepdims=True)
    else:
        mean, var = weights["moving_mean"], weights["moving_variance"]
    with np.errstate(all="ignore"):
        scale = weights["gamma"] / np.sqrt(var + float(node.a["epsilon"]))
        bound = NORM_LAMBDA * epsilon(case.graph.dtype) / 2 * (
            np.abs(wide * scale) + np.abs(mean * scale) + np.abs(weights["beta"]))
    if not np.all(np.isfinite(bound)):
        return False
    a, b = values_a[index].astype(np.float64), values_b[index].astype(np.float64)
    if a.shape != b.shape or a.shape != bound.shape:
        return False
    with np.errstate(invalid="ignore"):
        return bool(np.all(np.abs(a - b) <= bound))


def within_threshold(case: GraphCase, index: int, values_a: Sequence[np.ndarray],
                     values_b: Sequence[np.ndarray]) -> str:
    """Whether node ``index``, a decision (``DECIDING``), differs between the guilty run
    (``values_a``) and the sound one (``values_b``) only where its operands explain it:
    "subnormal" when a subnormal operand is among the reasons, "threshold" when only
    rounding at the step is, "" when some differing element has neither."""
    node = case.graph.nodes[index]
    positions = DECIDING.get(node.op)
    if positions is None:
        return ""
    ops_a = [_operand(case, index, p, values_a) for p in range(len(node.inputs))]
    ops_b = [_operand(case, index, p, values_b) for p in range(len(node.inputs))]
    a, b = values_a[index], values_b[index]
    if any(x is None or x.shape != a.shape for x in ops_a + ops_b) or a.shape != b.shape:
        return ""
    with np.errstate(invalid="ignore"):
        differs = (a != b) & ~(np.isnan(a) & np.isnan(b))
    if not differs.any():
        return ""
    deciding_a = [np.asarray(ops_a[p], np.float64)[differs] for p in positions]
    deciding_b = [np.asarray(ops_b[p], np.float64)[differs] for p in positions]
    dtype = case.graph.dtype
    tiny = float(ml_dtypes.finfo(DTYPES[dtype]).tiny) if epsilon(dtype) else 0.0
    subnormal = np.zeros(int(differs.sum()), bool)
    for x in deciding_a + deciding_b:
        subnormal |= (x != 0) & (np.abs(x) < tiny)
    consistent = ((decide(node.op, node.a, [np.asarray(o)[differs] for o in ops_a])
                   == a[differs])
                  & (decide(node.op, node.a, [np.asarray(o)[differs] for o in ops_b])
                     == b[differs]))
    allowed = NOISE_ULPS * epsilon(dtype) * max(
        (float(np.max(np.abs(np.asarray(ops_b[p], np.float64)), initial=0.0))
         for p in positions), default=0.0)
    gap = (np.abs(deciding_b[0] - deciding_b[1]) if node.op == "Compare"
           else np.min(np.abs(np.stack(deciding_b)), axis=0))
    with np.errstate(invalid="ignore"):
        at_step = gap <= allowed
    explained = subnormal | consistent | at_step
    if not np.all(explained):
        return ""
    return "subnormal" if subnormal.any() else "threshold"


def through_a_step(case: GraphCase, index: int, values_a: Sequence[np.ndarray],
                   values_b: Sequence[np.ndarray]) -> str:
    """Whether node ``index`` differs only within its dtype's tolerance and the output
    is far off because that difference reached a decision and flipped it there: the
    kind ``within_threshold`` gives the decisions (every off one must have one), or "".

    torch's float64 Softplus returns x itself above 20, 1e-11 from JAX's at 25: far more
    than NOISE_ULPS, so it is the node that introduces a difference, yet well within the
    tolerance; below -709 it gives a subnormal that XLA flushes to 0. A LogicalNot after
    it then differs by 1, and R_a blames the Softplus (a synth campaign filed that as a
    torch Softplus wrong result)."""
    dtype = case.graph.dtype
    tol = tolerance_for(dtype)
    a, b = values_a[index].astype(np.float64), values_b[index].astype(np.float64)
    if a.shape != b.shape or not np.array_equal(np.isfinite(a), np.isfinite(b)):
        return ""
    fin = np.isfinite(b)
    if not np.all(np.abs(a[fin] - b[fin]) <= tol.atol + tol.rtol * np.abs(b[fin])):
        return ""
    kinds = {within_threshold(case, j, values_a, values_b)
             for j, n in enumerate(case.graph.nodes)
             if j > index and n.op in DECIDING and excess(values_a[j], values_b[j], dtype) > 1}
    if not kinds or "" in kinds:
        return ""
    return "subnormal" if "subnormal" in kinds else "threshold"


def _operand(case: GraphCase, index: int, position: int, values: Sequence[np.ndarray]
             ) -> np.ndarray | None:
    """What node ``index`` read as its operand ``position`` in a probe run (``values``),
    or the graph input it reads."""
    source = case.graph.nodes[index].inputs[position]
    for i, n in enumerate(case.graph.nodes):
        if n.id == source:
            return values[i]
    names = list(case.graph.input_names)
    if source not in names:
        return None
    return case.tensors[names.index(source)].to_numpy()


def prefix_case(case: GraphCase, index: int, frontier: bool = False) -> GraphCase | None:
    """The model cut after node ``index``: its value the only output, dead nodes gone;
    with ``frontier`` its value first, then every earlier value the rest of the model
    reads or returns (what the prefix hands on), so a prefix holds every value a wrong
    earlier node could have spoiled."""
    g = case.graph
    outputs = [g.nodes[index].id]
    if frontier:
        later = {v for n in g.nodes[index + 1:] for v in n.inputs} | set(g.outputs)
        outputs += [n.id for n in g.nodes[:index] if n.id in later]
    try:
        cut = g.with_nodes(g.nodes, outputs=tuple(outputs))
    except Rejected:
        return None
    kept = {n.id for n in cut.nodes}
    weights = tuple((k, t) for k, t in case.weights if k.split(".", 1)[0] in kept)
    return replace(case, graph=cut, weights=weights, probe=False)


def isolated(case: GraphCase, values: Mapping[str, np.ndarray]
             ) -> Iterator[tuple[Node, GraphCase]]:
    """Each node of ``case``'s model alone (the output end first), with its weights, fed
    the values its inputs had in the full model (``values``: a probe run, value name ->
    array, graph inputs included); a node the IR refuses alone is left out."""
    g = case.graph
    weights = {k: t.to_numpy() for k, t in case.weights}
    for n in reversed(g.nodes):
        reads = list(dict.fromkeys(n.inputs))
        if not all(v in values for v in reads):
            continue
        node = Node("n0", n.op, tuple(f"x{reads.index(v)}" for v in n.inputs), n.attrs)
        try:
            single = Graph(tuple(g.type_of(v) for v in reads), (node,), ("n0",)).check()
            model = Model(single, {}).with_graph(single, {
                f"n0.{k.split('.', 1)[1]}": w for k, w in weights.items()
                if k.split(".", 1)[0] == n.id})
        except Rejected:
            continue
        tensors = tuple(Tensor.from_numpy(values[v]) for v in reads)
        if any(t.shape != ty.shape for t, ty in zip(tensors, single.inputs, strict=True)):
            continue
        yield n, replace(case, graph=single, tensors=tensors, probe=False, weights=tuple(
            (k, Tensor.from_numpy(model.weights[k])) for k in sorted(model.weights)))


def first_wrong_prefix(runner: Runner,
                       requests: Sequence[tuple[GraphCase, str, str] | Request],
                       failures_only: bool = False) -> list[Suspect]:
    """Binary search, for each request at once, for the first node whose prefix model's
    output is off on the guilty backend (the whole model is: the finding says so). With
    ``failures_only`` a prefix is wrong only when the guilty backend raises or crashes on
    it while the sound one computes it (status findings)."""
    reqs = [Request(*r) for r in requests]
    # A prefix returns its whole frontier: with only the cut node's value, a wrong node
    # whose value goes around the cut (a ReduceMin that a later Transpose reads, an
    # AddConst of the input in between) made the search blame the Transpose.
    lo = [0] * len(reqs)
    hi = [len(r.case.graph.nodes) - 1 for r in reqs]
    found: dict[int, float] = {}
    wanted = _wanted(reqs)
    while True:
        batch, where = [], []
        for k, r in enumerate(reqs):
            while lo[k] < hi[k]:
                mid = (lo[k] + hi[k]) // 2
                cut = prefix_case(r.case, mid, frontier=True)
                if cut is not None:
                    batch.append(cut)
                    where.append((k, mid))
                    break
                lo[k] = mid + 1  # an unusable cut: search after it
        if not batch:
            break
        for (k, mid), run in zip(where, runner(batch, wanted), strict=True):
            off = _off(reqs[k], run, failures_only)
            if off > 1.0:
                hi[k] = mid
                found[k] = off
            else:
                lo[k] = mid + 1
    unmeasured = [k for k in range(len(reqs)) if k not in found]
    cuts = [prefix_case(reqs[k].case, hi[k], frontier=True) for k in unmeasured]
    pairs = [(k, c) for k, c in zip(unmeasured, cuts, strict=True) if c is not None]
    if pairs:  # the search ended on the last node without running it: measure it too
        for (k, _), run in zip(pairs, runner([c for _, c in pairs], wanted), strict=True):
            found[k] = _off(reqs[k], run, failures_only)
    out = []
    for k, r in enumerate(reqs):
        node = r.case.graph.nodes[hi[k]]
        out.append(Suspect(node.id, node.op, float(found.get(k, 0.0)), r.sound,
                           "prefix"))
    return out


def _off(r: Request, run: dict[str, Outcome], failures_only: bool = False) -> float:
    """How far the guilty backend's output is from the sound one's, in noise allowances
    (inf when only the guilty one fails; 0 when both fail, which says nothing)."""
    a, b = run.get(r.guilty), run.get(r.sound)
    if a is not None and not a.ok and b is not None and b.ok:
        return float("inf")
    if (failures_only or a is None or b is None or not a.ok or not b.ok or not a.outputs
            or not b.outputs):
        return 0.0
    if len(a.outputs) != len(b.outputs):
        return float("inf")
    c = run.get(r.second) if r.second else None
    thirds = c.outputs if c is not None and c.ok and len(c.outputs) == len(b.outputs) \
        else (None,) * len(b.outputs)
    return max(excess(x.to_numpy(), y.to_numpy(), r.case.graph.dtype,
                      None if z is None else z.to_numpy())
               for x, y, z in zip(a.outputs, b.outputs, thirds, strict=True))
