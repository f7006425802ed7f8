"""Graphs as text (reports, logs) and Graphviz dot (the HTML report draws it if it can)."""

from __future__ import annotations

from dlfuzz.ir.graph import Graph


def _attrs(attrs: tuple[tuple[str, object], ...]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in attrs)


def to_text(graph: Graph, highlight: str = "") -> str:
    """One line per value: ``n3: float32[2,14,14,6] = Conv2D(n2; filters=6, ...)``."""
    types = graph.types()
    lines = [f"{x}: {types[x]} = input" for x in graph.input_names]
    for n in graph.nodes:
        mark = "  <-- suspect" if n.id == highlight else ""
        attrs = f"; {_attrs(n.attrs)}" if n.attrs else ""
        lines.append(f"{n.id}: {types[n.id]} = {n.op}({', '.join(n.inputs)}{attrs}){mark}")
    lines.append(f"return {', '.join(graph.outputs)}")
    return "\n".join(lines)


def _quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return '"' + escaped + '"'


def to_dot(graph: Graph, highlight: str = "") -> str:
    types = graph.types()
    lines = ["digraph model {", "  rankdir=TB; node [shape=box, fontname=monospace];"]
    for x in graph.input_names:
        label = f"{x}\n{types[x]}"
        lines.append(f"  {x} [label={_quote(label)}, shape=ellipse];")
    for n in graph.nodes:
        style = ", style=filled, fillcolor=salmon" if n.id == highlight else ""
        label = f"{n.id}: {n.op}\n{types[n.id]}"
        lines.append(f"  {n.id} [label={_quote(label)}{style}];")
        for v in n.inputs:
            lines.append(f"  {v} -> {n.id};")
    for i, v in enumerate(graph.outputs):
        lines.append(f"  out{i} [label=\"output {i}\", shape=ellipse]; {v} -> out{i};")
    lines.append("}")
    return "\n".join(lines)
