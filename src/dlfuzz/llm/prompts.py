"""Prompt texts: TensorJSFuzz's constraint extraction, DLLens' path conditions and
counterpart synthesis, all answered in dlfuzz's constraint language.

The papers' figures with the exact wording were lost from our copies; these prompts keep
their structure, which is what the methods depend on:

* TensorJSFuzz §3.1.2 / Figure 5: one-shot prompting — a task description plus one
  worked example (checking code in, constraints out), then the API at hand.
* DLLens Figure 7: one statement, the execution trace from an input argument to it, the
  argument's type and (for a tensor) its properties of Table I; one condition back.
* DLLens Figure 6 / Listing 6: the API's signature, valid inputs and the target library;
  a function with the same signature built from *another* library's APIs; on failure the
  error message goes back for repair.

Why our own language instead of free text: an answer line is kept only when
``constraints.parse`` accepts it over the API's parameter names, so the LLM can add
constraints but never garbage.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from dlfuzz.engines.api.libspecs import LibParam, LibSpec
from dlfuzz.libraries import get, is_known

MAX_SOURCE_CHARS = 12000  # long sources are cut: the checks sit near the top of a function
MAX_DOC_CHARS = 4000
NO_CONSTRAINTS = "NONE"
COUNTERPART_FN = "counterpart"  # name of the synthesized function


LANGUAGE = """\
Write each constraint as one Python expression using only:
- the API's parameter names;
- tensor properties: x.ndims (rank), x.shape[i] (size of dimension i, negative i counts
  from the end), x.dtype (a dtype name string such as 'float32'), x.num_element (number
  of elements), x.min and x.max (smallest and largest value);
- a scalar parameter by its name (groups); a list parameter as s[i] and len(s);
- x is None, x is not None;
- and, or, not; comparisons == != < <= > >= (chained too); in / not in a tuple of
  literals; arithmetic + - * / // %; a if c else b; min(...), max(...), abs(...).
No other names, attributes, method calls or functions."""

CONSTRAINT_TASK = f"""\
You extract the input constraints of a deep learning library API from its checking code
and its documentation. A constraint is a condition every valid call satisfies: a value
range of a parameter, a rank, shape or dtype requirement, or a dependency between
parameters (one parameter's rank, shape, dtype or value fixed by another's).

{LANGUAGE}

Answer with one constraint per line and nothing else: no numbering, no explanations, no
code fences. Report only what the code checks or the documentation states; do not guess.
Do not restate a parameter's type alone. If there is no constraint, answer {NO_CONSTRAINTS}."""

EXAMPLE_API = "example.conv1d"
EXAMPLE_PARAMS = ("input", "weight", "bias", "stride", "groups")
EXAMPLE_INFO = """\
API: example.conv1d(input, weight, bias=None, stride=1, groups=1)
Parameters:
  input: tensor
  weight: tensor
  bias: tensor or None, optional (default None)
  stride: int, optional (default 1)
  groups: int, optional (default 1)"""
EXAMPLE_DOC = """\
Applies a 1-D convolution.

Args:
    input: tensor of shape (batch, in_channels, width)
    weight: tensor of shape (out_channels, in_channels / groups, kernel_width)
    bias: optional tensor of shape (out_channels,)
    stride: the stride of the convolution, a positive int
    groups: number of blocked connections; divides in_channels and out_channels"""
EXAMPLE_SOURCE = """\
def conv1d(input, weight, bias=None, stride=1, groups=1):
    if input.ndim != 3:
        raise ValueError(f"expected a 3-D input, got {input.ndim}-D")
    if weight.ndim != 3:
        raise ValueError("weight must be 3-D")
    if input.dtype != weight.dtype:
        raise TypeError("input and weight must have the same dtype")
    if input.shape[1] != weight.shape[1] * groups:
        raise ValueError("in_channels does not match weight.shape[1] * groups")
    if weight.shape[0] % groups != 0:
        raise ValueError("out_channels must be divisible by groups")
    if bias is not None and bias.shape != (weight.shape[0],):
        raise ValueError("bias must have shape (out_channels,)")
    if input.shape[2] < weight.shape[2]:
        raise ValueError("kernel wider than the input")
    return _conv1d_impl(input, weight, bias, stride, groups)"""
EXAMPLE_ANSWER = """\
input.ndims == 3
weight.ndims == 3
input.dtype == weight.dtype
input.shape[1] == weight.shape[1] * groups
weight.shape[0] % groups == 0
bias is None or (bias.ndims == 1 and bias.shape[0] == weight.shape[0])
input.shape[2] >= weight.shape[2]
stride >= 1
groups >= 1"""


def _cut(text: str, limit: int) -> str:
    text = (text or "").strip()
    return text if len(text) <= limit else text[:limit] + "\n... (cut)"


def _default_text(p: LibParam) -> str:
    return repr(p.default) if p.optional else ""


def signature_of(spec: LibSpec) -> str:
    """``api(a, b=1, *tensors)`` as the spec describes the call."""
    parts = []
    for p in spec.params:
        name = f"*{p.name}" if p.passing == "variadic" else p.name
        parts.append(f"{name}={_default_text(p)}" if p.optional and p.passing != "variadic"
                     else name)
    return f"{spec.api}({', '.join(parts)})"


def describe_param(p: LibParam) -> str:
    """One line of type information (TensorJSFuzz's structure/rank/dtype/enum)."""
    kinds = " or ".join("None" if s == "none" else s for s in p.structures)
    bits = [kinds]
    if p.optional:
        bits.append(f"optional (default {p.default!r})")
    if p.tensor_like:
        bits.append(f"rank {p.rank[0]}..{p.rank[1]}")
    if p.dtypes:
        bits.append("dtypes " + ", ".join(p.dtypes))
    if p.values:
        bits.append("one of " + ", ".join(repr(v) for v in p.values))
    if p.range is not None:
        bits.append(f"range {p.range[0]}..{p.range[1]}")
    return f"  {p.name}: " + ", ".join(bits)


def api_info(spec: LibSpec) -> str:
    lines = [f"API: {signature_of(spec)}", "Parameters:"]
    lines += [describe_param(p) for p in spec.params] or ["  (none)"]
    return "\n".join(lines)


def _constraint_request(info: str, doc: str, source: str) -> str:
    return (f"{info}\n\nDocumentation:\n{_cut(doc, MAX_DOC_CHARS) or '(none)'}\n\n"
            f"Source code:\n{_cut(source, MAX_SOURCE_CHARS) or '(not available: native code)'}"
            "\n\nConstraints:")


def constraint_messages(spec: LibSpec, fn_source: str, doc: str) -> list[dict[str, str]]:
    """TensorJSFuzz's one-shot prompt: task, one worked example, then this API."""
    return [
        {"role": "system", "content": CONSTRAINT_TASK},
        {"role": "user", "content": _constraint_request(EXAMPLE_INFO, EXAMPLE_DOC,
                                                        EXAMPLE_SOURCE)},
        {"role": "assistant", "content": EXAMPLE_ANSWER},
        {"role": "user", "content": _constraint_request(api_info(spec), doc, fn_source)},
    ]


def path_condition_messages(spec: LibSpec, arg: str, trace: str, statement: str
                            ) -> list[dict[str, str]]:
    """DLLens Figure 7: one statement with external functions, the execution trace from
    ``arg`` to it, the argument's type and (tensors only) the properties to use."""
    p = spec.param(arg)
    kind = " or ".join(p.structures) if p is not None else "unknown"
    props = (f"\nAs a tensor, `{arg}` is described by its properties {arg}.ndims, "
             f"{arg}.shape[i], {arg}.dtype and {arg}.num_element.") \
        if p is not None and p.tensor_like else ""
    content = (
        f"In {spec.api} ({signature_of(spec)}), this execution trace leads from the input "
        f"argument `{arg}` to the statement `{statement.strip()}`:\n\n{trace.strip()}\n\n"
        f"The argument `{arg}` is a {kind}.{props}\n"
        f"The statement calls functions whose code is not shown; use what you know about "
        f"them. Give the condition on `{arg}` under which the statement's check passes.\n\n"
        f"{LANGUAGE}\n\nAnswer with the single expression only.")
    return [{"role": "user", "content": content}]


# ---- counterpart synthesis (DLLens) -----------------------------------------------------
def render_value(value: Any, limit: int = 24) -> str:
    """An example argument as a line of Python-ish text the LLM can read."""
    if isinstance(value, np.ndarray):
        if value.size <= limit:
            return f"np.array({value.tolist()!r}, dtype='{value.dtype.name}')  # shape " \
                   f"{tuple(value.shape)}"
        flat = value.reshape(-1)
        finite = flat[np.isfinite(flat)] if value.dtype.kind in "fc" else flat
        span = (f", values in [{finite.min()!r}, {finite.max()!r}]"
                if finite.size and value.dtype.kind not in "cbUSO" else "")
        return f"<{value.dtype.name} array of shape {tuple(value.shape)}{span}>"
    if isinstance(value, list | tuple) and value and all(
            isinstance(v, np.ndarray) for v in value):
        return "[" + ", ".join(render_value(v, limit // len(value) or 1) for v in value) + "]"
    name = getattr(value, "name", None)
    if type(value).__name__ == "DType" and isinstance(name, str):
        return f"dtype {name}"
    return repr(value)


def library_name(library: str) -> tuple[str, str]:
    """How prompts name a library, with the import the code should use (from its record;
    an unknown name as itself, with ``import <name>``)."""
    if not is_known(library) or not get(library).imports:
        return library, f"import {library}"
    lib = get(library)
    return lib.title, "; ".join(lib.imports)


def synthesis_messages(spec: LibSpec, target_library: str,
                       examples: Sequence[Mapping[str, Any]], fn_name: str = COUNTERPART_FN,
                       calling_note: str | None = None) -> list[dict[str, str]]:
    """DLLens' synthesis prompt: signature, valid inputs, and a different library."""
    source_name = library_name(spec.library)[0]
    target_name, target_import = library_name(target_library)
    params = ", ".join(p.name for p in spec.params)
    shown = []
    for i, ex in enumerate(examples, 1):
        lines = [f"  {k} = {render_value(v)}" for k, v in ex.items()]
        shown.append(f"Valid input {i}:\n" + ("\n".join(lines) or "  (no arguments)"))
    note = calling_note or (
        f"Tensor arguments arrive as {target_name} tensors holding the values shown; other "
        f"arguments arrive as shown. An argument missing from an input is not passed, so "
        f"give it the API's default. Return a {target_name} tensor, or a tuple of them when "
        f"the API returns several outputs.")
    content = (
        f"The {source_name} API {signature_of(spec)} accepts these valid inputs:\n\n"
        + "\n\n".join(shown or ["(no example inputs)"])
        + f"\n\nWrite a Python function `{fn_name}({params})` that computes exactly what "
        f"{spec.api} computes on such inputs, using {target_name} APIs only "
        f"({target_import}). Do not call {source_name}: the point is an independent "
        f"implementation, not a wrapper or alias of {spec.api}. {note}\n\n"
        f"Reply with the complete function, its imports inside it or above it, in one "
        f"```python code block.")
    return [{"role": "user", "content": content}]


def repair_message(error: str, fn_name: str = COUNTERPART_FN) -> dict[str, str]:
    """The back-prompt of DLLens' repair loop: the error, and a request for a fix."""
    return {"role": "user", "content": (
        f"Running `{fn_name}` on the valid inputs failed with this error:\n\n"
        f"{_cut(error, MAX_DOC_CHARS)}\n\nFix the function. Reply with the complete "
        f"corrected function in one ```python code block.")}
