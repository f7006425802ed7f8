"""Code disassembly (MoCo's D): a seed program -> a template with slots + code blocks.

A seed builds one model, one hidden layer per statement, in one of three styles
(conventions in docs/programs.md): torch ``nn.Sequential(...)`` with one layer per line,
a torch ``nn.Module`` class whose ``__init__`` defines ``self.<name> = nn.<Layer>(...)``
and whose ``forward`` uses ``x = self.<name>(x)``, or the Keras functional API
``x = layers.<Layer>(...)(x)``. The first layer (input adaptation) and the head (the
final classifier, with the flatten/global pooling right before it) are skeleton; every
hidden layer between them is a code block, and its place in the source is a slot.

libcst finds the statements and their exact line spans; the template is the seed's own
text with each block's lines replaced by a marker line (``# dlfuzz-slot <i> <part>``),
so everything the seed does besides its hidden layers (data, training, evaluation,
weights) stays byte for byte what its author wrote. ``assemble.py`` fills the markers.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, replace
from typing import Any

from dlfuzz.errors import UsageError

MARKER = re.compile(r"^(?P<indent>\s*)# dlfuzz-slot (?P<slot>\d+) (?P<part>layer|init|forward)$")
RECORD_MARKER = "# dlfuzz-record-slots"  # sequential: hooks after the model statement
DEFS_MARKER = "# dlfuzz-record-defs"  # module level: SLOT_SHAPES and record_slot()
# Layers that belong to the head when they come right before the final classifier.
_HEAD_LIKE = re.compile(r"Flatten|Global|AdaptiveAvgPool|AdaptiveMaxPool", re.I)


@dataclass(frozen=True)
class Raw:
    """An argument that is not a literal (a constant name, an expression): kept as text."""

    text: str

    def __repr__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Block:
    """One hidden layer: the API, its arguments as values, where it sits.

    ``args`` are (name, value) pairs in call order; a positional argument whose name is
    unknown is named ``#<position>`` and stays positional. Values are literals (or
    ``Raw`` source text). ``name`` is the attribute (module style) or the variable
    (functional style) the layer is bound to.
    """

    index: int
    api: str
    callee: str
    args: tuple[tuple[str, Any], ...] = ()
    name: str = ""

    def values(self) -> dict[str, Any]:
        return dict(self.args)

    def expression(self) -> str:
        """The constructor call as source text: ``nn.Conv2d(in_channels=6, ...)``."""
        parts = []
        for key, value in self.args:
            text = value.text if isinstance(value, Raw) else _literal(value)
            parts.append(text if key.startswith("#") else f"{key}={text}")
        return f"{self.callee}({', '.join(parts)})"

    def with_args(self, args: dict[str, Any], api: str | None = None) -> Block:
        """The block with new arguments (and API, renaming the callee to match)."""
        callee = self.callee
        if api is not None and api != self.api:
            callee = callee_for(self.callee, self.api, api)
        return replace(self, api=api or self.api, callee=callee, args=tuple(args.items()))


@dataclass(frozen=True)
class Template:
    """The seed's text with slot markers, plus what assembly needs to know.

    ``before[i]`` (sequential style) is how many skeleton layers precede slot ``i`` in
    the ``nn.Sequential`` call, so the assembled program can hook the layer that reads
    slot ``i``'s activation and record its shape; ``model_var`` is the Sequential's name.
    """

    library: str
    style: str
    source: str
    n_slots: int
    before: tuple[int, ...] = ()
    model_var: str = "model"


def _literal(value: Any) -> str:
    if isinstance(value, float):
        return repr(value) if value == value and value not in (float("inf"), float("-inf")) \
            else f"float('{value}')"
    return repr(value)


def callee_for(callee: str, api: str, new_api: str) -> str:
    """``nn.Conv2d`` for ``torch.nn.Conv2d`` -> ``nn.Conv1d`` for ``torch.nn.Conv1d``."""
    old_mod, _, _ = api.rpartition(".")
    new_mod, _, leaf = new_api.rpartition(".")
    prefix, _, _ = callee.rpartition(".")
    if new_mod == old_mod and prefix:
        return f"{prefix}.{leaf}"
    return new_api


def disassemble(source: str, library: str, style: str | None = None,
                origin: str = "seed") -> tuple[Template, list[Block]]:
    """Template and blocks of a seed program; ``UsageError`` naming what is missing."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        raise UsageError(f"{origin}: not valid Python ({exc})") from exc
    wrapper = MetadataWrapper(module)
    positions = wrapper.resolve(PositionProvider)
    finder = _Finder(wrapper.module.code_for_node)
    finder.module = wrapper.module
    finder.walk(wrapper.module)
    lines = source.splitlines()
    if style is None:
        style = ("functional" if library == "keras" else
                 "sequential" if finder.sequentials else "module")
    if style == "sequential":
        return _sequential(finder, positions, lines, library, origin)
    if style == "module":
        return _module(finder, positions, lines, library, origin)
    if style == "functional":
        return _functional(finder, positions, lines, library, origin)
    raise UsageError(f"{origin}: unknown style {style!r}; use sequential, module or functional")


class _Finder:
    """Collects what disassembly needs in one walk over the tree."""

    def __init__(self, code_for: Any) -> None:
        self.code_for = code_for
        self.aliases: dict[str, str] = {}
        self.sequentials: list[tuple[Any, Any]] = []  # (assign statement, call)
        self.classes: list[Any] = []
        self.suites: list[Any] = []  # statement lists (module, function bodies)
        self.instantiated: set[str] = set()
        self.module: Any = None

    def walk(self, node: Any) -> None:
        stack = [node]
        while stack:
            current = stack.pop()
            self.on_visit(current)
            stack.extend(reversed(current.children))

    def on_visit(self, node: Any) -> None:
        import libcst as cst

        if isinstance(node, cst.Import):
            for alias in node.names:
                full = self.code_for(alias.name)
                name = self.code_for(alias.asname.name) if alias.asname else full.split(".")[0]
                self.aliases[name] = full if alias.asname else name
        elif isinstance(node, cst.ImportFrom) and node.module is not None and not isinstance(
                node.names, cst.ImportStar):
            base = self.code_for(node.module)
            for alias in node.names:
                leaf = self.code_for(alias.name)
                name = self.code_for(alias.asname.name) if alias.asname else leaf
                self.aliases[name] = f"{base}.{leaf}"
        elif isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1 and \
                isinstance(node.body[0], cst.Assign):
            value = node.body[0].value
            if isinstance(value, cst.Call):
                callee = self.code_for(value.func)
                if callee.rsplit(".", 1)[-1] == "Sequential" and len(value.args) >= 3:
                    self.sequentials.append((node, value))
                self.instantiated.add(callee)
        elif isinstance(node, cst.ClassDef):
            self.classes.append(node)
        if isinstance(node, cst.Module | cst.IndentedBlock):
            self.suites.append(node)

    def api_of(self, callee: str) -> str:
        head, _, rest = callee.partition(".")
        full = self.aliases.get(head, head)
        return f"{full}.{rest}" if rest else full


def _args_of(finder: _Finder, call: Any) -> tuple[tuple[str, Any], ...]:
    out = []
    for i, arg in enumerate(call.args):
        text = finder.code_for(arg.value)
        try:
            value: Any = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            value = Raw(text)
        key = finder.code_for(arg.keyword) if arg.keyword is not None else f"#{i}"
        if arg.star:
            key, value = f"#{i}", Raw(arg.star + text)
        out.append((key, value))
    return tuple(out)


def name_positionals(block: Block, param_names: list[str]) -> Block:
    """Give positional arguments their parameter names (from the knowledge base)."""
    args = []
    for key, value in block.args:
        if key.startswith("#") and not (isinstance(value, Raw) and value.text.startswith("*")):
            pos = int(key[1:])
            if pos < len(param_names):
                key = param_names[pos]
        args.append((key, value))
    return replace(block, args=tuple(args))


def _span(positions: Any, node: Any) -> tuple[int, int]:
    pos = positions[node]
    return pos.start.line, pos.end.line


def _head_start(apis: list[str]) -> int:
    """Index where the head starts: the last layer plus flatten/global layers before it."""
    k = len(apis) - 1
    while k - 1 >= 1 and _HEAD_LIKE.search(apis[k - 1].rsplit(".", 1)[-1]):
        k -= 1
    return k


def _body_start(apis: list[str]) -> int:
    """Index of the first hidden layer: after the input layer and any seed-defined glue
    right behind it (``SequenceOutput`` unpacking an LSTM's tuple belongs to it)."""
    k = 1
    while k < len(apis) and not apis[k].startswith(("torch.", "keras.")):
        k += 1
    return k


def _replace_lines(lines: list[str], spans: list[tuple[int, int, str]]) -> str:
    """Replace 1-based inclusive line spans with marker text (spans must not overlap)."""
    out = list(lines)
    for start, end, text in sorted(spans, reverse=True):
        out[start - 1:end] = [text] if text else []
    return "\n".join(out) + "\n"


def _indent(line: str) -> str:
    return line[:len(line) - len(line.lstrip())]


def _sequential(finder: _Finder, positions: Any, lines: list[str], library: str,
                origin: str) -> tuple[Template, list[Block]]:
    if not finder.sequentials:
        raise UsageError(f"{origin}: no `model = nn.Sequential(...)` with three or more layers")
    statement, call = max(finder.sequentials, key=lambda sc: len(sc[1].args))
    spans = [_span(positions, a) for a in call.args]
    if len({s for s, _ in spans}) != len(spans):
        raise UsageError(f"{origin}: write one layer per line inside nn.Sequential(...)")
    apis = [finder.api_of(finder.code_for(a.value.func)) if hasattr(a.value, "func") else ""
            for a in call.args]
    head, first = _head_start(apis), _body_start(apis)
    if head <= first:
        raise UsageError(f"{origin}: nn.Sequential needs an input layer, hidden layers and a "
                         "head; found no hidden layer")
    blocks, marks = [], []
    for slot, i in enumerate(range(first, head)):
        arg = call.args[i]
        if not hasattr(arg.value, "func"):
            raise UsageError(f"{origin}: layer {i} of nn.Sequential is not a constructor call")
        callee = finder.code_for(arg.value.func)
        blocks.append(Block(slot, apis[i], callee, _args_of(finder, arg.value)))
        start, end = spans[i]
        marks.append((start, end, f"{_indent(lines[start - 1])}# dlfuzz-slot {slot} layer"))
    stmt_end = _span(positions, statement)[1]
    marks.append((stmt_end + 1, stmt_end, RECORD_MARKER))  # insert after the statement
    target = finder.code_for(statement.body[0].targets[0].target)
    source = _insert_after(lines, marks)
    return Template(library, "sequential", source, len(blocks),
                    before=tuple(first for _ in blocks), model_var=target), blocks


def _insert_after(lines: list[str], marks: list[tuple[int, int, str]]) -> str:
    """Like ``_replace_lines``; a span with end < start inserts its text before start."""
    out = list(lines)
    for start, end, text in sorted(marks, key=lambda m: (m[0], m[1]), reverse=True):
        if end < start:
            out[start - 1:start - 1] = [text]
        else:
            out[start - 1:end] = [text]
    return "\n".join(out) + "\n"


def _model_class(finder: _Finder, origin: str) -> Any:
    import libcst as cst

    def methods(cls: Any) -> dict[str, Any]:
        return {f.name.value: f for f in cls.body.body if isinstance(f, cst.FunctionDef)}

    candidates = [c for c in finder.classes if {"__init__", "forward"} <= set(methods(c))]
    used = [c for c in candidates if c.name.value in finder.instantiated]
    if not candidates:
        raise UsageError(f"{origin}: no nn.Module class with __init__ and forward")
    cls = (used or candidates)[-1]
    return cls, methods(cls)


def _module(finder: _Finder, positions: Any, lines: list[str], library: str, origin: str
            ) -> tuple[Template, list[Block]]:
    import libcst as cst

    cls, methods = _model_class(finder, origin)
    defs: dict[str, tuple[Any, Any]] = {}  # attr -> (statement, call)
    for stmt in methods["__init__"].body.body:
        if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and \
                isinstance(stmt.body[0], cst.Assign) and len(stmt.body[0].targets) == 1:
            target = finder.code_for(stmt.body[0].targets[0].target)
            value = stmt.body[0].value
            if target.startswith("self.") and isinstance(value, cst.Call):
                defs[target[5:]] = (stmt, value)
    uses: list[tuple[str, str, Any]] = []  # (attr, var, statement), in forward order
    counts: dict[str, int] = {}
    for stmt in methods["forward"].body.body:
        text = finder.code_for(stmt).strip()
        for attr in re.findall(r"self\.(\w+)", text):
            counts[attr] = counts.get(attr, 0) + 1
        m = re.fullmatch(r"(\w+) = self\.(\w+)\((\w+)\)", text)
        if m and m.group(1) == m.group(3) and m.group(2) in defs:
            uses.append((m.group(2), m.group(1), stmt))
    uses = [u for u in uses if counts[u[0]] == 1]
    apis = [finder.api_of(finder.code_for(defs[a][1].func)) for a, _, _ in uses]
    head, start = _head_start(apis), _body_start(apis)
    if head <= start:
        raise UsageError(f"{origin}: forward of {cls.name.value} needs `x = self.<layer>(x)` "
                         "lines for an input layer, hidden layers and a head")
    blocks, marks = [], []
    for slot, i in enumerate(range(start, head)):
        attr, var, fwd = uses[i]
        init, call = defs[attr]
        blocks.append(Block(slot, apis[i], finder.code_for(call.func), _args_of(finder, call),
                            name=attr))
        s, e = _span(positions, init)
        marks.append((s, e, f"{_indent(lines[s - 1])}# dlfuzz-slot {slot} init"))
        s, e = _span(positions, fwd)
        marks.append((s, e, f"{_indent(lines[s - 1])}# dlfuzz-slot {slot} forward"))
        if var != "x":
            raise UsageError(f"{origin}: forward must use the variable name x ({var!r} found)")
    first = _span(positions, cls)[0]
    marks.append((first, first - 1, DEFS_MARKER))
    return Template(library, "module", _insert_after(lines, marks), len(blocks)), blocks


def _functional(finder: _Finder, positions: Any, lines: list[str], library: str, origin: str
                ) -> tuple[Template, list[Block]]:
    import libcst as cst

    suite, start = None, -1
    for body in finder.suites:
        for k, stmt in enumerate(body.body):
            if "Input(" in finder.code_for(stmt) and isinstance(stmt, cst.SimpleStatementLine):
                suite, start = body, k
                break
        if suite is not None:
            break
    if suite is None:
        raise UsageError(f"{origin}: no `inputs = keras.Input(shape=...)` statement")
    chain: list[tuple[int, str, Any]] = []  # (statement index, variable, layer call)
    known = {finder.code_for(suite.body[start].body[0].targets[0].target)}
    live: set[str] = set()  # branch variables not merged back yet
    main: str | None = None
    for k in range(start + 1, len(suite.body)):
        stmt = suite.body[k]
        if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
                and isinstance(stmt.body[0], cst.Assign)):
            break
        target = finder.code_for(stmt.body[0].targets[0].target)
        value = stmt.body[0].value
        if target == "model" or not isinstance(value, cst.Call):
            break
        inner = value.func
        arg = finder.code_for(value.args[0].value) if len(value.args) == 1 else ""
        if isinstance(inner, cst.Call) and arg == target and not live:
            chain.append((k, target, inner))
            continue
        # Skeleton: the input layer, a branch (y = f(x)), what runs inside a branch (its
        # layers must keep the shapes the merge expects), a merge, the output layer.
        chain.append((k, "", inner))
        reads = set(re.findall(r"\b[A-Za-z_]\w*\b", finder.code_for(value))) & known
        if main is None:
            main = target  # the input layer starts the main line
        elif target in live:
            pass  # a layer inside the branch
        elif reads & live:
            live -= reads  # the merge: the branch is closed
        elif target != main and target not in reads and reads:
            live.add(target)  # a new branch off the main line
        known.add(target)
    end = len(chain)
    while end and not chain[end - 1][1]:
        end -= 1  # the output layer (and anything else after the last hidden line)
    while end and _HEAD_LIKE.search(finder.code_for(chain[end - 1][2].func)):
        end -= 1  # the flatten/global pooling right before it
    layers = [c for c in chain[:end] if c[1]]
    apis = [finder.api_of(finder.code_for(c[2].func)) for c in layers]
    n_hidden = len(layers)
    if not n_hidden:
        raise UsageError(f"{origin}: no hidden `x = layers.<Layer>(...)(x)` lines between the "
                         "input layer and the output layer")
    blocks, marks = [], []
    for slot, (k, var, inner) in enumerate(layers[:n_hidden]):
        blocks.append(Block(slot, apis[slot], finder.code_for(inner.func),
                            _args_of(finder, inner), name=var))
        s, e = _span(positions, suite.body[k])
        marks.append((s, e, f"{_indent(lines[s - 1])}# dlfuzz-slot {slot} layer"))
    s = _span(positions, suite.body[start])[0]
    top = next((_span(positions, st)[0] for st in finder.module.body
                if _span(positions, st)[0] <= s <= _span(positions, st)[1]), s)
    marks.append((top, top - 1, DEFS_MARKER))
    return Template(library, "functional", _insert_after(lines, marks), len(blocks)), blocks
