"""``make demo``: about three minutes of dlfuzz across its three levels.

One short campaign per level, each into its own folder under ``demo-campaign/`` (replaced
on each run): the API level (TensorJSFuzz/DLLens specs of a few APIs on NumPy, PyTorch,
JAX and TensorFlow), the model level (LEMON mutants of LeNet-5 on PyTorch, JAX,
TensorFlow and ONNX Runtime with and without graph optimizations) and the program level
(MoCo mutants of a PyTorch LeNet program). Then, per level, the confirmed bugs with the
severity summary (``dlfuzz findings``) and the HTML report's path (``dlfuzz report``), and
one index page linking the reports.

The settings are fixed (seeds, seed model and program, backends) and were chosen from past
campaigns on the pinned releases, so that each level is likely to end with a real bug:
longer API-level campaigns found a JAX ``bessel_jn`` bfloat16 NaN and an aborting
``jnp.bincount`` (``DEMO_APIS``), LEMON on LeNet-5 found ONNX Runtime's MaxPool
pad fusion returning negative maxima (docs/models.md), and MoCo on PyTorch programs found
missing argument checks (``Conv2d(padding=-1)``, ``ConvTranspose2d(dilation=0)``) and an
internal assert (docs/programs.md). Fuzzing is time-boxed, so a level may end without
one; the demo says so rather than failing. Measured on a shared, loaded 2-core machine
(3.5 min): the API level confirmed tf.linalg.expm's NaN (a real bug), the program level
ConvTranspose2d accepting dilation=0. The model level's seed and backends reached the
ORT MaxPool bug soonest among the settings tried: the seed fixes the sequence of mutants,
and its 18th batch holds one with a ZeroPadding2D before a 3x3 valid MaxPool2D, which
optimized ORT folds into one MaxPool whose padding counts as -inf. Three runs under a
load of 3 to 7 confirmed it after 38 to 50 s of budget. JAX and TensorFlow are there as
float64 references: with PyTorch the only one, the judge has no two libraries to agree
on a float64 result and falls back to LEMON's vote (seed 2 on PyTorch and ORT alone
found nothing in two runs).

Backends that do not start here are left out with a line; a level left with too few
backends to compare is skipped with a line. The plan (``PLAN``) is data, so a test can
check that every level's command line is one ``dlfuzz run`` accepts.
"""

from __future__ import annotations

import html
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from dlfuzz.cli.main import main as cli_main
from dlfuzz.executor.pool import Pool, WorkerConfig

OUT = Path("demo-campaign")
# A minute is too short for the whole spec set (1,700 APIs) to reach its bugs, so the API
# level fuzzes the APIs (every library's, by leaf name) of real bugs found by longer
# campaigns on the pinned releases: JAX bessel_jn NaN in bfloat16, jnp.bincount aborting,
# tf.linalg.expm, Cholesky and eigvals on odd inputs, angle of signed zeros.
DEMO_APIS = ("bessel_jn", "bincount", "expm", "cholesky", "eigvals", "angle")


@dataclass(frozen=True)
class Level:
    """One campaign of the demo: which level, on which backends, with which options."""

    name: str  # the folder under OUT and the heading
    title: str  # what the level fuzzes, for the progress lines
    backends: tuple[str, ...]  # wanted; those that do not start here are dropped
    min_backends: int  # fewer than this left: the level is skipped (nothing to compare)
    options: tuple[str, ...]  # `dlfuzz run` options other than --backends and --out


PLAN: tuple[Level, ...] = (
    Level("api", "API level: single library calls (TensorJSFuzz + DLLens specs), on "
          "APIs where dlfuzz has found real bugs on these releases",
          ("numpy", "torch", "jax", "tf"), 2,
          ("--engine", "api", "--apis", ",".join(DEMO_APIS), "--seed", "1",
           "--budget", "60s")),
    Level("model", "model level: LEMON mutants of LeNet-5, where dlfuzz has found ONNX "
          "Runtime's MaxPool pad fusion returning negative maxima",
          ("torch", "jax", "tf", "ort", "ort-noopt"), 2,
          ("--engine", "model", "--method", "lemon", "--seed-model", "lenet5",
           "--seed", "1", "--budget", "60s")),
    Level("program", "program level: MoCo mutants of a PyTorch LeNet program",
          ("torch",), 1,
          ("--engine", "program", "--seed-program", "torch_lenet_seq", "--batch-size", "8",
           "--seed", "1", "--budget", "45s")),
)


def run_argv(level: Level, backends: tuple[str, ...], out: Path) -> list[str]:
    """The ``dlfuzz run`` command line of one level."""
    return ["run", *level.options, "--backends", ",".join(backends),
            "--out", str(out / level.name)]


def _say(text: str) -> None:
    print(f"[demo] {text}", file=sys.stderr, flush=True)


def _startable(wanted: list[str]) -> set[str]:
    """The backends among ``wanted`` whose worker starts here; the others get a line."""
    with Pool([WorkerConfig(n) for n in wanted]) as pool:
        versions = pool.start()
        for name, reason in pool.unavailable.items():
            _say(f"skipping {name}: {reason}")
    return set(versions)


def _cli(argv: list[str]) -> int:
    """Run one dlfuzz command in this process; its exit status (130 stops the demo)."""
    try:
        cli_main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if code == 130:
            raise
        return code
    return 0


def _index(reports: dict[str, Path]) -> Path:
    """One page linking each level's report, so there is one thing to open."""
    rows = "\n".join(f'<li><a href="{html.escape(str(path.relative_to(OUT.resolve())))}">'
                     f"{html.escape(name)}</a></li>" for name, path in reports.items())
    page = OUT / "index.html"
    page.write_text("<!doctype html><meta charset=utf-8><title>dlfuzz demo</title>\n"
                    f"<h1>dlfuzz demo: one report per level</h1>\n<ul>\n{rows}\n</ul>\n",
                    encoding="utf-8")
    return page.resolve()


def main() -> None:
    started = time.time()
    wanted = list(dict.fromkeys(b for level in PLAN for b in level.backends))
    _say(f"checking which of {', '.join(wanted)} start here ...")
    usable = _startable(wanted)
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir()
    ran: list[Level] = []
    for level in PLAN:
        backends = tuple(b for b in level.backends if b in usable)
        if len(backends) < level.min_backends:
            _say(f"skipping the {level.name} level: it needs {level.min_backends} of "
                 f"{', '.join(level.backends)}, and {len(backends)} start here")
            continue
        argv = run_argv(level, backends, OUT)
        _say(f"{level.title}\n[demo]   dlfuzz {' '.join(argv)}")
        code = _cli(argv)
        if code != 0:
            _say(f"the {level.name} campaign ended with exit status {code}; going on")
        if (OUT / level.name / "campaign.db").is_file():
            ran.append(level)
    reports: dict[str, Path] = {}
    for level in ran:
        folder = OUT / level.name
        _say(f"--- {level.name} level: confirmed bugs in {folder}/ ---")
        _cli(["findings", str(folder)])
        report = folder / "report" / "index.html"
        if _cli(["report", str(folder), "--out", str(report)]) == 0:
            reports[level.name] = report.resolve()
    _say(f"done in {time.time() - started:.0f} s")
    for name, path in reports.items():
        _say(f"{name:8} report: {path}")
    if reports:
        _say(f"index of the reports: {_index(reports)}")
    _say(f"reproduce a bug: .venv/bin/dlfuzz reproduce {OUT}/LEVEL BUG_ID")


if __name__ == "__main__":
    main()
