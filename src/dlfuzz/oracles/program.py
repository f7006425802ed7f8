"""Oracles of whole programs (MoCo): execution state, Keras cross-backend, performance.

``ProgramStateOracle`` is MoCo's execution-state consistency: the parent of every node
ran, so a node must end as its inserted block says.

* A positive node (AR/RG block, legal values) must run. A crash, hang or memory blow-up
  is always a finding. An exception that reads like a context or shape error (size
  mismatch, expected input channels, incompatible shapes: a block that does not fit its
  slot, which is the generator's doing) is counted as a generation failure, never
  reported; an exception that does not read like a deliberate rejection of the input
  (an internal assert, a failed check) is a ``status`` finding. On Keras, one backend
  raising where the others run the same program is a ``status`` finding too.
* A negative node (BC: one parameter just outside its legal range) must raise a clean
  Python exception: a normal end is a ``boundary`` finding (the illegal value was
  accepted), a crash or hang a ``crash``/``timeout`` finding, an internal error where a
  validation message belongs a ``status`` finding.

``KerasCrossOracle`` compares one Keras program across keras-tf/jax/torch (the loss after
the training epoch, the eval loss, the eval outputs). Every backend starts from the same
weights and data, but float32 kernels of three engines differ in the last bits and one
epoch of SGD amplifies that: observed relative differences are around 1e-5. A backend is
blamed only when it is off the element-wise median of all of them by more than
``CROSS_RTOL`` (1e-2, relative to the largest magnitude of that quantity) while the
others agree with the median within ``CROSS_AGREE`` (1e-3): a clear majority and a
deviation a thousand times the usual noise. Triage confirms it by re-running.

``PerformanceOracle`` follows each worker's time and memory across the programs of one
seed (see its docstring).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import replace
from typing import Any

import numpy as np

from dlfuzz.cases import Finding, Outcome
from dlfuzz.oracles.base import Oracle, OracleContext, finding
from dlfuzz.oracles.crash_log import kept_output
from dlfuzz.oracles.status import is_deliberate_rejection

CROSS_RTOL = 1e-2
CROSS_AGREE = 1e-3
GROWTH = 0.5  # last window over first window, minus one: +50%
MIN_PROGRAMS = 20  # programs of one seed on one worker before growth is judged
WINDOW = 5  # programs per window (first, last)
MIN_RSS_GROWTH_MB = 64.0  # a memory "growth" smaller than this is allocator noise

_GENERATION = re.compile(
    r"size mismatch|shape|expected input|expected .*channels|incompatible|must match|"
    r"dimension|mat1 and mat2|too small|negative output|cannot reshape|rank|ndim|"
    r"non-positive|kernel size can't be greater|not divisible|divisible by|got \d+d|"
    r"expected \d+d|unbatched|calculated output|output size|multiply up|smaller than", re.I)
_UNCLEAN = re.compile(r"internal assert|check failed|please report|this is a bug|"
                      r"segmentation|llvm error", re.I)


def is_generation_failure(outcome: Outcome) -> bool:
    """A positive program's exception that is the generator's fault, not the library's:
    a block that does not fit its slot, or a constraint the knowledge base lacks."""
    if outcome.status != "exception":
        return False
    text = f"{outcome.exc_type}: {outcome.message}"
    if _UNCLEAN.search(text):
        return False
    return bool(_GENERATION.search(text)) or is_deliberate_rejection(outcome)


def edge_details(case: Any) -> dict[str, Any]:
    """The derivation edge as finding details (localization: block and parameter)."""
    return {f"edge_{k}": v for k, v in case.edge}


def _edge_label(case: Any) -> str:
    e = dict(case.edge)
    text = f"block {e.get('block')} ({e.get('api')}, {e.get('operator')}"
    if e.get("param"):
        text += f" {e.get('param')}={e.get('value')}"
    return text + ")"


class ProgramStateOracle(Oracle):
    name = "program-state"
    case_kinds = ("program",)

    def check(self, case: Any, outcomes: dict[str, Outcome], ctx: OracleContext
              ) -> list[Finding]:
        found: list[Finding] = []
        details = edge_details(case)
        ok = {b for b, o in outcomes.items() if o.ok}
        param = case.expect.partition(":")[2]
        for backend, o in outcomes.items():
            if o.status in ("crash", "timeout", "oom"):
                found.append(finding(self.name, o.status if o.status != "oom" else "oom", case,
                                     backend, o.stage, f"{o.exc_type or o.status}: {o.message} "
                                     f"at {_edge_label(case)}", o.exc_type or o.status,
                                     log_tail=kept_output(o.log_tail), **details))
            elif case.negative and o.ok:
                source = (ctx.constraint_source(case) if ctx.constraint_source is not None
                          else "") or "hand table: source not recorded"
                found.append(finding(
                    self.name, "boundary", case, backend, o.stage,
                    f"accepted {param}={dict(case.edge).get('value')} outside its legal range:"
                    f" the program ran instead of raising ({_edge_label(case)}; range from "
                    f"{source})",
                    f"accepts {param} outside its legal range", **details,
                    constraint_source=source))
            elif o.status != "exception":
                continue
            elif _UNCLEAN.search(f"{o.exc_type}: {o.message}"):
                found.append(finding(self.name, "status", case, backend, o.stage,
                                     f"{o.exc_type}: {o.message}", **details,
                                     kind="internal error"))
            elif case.negative:
                ctx.stats["program_rejected_invalid"] += 1
            elif ok - {backend}:
                found.append(finding(
                    self.name, "status", case, backend, o.stage,
                    f"{o.exc_type}: {o.message} (the program runs on "
                    f"{', '.join(sorted(ok - {backend}))})", f"{o.exc_type}: {o.message}",
                    kind="cross-backend", **details))
            elif is_generation_failure(o):
                ctx.stats["program_generation_failures"] += 1
            else:
                found.append(finding(self.name, "status", case, backend, o.stage,
                                     f"{o.exc_type}: {o.message}", kind="valid program raised",
                                     **details))
        return found


def program_values(o: Outcome) -> tuple[np.ndarray, ...]:
    """(loss, eval_loss, outputs) of a program outcome, as float64."""
    outs = [t.to_numpy() for t in o.outputs[:3]]
    return (outs[1].astype(np.float64).reshape(-1), outs[2].astype(np.float64).reshape(-1),
            outs[0].astype(np.float64).reshape(-1))


def cross_deviations(values: dict[str, tuple[np.ndarray, ...]]) -> dict[str, float]:
    """Each backend's worst relative distance to the element-wise median of all."""
    names = list(values)
    out: dict[str, float] = {b: 0.0 for b in names}
    for k in range(3):
        shapes = {values[b][k].shape for b in names}
        if len(shapes) != 1:
            return {b: float("inf") for b in names}
        stack = np.stack([values[b][k] for b in names])
        with np.errstate(invalid="ignore"):
            median = np.median(stack, axis=0)
        finite = median[np.isfinite(median)]
        scale = float(np.max(np.abs(finite))) if finite.size else 1.0
        for i, b in enumerate(names):
            with np.errstate(invalid="ignore"):
                diff = np.abs(stack[i] - median)
            bad_nan = np.isnan(stack[i]) != np.isnan(median)
            dev = float(np.nanmax(diff)) / max(scale, 1e-6) if diff.size else 0.0
            if bad_nan.any():
                dev = float("inf")
            out[b] = max(out[b], dev if np.isfinite(dev) or bad_nan.any() else 0.0)
    return out


class KerasCrossOracle(Oracle):
    name = "program-cross"
    case_kinds = ("program",)

    def check(self, case: Any, outcomes: dict[str, Outcome], ctx: OracleContext
              ) -> list[Finding]:
        if case.negative or case.library != "keras":
            return []
        ok = {b: o for b, o in outcomes.items() if o.ok and len(o.outputs) >= 3}
        if len(ok) < 3:
            return []
        devs = cross_deviations({b: program_values(o) for b, o in ok.items()})
        bad = [b for b, d in devs.items() if d > CROSS_RTOL]
        good = [b for b, d in devs.items() if d <= CROSS_AGREE]
        if not bad:
            return []
        if len(bad) != 1 or len(good) < 2:
            ctx.stats["program_cross_no_majority"] += 1
            return []
        guilty = bad[0]
        dev = devs[guilty]
        symptom = "nan" if not np.isfinite(dev) else "numeric"
        return [finding(self.name, symptom, case, guilty, ok[guilty].stage,
                        f"loss/outputs differ from {' and '.join(sorted(good))} by "
                        f"{dev:.3g} (relative) after one training epoch, at "
                        f"{_edge_label(case)}",
                        "differs from the other keras backends", deviation=dev,
                        agreeing=",".join(sorted(good)), **edge_details(case))]


class PerformanceOracle(Oracle):
    """Time and memory that keep growing across the programs one worker runs.

    Both are measured on the seed's bare template, which the engine runs again at every
    level of the tree: the same program each time, so its time and the worker's resident
    memory after it only grow if the library keeps something (or slows down) as it
    serves more programs. The first ``WINDOW`` runs are warm-up (caches filling). A series
    of at least ``MIN_PROGRAMS`` points whose least-squares slope is positive and whose
    last ``WINDOW`` points average more than ``1 + GROWTH`` times its first ``WINDOW`` is
    a ``performance`` finding, with the curve in its details. Memory must also grow by
    ``MIN_RSS_GROWTH_MB`` and keep making new highs: a resident size that only jumps when
    a bigger model runs (the allocator keeps its pages) sets its highs on those models,
    not on the small template, and is no leak. A confirmation re-run (triage) must still
    be above the first window by the same factor.
    """

    name = "program-performance"
    case_kinds = ("program",)

    def __init__(self) -> None:
        self.series: dict[tuple[str, str, str], list[float]] = defaultdict(list)
        self.highs: dict[tuple[str, str, str], list[bool]] = defaultdict(list)
        self.high: dict[str, float] = defaultdict(float)  # backend -> highest RSS seen
        self.warm: dict[tuple[str, str], int] = defaultdict(int)
        self.flagged: dict[tuple[str, str, str], float] = {}

    def check(self, case: Any, outcomes: dict[str, Outcome], ctx: OracleContext
              ) -> list[Finding]:
        if case.negative:
            return []
        found = []
        probe = dict(case.edge).get("operator") in ("root", "probe")
        for backend, o in outcomes.items():
            if not o.ok or len(o.outputs) < 5:
                continue
            rss = float(o.outputs[4].to_numpy().reshape(-1)[0])
            new_high = rss > self.high[backend] + 1.0
            self.high[backend] = max(self.high[backend], rss)
            if not probe:
                continue
            self.warm[(backend, case.seed)] += 1
            if self.warm[(backend, case.seed)] <= WINDOW:
                continue  # warm-up
            for metric, value in (("memory", rss), ("time", o.duration_s)):
                key = (backend, case.seed, metric)
                self.series[key].append(value)
                self.highs[key].append(new_high)
                if key in self.flagged:
                    if value > (1 + GROWTH) * self.flagged[key]:  # still grown: confirms
                        found.append(self._finding(case, backend, metric, o))
                elif self._growing(key, metric):
                    self.flagged[key] = float(np.mean(self.series[key][:WINDOW]))
                    found.append(self._finding(case, backend, metric, o))
        return found

    def _growing(self, key: tuple[str, str, str], metric: str) -> bool:
        values = np.array(self.series[key], dtype=np.float64)
        if values.size < MIN_PROGRAMS:
            return False
        first, last = values[:WINDOW].mean(), values[-WINDOW:].mean()
        slope = np.polyfit(np.arange(values.size), values, 1)[0]
        if metric == "memory":
            late = self.highs[key][values.size // 2:]
            if last - first < MIN_RSS_GROWTH_MB or sum(late) < 0.5 * len(late):
                return False
        return bool(slope > 0 and last > (1 + GROWTH) * first)

    def _finding(self, case: Any, backend: str, metric: str, o: Outcome) -> Finding:
        values = self.series[(backend, case.seed, metric)]
        step = max(1, len(values) // 50)
        curve = [round(v, 4) for v in values[::step]]
        unit = "MB resident" if metric == "memory" else "s for the bare template"
        first = float(np.mean(values[:WINDOW]))
        last = float(np.mean(values[-WINDOW:]))
        # About the seed's programs on this worker, not about the last block's API.
        case = replace(case, api=f"{case.seed} programs")
        return finding(self.name, "performance", case, backend, o.stage,
                       f"{metric} grows across {len(values)} programs of seed {case.seed}: "
                       f"{first:.3g} -> {last:.3g} {unit}",
                       f"{metric} grows across programs of seed {case.seed}",
                       metric=metric, curve=curve, curve_step=step, programs=len(values),
                       **edge_details(case))
