"""NNSmith and dlfuzz side by side on PyTorch eager vs ONNX Runtime (CPU), same wall time.

A throughput or a bug count says little without a peer's, taken on the same machine
and the same library releases. This runs NNSmith 0.1.0 (its fuzzer,
``nnsmith.cli.fuzz`` with ``model.type=onnx backend.type=onnxruntime``: each model is
built in torch, run eagerly for the oracle, exported to ONNX and run by ORT) and then
dlfuzz (``dlfuzz run --engine model --method synth --backends torch,ort``, its reference
library and triage on, as a user runs it) for the same ``--seconds`` of fuzzing, one after
the other (two fuzzers at once on a small machine would measure each other), and prints
one table. Per tool:

* models/s: models tested end to end (generated, run by both libraries, judged) whose
  test ended within the first ``--seconds`` of the tool's fuzzing loop, over
  ``--seconds``. Start-up is charged to neither: NNSmith's imports and op/dtype probe
  (its "topset", cached in the venv), dlfuzz's worker start-up (its budget starts when
  the workers are ready). dlfuzz runs 4 inputs per model and triages (confirms, reduces)
  its findings inside the budget; NNSmith runs one input and keeps every failure.
* nodes/model: mean operator nodes per model, as each generator counts them (dlfuzz:
  ``Graph.nodes``; NNSmith: ``GraphIR.n_compute_inst``, its inputs and weight
  placeholders left out), and nodes/s (models/s times nodes/model, the ratio that
  allows for model size).
* op kinds: distinct operators generated (NNSmith's op classes, e.g. ``Concat3``, are
  its own spelling; the lists are printed).
* dtypes: the dtype of every operator output, as a share of all operator outputs.
* both ran: models that both libraries ran to outputs (on every input).
* raw reports: NNSmith's bug folders of the models counted (one per failed test: an
  ORT exception or an output mismatch with torch); dlfuzz's findings before any dedup
  (the campaign's ``batches.findings``).
* confirmed: dlfuzz's confirmed bugs and their root causes (``dlfuzz findings DIR
  --json``); NNSmith has no confirmation step.

Neither tool stores what it generated when the test passes (NNSmith's ``fuzz.save_test``
would, at a cost charged to its time), so each runs under a small observer, this file in
``observe-nnsmith`` / ``observe-dlfuzz`` mode: it imports the tool, wraps two of its
functions to append one JSON line per tested model (time, nodes, ops, dtypes, whether
both libraries ran) to ``observed.jsonl``, and then calls the tool's own entry point with
the same arguments, so the tool runs unchanged otherwise. The model counts are checked
against the tools' own (NNSmith's "Total N testcases", dlfuzz's campaign DB).

NNSmith is installed into its own venv (``--venv``, default
``~/.cache/dlfuzz-peers/nnsmith-0.1.0``): torch first, at the release dlfuzz runs here
(a looser requirement pulls a multi-GB CUDA build), then ``nnsmith==0.1.0`` (or
``--nnsmith-from`` a fetched wheel) with onnx, onnxruntime, numpy and z3-solver pinned to
dlfuzz's releases, so both tools test the same libraries, and hydra and friends pinned to
the releases this was checked with. A marker file makes a complete venv reused.
NNSmith 0.1.0 predates those releases; two lines of it are patched in the venv (each
patch says what and why, ``PATCHES``), idempotently, on every run. NNSmith's topset cache
goes to the venv (``XDG_CACHE_HOME``), so a probe made before the patches is never read.

``--nnsmith-max-nodes`` (default 10): NNSmith's own default is 5, dlfuzz's synthesized
graphs have 6 to 14 nodes; models of one size make models/s comparable.

Run: ``.venv/bin/python benchmarks/peers.py [--seconds 120] [--seed 1] [--out DIR]
[--venv DIR] [--nnsmith-from WHEEL] [--nnsmith-max-nodes 10] [--from DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shlex
import subprocess
import sys
import tempfile
import textwrap
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

THIS = Path(__file__).resolve()
NNSMITH = "0.1.0"
DEFAULT_VENV = Path.home() / ".cache" / "dlfuzz-peers" / f"nnsmith-{NNSMITH}"
MARKER = "peers-installed.json"
# Pinned to the releases dlfuzz runs with (read from this interpreter): one set of
# libraries under test for both tools.
SHARED = ("torch", "onnx", "onnxruntime", "numpy", "z3-solver")
# NNSmith's other requirements, at the releases this benchmark was checked with.
FIXED = {"hydra-core": "1.3.8", "hydra-colorlog": "1.2.0", "omegaconf": "2.3.1",
         "multipledispatch": "1.0.0", "appdirs": "1.4.4"}
DLFUZZ_ARGS = ("--engine", "model", "--method", "synth", "--backends", "torch,ort")
NNSMITH_ARGS = ("model.type=onnx", "backend.type=onnxruntime")
OBSERVE_ENV = "DLFUZZ_PEERS_OBSERVE"
OBSERVED = "observed.jsonl"
# Beyond --seconds: start-up, NNSmith's first topset probe, dlfuzz's last reproducer checks.
GRACE_S = 900
# Other processes' load (share of the cores) above which a run's timings are flagged.
BUSY_WARN = 0.1
NNSMITH_REPORT = re.compile(r"^bug-Symptom\.(\w+)-Stage\.(\w+)-(\d+)$")


class PeerError(Exception):
    """An expected failure (install, a tool that does not start, a bad folder): printed
    as one ``error:`` message naming the step, the command and the fix, no traceback."""


# ---- NNSmith's venv -------------------------------------------------------------------
@dataclass(frozen=True)
class Patch:
    """One compatibility fix of an installed NNSmith file: ``old`` becomes ``new``."""

    file: str  # relative to the nnsmith package folder
    old: str
    new: str
    why: str


PATCHES = (
    Patch("backends/onnxruntime.py", "onnx._serialize(model.native_model)",
          "model.native_model.SerializeToString()",
          "onnx._serialize, a private helper NNSmith used to hand ORT the model bytes, is "
          "gone from current onnx: every ORT session failed with AttributeError, so every "
          "op failed NNSmith's dtype probe and it generated no model at all"),
    Patch("materialize/onnx/__init__.py",
          "                opset_version=14,\n            )",
          "                opset_version=14,\n                dynamo=False,\n            )",
          "torch 2.9 made torch.onnx.export's dynamo exporter the default; it needs "
          "onnxscript and is not the exporter NNSmith 0.1.0 was written for: dynamo=False "
          "keeps the TorchScript exporter (opset 14) it expects"),
)


def run_step(step: str, cmd: Sequence[str], fix: str, timeout: float | None = None
             ) -> subprocess.CompletedProcess[str]:
    """Run one setup command; a failure is a ``PeerError`` with the step, the command,
    the end of its output and the fix, because a bare pip traceback says none of them."""
    try:
        proc = subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PeerError(f"{step} failed: {shlex.join(cmd)}: {exc}\nfix: {fix}") from None
    if proc.returncode != 0:
        lines = (proc.stdout + proc.stderr).strip().splitlines()
        # pip's error lines, when it wrote some, rather than its warnings before them
        tail = "\n".join(([ln for ln in lines if "error" in ln.lower()] or lines)[-15:])
        raise PeerError(f"{step} failed (exit {proc.returncode}): {shlex.join(cmd)}\n"
                        f"{textwrap.indent(tail, '  ')}\nfix: {fix}")
    return proc


def shared_pins() -> dict[str, str]:
    """The releases of ``SHARED`` in this interpreter (torch's local label dropped:
    ``torch==2.13.0`` is what selects the CPU wheel)."""
    from importlib import metadata

    pins = {}
    for name in SHARED:
        try:
            pins[name] = metadata.version(name).split("+")[0]
        except metadata.PackageNotFoundError:
            raise PeerError(f"reading pins failed: {name} is not installed in "
                            f"{sys.executable}\nfix: run the benchmark with dlfuzz's venv "
                            "(.venv/bin/python benchmarks/peers.py, after `make install`)"
                            ) from None
    return pins


def wanted(pins: dict[str, str], source: str) -> dict[str, str]:
    """What a complete venv holds: the marker's content."""
    return {"nnsmith": NNSMITH, "nnsmith_source": source, **pins, **FIXED}


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def ensure_venv(venv: Path, pins: dict[str, str], source: Path | None = None,
                say: Callable[[str], None] = print) -> Path:
    """NNSmith's venv, made or completed if its marker does not match; its python."""
    python = venv_python(venv)
    spec = str(source.resolve()) if source else f"nnsmith=={NNSMITH}"
    want = wanted(pins, spec)
    marker = venv / MARKER
    try:
        have = json.loads(marker.read_text()) if marker.is_file() else None
    except (OSError, ValueError):
        have = None
    if python.exists() and have == want:
        say(f"NNSmith venv: {venv} (complete, reused)")
        return python
    fix_pip = ("check that pip reaches the package index (pip config list) and that the "
               "pins exist there" + (f", and that {source} is NNSmith {NNSMITH}'s wheel"
                                     if source else "")
               + f"; or delete {venv} and rerun; or give --venv another folder")
    if not python.exists():
        say(f"NNSmith venv: creating {venv}")
        try:
            venv.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise PeerError(f"create NNSmith's venv failed: {exc}\nfix: give --venv a "
                            "folder that can be written") from None
        run_step("create NNSmith's venv", [sys.executable, "-m", "venv", str(venv)],
                 f"check that {venv.parent} is writable and that this python has venv "
                 "(python3 -m venv), or give --venv another folder", timeout=300)
    torch = f"torch=={pins['torch']}"
    say(f"NNSmith venv: installing {torch} first (the CPU wheel)")
    run_step("install torch into NNSmith's venv",
             [str(python), "-m", "pip", "install", "-q", torch], fix_pip, timeout=1800)
    reqs = [spec, *(f"{k}=={v}" for k, v in {**pins, **FIXED}.items())]
    say(f"NNSmith venv: installing {' '.join(reqs)}")
    run_step("install NNSmith into its venv",
             [str(python), "-m", "pip", "install", "-q", *reqs], fix_pip, timeout=1800)
    marker.write_text(json.dumps(want, indent=2) + "\n")
    return python


def nnsmith_package(venv: Path) -> Path:
    found = sorted(venv.glob("lib/python*/site-packages/nnsmith"))
    if not found:
        raise PeerError(f"finding NNSmith failed: no lib/python*/site-packages/nnsmith in "
                        f"{venv}\nfix: delete {venv} and rerun (the install is redone)")
    return found[-1]


def apply_patches(package: Path, patches: Sequence[Patch] = PATCHES) -> list[str]:
    """Apply each patch to the installed files unless it is there already; one line per
    patch saying which. A file that holds neither side is another NNSmith: refused."""
    lines = []
    for p in patches:
        path = package / p.file
        try:
            text = path.read_text()
        except OSError as exc:
            raise PeerError(f"patching NNSmith failed: {path}: {exc}\nfix: delete the "
                            "venv and rerun (NNSmith is reinstalled)") from None
        if p.new in text:
            state = "already applied"
        elif text.count(p.old) == 1:
            path.write_text(text.replace(p.old, p.new))
            state = "applied now"
        else:
            raise PeerError(f"patching NNSmith failed: {path} holds neither the text to "
                            f"patch ({p.old.strip()!r}) nor the patch; it is not NNSmith "
                            f"{NNSMITH}\nfix: delete the venv and rerun, or give --venv "
                            "another folder")
        lines.append(f"  {p.file} ({state}): {' '.join(p.old.split())!r} -> "
                     f"{' '.join(p.new.split())!r}\n    why: {p.why}")
    return lines


# Run by each tool's interpreter: the releases it holds (those it lacks left out).
VERSIONS_CODE = """
import importlib.metadata as m, json
out = {}
for n in ('nnsmith', 'dlfuzz', 'torch', 'onnx', 'onnxruntime', 'numpy', 'z3-solver'):
    try:
        out[n] = m.version(n)
    except m.PackageNotFoundError:
        pass
print(json.dumps(out))
"""


def versions_of(python: Path | str, fix: str) -> dict[str, str]:
    proc = run_step("reading versions", [str(python), "-c", VERSIONS_CODE], fix,
                    timeout=120)
    out: dict[str, str] = json.loads(proc.stdout)
    return out


# ---- running the tools ----------------------------------------------------------------
@dataclass
class ToolRun:
    """One tool's run: what was run, how long the whole process took, how it ended."""

    command: list[str]
    env: dict[str, str]
    wall_s: float
    returncode: int
    log: str
    # Cores other processes kept busy meanwhile (None: not measurable here): the machine
    # may be shared, and a fuzzer sharing its cores is measured slower than it is.
    others_cores: float | None = None


def busy_cpu_s() -> float | None:
    """CPU seconds the whole machine has been busy since boot (``/proc/stat``; None
    where there is none)."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()
        ticks = [int(x) for x in fields[1:9]]
    except (OSError, IndexError, ValueError):
        return None
    # user nice system idle iowait irq softirq steal: all but idle and iowait are busy
    return (sum(ticks[0:3]) + sum(ticks[5:8])) / os.sysconf("SC_CLK_TCK")


def own_cpu_s() -> float:
    """CPU seconds of this process and of its children that have ended (a tool and the
    workers it reaped)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def run_tool(name: str, cmd: list[str], env_set: dict[str, str], log: Path,
             timeout: float, drop: Sequence[str] = ()) -> ToolRun:
    """Run a tool with its output to ``log``; Ctrl-C reaches it too (same process
    group), and one that runs past ``timeout`` is stopped by its process id."""
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(env_set)
    busy0, own0 = busy_cpu_s(), own_cpu_s()
    t0 = time.perf_counter()
    with open(log, "w") as out:
        try:
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
        except OSError as exc:
            raise PeerError(f"starting {name} failed: {shlex.join(cmd)}: {exc}") from None
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            raise PeerError(f"{name} ran past {timeout:.0f} s and was stopped: "
                            f"{shlex.join(cmd)}\nits output: {log}") from None
        except KeyboardInterrupt:
            proc.wait()
            raise
    wall = time.perf_counter() - t0
    busy1 = busy_cpu_s()
    others = None
    if busy0 is not None and busy1 is not None and wall > 0:
        others = max(0.0, (busy1 - busy0 - (own_cpu_s() - own0)) / wall)
    return ToolRun(cmd, env_set, wall, rc, str(log), others)


def run_nnsmith(python: Path, venv: Path, folder: Path, seconds: int, seed: int,
                max_nodes: int) -> ToolRun:
    folder.mkdir(parents=True, exist_ok=True)
    cmd = [str(python), str(THIS), "observe-nnsmith", f"fuzz.time={seconds}s",
           f"fuzz.root={folder / 'reports'}", f"fuzz.seed={seed}", *NNSMITH_ARGS,
           f"mgen.max_nodes={max_nodes}", f"hydra.run.dir={folder / 'hydra'}"]
    env = {OBSERVE_ENV: str(folder / OBSERVED), "XDG_CACHE_HOME": str(venv / "cache")}
    # PYTHONPATH is dlfuzz's (src/): NNSmith's python must not import from there.
    return run_tool("NNSmith", cmd, env, folder / "output.log", seconds + GRACE_S,
                    drop=("PYTHONPATH",))


def run_dlfuzz(folder: Path, seconds: int, seed: int) -> ToolRun:
    folder.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, str(THIS), "observe-dlfuzz", "run", *DLFUZZ_ARGS, "--budget",
           f"{seconds}s", "--seed", str(seed), "--out", str(folder / "campaign"), "--quiet"]
    env = {OBSERVE_ENV: str(folder / OBSERVED)}
    run = run_tool("dlfuzz", cmd, env, folder / "output.log", seconds + GRACE_S)
    if (folder / "campaign" / "campaign.db").is_file():
        listing = run_step("listing dlfuzz's confirmed bugs",
                           [sys.executable, "-m", "dlfuzz", "findings",
                            str(folder / "campaign"), "--json"],
                           f"run it by hand; the campaign is in {folder / 'campaign'}",
                           timeout=600)
        (folder / "findings.json").write_text(listing.stdout)
    return run


# ---- the observers (run inside each tool's interpreter) -------------------------------
def _observer_log() -> Any:
    # Line-buffered and left open: the tool may end the process at any point.
    return open(os.environ[OBSERVE_ENV], "a", buffering=1)


def _event(log: Any, **values: Any) -> None:
    log.write(json.dumps({"t": time.time(), **values}) + "\n")


def observe_nnsmith(argv: list[str]) -> None:
    """``nnsmith.cli.fuzz`` with hydra overrides ``argv``, observed: each generated
    graph's ops and dtypes are noted when it is made concrete, and written with the
    verdict (and NNSmith's bug folder, if any) when its test ends."""
    import nnsmith.cli.fuzz as fuzz  # type: ignore[import-not-found]
    from nnsmith.abstract.op import (  # type: ignore[import-not-found]
        Constant,
        Input,
        Placeholder,
    )

    log = _observer_log()
    last: dict[str, Any] = {}

    def summary(ir: Any) -> dict[str, Any]:
        ops: list[str] = []
        dtypes: list[str] = []
        for inst in ir.insts:
            op = inst.iexpr.op
            if isinstance(op, Input | Constant | Placeholder):
                continue
            ops.append(op.name())
            dtypes.extend(str(ir.vars[v].dtype) for v in inst.retvals())
        return {"nodes": len(ops), "ops": ops, "dtypes": dtypes}

    model_gen = fuzz.model_gen

    def observed_model_gen(*args: Any, **kwargs: Any) -> Any:
        gen = model_gen(*args, **kwargs)
        make_concrete = gen.make_concrete

        def observed_make_concrete() -> Any:
            ir = make_concrete()
            last.clear()
            last.update(summary(ir))
            return ir

        gen.make_concrete = observed_make_concrete
        return gen

    loop = fuzz.FuzzingLoop
    validate, run = loop.validate_and_report, loop.run

    def observed_validate(self: Any, testcase: Any) -> bool:
        ok = bool(validate(self, testcase))
        report = None
        if not ok:  # the folder NNSmith just wrote: bug-<symptom>-<stage>-<index>
            found = sorted(self.status.root.glob(f"bug-*-{self.status.n_bugs - 1}"))
            report = found[0].name if found else None
        _event(log, event="model", ok=ok, report=report, inputs=1, **last)
        return ok

    def observed_run(self: Any) -> Any:
        _event(log, event="start")
        try:
            return run(self)
        finally:
            _event(log, event="end", models=self.status.n_testcases,
                   reports=self.status.n_bugs, failed_make=self.status.n_fail_make_test)

    fuzz.model_gen = observed_model_gen
    loop.validate_and_report, loop.run = observed_validate, observed_run
    sys.argv = [fuzz.__file__, *argv]
    fuzz.main()


def observe_dlfuzz(argv: list[str]) -> None:
    """``dlfuzz`` with arguments ``argv``, observed: a model is written when the engine
    has every input's outcomes back (it was run and judged), with its graph's ops and
    dtypes and whether every backend ran it; the loop's start is when the workers are
    ready (where dlfuzz's budget starts)."""
    from dlfuzz.campaign import Campaign
    from dlfuzz.cli.main import main
    from dlfuzz.engines.model.engine import ModelEngine

    log = _observer_log()
    feedback, start, run = ModelEngine.feedback, Campaign.start, Campaign.run

    def observed_feedback(self: Any, case: Any, outcomes: Any, findings: Any) -> None:
        key = self._case_model.get(getattr(case, "id", ""))
        result = self._open.get(key) if key is not None else None
        before = self.models_learned
        feedback(self, case, outcomes, findings)
        if result is None or self.models_learned == before:
            return
        graph = result.proposal.model.graph
        types = graph.types()
        ran = all(o.ok for per_input in result.outcomes for o in per_input.values())
        _event(log, event="model", ran=ran, findings=len(result.findings), inputs=len(result.outcomes),
               nodes=len(graph.nodes), ops=graph.ops(),
               dtypes=[types[n.id].dtype for n in graph.nodes])

    def observed_start(self: Any) -> Any:
        versions = start(self)
        _event(log, event="start")
        return versions

    def observed_run(self: Any) -> Any:
        progress = run(self)
        _event(log, event="end", models=self.engine.models_learned, cases=progress.cases,
               findings=progress.findings)
        return progress

    ModelEngine.feedback = observed_feedback  # type: ignore[method-assign]
    Campaign.start = observed_start  # type: ignore[method-assign]
    Campaign.run = observed_run  # type: ignore[method-assign]
    sys.argv = ["dlfuzz", *argv]
    main()


# ---- summaries ------------------------------------------------------------------------
@dataclass
class Observed:
    """An observer's file: the loop's start and end events and the tested models."""

    start: float | None = None
    end: dict[str, Any] | None = None
    models: list[dict[str, Any]] = field(default_factory=list)


def read_observed(path: Path) -> Observed:
    out = Observed()
    if not path.is_file():
        return out
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            raise PeerError(f"{path}:{n}: not a JSON line; rerun the benchmark") from None
        kind = rec.get("event")
        if kind == "start" and out.start is None:
            out.start = float(rec["t"])
        elif kind == "end":
            out.end = rec
        elif kind == "model":
            out.models.append(rec)
    return out


def ran_both(rec: dict[str, Any]) -> bool:
    """Both libraries returned outputs: dlfuzz says so (``ran``); for NNSmith a passed
    test or an output mismatch (an ORT exception is a report of another symptom)."""
    if "ran" in rec:
        return bool(rec["ran"])
    if rec.get("ok"):
        return True
    report = parse_report(str(rec.get("report") or ""))
    return report is not None and report[0] == "inconsistency"


def parse_report(name: str) -> tuple[str, str] | None:
    """NNSmith's bug folder name -> (symptom, stage), e.g. ``bug-Symptom.EXCEPTION-
    Stage.COMPILATION-3`` -> ("exception", "compilation"); None if it is not one."""
    m = NNSMITH_REPORT.match(name)
    return (m.group(1).lower(), m.group(2).lower()) if m else None


@dataclass
class Result:
    """One tool's row of the table, and what is printed below it."""

    label: str
    seconds: float
    models: int = 0
    inputs: float = 0.0
    nodes: float = 0.0
    ops: Counter[str] = field(default_factory=Counter)
    dtypes: Counter[str] = field(default_factory=Counter)
    both_ran: int = 0
    reports: int | None = None
    report_lines: list[str] = field(default_factory=list)  # the raw reports, grouped
    confirmed: int | None = None
    root_causes: int | None = None
    confirmed_lines: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    counted: list[dict[str, Any]] = field(default_factory=list)  # the observed models

    @property
    def per_s(self) -> float:
        return self.models / self.seconds if self.seconds > 0 else 0.0


def summarise(label: str, observed: Observed, seconds: float) -> Result:
    """Models whose test ended within ``seconds`` of the loop's start, and their sizes,
    op kinds, dtypes and how many both libraries ran."""
    r = Result(label, seconds)
    if observed.start is None:
        r.notes.append("its fuzzing loop never started (see its output)")
        return r
    models = [m for m in observed.models if float(m["t"]) <= observed.start + seconds]
    late = len(observed.models) - len(models)
    if late:
        r.notes.append(f"{late} model(s) ended after the {seconds:.0f} s window: "
                       "not counted")
    r.models, r.counted = len(models), models
    if models:
        r.inputs = sum(int(m.get("inputs", 1)) for m in models) / len(models)
        r.nodes = sum(int(m["nodes"]) for m in models) / len(models)
    r.ops = Counter(op for m in models for op in m["ops"])
    r.dtypes = Counter(d for m in models for d in m["dtypes"])
    r.both_ran = sum(ran_both(m) for m in models)
    return r


def nnsmith_result(folder: Path, seconds: float) -> Result:
    """NNSmith's row: the observer's models, its bug folders as raw reports, and its own
    count of tests ("Total N testcases") as a check."""
    observed = read_observed(folder / OBSERVED)
    r = summarise("NNSmith", observed, seconds)
    # The reports of the models counted (a test ending after the window may add one).
    kinds = [parse_report(str(m["report"])) for m in r.counted if m.get("report")]
    r.reports = len(kinds)
    by_kind = Counter(f"{k[0]} at {k[1]}" if k else "unrecognised folder name" for k in kinds)
    r.report_lines = [f"{kind}: {n}" for kind, n in by_kind.most_common()]
    reports = folder / "reports"
    folders = sum(parse_report(p.name) is not None for p in reports.iterdir()) \
        if reports.is_dir() else 0
    unnamed = sum(1 for m in r.counted if m.get("ok") is False and not m.get("report"))
    if unnamed:
        r.notes.append(f"{unnamed} failed test(s) without a bug folder (not counted)")
    if folders != r.reports:
        r.notes.append(f"{folders} bug folders in {reports}, {r.reports} of them from "
                       "the models counted")
    if observed.end is not None:
        told = int(observed.end.get("models", -1))
        if told != len(observed.models):
            r.notes.append(f"NNSmith counted {told} tests, the observer {len(observed.models)}")
        if observed.end.get("failed_make"):
            r.notes.append(f"{observed.end['failed_make']} model(s) NNSmith failed to make "
                           "(not tested, not counted)")
    elif observed.start is not None:
        r.notes.append("its loop did not finish (crashed or stopped): see its output")
    return r


def dlfuzz_result(folder: Path, seconds: float) -> Result:
    """dlfuzz's row: the observer's models, the campaign DB's raw findings (and its cases
    as a check), the confirmed bugs ``dlfuzz findings --json`` listed."""
    observed = read_observed(folder / OBSERVED)
    r = summarise("dlfuzz", observed, seconds)
    campaign = folder / "campaign"
    if not (campaign / "campaign.db").is_file():
        r.notes.append(f"no campaign in {campaign}")
        return r
    from dlfuzz.engines.model.settings import DEFAULT_INPUTS
    from dlfuzz.store.db import Store

    store = Store.open(campaign)
    try:
        totals = store.totals()
        findings = store.conn.execute(
            "SELECT COALESCE(SUM(findings), 0) AS n FROM batches").fetchone()["n"]
        bugs = store.bugs()
        settings = store.meta().get("settings") or {}
    finally:
        store.close()
    r.reports = int(findings)
    engine = settings.get("engine_settings") or {}
    # 0 stored: the method's own default (``DEFAULT_INPUTS``).
    per_model = int(engine.get("inputs_per_model", 0)) or DEFAULT_INPUTS.get(
        str(engine.get("method", "")), 0)
    if bugs:
        status = Counter(b.status for b in bugs)
        r.report_lines = [f"{len(bugs)} distinct signatures (bug rows): "
                          + ", ".join(f"{k} {v}" for k, v in sorted(status.items()))]
    if per_model:
        stored = int(totals["cases"]) // per_model
        r.notes.append(f"campaign DB: {int(totals['cases'])} cases in "
                       f"{int(totals['batches'])} batches = {stored} models of {per_model} "
                       f"inputs (the observer: {len(observed.models)} in all)")
    listing = folder / "findings.json"
    if listing.is_file():
        try:
            records = json.loads(listing.read_text() or "[]")
        except ValueError:
            raise PeerError(f"{listing}: not JSON; rerun `dlfuzz findings {campaign} "
                            "--json`") from None
        r.confirmed = len(records)
        r.root_causes = len({str(b.get("root_cause") or b.get("id")) for b in records})
        r.confirmed_lines = [
            f"[{b.get('severity', '?')}] {b.get('guilty_backend', '?')} {b.get('api', '?')}: "
            f"{' '.join(str(b.get('message', '')).split())[:110]}" for b in records]
    return r


# ---- the table ------------------------------------------------------------------------
def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b > 0 else "-"


def _num(v: float | None, fmt: str = "{:.1f}") -> str:
    return "-" if v is None else fmt.format(v)


def table(nn: Result, dl: Result) -> list[str]:
    """The side-by-side table; the last column is dlfuzz/NNSmith where a ratio means
    something (throughput)."""
    secs = f"{nn.seconds:.0f} s"
    rows: list[tuple[str, str, str, str]] = [
        ("", "NNSmith", "dlfuzz", "dlfuzz/NNSmith"),
        (f"models tested (in {secs})", str(nn.models), str(dl.models), ""),
        ("models/s", f"{nn.per_s:.2f}", f"{dl.per_s:.2f}", _ratio(dl.per_s, nn.per_s)),
        ("inputs/model", _num(nn.inputs), _num(dl.inputs), ""),
        ("nodes/model (mean)", _num(nn.nodes), _num(dl.nodes), ""),
        ("nodes/s", f"{nn.per_s * nn.nodes:.1f}", f"{dl.per_s * dl.nodes:.1f}",
         _ratio(dl.per_s * dl.nodes, nn.per_s * nn.nodes)),
        ("op kinds (distinct)", str(len(nn.ops)), str(len(dl.ops)), ""),
        ("dtypes (distinct)", str(len(nn.dtypes)), str(len(dl.dtypes)), ""),
    ]
    for d in sorted(set(nn.dtypes) | set(dl.dtypes),
                    key=lambda d: -((_share(nn.dtypes, d) or 0) + (_share(dl.dtypes, d) or 0))):
        rows.append((f"  {d} (of op outputs)", _pct(_share(nn.dtypes, d)),
                     _pct(_share(dl.dtypes, d)), ""))
    rows += [
        ("both libraries ran", _pct(nn.both_ran / nn.models if nn.models else None),
         _pct(dl.both_ran / dl.models if dl.models else None), ""),
        ("raw reports", _num(nn.reports, "{}"), _num(dl.reports, "{}"), ""),
        ("confirmed bugs (root causes)", "-",
         "-" if dl.confirmed is None else f"{dl.confirmed} ({dl.root_causes})", ""),
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    return [f"{row[0]:<{widths[0]}}  {row[1]:>{widths[1]}}  {row[2]:>{widths[2]}}  "
            f"{row[3]:>{widths[3]}}".rstrip() for row in rows]


def _share(c: Counter[str], key: str) -> float | None:
    total = sum(c.values())
    return c[key] / total if total else None


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"


def details(r: Result) -> list[str]:
    """What the table leaves out: the op kinds, the raw reports by kind, the bugs."""
    ops = ", ".join(f"{op.removeprefix('core.')}:{n}" for op, n in sorted(r.ops.items()))
    lines = [f"{r.label}: {len(r.ops)} op kinds (op:nodes):",
             *textwrap.wrap(ops or "none", 96, initial_indent="  ", subsequent_indent="  ")]
    if r.report_lines:
        lines.append(f"{r.label}: raw reports ({r.reports}):")
        lines += [f"  {line}" for line in r.report_lines]
    if r.confirmed_lines:
        lines.append(f"{r.label}: confirmed bugs:")
        lines += [f"  {line}" for line in r.confirmed_lines]
    lines += [f"{r.label}: note: {n}" for n in r.notes]
    return lines


# ---- main -----------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--seconds", type=int, default=120,
                    help="fuzzing seconds per tool (start-up not counted)")
    ap.add_argument("--seed", type=int, default=1, help="both tools' seed")
    ap.add_argument("--out", type=Path, default=None,
                    help="scratch folder for both runs (default: a new temp folder)")
    ap.add_argument("--venv", type=Path, default=DEFAULT_VENV, help="NNSmith's venv")
    ap.add_argument("--nnsmith-from", type=Path, default=None, metavar="WHEEL",
                    help=f"install NNSmith {NNSMITH} from this file instead of the index")
    ap.add_argument("--nnsmith-max-nodes", type=int, default=10,
                    help="NNSmith's mgen.max_nodes (its own default: 5)")
    ap.add_argument("--from", dest="source", type=Path, default=None,
                    help="summarise an earlier --out folder without running")
    args = ap.parse_args(argv)
    if args.seconds < 1 or args.nnsmith_max_nodes < 1:
        raise PeerError("--seconds and --nnsmith-max-nodes must be at least 1")
    if args.source is not None and args.out is not None:
        raise PeerError("--from and --out: give one (--from summarises a kept folder)")
    if args.nnsmith_from is not None and not args.nnsmith_from.is_file():
        raise PeerError(f"--nnsmith-from {args.nnsmith_from}: no such file")
    if args.source is not None:
        root = args.source
        try:
            run_info = json.loads((root / "run.json").read_text())
        except (OSError, ValueError) as exc:
            raise PeerError(f"--from {root}: no readable run.json ({exc}); give the --out "
                            "folder of an earlier run") from None
    else:
        root = args.out or Path(tempfile.mkdtemp(prefix="dlfuzz-peers-"))
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise PeerError(f"--out {root}: cannot be made ({exc}); give a folder that "
                            "can be written") from None
        if any((root / t).exists() for t in ("nnsmith", "dlfuzz")):
            raise PeerError(f"--out {root} holds an earlier run; give a new folder (or "
                            f"--from {root} to summarise it)")
        run_info = run_both(args, root)
    seconds = float(run_info["seconds"])
    nn = nnsmith_result(root / "nnsmith", seconds)
    dl = dlfuzz_result(root / "dlfuzz", seconds)
    print(f"\nPyTorch eager vs ONNX Runtime (CPU), {seconds:.0f} s of fuzzing each, seed "
          f"{run_info['seed']}, in {root}\n")
    print("\n".join(table(nn, dl)))
    cores = os.cpu_count() or 1
    for tool, t in run_info["runs"].items():
        others = t.get("others_cores")
        if others is not None and others > BUSY_WARN * cores:
            print(f"warning: other processes kept {others:.1f} of {cores} cores busy during "
                  f"the {tool} run: its numbers are low by up to that share; rerun when "
                  "the machine is quiet")
    print()
    print("\n".join(details(nn) + details(dl)))
    print("\ncommands:")
    for tool in ("nnsmith", "dlfuzz"):
        t = run_info["runs"].get(tool)
        if t:
            env = " ".join(f"{k}={shlex.quote(v)}" for k, v in t["env"].items())
            others = t.get("others_cores")
            load = "" if others is None else f", other processes {others:.2f} cores"
            print(f"  {tool} (exit {t['returncode']}, {t['wall_s']:.0f} s with start-up "
                  f"and wrap-up{load}; output {t['log']}):\n"
                  f"    {env} {shlex.join(t['command'])}")
    print("  (observe-nnsmith / observe-dlfuzz run `python -m nnsmith.cli.fuzz` / `dlfuzz` "
          "with these arguments, observed; see the module docstring)")
    print("\nversions:")
    for tool, v in run_info["versions"].items():
        print(f"  {tool}: {', '.join(f'{k} {x}' for k, x in v.items())}")
    if run_info.get("patches"):
        print(f"\nNNSmith {NNSMITH} patched in {run_info['venv']}:")
        print("\n".join(run_info["patches"]))
    return 0


def run_both(args: argparse.Namespace, root: Path) -> dict[str, Any]:
    """Install/patch NNSmith, run both tools, keep what was run in ``root/run.json``."""
    pins = shared_pins()
    python = ensure_venv(args.venv, pins, args.nnsmith_from)
    patches = apply_patches(nnsmith_package(args.venv))
    print(f"NNSmith {NNSMITH}: {len(patches)} compatibility patches in place (listed at "
          "the end)")
    versions = {"NNSmith venv": versions_of(python, f"delete {args.venv} and rerun (the "
                                            "install is redone)"),
                "dlfuzz env": versions_of(sys.executable, "run the benchmark with "
                                          "dlfuzz's venv (.venv/bin/python)")}
    info: dict[str, Any] = {"seconds": args.seconds, "seed": args.seed,
                            "venv": str(args.venv), "patches": patches,
                            "versions": versions, "runs": {}}
    print(f"NNSmith: fuzzing {args.seconds} s (after its start-up) ...", flush=True)
    nn = run_nnsmith(python, args.venv, root / "nnsmith", args.seconds, args.seed,
                     args.nnsmith_max_nodes)
    info["runs"]["nnsmith"] = asdict(nn)
    _save(root, info)
    if read_observed(root / "nnsmith" / OBSERVED).start is None:
        raise PeerError(f"running NNSmith failed (exit {nn.returncode}) before its fuzzing "
                        f"loop started: {shlex.join(nn.command)}\n{_tail(nn.log)}\nfix: "
                        f"read {nn.log}; delete {args.venv} to reinstall NNSmith")
    print(f"dlfuzz: fuzzing {args.seconds} s (after its start-up) ...", flush=True)
    dl = run_dlfuzz(root / "dlfuzz", args.seconds, args.seed)
    info["runs"]["dlfuzz"] = asdict(dl)
    _save(root, info)
    if dl.returncode != 0:
        raise PeerError(f"running dlfuzz failed (exit {dl.returncode}): "
                        f"{shlex.join(dl.command)}\n{_tail(dl.log)}\nfix: read {dl.log}; "
                        f"`dlfuzz backends` says whether torch and ort work")
    return info


def _save(root: Path, info: dict[str, Any]) -> None:
    (root / "run.json").write_text(json.dumps(info, indent=2) + "\n")


def _tail(log: str, n: int = 12) -> str:
    try:
        lines = Path(log).read_text(errors="replace").strip().splitlines()[-n:]
    except OSError:
        return ""
    return textwrap.indent("\n".join(lines), "  ")


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "observe-nnsmith":
        observe_nnsmith(sys.argv[2:])
    elif mode == "observe-dlfuzz":
        observe_dlfuzz(sys.argv[2:])
    else:
        try:
            sys.exit(main())
        except PeerError as exc:
            print(f"error: {exc}", file=sys.stderr)
            sys.exit(2)
        except KeyboardInterrupt:
            print("interrupted", file=sys.stderr)
            sys.exit(130)
        except OSError as exc:
            if exc.filename is None:
                raise
            print(f"error: {exc}", file=sys.stderr)  # a folder given that cannot be used
            sys.exit(2)
