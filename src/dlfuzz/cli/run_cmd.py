"""``dlfuzz run``: a campaign with a live status; ``--resume DIR`` continues one."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table

from dlfuzz import registry
from dlfuzz.campaign import Campaign, Progress, open_campaign
from dlfuzz.cli.common import parse_duration, parse_list, parse_pairs, plain_console, printable
from dlfuzz.cli.gate import absent_entries, add_gate_arguments, gate_code
from dlfuzz.errors import UsageError
from dlfuzz.settings import CampaignSettings, load_settings, resume_changes
from dlfuzz.store.db import Store
from dlfuzz.triage.baseline import Baseline, load_baseline, split


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run a fuzzing campaign")
    p.add_argument("--engine", help=f"engine: {', '.join(registry.names('engine'))}")
    p.add_argument("--backends", help="comma-separated backends (see `dlfuzz backends`)")
    p.add_argument("--budget", help="fuzzing time, e.g. 60s, 10m, 2h, counted from when the "
                                    "workers are ready (with --resume: additional time)")
    p.add_argument("--seed", type=int)
    p.add_argument("--out", type=Path, help="new campaign directory")
    p.add_argument("--resume", type=Path, help="continue the campaign in this directory")
    p.add_argument("--batch-size", type=int,
                   help="cases per batch: the most when batches are sized by time; given "
                        "alone, every batch's size")
    p.add_argument("--batch-seconds", type=float,
                   help="seconds of work a batch aims at, its size following the measured "
                        "time per case; 0: fixed --batch-size batches")
    p.add_argument("--timeout", help="per-case timeout, e.g. 10s")
    p.add_argument("--memory-limit-mb", type=int, help="address-space limit per worker")
    p.add_argument("--restart-every", type=int, help="restart workers every N cases")
    p.add_argument("--confirm-runs", type=int)
    p.add_argument("--no-reduce", action="store_true", help="skip reduction of confirmed bugs")
    p.add_argument("--triage-share", type=float, metavar="SHARE",
                   help="crashes and wrong results are reduced when confirmed; other bugs "
                        "wait while triage has taken more than this share of the elapsed "
                        "time (default 0.3; 1: reduce every bug at once)")
    p.add_argument("--max-cases", type=int, help="stop after this many cases")
    p.add_argument("--apis", help="comma-separated API names to fuzz (default: all)")
    p.add_argument("--method", help="model engine method: lemon (default), dljsfuzzer, or "
                                    "synth (graphs built op by op from the op catalog)")
    p.add_argument("--seed-model", action="append", metavar="NAME|PATH",
                   help="model engine seed: lenet5, alexnet, resnet, mobilenet, vgg, lstm, "
                        "gru, identity, or a .keras/.h5/.onnx/.json file (repeatable)")
    p.add_argument("--inputs-per-model", type=int,
                   help="model engine: input sets per model (default: 1 for synth, 16 "
                        "when a backend compiles every model, 4 for lemon and dljsfuzzer)")
    p.add_argument("--generator", choices=("random", "typed", "adjust", "z3"),
                   help="api engine input generator: random (no type information), typed "
                        "(TensorJSFuzz Alg. 1), adjust (Alg. 1 + 2, default), z3 (solved)")
    p.add_argument("--violate-share", type=float,
                   help="api engine: share of inputs breaking one constraint (default 0.1)")
    p.add_argument("--edge-share", type=float,
                   help="api engine: share of input groups pushed to an edge of the value "
                        "space (integer extremes, one special float argument, a scalar "
                        "outside its range, an empty dimension; default 0.35)")
    p.add_argument("--signature-inputs", type=int, metavar="N",
                   help="api engine: N inputs per signature (shapes, dtypes, static "
                        "arguments) and a new signature for every group, the same on any "
                        "machine (default 0: groups grow and signatures are reused as the "
                        "measured compile cost asks)")
    p.add_argument("--no-specials", action="store_true",
                   help="api engine: no NaN/Inf in generated tensors (IEEE corner cases "
                        "where libraries legitimately differ, e.g. inf weights over padding)")
    p.add_argument("--no-gradients", action="store_true",
                   help="api engines: do not check backward passes (by default a share of "
                        "the differentiable cases also runs its reverse-mode gradient in "
                        "torch, JAX and TF, eager and compiled, judged against finite "
                        "differences, forward mode and the other libraries)")
    p.add_argument("--spec-file", action="append", metavar="PATH",
                   help="api engine: a format-2 spec file instead of the built-in ones "
                        "(repeatable; see `dlfuzz specs`)")
    p.add_argument("--seed-program", action="append", metavar="NAME|PATH",
                   help="program engine seed: a built-in seed (torch_lenet_seq, keras_lenet, "
                        "...) or a seed program .py file (repeatable; default: all built-in)")
    p.add_argument("--program-data", metavar="FILE.npz",
                   help="program engine: arrays x, y (<= 100 samples used) the seeds train "
                        "on instead of synthetic data; seeds whose input shape does not fit "
                        "are left out")
    p.add_argument("--times-mt", type=int,
                   help="program engine: mutants per code block and parent (default 4)")
    p.add_argument("--python", action="append", metavar="BACKEND=PATH",
                   help="run a backend's worker under another interpreter")
    p.add_argument("--preload", action="append", metavar="BACKEND=MODULE",
                   help="import MODULE in the backend's worker after its library")
    p.add_argument("--threads", type=int, help="library threads per worker (default 1)")
    p.add_argument("--replicas", type=int,
                   help="worker processes of each backend that compiles every new signature "
                        "(jax, jax-jit, tf-xla, torch-compile); 0: 2 on a machine with 2 or "
                        "more cores")
    p.add_argument("--tfjs-version", metavar="V",
                   help="TF.js release for the tfjs-* backends (see `dlfuzz tfjs install`)")
    p.add_argument("--executor", help="where workers run: local (this host, the default) "
                                      "or ray (actors on a Ray cluster's nodes)")
    p.add_argument("--ray-address", metavar="HOST:PORT",
                   help="with --executor ray: join this running cluster (default: start a "
                        "Ray instance on this machine)")
    p.add_argument("--config", type=Path,
                   help="TOML file with a [campaign] table (engine options flat there or in "
                        "the engine's table: [api], [model], [program])")
    p.add_argument("--profile", help="named settings: quick, ci, deep")
    p.add_argument("--quiet", action="store_true", help="no live status; a line per minute")
    add_gate_arguments(p, check_by_default=False)
    p.set_defaults(func=run)


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    over = {
        "engine": args.engine, "backends": parse_list(args.backends, "--backends"),
        "seed": args.seed, "batch_size": args.batch_size,
        "batch_seconds": args.batch_seconds,
        "memory_limit_mb": args.memory_limit_mb, "restart_every": args.restart_every,
        "confirm_runs": args.confirm_runs, "max_cases": args.max_cases,
        "apis": parse_list(args.apis, "--apis"), "threads": args.threads,
        "replicas": args.replicas,
        "budget_s": parse_duration(args.budget) if args.budget else None,
        "case_timeout_s": parse_duration(args.timeout, "--timeout") if args.timeout else None,
        "pythons": parse_pairs(args.python, "--python") or None,
        "preload": parse_pairs(args.preload, "--preload") or None,
        "reduce": False if args.no_reduce else None,
        "triage_share": args.triage_share,
        "method": args.method, "inputs_per_model": args.inputs_per_model,
        "seed_models": tuple(args.seed_model) if args.seed_model else None,
        "generator": args.generator, "violate_share": args.violate_share,
        "edge_share": args.edge_share, "signature_inputs": args.signature_inputs,
        "specials": False if args.no_specials else None,
        "gradients": False if args.no_gradients else None,
        "spec_files": tuple(args.spec_file) if args.spec_file else None,
        "seed_programs": tuple(args.seed_program) if args.seed_program else None,
        "times_mt": args.times_mt,
        "program_data": str(Path(args.program_data).resolve()) if args.program_data else None,
        "tfjs_version": args.tfjs_version,
        "executor": args.executor, "ray_address": args.ray_address,
    }
    # Every value (flags, config file, profile alike) is checked in one place:
    # dlfuzz.settings.load_settings, with the engine's settings class for its options.
    return over


def run(args: argparse.Namespace) -> int:
    # The baseline is read before a folder exists: a bad file costs no campaign.
    if args.check_fixed and not args.baseline:
        raise UsageError("--check-fixed re-checks the entries of a --baseline FILE; give "
                         "--baseline too")
    baseline = load_baseline(args.baseline) if args.baseline else None
    store, settings = open_run(args.out, args.resume, args.config, args.profile,
                               _overrides(args))
    try:
        return _run(args, store, settings, baseline)
    finally:
        store.close()  # closed already, unless the status display itself failed


def open_run(out: Path | None, resume: Path | None, config: Path | None,
             profile: str | None, over: dict[str, Any]) -> tuple[Store, CampaignSettings]:
    """The locked store and checked settings of a new campaign (``out``) or a resumed one
    (``resume``): the one path of ``dlfuzz run`` and ``dlfuzz.run()`` alike. ``over`` are
    the given options as settings keys (None: not given); every value is checked by
    ``load_settings`` and the TF.js release installed before a folder exists."""
    from dlfuzz.cli.tfjs_cmd import select_version

    if resume is not None and out is not None:
        raise UsageError("give either --out DIR (new campaign) or --resume DIR, not both")
    if resume is None and out is None:
        raise UsageError("dlfuzz run needs --out DIR (a new campaign) or --resume DIR")
    if resume is not None:
        return _resume(resume, config, profile, over)
    settings = load_settings(config, profile, over)
    select_version(settings.tfjs_version, settings.backends)
    return open_campaign(out, None, settings)


def run_campaign(store: Store, settings: CampaignSettings, fresh: bool,
                 update: Callable[[Progress], None]) -> Progress:
    """Run the campaign to its budget (or an interrupt); the store is closed after. A
    ``fresh`` campaign (not resumed) that fails before its first batch is removed."""
    try:
        return Campaign(store, settings, update).run()
    except KeyboardInterrupt:  # a second Ctrl-C: the folder stays, to be resumed
        raise
    except BaseException:
        if fresh:
            _discard_if_empty(store)
        raise
    finally:
        store.close()


def _resume(root: Path, config: Path | None, profile: str | None, over: dict[str, Any]
            ) -> tuple[Store, CampaignSettings]:
    """The locked store of ``--resume DIR`` and the settings to continue it with: the
    stored ones, plus the allowed changes (more budget, another case limit); any other
    setting given with another value than the stored one is refused, each named."""
    from dlfuzz.cli.tfjs_cmd import select_version

    store, stored = open_campaign(None, root, None)
    try:
        given = load_settings(config, profile, over, base=stored)
        changed = resume_changes(stored, given)
        if changed:
            listed = "; ".join(f"{name}: stored {_show(old)}, given {_show(new)}"
                               for name, old, new in changed)
            raise UsageError(f"--resume {root}: a resumed campaign runs with its "
                             f"stored settings, and these differ: {listed}; drop them (only "
                             f"--budget and --max-cases may change), or start a new "
                             f"campaign with --out")
        done = store.totals()["seconds"]
        budget_given = over.get("budget_s") is not None or given.budget_s != stored.budget_s
        extra = given.budget_s if budget_given else max(stored.budget_s - done, 0.0)
        settings = replace(given, budget_s=done + extra)
        notes = []
        if budget_given:
            notes.append(f"budget +{extra:.0f}s (total {settings.budget_s:.0f}s, "
                         f"{done:.0f}s spent before)")
        if settings.max_cases != stored.max_cases:
            notes.append(f"max cases {stored.max_cases} -> {settings.max_cases}")
        if notes:
            print(f"dlfuzz: resuming {root}: {', '.join(notes)}", file=sys.stderr)
        select_version(settings.tfjs_version, settings.backends)  # the campaign's own
    except BaseException:
        store.close()
        raise
    return store, settings


def _show(value: object) -> str:
    if isinstance(value, tuple):
        return repr(",".join("=".join(v) if isinstance(v, tuple) else str(v) for v in value))
    return repr(value)


def _discard_if_empty(store: Store) -> None:
    """A new campaign that failed before its first batch (a backend that cannot start,
    an engine that cannot load) is removed, so the fixed command can simply be rerun;
    one with batches or bugs is kept, and a line says how to continue it."""
    try:
        empty = store.is_empty()
    except Exception:  # noqa: BLE001 - unreadable: keep it, never lose data by guessing
        empty = False
    if empty:
        store.discard()
    else:
        print(f"dlfuzz: campaign {store.root} kept; continue it with "
              f"`dlfuzz run --resume {store.root}`", file=sys.stderr)


def _run(args: argparse.Namespace, store: Store, settings: CampaignSettings,
         baseline: Baseline | None = None) -> int:
    console = plain_console(stderr=True)  # backend versions, paths: literal text
    live_mode = console.is_terminal and not args.quiet
    status = _Status(console, live_mode)
    root = store.root
    try:
        with status:
            progress = run_campaign(store, settings, args.resume is None, status.update)
    except KeyboardInterrupt:  # a second Ctrl-C: workers are killed, the store closes after
        _interrupted(root)
        return 130
    plain_console().print(printable(f"campaign {root}: {progress.cases} cases this run, "
                    f"{progress.bugs_confirmed} confirmed bug(s), {progress.bugs_flaky} flaky; "
                    f"see `dlfuzz findings {root}` and `dlfuzz report {root}`"))
    if progress.interrupted:
        _interrupted(root)
        return 130
    if args.fail_on is None and baseline is None:
        return 0
    return _gate(root, settings, baseline, args.fail_on, args.check_fixed)


def _gate(root: Path, settings: CampaignSettings, baseline: Baseline | None,
          fail_on: str | None, check_fixed: bool) -> int:
    """The CI gate over every confirmed bug of the campaign (``cli.gate``): known and
    fixed baseline entries on stdout, the verdict on stderr; exit 1 on new bugs at or
    above ``fail_on``."""
    from dlfuzz.cli.findings_cmd import by_root_cause, collect

    store = Store.open(root)
    try:
        records = collect(store, include_flaky=False)
    finally:
        store.close()
    new, known = split(by_root_cause(records), baseline)
    if baseline is not None:  # plain lines (never wrapped): CI logs are grepped
        keys = ", ".join(str(r["root_cause"]) for r in known[:10])
        print(printable(f"baseline {baseline.path}: {len(known)} known root cause(s) found "
                        f"again{': ' + keys if keys else ''}; {len(new)} new"))
        for c in absent_entries(baseline, records, settings, check_fixed):
            print(printable(f"  {c.state}: {c.entry.key}: {' '.join(c.verdict.split())}"))
    return gate_code(new, fail_on, len(known))


def _interrupted(root: Path) -> None:
    """The resume hint, on stderr whether or not it is a terminal (logs, CI, pipes)."""
    print(f"interrupted — resume with `dlfuzz run --resume {root}`", file=sys.stderr,
          flush=True)


class _Status:
    """Live rich panel on a terminal; otherwise a plain line every 30 s (CI logs)."""

    def __init__(self, console: Console, live: bool) -> None:
        self.console = console
        self.live = Live(console=console, refresh_per_second=4) if live else None
        self.last_line = 0.0
        self.last_state = ""

    def __enter__(self) -> _Status:
        if self.live:
            self.live.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.live:
            self.live.__exit__(*exc)

    def update(self, p: Progress) -> None:
        if self.live:
            self.live.update(render(p))
        elif time.time() - self.last_line > 30 or p.state != self.last_state:
            self.last_line, self.last_state = time.time(), p.state
            if p.state.startswith("starting workers"):
                print(f"[dlfuzz] {p.state}", file=sys.stderr, flush=True)
                return
            if p.state == "fuzzing" and p.batches == 0 and p.startup_s:
                print(f"[dlfuzz] workers ready in {p.startup_s:.1f} s; the budget counts "
                      "from now", file=sys.stderr, flush=True)
            print(f"[dlfuzz] {p.state}: {p.elapsed:.0f}/{p.budget_s:.0f}s, {p.cases} cases "
                  f"({p.rate:.0f}/s), {p.findings} findings, {p.bugs_confirmed} bugs "
                  f"confirmed, {p.bugs_flaky} flaky; triage {_triage(p)}", file=sys.stderr,
                  flush=True)
            for node, row in sorted(p.nodes.items()):
                print(f"[dlfuzz]   node {node}: {_actors(row['actors'])}; {row['cases']} "
                      f"case runs ({row['rate']:.0f}/s), {row['actor_deaths']} actor deaths",
                      file=sys.stderr, flush=True)


def render(p: Progress) -> Group:
    head = Table.grid(padding=(0, 2))
    state = p.state + (f" (workers started in {p.startup_s:.0f} s)" if p.startup_s else "")
    head.add_row("state", state, "elapsed", f"{p.elapsed:.0f} / {p.budget_s:.0f} s")
    head.add_row("cases", f"{p.cases + p.cases_before}", "cases/s", f"{p.rate:.0f}")
    head.add_row("findings", str(p.findings), "bugs", f"{p.bugs_confirmed} confirmed, "
                 f"{p.bugs_flaky} flaky")
    head.add_row("suspicious", str(p.stats.get("suspicious", 0)), "rejections",
                 str(p.stats.get("rejections", 0)))
    head.add_row("triage", _triage(p), "", "")
    table = Table(title="backends")
    for col in ("backend", "version", "cases", "crashes", "timeouts", "restarts", "rss MB"):
        table.add_column(col)
    for name, row in sorted(p.backends.items()):
        table.add_row(name, str(row["version"]), str(row["cases"]), str(row["crashes"]),
                      str(row["timeouts"]), str(row["restarts"]), f"{row['rss_mb']:.0f}")
    if not p.nodes:
        return Group(head, table)
    nodes = Table(title="Ray nodes")
    for col in ("node", "actors", "case runs", "runs/s", "actor deaths"):
        nodes.add_column(col)
    for node, row in sorted(p.nodes.items()):
        nodes.add_row(node, _actors(row["actors"]), str(row["cases"]), f"{row['rate']:.0f}",
                      str(row["actor_deaths"]))
    return Group(head, table, nodes)


def _triage(p: Progress) -> str:
    """Triage's time and share, and the reductions that wait for it."""
    share = p.triage_s / p.elapsed if p.elapsed > 0 else 0.0
    waiting = f", {p.reductions_waiting} reduction(s) waiting" if p.reductions_waiting else ""
    return f"{p.triage_s:.0f} s ({share:.0%}){waiting}"


def _actors(per_backend: dict[str, int]) -> str:
    return ", ".join(f"{name} x{n}" if n > 1 else name for name, n in sorted(per_backend.items()))
