"""Wrong gradients: reverse mode against finite differences, forward mode, and the others.

Every backend of a gradient case (``cases/grad.py``) returns the gradient of the call in
the case's dtype and a float64 self-check (``cases.grad.CHECKS``); every backend of a
model's training step (``cases/train.py``) returns the gradients for its weights and
inputs, the loss, the stepped weights and the same self-check. Two judgements follow,
both with the symptom ``gradient``:

* **Self-check** (any library, no counterpart needed): the library's float64 reverse-mode
  directional derivative ``<J^T c, v>`` against central finite differences of its own
  float64 forward pass, and forward mode ``<c, J v>`` against both. Finite differences
  are the arbiter only where they are reliable: the two step sizes agree, the one-sided
  slopes agree (no kink of relu/abs/max, no tie, no branch within the step), every value
  is finite, and the function is not flat (a straight-through estimator, ``round``).
  The reverse mode is wrong when it is off the finite differences by more than
  ``FD_RTOL`` of the magnitude of the directional derivative's terms, plus the finite
  differences' own spread and rounding; forward mode likewise.
* **Across libraries and modes**: the gradients are judged like outputs of an API call
  (``reference.Judge``: the case re-run in float64 by the reference libraries, their
  consensus, the sensitivity to one rounding of the inputs, the outlier rule), so a
  float32-only backward bug or a compiled backward (``torch.compile``, ``jax.jit``, XLA)
  that differs from its eager mode is blamed on the one backend that is off. Where only
  one reference library has the call (TF.js against TensorFlow), its float64 gradient
  is the reference if its own finite differences backed it at that point.

A gradient whose shape is not its input's is a finding of its own (symptom ``shape``;
its values are still checked in the input's shape). A case any backend saw a kink, a flat stretch or a non-finite value in is not judged at
all (counted as ``gradient_kink`` and so on): libraries pick different subgradients there
by design, which is not a bug. A backend whose own self-check failed is not blamed a
second time by the cross-library judgement.

A training step's finding is filed under the first layer, from the output back, whose
own backward is wrong (``localize_backward.py``), as a model's forward finding is under
its localized layer.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, cast

from dlfuzz.cases import Finding, Outcome, TrainCase
from dlfuzz.cases.grad import checks_of, has_self_check
from dlfuzz.oracles.base import Item, Oracle, OracleContext, finding, input_dtypes
from dlfuzz.oracles.canonical import canonical_outcomes
from dlfuzz.oracles.differential import suspicious, verdict_message
from dlfuzz.oracles.localize_backward import layer_steps, sound_backend

# Reverse or forward mode off finite differences by more than this share of the
# magnitude of the directional derivative's terms (sum |g_i v_i|): a real autodiff bug
# (a wrong formula, a dropped term, a wrong broadcast) is off by a large share; float64
# rounding of a correct gradient is ~1e-15 of it, and the finite differences' truncation
# error is measured by their spread and added on top.
FD_RTOL = 1e-4
# One-sided slopes differing by more than this share mark a kink or a branch within the
# step: the subgradient is a convention there (relu'(0), |x|'(0), max of ties).
KINK_RTOL = 1e-3
# Allowance for the finite differences' truncation error, in units of the spread of the
# two step sizes (the wide one's truncation error is four times the narrow one's).
SPREAD_FACTOR = 8.0
# Allowance for the rounding of the float64 forward values the differences divide by the
# step, in units of float64's epsilon times their magnitude over the step.
ROUNDING_FACTOR = 64.0
_EPS64 = 2.0 ** -52
# Two libraries' float64 directional derivatives of one layer, at the same point along
# the same direction, differ by rounding only: summing n terms in float64 in any order
# moves the result by at most n * 1.1e-16 of the terms' magnitude (1e-11 for 10^5
# terms), and each transcendental function by an ulp. A difference beyond this share of
# the magnitude is a different derivative (the backward walk, ``_wrong_alone``).
FLOAT64_AGREEMENT = 1e-9
# The reference method of a lone library's float64 gradient backed by its own finite
# differences (``_across``), as verdict messages name it.
CHECKED_METHOD = "float64 (finite-difference-checked)"


def smoothness(checks: Mapping[str, float]) -> str:
    """``smooth`` where finite differences can judge the gradient, else why not:
    ``nonfinite``, ``flat``, ``kink`` or ``noisy``."""
    values = [checks[k] for k in ("reverse", "fd", "fd_wide", "kink", "scale", "value")]
    if not all(math.isfinite(v) for v in values):
        return "nonfinite"
    if checks["flat"]:
        return "flat"
    size = max(checks["scale"], abs(checks["fd"]), 1e-300)
    if checks["kink"] > KINK_RTOL * size + _rounding(checks):
        return "kink"
    if abs(checks["fd"] - checks["fd_wide"]) > FD_RTOL * size:
        return "noisy"  # the truncation error alone exceeds what is judged
    return "smooth"


def _rounding(checks: Mapping[str, float]) -> float:
    return ROUNDING_FACTOR * _EPS64 * checks["value"] / max(checks["step"], 1e-300)


def _off(checks: Mapping[str, float]) -> bool:
    """Whether reverse mode is off the finite differences (reported or not)."""
    return abs(checks["reverse"] - checks["fd"]) > allowance(checks)


def _modes_agree_off_fd(checks: Mapping[str, float]) -> bool:
    """Whether forward mode (where the backend has one) agrees with reverse mode while
    both are off the finite differences."""
    allowed = allowance(checks)
    return (math.isfinite(checks["forward"])
            and abs(checks["forward"] - checks["reverse"]) <= allowed < abs(
                checks["reverse"] - checks["fd"]))


def _agrees_with_fd(checks: Mapping[str, float]) -> bool:
    """Whether reverse mode (and forward mode, where there is one) agrees with the finite
    differences: the backend's float64 gradient is backed by them at this point."""
    forward = checks["forward"]
    return not _off(checks) and (not math.isfinite(forward)
                                 or abs(forward - checks["fd"]) <= allowance(checks))


def allowance(checks: Mapping[str, float]) -> float:
    """How far from the finite differences a right directional derivative may be."""
    size = max(checks["scale"], abs(checks["fd"]))
    return (FD_RTOL * size + SPREAD_FACTOR * abs(checks["fd"] - checks["fd_wide"])
            + _rounding(checks))


class GradientOracle(Oracle):
    name = "gradient"
    case_kinds = ("grad", "train")

    def check_many(self, items: Sequence[Item], ctx: OracleContext) -> list[list[Finding]]:
        results: list[list[Finding]] = [[] for _ in items]
        judged: list[int] = []
        checked: dict[int, str] = {}  # case -> an eager backend its finite differences back
        for i, (case, outcomes) in enumerate(items):
            ran = {b: c for b, o in outcomes.items() if (c := checks_of(o)) is not None}
            if not ran:
                continue
            results[i].extend(self._shapes(case, outcomes, ran, ctx))
            # Backends without a float64 pass (TF.js) are compared with the others only;
            # where no backend checked itself, nothing says the point is smooth.
            checks = {b: c for b, c in ran.items() if has_self_check(c)}
            if not checks:
                ctx.stats["gradient_no_self_check"] += 1
                continue
            states = {smoothness(c) for c in checks.values()}
            if states != {"smooth"}:
                worst = next(s for s in ("nonfinite", "kink", "flat", "noisy") if s in states)
                ctx.stats[f"gradient_{worst}"] += 1
                continue
            ctx.stats["gradient_judged"] += 1
            judged.append(i)
            if any(_modes_agree_off_fd(c) for c in checks.values()):
                # Some library's reverse and forward modes agree with each other and not
                # with its finite differences: the differences are what is fooled (many
                # ReLUs sitting exactly at 0 whose one-sided slopes cancel in the kink
                # measure; a deliberate stop_gradient), so no backend's self-check
                # stands here. The libraries are still compared with each other.
                ctx.stats["gradient_modes_agree_off_fd"] += 1
                continue
            checked[i] = next((b for b, c in checks.items()
                               if not ctx.compiled.get(b) and _agrees_with_fd(c)), "")
            for backend, c in checks.items():
                eager = ctx.eager_sibling(backend) if ctx.compiled.get(backend) else None
                if eager in checks and _off(checks[eager]):
                    # The eager mode of the same library is off too: one bug of the
                    # library's derivative (or a deliberate one its forward mode shares),
                    # judged there, not once more per compiled mode.
                    ctx.stats["gradient_shared_with_eager"] += 1
                    continue
                f = self._self_check(case, outcomes[backend], c, ctx)
                if f is not None:
                    results[i].append(f)
        self._across(items, judged, results, ctx, checked)
        self._localize(items, results, ctx)
        return results

    def _localize(self, items: Sequence[Item], results: list[list[Finding]],
                  ctx: OracleContext) -> None:
        """Training-step findings filed under the first layer, from the output back,
        whose own backward is wrong (``localize_backward``)."""
        plans: list[tuple[int, int, str, list[tuple[str, str, Any]]]] = []
        for i, (item_case, item_outcomes) in enumerate(items):
            if item_case.kind != "train" or not results[i]:
                continue
            case: TrainCase = cast(TrainCase, item_case)
            nodes = case.graph.nodes
            if len(nodes) == 1:
                results[i] = [_filed_under(f, nodes[0].id, nodes[0].op, "", "")
                              for f in results[i]]
                continue
            blamed = {f.guilty_backend for f in results[i]}
            for k, f in enumerate(results[i]):
                sound = sound_backend(case, f.guilty_backend, item_outcomes,
                                      ctx.library_of, ctx.compiled, blamed)
                layers = layer_steps(ctx.judge.runner, case, sound) if sound else []
                ctx.stats["gradient_localizations"] += 1
                if layers:
                    plans.append((i, k, sound, layers))
        if not plans:
            return
        backends: set[str] = set()
        for i, k, sound, _ in plans:
            guilty = results[i][k].guilty_backend
            backends |= {guilty, sound, ctx.eager_sibling(guilty) or guilty}
        steps: list[Any] = [step for *_, layer in plans for _, _, step in layer]
        runs = ctx.judge.runner(steps, sorted(backends))
        inner = OracleContext(ctx.judge, ctx.library_of, ctx.compiled)
        verdicts = iter(self.check_many(list(zip(steps, runs, strict=True)), inner))
        outcomes = iter(runs)
        for i, k, sound, layer in plans:
            found = results[i][k]
            for (node, op, _), judged, run in zip(layer, [next(verdicts) for _ in layer],
                                                  [next(outcomes) for _ in layer],
                                                  strict=True):
                if _wrong_alone(found, judged, run, sound):
                    results[i][k] = _filed_under(found, node, op, sound,
                                                 "the first layer, from the output back, "
                                                 "whose own backward is wrong")
                    ctx.stats["gradient_localized"] += 1
                    break

    def _shapes(self, case: Any, outcomes: Mapping[str, Outcome],
                checks: Mapping[str, Any], ctx: OracleContext) -> list[Finding]:
        """A gradient whose shape is not its input's (symptom ``shape``): an optimizer
        step with it fails, or broadcasts it silently."""
        wrong: dict[str, str] = {}
        wanted = case.gradient_shapes()
        for backend in checks:
            grads = outcomes[backend].outputs[:-1]
            for k, ((label, want), g) in enumerate(zip(wanted, grads, strict=False)):
                if tuple(g.shape) != tuple(want):
                    what = "input" if label.startswith("x") else "weight"
                    wrong[backend] = (f"the gradient for {label} ({k + 1} of "
                                      f"{len(wanted)}) has shape {list(g.shape)}; the "
                                      f"{what}'s shape is {list(want)}")
                    break
        found = []
        for backend, said in wrong.items():
            eager = ctx.eager_sibling(backend) if ctx.compiled.get(backend) else None
            if eager in wrong:
                continue  # the eager mode's bug, filed there
            target = _target(case, ctx.library_of.get(backend, ""))
            ctx.stats["gradient_shape"] += 1
            found.append(finding(
                self.name, "shape", case, backend, "backward", f"{target}: {said}",
                signature_message=f"gradient shape, inputs {input_dtypes(case)}",
                mode="shape", judged_by="the input's shape"))
        return found

    def _self_check(self, case: Any, outcome: Outcome, c: Mapping[str, float],
                    ctx: OracleContext) -> Finding | None:
        allowed = allowance(c)
        reverse_off = abs(c["reverse"] - c["fd"]) > allowed
        forward = c["forward"]
        forward_off = math.isfinite(forward) and abs(forward - c["fd"]) > allowed
        if not reverse_off and not forward_off:
            return None
        mode = "reverse" if reverse_off else "forward"
        target = _target(case, ctx.library_of.get(outcome.backend, ""))
        said = (f"{'reverse' if mode == 'reverse' else 'forward'}-mode derivative of {target}"
                f" along a random direction is {c[mode]:.9g} where central finite "
                f"differences of {outcome.backend}'s own float64 forward pass give "
                f"{c['fd']:.9g} (allowed {allowed:.2g})")
        if mode == "reverse" and math.isfinite(forward):
            said += f"; its forward mode gives {forward:.9g}"
        ctx.stats[f"gradient_{mode}_off_fd"] += 1
        return finding(self.name, "gradient", case, outcome.backend, "backward", said,
                       signature_message=f"{mode} mode vs finite differences, inputs "
                       f"{input_dtypes(case)}",
                       mode=mode, judged_by="finite differences (float64)",
                       special_values="", reverse=c["reverse"], forward=forward,
                       finite_differences=c["fd"], allowed=allowed)

    def _across(self, items: Sequence[Item], judged: list[int],
                results: list[list[Finding]], ctx: OracleContext,
                checked: Mapping[int, str]) -> None:
        """The gradients of the backends judged like outputs of an API call.

        Where the reference libraries reach no consensus because fewer than two of them
        have the call (TF.js calls have counterparts in TensorFlow alone), a library's
        float64 gradient is the reference if its finite differences backed it at this
        very point (``checked``): the other libraries are judged against it."""
        canon = {i: (items[i][0], canonical_outcomes(*items[i])) for i in judged}
        suspects = [i for i in judged if suspicious(*canon[i])]
        if not suspects:
            return
        ctx.stats["gradient_suspicious"] += len(suspects)
        refs = ctx.judge.references([canon[i] for i in suspects])
        alone = [k for k, (i, ref) in enumerate(zip(suspects, refs, strict=True))
                 if ref is None and checked.get(i) and _lone_reference(canon[i][0], ctx)]
        own = ctx.judge.own_references([(canon[suspects[k]][0], checked[suspects[k]])
                                        for k in alone]) if alone else []
        by: dict[int, str] = {}
        for k, ref in zip(alone, own, strict=True):
            if ref is not None:
                refs[k] = replace(ref, method=CHECKED_METHOD)
                by[suspects[k]] = checked[suspects[k]]
                ctx.stats["gradient_checked_reference"] += 1
        for i, ref in zip(suspects, refs, strict=True):
            case, outcomes = canon[i]
            if ref is None:
                ctx.stats["gradient_unattributed"] += 1
                continue
            blamed = {f.guilty_backend for f in results[i]}
            verdicts = ctx.judge.verdicts(outcomes, ref, case)
            guilty = {v.backend for v in verdicts if v.guilty}
            reference_library = ctx.library_of.get(by.get(i, ""), "")
            for v in verdicts:
                if not v.guilty or v.backend in blamed:
                    continue
                if reference_library and ctx.library_of.get(v.backend) == reference_library:
                    continue  # judged against its own library: not what was checked
                if ctx.compiled.get(v.backend) and ctx.eager_sibling(v.backend) in (
                        guilty | blamed):
                    ctx.stats["gradient_shared_with_eager"] += 1  # filed for the eager mode
                    continue
                mode = "compiled" if ctx.compiled.get(v.backend) else "eager"
                msg = ("gradient: " + verdict_message(case, v.backend, v, ref.method,
                                                      ref.libraries))
                results[i].append(finding(
                    self.name, "gradient", case, v.backend, "backward", msg,
                    signature_message=f"{mode} gradient vs reference, inputs "
                    f"{input_dtypes(case)}", mode=mode, judged_by=f"{ref.method} reference",
                    reference_libraries=",".join(ref.libraries), special_values="",
                    ratio=float(min(v.ratio, 1e300)),
                    **({"checked_reference": by[i]} if i in by else {})))
                ctx.stats["gradient_off_reference"] += 1


def _lone_reference(case: Any, ctx: OracleContext) -> bool:
    """Whether fewer than two reference libraries have the call: no consensus could be
    formed. (Two that disagree say the semantics differ: no one is blamed then.)"""
    judge = ctx.judge
    libraries = {judge.library_of[b] for b in judge.reference_backends
                 if case.call_for(judge.library_of[b]) is not None}
    return len(libraries) < 2


def _wrong_alone(found: Finding, judged: Sequence[Finding], outcomes: Mapping[str, Outcome],
                 sound: str) -> bool:
    """Whether a one-layer step shows ``found``'s bug: the oracle blames the same backend
    for the same symptom on it, or (for a wrong derivative) the backend's float64
    directional derivative is another than the sound backend's, beyond
    ``FLOAT64_AGREEMENT``, at a smooth point, while the two forward passes are the same
    function there (their finite differences agree far better than the derivatives do:
    a layer both libraries differentiate right but compute differently is not blamed),
    the sound one agrees with its finite differences and the guilty one is farther from
    its own."""
    guilty = found.guilty_backend
    if any(f.guilty_backend == guilty and f.symptom == found.symptom for f in judged):
        return True
    if found.symptom != "gradient" or guilty not in outcomes or sound not in outcomes:
        return False
    g, s = checks_of(outcomes[guilty]), checks_of(outcomes[sound])
    if g is None or s is None or smoothness(g) != "smooth" or smoothness(s) != "smooth":
        return False
    size = max(g["scale"], s["scale"], 1e-300)
    apart = abs(g["reverse"] - s["reverse"])
    return (apart > FLOAT64_AGREEMENT * size
            and abs(g["fd"] - s["fd"]) <= apart / 8
            and abs(s["reverse"] - s["fd"]) <= allowance(s)
            and abs(g["reverse"] - g["fd"]) > 2 * abs(s["reverse"] - s["fd"]))


def _filed_under(f: Finding, node: str, op: str, against: str, how: str) -> Finding:
    """``f`` filed under the layer kind ``op`` (its API label and signature), saying
    where it was localized."""
    symptom, stage, backend, _, rest = f.signature.split("|", 4)
    details = {**dict(f.details), "suspect_node": node, "suspect_op": op}
    message = f.message
    if how:
        details.update(localized_by="backward walk", localized_against=against)
        message += f"; localized to {node} ({op}), {how}, fed by {against}"
    return replace(f, api=op, message=message,
                   signature="|".join((symptom, stage, backend, op, rest)),
                   details=tuple(sorted(details.items())))


def _target(case: Any, library: str) -> str:
    if case.kind == "train":
        nodes = case.graph.nodes
        return (f"a training step of one {nodes[0].op} layer (from {case.api})"
                if len(nodes) == 1 else
                f"a training step of {case.api} ({len(nodes)} layers)")
    call = case.call_for(library) if hasattr(case, "call_for") else None
    return call.target if call is not None else str(getattr(case, "api", "?"))
