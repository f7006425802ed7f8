"""Regression tests a library team can keep: one pytest file per root cause.

A bug's reproducer (``triage.repro``) is a script that exits 1 while the bug is present
and 0 once it is fixed, ending in ONE call of ``_verdict(status, text)``. A regression
test must say the same to pytest: fail while the bug is there, pass once it is fixed, and
need only the libraries involved, numpy and pytest (never dlfuzz). Two shapes:

* **inline** (an API call checked in-process: wrong values, an accepted invalid input,
  an exception, different re-runs): the test function's body IS the reproducer's code —
  the inputs as exact literals, the call, the check against the float64 reference — with
  ``_verdict(1, text)`` turned into ``pytest.fail(text)`` and ``_verdict(0, ...)`` into
  ``return``. Its helpers (``_as_list``, an inlined composition) sit at module level, the
  library is imported through ``pytest.importorskip``. The script's alarm is dropped: it
  would outlive the test and kill the pytest run later.
* **script** (a crash, a hang or an out-of-memory kills the process running it; a model
  whose weights are a file; a program; a TF.js script for Node): the reproducer is
  embedded verbatim, with any data file it reads, written to ``tmp_path`` and run in a
  subprocess; the test asserts exit status 0 and shows the verdict line otherwise.

Only the guilty backend's reproducer becomes a test (the other backends' scripts pass
whether or not the bug is present, which would make ``--xfail``'s strict mark fail).
"""

from __future__ import annotations

import ast
import base64
import io
import json
import re
import sys
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Symptoms whose reproducer kills or stalls the process running it: never in-process.
_ISOLATED_SYMPTOMS = frozenset({"crash", "oom", "timeout"})
# Files of a bug folder that are never data a reproducer reads.
_NOT_DATA = frozenset({"meta.json", "case.json", "issue.md", "error.log", "inputs.npz"})
SUBPROCESS_TIMEOUT_S = 600  # a reproducer's own alarm ends a hang long before this


@dataclass(frozen=True)
class ReproSource:
    """One reproducer that becomes one test function."""

    bug_id: str
    backend: str
    title: str
    version: str
    symptom: str
    case_kind: str
    script: Path
    env: tuple[tuple[str, str], ...] = ()  # what the backend's reproducer needs set


@dataclass(frozen=True)
class RootCause:
    """A root cause and the reproducers of its confirmed bugs (guilty backends only)."""

    key: str
    severity: str
    api: str
    message: str
    where: str
    occurrences: int
    sources: tuple[ReproSource, ...]


@dataclass(frozen=True)
class ExportedFile:
    """What ``write_tests`` wrote for one root cause."""

    path: Path
    root_cause: str
    tests: int  # test functions
    inline: int  # of them, with the reproducer's check as their body


@dataclass(frozen=True)
class _Inline:
    """A reproducer split for an in-process test: module-level parts and the body."""

    imports: tuple[str, ...]
    environ: tuple[str, ...]
    helpers: tuple[str, ...]
    body: str  # not indented; verdicts rewritten


def safe_stem(root_cause: str) -> str:
    """``torch/cumsum/wrong-result`` -> ``test_torch_cumsum_wrong_result``: a module name
    pytest collects and any file system accepts."""
    words = re.sub(r"[^0-9A-Za-z]+", "_", root_cause).strip("_").lower()
    return "test_" + (words[:100].rstrip("_") or "bug")


def _identifier(text: str) -> str:
    return re.sub(r"[^0-9A-Za-z]+", "_", text).strip("_").lower() or "x"


# ---- reading a reproducer for the inline shape -------------------------------------------

def _verdict_call(node: ast.AST) -> ast.Call | None:
    """The ``_verdict(status, text)`` call a statement consists of, if it is one."""
    if (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name) and node.value.func.id == "_verdict"):
        return node.value
    return None


def _is_alarm(node: ast.AST) -> bool:
    """``signal.alarm(N)``: the script's guard against a hang."""
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
            and ast.unparse(node.value.func) == "signal.alarm")


def _is_environ(node: ast.AST) -> bool:
    return isinstance(node, ast.Expr) and ast.unparse(node).startswith("os.environ.")


def _offsets(data: bytes) -> list[int]:
    """Byte offset of each line start (ast positions are line numbers and UTF-8 columns)."""
    starts, pos = [0], 0
    for line in data.splitlines(keepends=True):
        pos += len(line)
        starts.append(pos)
    return starts


def split_reproducer(text: str) -> _Inline | None:
    """The parts of a Python API reproducer for an inline test; None when the script does
    not have the shape ``triage.repro`` writes (the test then runs it as a script)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    stmts = list(tree.body)
    if stmts and isinstance(stmts[0], ast.Expr) and isinstance(stmts[0].value, ast.Constant):
        stmts = stmts[1:]  # the script's docstring: the test file has its own
    ends = [i for i, s in enumerate(stmts)
            if isinstance(s, ast.FunctionDef) and s.name == "_verdict"]
    if len(ends) != 1 or ends[0] + 1 >= len(stmts):
        return None
    pre, post = stmts[:ends[0] + 1], stmts[ends[0] + 1:]
    data = text.encode()
    starts = _offsets(data)

    def segment(node: ast.stmt) -> str:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        end_line = node.end_lineno or node.lineno
        return data[starts[first - 1]:starts[end_line]].decode().rstrip()

    imports, environ, helpers = [], [], []
    for node in pre:
        if isinstance(node, ast.Import | ast.ImportFrom):
            imports.append(segment(node))
        elif _is_environ(node):
            environ.append(segment(node))
        elif isinstance(node, ast.FunctionDef) and node.name in ("_verdict", "_one_line"):
            continue
        else:
            helpers.append(segment(node))
    # The body: everything after the verdict helper, with the verdicts rewritten and the
    # helper functions that use none of its names moved to module level.
    edits: list[tuple[int, int, str]] = []  # (start, end) byte offsets -> replacement
    hoisted = _hoistable(post)
    for i, node in enumerate(post):
        if node in hoisted:
            helpers.append(segment(node))
            edits.append((starts[node.lineno - 1], starts[node.end_lineno or node.lineno], ""))
            continue
        if _is_alarm(node):
            line = node.lineno
            edits.append((starts[line - 1], starts[(node.end_lineno or line)], ""))
            continue
        for inner in ast.walk(node):
            if isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                if any(_verdict_call(n) for n in ast.walk(inner)):
                    return None  # a verdict inside a helper: `return` would mean another thing
            call = _verdict_call(inner)
            if call is None:
                continue
            if (len(call.args) != 2 or not isinstance(call.args[0], ast.Constant)
                    or call.args[0].value not in (0, 1)):
                return None
            assert isinstance(inner, ast.Expr)
            start = starts[inner.lineno - 1] + inner.col_offset
            end = starts[(inner.end_lineno or inner.lineno) - 1] + (inner.end_col_offset or 0)
            if call.args[0].value == 1:
                message = ast.get_source_segment(text, call.args[1]) or ast.unparse(call.args[1])
                edits.append((start, end, f"pytest.fail({message}, pytrace=False)"))
            elif i == len(post) - 1 and inner is node:
                line = inner.lineno  # the closing "OK" verdict: the test simply ends
                edits.append((starts[line - 1], starts[inner.end_lineno or line], ""))
            else:
                edits.append((start, end, "return  # fixed: the reproducer's OK verdict"))
    body = bytearray(data[starts[pre[-1].end_lineno or 0]:])
    base = starts[pre[-1].end_lineno or 0]
    for start, end, new in sorted(edits, reverse=True):
        body[start - base:end - base] = new.encode()
    text_body = re.sub(r"\n(?:[ \t]*\n){2,}", "\n\n", bytes(body).decode())
    return _Inline(tuple(imports), tuple(environ), tuple(helpers), text_body.strip())


def _hoistable(body: list[ast.stmt]) -> list[ast.stmt]:
    """Function definitions of ``body`` that read none of the names ``body`` binds
    otherwise (nor a definition that must stay), so they can live at module level."""
    defs = [n for n in body if isinstance(n, ast.FunctionDef)]
    bound = {name.id for n in body if n not in defs for name in ast.walk(n)
             if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Store)}
    staying: set[str] = set()
    while True:
        stays = {d.name for d in defs
                 if {n.id for n in ast.walk(d) if isinstance(n, ast.Name)} & (bound | staying)}
        if stays <= staying:
            break
        staying |= stays
    return [d for d in defs if d.name not in staying]


def indent_code(source: str, prefix: str = "    ") -> str:
    """``source`` indented by ``prefix``, except lines inside a multi-line string (their
    text would change) and blank lines."""
    inside: set[int] = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
                inside.update(range(tok.start[0] + 1, tok.end[0] + 1))
    except (tokenize.TokenError, SyntaxError):
        pass
    lines = source.splitlines()
    return "\n".join(line if (n in inside or not line.strip()) else prefix + line
                     for n, line in enumerate(lines, start=1))


# ---- writing a test file -----------------------------------------------------------------

def _third_party(import_line: str) -> list[str]:
    """Top-level modules an import statement needs that are not in the standard library."""
    try:
        node = ast.parse(import_line).body[0]
    except (SyntaxError, IndexError):
        return []
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
        names = [node.module]
    else:
        return []
    tops = [n.partition(".")[0] for n in names]
    return [t for t in tops if t not in sys.stdlib_module_names]


def _used(name: str, text: str) -> bool:
    return re.search(rf"\b{re.escape(name)}\b", text) is not None


def _string_literal(text: str) -> str:
    """Readable source for a multi-line text: a raw triple-quoted string when that is
    exact, else ``repr``."""
    if "'''" not in text and not text.endswith("\\"):
        return "r'''" + text + "'''"
    return repr(text)


def _header(cause: RootCause, campaign: str, xfail: bool, libraries: list[str]) -> str:
    versions = sorted({f"{s.backend} {s.version}".strip() for s in cause.sources})
    ids = ", ".join(dict.fromkeys(s.bug_id for s in cause.sources))
    lines = [
        f"Regression test for {cause.key} ({cause.severity}), written by dlfuzz export-tests.",
        "",
        f"API: {cause.api}; seen on: {cause.where}; {cause.occurrences} occurrence(s).",
        f"Found on: {'; '.join(versions)} (campaign {campaign}, bug {ids}).",
        f"What dlfuzz saw: {' '.join(cause.message.split())}",
        "",
        "Each test runs the reduced case on the library and asserts the reference behaviour:",
        "it FAILS while the bug is present and PASSES once it is fixed.",
    ]
    if xfail:
        lines.append("Marked xfail(strict=True): a known bug; once it is fixed the test XPASSes, "
                     "which fails the run (drop the mark then).")
    lines.append(f"Needs: pytest and {', '.join(libraries) or 'nothing else'} (skipped when "
                 "a library is missing); not dlfuzz.")
    text = "\n".join(lines).replace('"""', "'''").replace("\\", "\\\\")
    return '"""' + text + '\n"""'


def _test_name(source: ReproSource, taken: set[str]) -> str:
    name = f"test_{_identifier(source.backend)}_{_identifier(source.bug_id)}"
    while name in taken:
        name += "_"
    taken.add(name)
    return name


def _docline(source: ReproSource) -> str:
    text = (f"{source.title} (bug {source.bug_id}, from {source.script.name}; "
            f"{source.backend} {source.version})")
    return '"""' + " ".join(text.split()).replace('"""', "'''").replace("\\", "\\\\") + '"""'


def _data_files(source: ReproSource, text: str) -> dict[str, bytes]:
    """Files of the bug folder the script names in a string literal (a model's weights)."""
    found: dict[str, bytes] = {}
    for path in sorted(source.script.parent.iterdir()):
        if (path.is_file() and path.name not in _NOT_DATA and not path.name.startswith("repro_")
                and re.search(rf"""['"]{re.escape(path.name)}['"]""", text)):
            found[path.name] = path.read_bytes()
    return found


def _script_test(source: ReproSource, name: str, mark: str, text: str,
                 libraries: list[str]) -> tuple[str, str]:
    """(module-level constants, test function) running the embedded script."""
    const = f"{name.upper()[5:]}_SCRIPT"
    parts = [f"# {source.script.name} as dlfuzz wrote it (exit 1 while the bug is present).",
             f"{const} = {_string_literal(text)}"]
    files = _data_files(source, text)
    if files:
        parts.append(f"{const[:-7]}_FILES = {{")
        for fname, data in files.items():
            parts.append(f"    {fname!r}: {base64.b64encode(data).decode()!r},")
        parts.append("}")
    suffix = source.script.suffix
    lines = [*(mark and [mark]), f"def {name}(tmp_path):", f"    {_docline(source)}"]
    if suffix == ".html":
        reason = (f"{source.script.name} is a page for a browser (webgl): open it in "
                  "Chromium to check this bug")
        lines.append(f"    pytest.skip({reason!r})")
        return "\n".join(parts), "\n".join(lines)
    for lib in libraries:
        lines.append(f"    _require_module({lib!r})")
    if suffix == ".js":
        lines += ["    _require_tfjs(" + f"{const})", "    command = ['node']"]
    else:
        lines.append("    command = [sys.executable]")
    env = dict(source.env)
    lines += [
        f"    status, verdict = _run_script(tmp_path, {source.script.name!r}, {const}, "
        f"{const[:-7] + '_FILES' if files else '{}'}, command, {env!r})",
        "    assert status == 0, verdict",
    ]
    return "\n".join(parts), "\n".join(lines)


_SCRIPT_HELPERS = '''
def _require_module(name):
    """Skip (not fail) where the library is not installed."""
    if importlib.util.find_spec(name) is None:
        pytest.skip(f"{name} is not installed")


def _run_script(tmp_path, name, text, files, command, env):
    """(exit status, verdict line) of the reproducer run in a fresh process: a crash or a
    hang must not take the pytest run down."""
    script = tmp_path / name
    script.write_text(text)
    for fname, data in files.items():
        (tmp_path / fname).write_bytes(base64.b64decode(data))
    try:
        proc = subprocess.run([*command, str(script)], capture_output=True, text=True,
                              cwd=tmp_path, env={**os.environ, **env},
                              timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return 1, "BUG present: the reproducer did not finish in TIMEOUT_S s"
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    if proc.returncode == 0:
        return 0, lines[-1] if lines else "OK"
    tail = lines[-1] if lines else proc.stderr.strip()[-2000:]
    return proc.returncode, f"exit status {proc.returncode}: {tail}"
'''.replace("TIMEOUT_S", str(SUBPROCESS_TIMEOUT_S))

_TFJS_HELPER = '''

def _require_tfjs(script):
    """Skip where Node or the TF.js release the script loads is missing."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    found = re.search(r"DLFUZZ_TFJS_DIR \\|\\| (\\"[^\\"]*\\")", script)
    where = os.environ.get("DLFUZZ_TFJS_DIR") or (json.loads(found.group(1)) if found else "")
    if not os.path.isdir(os.path.join(where, "node_modules", "@tensorflow", "tfjs")):
        pytest.skip(f"TF.js is not installed in {where!r} (set DLFUZZ_TFJS_DIR)")
'''


def module_text(cause: RootCause, campaign: str, xfail: bool) -> tuple[str, int]:
    """The pytest file of one root cause and how many of its tests are inline."""
    reason = f"known bug: {cause.key}"
    mark = f"@pytest.mark.xfail(strict=True, reason={reason!r})" if xfail else ""
    taken: set[str] = set()
    imports: dict[str, None] = {}
    environ: dict[str, None] = {}
    helpers: dict[str, str] = {}  # name (or text) -> text
    libraries: dict[str, None] = {}
    consts: list[str] = []
    tests: list[str] = []
    inline_count = 0
    scripted = False
    tfjs = False
    for source in cause.sources:
        text = source.script.read_text()
        name = _test_name(source, taken)
        parts = None
        if (source.script.suffix == ".py" and source.case_kind == "api"
                and source.symptom not in _ISOLATED_SYMPTOMS and not source.env):
            parts = split_reproducer(text)
        if parts is not None and _helpers_conflict(parts, helpers):
            parts = None
        if parts is not None:
            inline_count += 1
            for line in parts.imports:
                imports[line] = None
                libraries.update(dict.fromkeys(_third_party(line)))
            environ.update(dict.fromkeys(parts.environ))
            for helper in parts.helpers:
                helpers[_helper_name(helper)] = helper
            body = indent_code(parts.body)
            tests.append("\n".join([*(mark and [mark]), f"def {name}():",
                                    f"    {_docline(source)}", body]))
            continue
        scripted = True
        needs: list[str] = []
        if source.script.suffix == ".py":
            try:
                tree = ast.parse(text)
                needs = list(dict.fromkeys(
                    t for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)
                    for t in _third_party(ast.unparse(node))))
            except SyntaxError:
                needs = []
        libraries.update(dict.fromkeys(needs))
        tfjs = tfjs or source.script.suffix == ".js"
        const, test = _script_test(source, name, mark, text, needs)
        consts.append(const)
        tests.append(test)
    return _assemble(cause, campaign, xfail, list(libraries), imports, environ, helpers,
                     consts, tests, scripted, tfjs), inline_count


def _helper_name(helper: str) -> str:
    match = re.match(r"(?:def|class)\s+(\w+)|(\w+)\s*=", helper)
    if match:
        return match.group(1) or match.group(2)
    return helper


def _helpers_conflict(parts: _Inline, helpers: dict[str, str]) -> bool:
    """A helper of another test in this file with the same name and another text."""
    return any(helpers.get(_helper_name(h), h) != h for h in parts.helpers)


def _assemble(cause: RootCause, campaign: str, xfail: bool, libraries: list[str],
              imports: dict[str, None], environ: dict[str, None], helpers: dict[str, str],
              consts: list[str], tests: list[str], scripted: bool, tfjs: bool) -> str:
    """The module's text: header, imports (stdlib, pytest, the libraries behind
    ``importorskip``), helpers, constants and tests."""
    code = "\n".join([*helpers.values(), *consts, *tests])
    if scripted:
        code += _SCRIPT_HELPERS + (_TFJS_HELPER if tfjs else "")
    std = {"import base64", "import importlib.util", "import os", "import subprocess",
           "import sys"} if scripted else set()
    if tfjs:
        std |= {"import json", "import re", "import shutil"}
    third: list[str] = []
    for line in imports:
        if _third_party(line):
            third.append(line)
        elif all(_used(n, code + "\n".join(environ)) for n in _bound_names(line)):
            std.add(line)
    if environ:
        std.add("import os")
    out = [_header(cause, campaign, xfail, libraries), ""]
    if std:
        out += [*sorted(std), ""]
    out.append("import pytest")
    if environ:
        out += ["", "# Before the library's import: keep its C++ runtime logs quiet.",
                *environ]
    if third:
        out.append("")
        for lib in dict.fromkeys(t for line in third for t in _third_party(line)):
            out.append(f"pytest.importorskip({lib!r})  # skipped where {lib} is not installed")
        out += [f"{line}  # noqa: E402" for line in third]
    for block in [*helpers.values(), *consts, *tests]:
        out += ["", "", block]
    if scripted:
        out += ["", _SCRIPT_HELPERS.strip("\n")]
        if tfjs:
            out += ["", _TFJS_HELPER.strip("\n")]
    return "\n".join(out).rstrip() + "\n"


def _bound_names(import_line: str) -> list[str]:
    try:
        node = ast.parse(import_line).body[0]
    except (SyntaxError, IndexError):
        return []
    if isinstance(node, ast.Import | ast.ImportFrom):
        return [(a.asname or a.name).partition(".")[0] for a in node.names]
    return []


# ---- from a campaign's findings ----------------------------------------------------------

def root_causes(groups: list[dict[str, Any]], records: dict[str, dict[str, Any]],
                env_of: Any) -> tuple[list[RootCause], list[str]]:
    """The root causes to export (``groups``: ``findings_cmd.by_root_cause`` records;
    ``records``: bug id -> its ``bug_record``; ``env_of(backend)``: the environment its
    reproducer needs) and notes on bugs left out (no reproducer of the guilty backend)."""
    causes: list[RootCause] = []
    notes: list[str] = []
    for group in groups:
        sources = []
        for bug_id in group.get("ids", [group["id"]]):
            rec = records[bug_id]
            backend = str(rec["guilty_backend"])
            script = rec["repro"].get(backend)
            if not rec["confirmed"] or not script or not rec["dir"]:
                notes.append(f"bug {bug_id} ({group['root_cause']}): no reproducer for its "
                             f"guilty backend {backend or '(none)'}; left out")
                continue
            meta = json.loads((Path(rec["dir"]) / "meta.json").read_text())
            sources.append(ReproSource(
                bug_id=bug_id, backend=backend, title=str(meta.get("title", rec["api"])),
                version=str(meta.get("versions", {}).get(backend, "")),
                symptom=str(rec["symptom"]), case_kind=str(meta.get("case_kind", "api")),
                script=Path(script), env=tuple(sorted(env_of(backend).items()))))
        if sources:
            causes.append(RootCause(
                key=str(group["root_cause"]), severity=str(group["severity"]),
                api=str(group["api"]), message=str(group["message"]),
                where=", ".join(dict.fromkeys(str(p.get("backend", "")) for p in
                                              group["places"] if p.get("backend"))),
                occurrences=int(group["occurrences"]), sources=tuple(sources)))
    return causes, notes


def write_tests(causes: list[RootCause], out: Path, campaign: str, xfail: bool
                ) -> list[ExportedFile]:
    """One ``test_<root cause>.py`` per root cause in ``out`` (made if missing); a name
    two keys share gets the first bug's id appended."""
    out.mkdir(parents=True, exist_ok=True)
    written: list[ExportedFile] = []
    used: set[str] = set()
    for cause in causes:
        stem = safe_stem(cause.key)
        if stem in used:
            stem = f"{stem}_{_identifier(cause.sources[0].bug_id)}"
        used.add(stem)
        text, inline = module_text(cause, campaign, xfail)
        path = out / f"{stem}.py"
        path.write_text(text)
        written.append(ExportedFile(path, cause.key, len(cause.sources), inline))
    return written
