"""``dlfuzz specs``: look at, check, regenerate and count the per-library API specs.

    dlfuzz specs show LIB|FILE [API]     a table of APIs, or one API in detail
    dlfuzz specs validate FILE|LIB...    load each file; counts, or the precise error
    dlfuzz specs extract LIB [--refine] [--out PATH] [--llm]
    dlfuzz specs stats [FILE|LIB...]     APIs per library and module, constraints by source

Why a verb of its own: spec files are meant to be read and edited by hand, so the person
editing needs a quick way to see what a file says and whether it still loads, with the
file:line:col of the first mistake (the loaders give it; this verb only reports it).
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from dlfuzz import libraries
from dlfuzz.cli.common import literal, plain_console, printable
from dlfuzz.engines.api import libspecs
from dlfuzz.engines.api.libspecs import DATA_DIR
from dlfuzz.errors import UsageError

EXTRACTION_MAIN = "dlfuzz.specgen.__main__"


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("specs", help="show, validate, extract and count per-library API specs")
    verbs = p.add_subparsers(dest="specs_verb", required=True)
    s = verbs.add_parser("show", help="the APIs of a library or spec file; one API in detail")
    s.add_argument("target", metavar="LIB|FILE", help="torch, tf, jax or a spec file")
    s.add_argument("api", nargs="?", help="an API path (or its unique last part)")
    s.add_argument("--json", action="store_true", help="print the API's file form")
    s.set_defaults(func=run_show)
    v = verbs.add_parser("validate", help="load spec files and report counts or the error")
    v.add_argument("targets", nargs="+", metavar="FILE|LIB")
    v.set_defaults(func=run_validate)
    e = verbs.add_parser("extract", help="regenerate a library's spec file")
    e.add_argument("library", metavar="LIB", help=", ".join(libspecs.LIBRARY_FILES))
    e.add_argument("--refine", action="store_true",
                   help="refine constraints by running generated inputs")
    e.add_argument("--out", type=Path, help="write here instead of the built-in file")
    e.add_argument("--llm", action="store_true",
                   help="add LLM-extracted constraints (needs an LLM endpoint)")
    e.add_argument("--apis", help="with --llm: only these comma-separated APIs")
    e.add_argument("--config", type=Path, help="TOML file whose [campaign] table sets "
                                               "llm_endpoint / llm_model")
    e.add_argument("--llm-timeout", type=float, default=120.0,
                   help="seconds per LLM request (default 120)")
    e.set_defaults(func=run_extract)
    t = verbs.add_parser("stats", help="APIs per library and module, constraints by source")
    t.add_argument("targets", nargs="*", metavar="FILE|LIB",
                   help="default: every built-in library file present")
    t.add_argument("--json", action="store_true", help="machine-readable output")
    t.set_defaults(func=run_stats)


def _console() -> Console:
    # wide when piped, so long API paths and constraints are not folded mid-word
    # and literal: spec text (docs, constraints, paths) is never parsed as rich markup
    return plain_console(width=None if sys.stdout.isatty() else 160)


# ---- locating and loading ---------------------------------------------------------------
def resolve(target: str) -> Path:
    """A library name (its built-in file), a spec set name (``numpy``) or a path to a spec
    file."""
    if target in libspecs.SPEC_SETS:
        return DATA_DIR / libspecs.SPEC_SETS[target]
    if target in libspecs.LIBRARY_FILES:
        path = DATA_DIR / libspecs.LIBRARY_FILES[target]
        if not path.is_file():
            raise UsageError(f"library {target!r}: no spec file yet at {path}; create it "
                             f"with `dlfuzz specs extract {target}`")
        return path
    path = Path(target)
    if path.is_file():
        return path
    if path.is_dir():
        raise UsageError(f"{target}: a directory; give a spec file (*.json)")
    if path.suffix == ".json" or "/" in target or "\\" in target:
        raise UsageError(f"{target}: no such spec file; check the path")
    raise UsageError(f"unknown library {target!r}: built-in libraries are "
                     + ", ".join(libspecs.LIBRARY_FILES) + "; or give a spec file path")


def load(path: Path) -> list[libspecs.LibSpec]:
    try:
        return libspecs.load_file(path)
    except UnicodeDecodeError as exc:  # a binary or Latin-1 file given as a spec file
        raise UsageError(f"{path}: not a spec file (not UTF-8 text: {exc.reason} at byte "
                         f"{exc.start}); give a format-2 JSON spec file") from exc


def _find(specs: list[Any], query: str, path: Path) -> Any:
    names = {s.api: s for s in specs}
    if query in names:
        return names[query]
    tail = [n for n in names if n.rsplit(".", 1)[-1] == query or n.endswith("." + query)]
    if len(tail) == 1:
        return names[tail[0]]
    if tail:
        raise UsageError(f"API {query!r} is ambiguous in {path}: " + ", ".join(sorted(tail))
                         + "; give the full path")
    by_tail: dict[str, list[str]] = {}
    for n in names:
        by_tail.setdefault(n.rsplit(".", 1)[-1], []).append(n)
    close = difflib.get_close_matches(query, list(names), n=3, cutoff=0.6)
    for t in difflib.get_close_matches(query, list(by_tail), n=3, cutoff=0.6):
        close += [n for n in by_tail[t] if n not in close]
    close = close[:5]
    hint = f"; did you mean {', '.join(close)}?" if close else \
        f"; `dlfuzz specs show {path}` lists them"
    raise UsageError(f"no API {query!r} in {path}{hint}")


# ---- show -------------------------------------------------------------------------------
def _type_text(p: libspecs.LibParam) -> str:
    text = "|".join(p.structures)
    return text + ("?" if p.optional else "")


def _limits(p: libspecs.LibParam) -> str:
    bits = []
    if p.tensor_like:
        bits.append(f"rank {p.rank[0]}..{p.rank[1]}")
    if "tensors" in p.structures:
        bits.append(f"count {p.count[0]}..{p.count[1]}")
    if p.dtypes:
        bits.append("dtypes " + ",".join(p.dtypes))
    if p.domain is not None:
        bits.append(f"domain {p.domain[0]}..{p.domain[1]}")
    if p.range is not None:
        bits.append(f"range {p.range[0]}..{p.range[1]}")
    if {"ints", "floats"} & set(p.structures):
        bits.append(f"length {p.length[0]}..{p.length[1]}")
    if p.values:
        bits.append("values " + ",".join(repr(v) for v in p.values))
    return "; ".join(bits)


def _show_list(console: Console, path: Path, specs: list[Any]) -> None:
    table = Table(title=f"{len(specs)} APIs in {path}")
    for col in ("api", "group", "params", "constraints", "flags"):
        table.add_column(col, overflow="fold")
    for s in specs:
        flags = [f"skip: {s.skip}"] if s.skip else []
        flags += ["random"] if s.random else []
        flags += [f"shapes: {s.shapes}"] if s.shapes else []
        table.add_row(s.api, s.group, " ".join(f"{p.name}:{_type_text(p)}"
                                               for p in s.params),
                      str(len(s.constraints)), " ".join(flags))
    console.print(table)


def _show_one(console: Console, spec: libspecs.LibSpec) -> None:
    from dlfuzz.llm.prompts import signature_of

    console.print(literal(spec.api, "bold") + literal(f"  (library {spec.library}"
                  + (f", group {spec.group}" if spec.group else "") + f", {spec.source})"))
    console.print(f"call: {signature_of(spec)}", markup=False)
    for label, value in (("skip", spec.skip), ("notes", spec.notes)):
        if value:
            console.print(f"{label}: {value}", markup=False)
    flags = [name for name, on in (("random (no differential test)", spec.random),
                                   ("no NaN/Inf inputs", not spec.specials)) if on]
    if flags:
        console.print("flags: " + ", ".join(flags))
    for key, why in spec.unsupported:
        console.print(f"unsupported on {key}: {why}", markup=False)
    table = Table(title="parameters")
    for col in ("name", "type", "default", "pass", "limits", "doc"):
        table.add_column(col, overflow="fold")
    for p in spec.params:
        table.add_row(p.name, _type_text(p), repr(p.default) if p.optional else "",
                      p.passing, _limits(p), p.doc[:80])
    console.print(table)
    console.print(f"constraints ({len(spec.constraints)}):")
    for c in spec.constraints:
        console.print(f"  [{c.source:<10}] {c.text}", markup=False, soft_wrap=True)


def run_show(args: argparse.Namespace) -> int:
    path = resolve(args.target)
    specs = load(path)
    console = _console()
    if args.api is None:
        if args.json:
            raise UsageError("specs show --json needs an API; e.g. dlfuzz specs show "
                             f"{args.target} <api> --json")
        _show_list(console, path, specs)
        return 0
    spec = _find(specs, args.api, path)
    if args.json:
        print(json.dumps(libspecs.to_json(spec), indent=1))
    else:
        _show_one(console, spec)
    return 0


# ---- validate / stats -------------------------------------------------------------------
def summary(specs: list[Any]) -> dict[str, Any]:
    """Counts a validation or stats line reports."""
    sources = Counter(c.source for s in specs for c in s.constraints)
    return {"format": 2, "apis": len(specs), "skipped": sum(1 for s in specs if s.skip),
            "random": sum(1 for s in specs if s.random),
            "constraints": sum(sources.values()),
            "sources": {k: sources[k] for k in libspecs.SOURCES if sources[k]}}


def run_validate(args: argparse.Namespace) -> int:
    paths = [resolve(t) for t in args.targets]  # unknown names: a usage error, exit 2
    failed = 0
    for path in paths:
        try:
            specs = load(path)
        except UsageError as exc:
            failed += 1
            print(printable(f"dlfuzz: error: {exc}"), file=sys.stderr)
            continue
        s = summary(specs)
        by_source = ", ".join(f"{k} {v}" for k, v in s["sources"].items()) or "none"
        print(printable(f"ok {path}: format 2, {s['apis']} APIs, {s['skipped']} skipped, "
              f"{s['random']} random, {s['constraints']} constraints ({by_source})"))
    return 1 if failed else 0


def run_stats(args: argparse.Namespace) -> int:
    if args.targets:
        paths = [resolve(t) for t in args.targets]
    else:
        paths = [DATA_DIR / f for f in libspecs.LIBRARY_FILES.values()
                 if (DATA_DIR / f).is_file()]
    rows: list[dict[str, Any]] = []
    modules: list[dict[str, Any]] = []
    for path in paths:
        specs = load(path)
        library = specs[0].library if specs else path.stem
        rows.append({"library": library, "file": str(path), **summary(specs)})
        per: dict[str, list[libspecs.LibSpec]] = {}
        for s in specs:
            per.setdefault(s.api.rsplit(".", 1)[0], []).append(s)
        for module, group in sorted(per.items()):
            modules.append({"library": library, "module": module, "apis": len(group),
                            "skipped": sum(1 for s in group if s.skip),
                            "constraints": sum(len(s.constraints) for s in group)})
    if args.json:
        print(json.dumps({"files": rows, "modules": modules}, indent=1))
        return 0
    console = _console()
    if not rows:
        console.print("no spec files yet; create one with `dlfuzz specs extract LIB` "
                      f"(libraries: {', '.join(libspecs.LIBRARY_FILES)})")
        return 0
    table = Table(title="API specs")
    for col in ("library", "APIs", "fuzzable", "skipped", "random", "constraints",
                *libspecs.SOURCES):
        table.add_column(col, justify="left" if col == "library" else "right")
    for r in rows:
        table.add_row(r["library"], str(r["apis"]), str(r["apis"] - r["skipped"]),
                      str(r["skipped"]), str(r["random"]), str(r["constraints"]),
                      *(str(r["sources"].get(k, 0)) for k in libspecs.SOURCES))
    console.print(table)
    mt = Table(title="APIs per module")
    for col in ("library", "module", "APIs", "skipped", "constraints"):
        mt.add_column(col, justify="right" if col[0].isupper() or col in (
            "skipped", "constraints") else "left")
    for m in modules:
        mt.add_row(m["library"], m["module"], str(m["apis"]), str(m["skipped"]),
                   str(m["constraints"]))
    console.print(mt)
    return 0


# ---- extract ----------------------------------------------------------------------------
def _extraction_main() -> Any:
    try:
        main = libraries.resolve(f"{EXTRACTION_MAIN}:main")
    except libraries.ResolveError as exc:
        cause = exc.__cause__
        if isinstance(cause, ModuleNotFoundError) and cause.name \
                and EXTRACTION_MAIN.startswith(cause.name):
            raise UsageError("spec extraction is not available in this installation "
                             f"({EXTRACTION_MAIN} is missing)") from None
        if not isinstance(cause, AttributeError):
            raise (cause or exc) from None  # the import's own error, as before
        main = None
    if not callable(main):
        from dlfuzz.errors import InternalError

        raise InternalError(f"{EXTRACTION_MAIN} has no main(argv)")
    return main


def _call(main: Any, argv: list[str]) -> int:
    try:
        code = main(argv)
    except SystemExit as exc:  # an argparse-style main exits instead of returning
        code = exc.code
    if code is None:
        return 0
    return code if isinstance(code, int) else 1


def run_extract(args: argparse.Namespace) -> int:
    if args.library not in libspecs.LIBRARY_FILES:
        raise UsageError(f"unknown library {args.library!r}: spec extraction knows "
                         + ", ".join(libspecs.LIBRARY_FILES))
    client = None
    if args.llm:
        from dlfuzz.llm.client import client_from_settings
        from dlfuzz.settings import load_settings

        if args.llm_timeout <= 0:
            raise UsageError(f"--llm-timeout {args.llm_timeout}: must be positive")
        client = client_from_settings(load_settings(args.config), timeout_s=args.llm_timeout)
        if client is None:
            raise UsageError("--llm needs an LLM endpoint: set DLFUZZ_LLM_ENDPOINT and "
                             "DLFUZZ_LLM_MODEL, or llm_endpoint and llm_model in the "
                             "[campaign] table of a --config file")
    elif args.apis:
        raise UsageError("--apis restricts the LLM step; use it with --llm")
    argv = [args.library] + (["--refine"] if args.refine else []) \
        + (["--out", str(args.out)] if args.out else [])
    code = _call(_extraction_main(), argv)
    if code or client is None:
        return code
    out = args.out or DATA_DIR / libspecs.LIBRARY_FILES[args.library]
    return _add_llm_constraints(client, args.library, Path(out), args.apis)


def _add_llm_constraints(client: Any, library: str, path: Path, apis: str | None) -> int:
    """TensorJSFuzz §3.1.2 on every fuzzable API of the file just written."""
    from dlfuzz.cli.common import parse_list
    from dlfuzz.llm.extract import api_source, llm_constraints_report

    specs = libspecs.load_file(path)
    wanted = set(parse_list(apis, "--apis") or ())
    unknown = wanted - {s.api for s in specs}
    if unknown:
        raise UsageError(f"--apis: not in {path}: {', '.join(sorted(unknown))}")
    raw = json.loads(path.read_text(encoding="utf-8"))
    asked = added = dropped = no_text = 0
    out = []
    for spec in specs:
        if spec.skip or (wanted and spec.api not in wanted):
            out.append(spec)
            continue
        source, doc = api_source(spec.api)
        if not source and not doc:
            no_text += 1
            out.append(spec)
            continue
        asked += 1
        report = llm_constraints_report(client, spec, source, doc)
        added += len(report.kept)
        dropped += len(report.dropped)
        out.append(replace(spec, constraints=spec.constraints + tuple(report.kept)))
    libspecs.dump(raw.get("library", library), out, path, raw.get("versions"))
    print(f"llm: {asked} APIs asked ({no_text} without source or docs skipped), "
          f"{added} constraints added, {dropped} answer lines dropped (not in the "
          f"constraint language); {client.requests} requests, {client.cache_hits} cached "
          f"answers; wrote {path}")
    return 0
