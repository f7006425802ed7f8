"""Type hints and relational constraints from API docstrings (TensorJSFuzz §3.1.1).

TensorJSFuzz reads structure, rank, dtype and enum values from a typed signature. Python
DL libraries have no typed signatures worth the name, but their docstrings state the same
facts in a few stable phrasings: TensorFlow's generated ops ("A `Tensor`. Must be one of
the following types: `half`, `float32`", "An optional `string` from: `"SAME", "VALID"`",
"An `int` that is `>= 1`"), torch's reST ("stride (int or tuple, optional): ... Default:
1") and JAX's Google style ("axis: int or array, default=None."). This module reads those
phrasings with regular expressions and returns only what the text says; the per-library
extractors merge it with signatures, defaults and hand hints.

Open bounds: a side the text leaves open ("non-negative", ">= 1", "at least 3-D") is
closed at a documented span (``INT_SPAN``, ``FLOAT_SPAN``, ``RANK_CAP``) so that every hint
can go into a spec file as it is; ``hints(text, open_bounds=True)`` gives ``math.inf``
there instead, for callers that pick their own window.
"""

from __future__ import annotations

import ast
import math
import re
from typing import Any

from dlfuzz.cases import DTYPES
from dlfuzz.engines.api.errorfeedback.vocabulary import dtype_names

RANK_CAP = 5       # upper rank for "at least N-D" / "N-D or higher"
INT_SPAN = 6       # "an int >= 1" -> (1, 7): small values keep shapes small
FLOAT_SPAN = 10.0  # "non-negative float" -> (0.0, 10.0)
INF = math.inf

# ---- sections ---------------------------------------------------------------------------
_GOOGLE_HEADERS = {"args:", "arguments:", "parameters:", "params:", "keyword args:",
                   "keyword arguments:", "kwargs:", "other parameters:", "keyword-only args:",
                   "keyword only arguments:"}
_NUMPY_HEADERS = {"parameters", "other parameters", "keyword arguments", "arguments"}
_PAREN = r"\(((?:[^()]|\([^()]*\))*)\)"
_ENTRY = re.compile(r"^(\*{0,2}[A-Za-z_]\w*(?:\s*,\s*\*{0,2}[A-Za-z_]\w*)*)\s*"
                    + r"(?:" + _PAREN + r")?\s*:(?!:)\s*(.*)$")
_NUMPY_ENTRY = re.compile(r"^(\*{0,2}[A-Za-z_]\w*(?:\s*,\s*\*{0,2}[A-Za-z_]\w*)*)\s*"
                          r"(?::\s*(.*))?$")
_REST_PARAM = re.compile(r"^\s*:param\s+(?:[^:]*\s)?\*{0,2}(\w+)\s*:\s*(.*)$")
_REST_TYPE = re.compile(r"^\s*:type\s+\*{0,2}(\w+)\s*:\s*(.*)$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _names(group: str) -> list[str]:
    return [n.strip().lstrip("*") for n in group.split(",") if n.strip()]


def _with_type(kind: str | None, text: str) -> str:
    text = text.strip()
    return f"({kind.strip()}): {text}" if kind and kind.strip() else text


def _google(lines: list[str], start: int, out: dict[str, list[str]]) -> None:
    """Entries of an ``Args:`` section that begins after line ``start``."""
    head = _indent(lines[start])
    entry_indent: int | None = None
    current: list[str] | None = None
    for line in lines[start + 1:]:
        if not line.strip():
            if current is not None:
                current.append("")
            continue
        ind = _indent(line)
        if ind <= head:
            break
        if entry_indent is None:
            entry_indent = ind
        m = _ENTRY.match(line.strip()) if ind == entry_indent else None
        if ind < entry_indent:
            break
        if m:
            current = [_with_type(m.group(2), m.group(3))]
            for name in _names(m.group(1)):
                out.setdefault(name, current)
        elif current is not None:
            current.append(line.strip())


def _numpy(lines: list[str], start: int, out: dict[str, list[str]]) -> None:
    """Entries of a numpydoc ``Parameters`` section (header at ``start``, dashes next)."""
    head = _indent(lines[start])
    current: list[str] | None = None
    i = start + 2
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if line.strip() and re.fullmatch(r"-{3,}", nxt):
            break  # the next section
        if not line.strip():
            if current is not None:
                current.append("")
        elif _indent(line) <= head:
            m = _NUMPY_ENTRY.match(line.strip())
            if not m:
                break
            current = [_with_type(m.group(2), "")]
            for name in _names(m.group(1)):
                out.setdefault(name, current)
        elif current is not None:
            current.append(line.strip())
        i += 1


def param_docs(doc: str | None) -> dict[str, str]:
    """Parameter name -> its documentation text, from every parameter section of ``doc``.

    A type annotation ("input (Tensor): ...", "x : array_like", ":type x: int") comes back
    in front as ``"(type): text"`` whatever the style, so :func:`hints` reads one form.
    Overloaded torch docstrings repeat ``Args:``; the first description of a name wins.
    """
    if not doc:
        return {}
    lines = doc.expandtabs(4).splitlines()
    out: dict[str, list[str]] = {}
    types: dict[str, str] = {}
    rest: list[str] | None = None
    rest_indent = 0
    for i, line in enumerate(lines):
        low = line.strip().lower()
        nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if low in _GOOGLE_HEADERS:
            _google(lines, i, out)
            rest = None
        elif low in _NUMPY_HEADERS and re.fullmatch(r"-{3,}", nxt):
            _numpy(lines, i, out)
            rest = None
        elif (m := _REST_PARAM.match(line)):
            rest = [m.group(2)]
            out.setdefault(m.group(1), rest)
            rest_indent = _indent(line)
        elif (m := _REST_TYPE.match(line)):
            types[m.group(1)] = m.group(2).strip()
            rest = None
        elif rest is not None and line.strip() and _indent(line) > rest_indent:
            rest.append(line.strip())
        else:
            rest = None
    result: dict[str, str] = {}
    for name, parts in out.items():
        text = "\n".join(parts).strip()
        text = re.sub(r"\n{2,}", "\n", text)
        if name in types and not text.startswith("("):
            text = _with_type(types[name], text)
        result[name] = text
    return result


# ---- dtypes -----------------------------------------------------------------------------
_FAMILY = {"float": ("float16", "bfloat16", "float32", "float64"),
           "int": ("int8", "int16", "int32", "int64", "uint8"),
           "bool": ("bool",), "complex": ("complex64", "complex128")}
_DTYPE_LIST = re.compile(r"(?:Must be one of the following types|(?:of|with) type)\s*:?\s*"
                         r"((?:`?\w+`?\s*(?:,\s*(?:or\s+)?|\s+or\s+|\s+and\s+)?)+)", re.I)
_ADJ = r"(?:floating[- ]point|float|integer|int|integral|boolean|bool|complex)"
_ADJ_TENSOR = re.compile(rf"\b({_ADJ}(?:\s*(?:,|or|and)\s*{_ADJ})*)\s+`?(?:tf\.)?"
                         r"(tensor|array|dtype)", re.I)
_TORCH_TENSOR_TYPES = {"longtensor": "int64", "inttensor": "int32", "floattensor": "float32",
                       "doubletensor": "float64", "booltensor": "bool", "bytetensor": "uint8",
                       "halftensor": "float16"}


def _dtypes(text: str) -> tuple[str, ...] | None:
    m = _DTYPE_LIST.search(text)
    if m:
        got = dtype_names(re.findall(r"\w+", m.group(1)))
        if got:
            return got
    m = re.search(r"\b(" + "|".join(_TORCH_TENSOR_TYPES) + r")\b", text, re.I)
    if m:
        return (_TORCH_TENSOR_TYPES[m.group(1).lower()],)
    m = _ADJ_TENSOR.search(text)
    if m:  # "a floating point or complex dtype": the union of the families named
        out: list[str] = []
        for word in re.findall(_ADJ, m.group(1), re.I):
            word = word.lower()
            fam = ("float" if word.startswith(("float", "floating")) else
                   "int" if word.startswith("int") else
                   "bool" if word.startswith("bool") else "complex")
            out += [d for d in _FAMILY[fam] if d in DTYPES and d not in out]
        return tuple(out)
    return None


# ---- structures -------------------------------------------------------------------------
_LIST = r"(?:list|tuple|sequence|iterable)s?\s*(?:\[|of\s+(?:(?:`[^`]*`|\w+)\s+){0,2}|\s)"
_TYPE_PATTERNS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (_LIST + r"`?(?:torch\.|tf\.)?(?:tensor|array)s?\b`?", ("tensors",)),
    (_LIST + r"`?(?:ints?|integers?|longs?|symint)\b`?", ("ints",)),
    (_LIST + r"`?(?:floats?|doubles?)\b`?", ("floats",)),
    (r"\b(?:torch\.|tf\.|jnp\.|np\.)?(?:dtypes?\.)?dtype\b", ("dtype",)),
    (r"(?:\d-)?\btuple\b|\blist\b|\bsequence\b", ("ints",)),
    (r"\b(?:tf\.)?(?:tensor|array_like|arraylike|array|ndarray|arrays)\b", ("tensor",)),
    (r"\b(?:int|integer|long|symint)s?\b", ("int",)),
    (r"\b(?:float|double)s?\b", ("float",)),
    (r"\b(?:bool|boolean)s?\b", ("bool",)),
    (r"\b(?:str|string)s?\b", ("str",)),
    (r"\bnone\b", ("none",)),
)
_STOP = re.compile(r"\b(?:that|which|whose|with|where|when|indicating|specifying|giving|"
                   r"representing|containing|to|for|along|in|on|if|used|describing|by|"
                   r"over)\b|[:;]", re.I)


def _structures(expr: str, annotation: bool) -> list[str]:
    """Structures a type expression names; ``annotation``: a bare type list (torch's
    parenthesis, numpydoc), where 'Number'/'Scalar' also mean int or float."""
    s = re.sub(r":class:|[`~]", "", expr.lower())
    s = re.sub(r"\bnumber of\b|\bnon-?none\b", " ", s)
    if not annotation:
        s = re.sub(r"\([^()]*\)", " ", s)  # "(low, high) integer pairs": an aside
    s = re.sub(r"\blongtensor\b|\b\w*tensor\b", " tensor ", s)
    found: list[str] = []
    s, n = re.subn(r"\b(?:number|scalar|numeric)s?\b" if annotation else r"\bnumbers?\b",
                   " ", s)
    if n:
        found += ["int", "float"]
    for pattern, structs in _TYPE_PATTERNS:
        s, n = re.subn(pattern, " ", s)
        if n:
            found += [x for x in structs if x not in found]
    return list(dict.fromkeys(found))


def _leads(text: str) -> list[str]:
    """Sentences that state a type: the first, and those opening with a type phrase."""
    sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z0-9`(])", " ".join(text.split()))
    out = sentences[:1]
    for s in sentences[1:]:
        if re.match(r"(?:An?\s+(?:optional\s+)?(?:`|list|tuple|python|int|integer|float|"
                    r"bool|boolean|string|scalar|sequence)|Either\b|Can be\b|One of\b)", s):
            out.append(s)
    return out


def _type_of_sentence(sentence: str) -> list[str]:
    if re.match(r"\s*(?:if|when|unless)\b", sentence, re.I):
        return []  # a condition ("If `weights` is None, ..."), not a type statement
    if re.match(r"\s*the\s+(?:data\s*)?type\s+of\b", sentence, re.I):
        return ["dtype"]
    s = re.sub(r"^(?:Either|Can be|One of|Optional\.?)\s*", "", sentence.strip(), flags=re.I)
    s = re.sub(r"default\s*[=:]?.*$", "", s, flags=re.I)
    cut = _STOP.search(s, 1)
    head = s[:cut.start()] if cut else s
    head = re.sub(r"\bscalar\b", " ", head, flags=re.I)
    return _structures(head, annotation=False)


# ---- literals, values, numbers ----------------------------------------------------------
_NUM = r"-?\d+(?:\.\d+)?(?:[eE]-?\d+)?"
_QUOTED = re.compile(r"`{0,2}(['\"])([^'\"`\s]{1,40})\1`{0,2}")
_GAP = re.compile(r"^\s*(?:[,|/]\s*)?(?:(?:or|and)\s+)?$")
_MISSING = object()


def literal(token: str) -> Any:
    """A literal from doc text ("``'constant'``", "`[1, 1]`", "True", "0.5"); _MISSING if
    the token is prose ("the last axis")."""
    t = token.strip().strip("`").strip()
    t = re.sub(r"[.,;]+$", "", t) if not re.fullmatch(_NUM, t) else t
    low = t.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    try:
        value = ast.literal_eval(t)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return _MISSING
    if isinstance(value, tuple):
        value = list(value)
    ok = (int, float, str, bool, list, type(None))
    return value if isinstance(value, ok) else _MISSING


_DEFAULTS = (
    re.compile(r"Defaults?\s+to\s+(`+[^`]+`+|\S+)", re.I),
    re.compile(r"Default\s*:\s*(`+[^`]+`+|" + _NUM + r"|\S+)", re.I),
    re.compile(r"\(default\s*[:=]?\s*([^)]+)\)", re.I),
    re.compile(r"\bdefault\s*=\s*(\[[^\]]*\]|\([^)]*\)|[^\s,;)]+)", re.I),
    re.compile(r"\bdefault(?:\s+is)?\s+(`+[^`]+`+|" + _NUM + r"|True|False|None)\b", re.I),
)


def _default(text: str) -> Any:
    for pattern in _DEFAULTS:
        for m in pattern.finditer(text):
            token = m.group(1)
            if token.startswith("[") and "]" not in token:
                continue
            value = literal(token)
            if value is not _MISSING:
                return value
    return _MISSING


def _values(text: str) -> tuple[Any, ...]:
    """The first enumeration of two or more quoted strings: `"SAME", "VALID"`."""
    runs: list[list[str]] = []
    last_end = -1
    for m in _QUOTED.finditer(text):
        if re.search(r"(?:\bin\s*|=\s*)[\[(]?`*$", text[max(0, m.start() - 8):m.start()]):
            last_end = -1  # code about another parameter: ``mode in ['a', 'b']``
            runs.append([])
            continue
        gap = text[last_end:m.start()].replace("`", "") if last_end >= 0 else None
        if gap is not None and _GAP.match(gap) and runs and runs[-1]:
            runs[-1].append(m.group(2))
        else:
            runs.append([m.group(2)])
        last_end = m.end()
    for run in runs:
        if len(run) >= 2:
            return tuple(dict.fromkeys(run))
    return ()


def _rank(text: str) -> tuple[int, int] | None:
    los: list[int] = []
    his: list[float] = []
    flat = " ".join(text.split())
    for m in re.finditer(r"\b(\d)(?:-D|D|-dimensional)\b(?=\s*(?:`?(?:tf\.)?Tensor|tensor|"
                         r"array|input|with shape|of shape|in shape|or\b|,|\.|\)|$))", flat):
        n = int(m.group(1))
        after = flat[m.end():m.end() + 20].lower()
        before = flat[max(0, m.start() - 10):m.start()].lower()
        los.append(n)
        his.append(INF if re.match(r"\s*(?:or|and)\s+(?:higher|more|greater|above)", after)
                   or "at least" in before else n)
    for m in re.finditer(r"\brank\s+(?:must\s+be\s+)?(?:of\s+)?(at\s+least\s+)?`?(\d)`?"
                         r"(\s+or\s+(?:higher|more|greater))?", flat, re.I):
        if re.match(r"\s*(?:if|when|unless)\b", flat[m.end():]):
            continue  # "must have a rank of 2 if `axis=-1`": not always
        los.append(int(m.group(2)))
        his.append(INF if m.group(1) or m.group(3) else int(m.group(2)))
    if re.search(r"\bscalar\b|\b0-D\b", flat, re.I) and not re.search(
            r"\bscalars?\s+or\b|\bor\s+(?:a\s+)?(?:1-D|vector|tensor|array)", flat, re.I):
        los.append(0)
        his.append(0)
    for m in re.finditer(r"(?:with|of)\s+shape\s+(?::math:)?`+([\[(][^`]*[\])])`+", flat):
        inner = m.group(1)[1:-1]
        if not inner.strip():
            continue
        items = [i for i in re.split(r",(?![^{]*\})", inner) if i.strip()]
        ellipsis = sum(i.strip() in ("...", r"\ldots", "*") for i in items)
        fixed = len(items) - ellipsis
        los.append(fixed)
        his.append(INF if ellipsis else fixed)
    if not los:
        return None
    lo, hi = min(los), max(his)
    return lo, int(hi) if hi != INF else max(lo, RANK_CAP)


def _bounds(text: str, integer: bool) -> tuple[float, float] | None:
    lo, hi = -INF, INF
    flat = " ".join(text.split())
    low = flat.lower()
    for m in re.finditer(r"\b(?:that is|must be|should be|is|be|are|values?)\s*`?\s*"
                         r"(>=|>|<=|<|≥|≤)\s*`?\s*(" + _NUM + r")`?", flat):
        op, v = m.group(1), float(m.group(2))
        if op in (">=", "≥"):
            lo = max(lo, v)
        elif op == ">":
            lo = max(lo, v + 1 if integer else v)
        elif op in ("<=", "≤"):
            hi = min(hi, v)
        else:
            hi = min(hi, v - 1 if integer else v)
    for m in re.finditer(r"\b(greater|less)\s+than\s+(or\s+equal\s+to\s+)?`?(" + _NUM
                         + r")`?", low):
        v, eq = float(m.group(3)), bool(m.group(2))
        if m.group(1) == "greater":
            lo = max(lo, v if eq else (v + 1 if integer else v))
        else:
            hi = min(hi, v if eq else (v - 1 if integer else v))
    between = re.search(r"\bbetween\s+`?(" + _NUM + r")`?\s+and\s+`?(" + _NUM + r")`?", low)
    if not between:
        between = re.search(r"\b(?:in|within)\s+(?:the\s+)?(?:range|interval)?\s*(?:of\s+)?`?[\[(]"
                      r"\s*(" + _NUM + r")\s*,\s*(" + _NUM + r")\s*[\])]", low)
    if between:
        lo, hi = max(lo, float(between.group(1))), min(hi, float(between.group(2)))
    if re.search(r"\bnon-?negative\b", low):
        lo = max(lo, 0.0)
    for m in re.finditer(r"\b(?:strictly\s+)?positive\b(?![- ](?:semi-?)?definite)", low):
        before = low[max(0, m.start() - 12):m.start()]
        if not re.search(r"usually|typically|often|if|non-?\s*$", before):
            lo = max(lo, 1.0 if integer else 0.0)
    if re.search(r"\bprobabilit(?:y|ies)\b", low):
        lo, hi = max(lo, 0.0), min(hi, 1.0)
    if lo == -INF and hi == INF or lo > hi:
        return None
    if integer:
        return (int(lo) if lo != -INF else lo, int(hi) if hi != INF else hi)
    return lo, hi


def _length(text: str) -> tuple[int, int] | None:
    flat = " ".join(text.split())
    m = re.search(r"\b(?:has|have|of|with)\s+length\s+((?:`?\d+`?(?:\s*,\s*(?:or\s+)?|"
                  r"\s+or\s+)?)+)", flat)
    if m:
        nums = [int(n) for n in re.findall(r"\d+", m.group(1))]
        return min(nums), max(nums)
    m = re.search(r"\b(\d)-tuple\b", flat)
    if m:
        return int(m.group(1)), int(m.group(1))
    m = re.search(r"\btuple\s+`+\(([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)+)\)`+", flat)
    if m:
        n = m.group(1).count(",") + 1
        return n, n
    return None


def hints(text: str, open_bounds: bool = False) -> dict[str, Any]:
    """What one parameter's doc text says, as LibParam fields.

    Keys (present only when the text says so): ``structures`` (tuple), ``optional``,
    ``default`` (a literal; None is a value here), ``dtypes`` (dlfuzz names), ``rank``,
    ``values`` (enumerated strings), ``range`` (scalars / list items), ``domain``
    (tensor values), ``length`` (list length). See the module doc about open bounds.
    """
    out: dict[str, Any] = {}
    if not text or not text.strip():
        return out
    structures: list[str] = []
    optional = False
    body = text
    m = re.match(r"\s*" + _PAREN + r"\s*:?\s*", text)
    if m:  # torch / numpydoc annotation
        ann = m.group(1)
        body = text[m.end():]
        quoted = _values(ann.replace("{", "").replace("}", ""))
        structures = _structures(_QUOTED.sub(" ", ann), annotation=True)
        optional = bool(re.search(r"\boptional\b", ann, re.I))
        if quoted:
            out["values"] = quoted
    if not structures:
        for sentence in _leads(body):
            structures += [s for s in _type_of_sentence(sentence) if s not in structures]
        if re.match(r"\s*(?:whether|if\s+`*true`*\b)", body, re.I) and not structures:
            structures = ["bool"]
    lead = _leads(body)[0] if body.strip() else ""
    if re.match(r"\s*An?\s+optional\b|\s*Optional\b", lead) or re.search(
            r"\(optional\)|,\s*optional\b", text, re.I):
        optional = True
    if "none" in structures:
        optional = True
    adj = _ADJ_TENSOR.search(text)
    if adj and not m:  # no annotation: "a float dtype", "an integer tensor" say the kind
        noun = "dtype" if adj.group(2).lower() == "dtype" else "tensor"
        structures = [noun] + [s for s in structures if s != noun and not (
            noun == "dtype" and s in ("int", "float", "bool"))]
    if structures:
        out["structures"] = tuple(structures)
    if optional:
        out["optional"] = True
    default = _default(text)
    if default is not _MISSING:
        if "float" in structures and "int" not in structures and isinstance(default, int) \
                and not isinstance(default, bool):
            default = float(default)
        out["default"] = default
    dtypes = _dtypes(text) or ()
    if dtypes:
        out["dtypes"] = dtypes
        if not structures:
            out["structures"] = ("tensor",)
    if "values" not in out:
        values = _values(text)
        if values and (not structures or "str" in structures):
            out["values"] = values
    elif out["values"] and "str" not in structures:
        out["structures"] = tuple(structures) + ("str",)
    else:
        out.pop("values")
    rank = _rank(body)
    if rank:
        out["rank"] = rank
    tensor_only = bool(structures) and set(structures) <= {"tensor", "tensors", "none"}
    integer = "int" in structures or "ints" in structures or (
        tensor_only and bool(dtypes) and all(d.startswith(("int", "uint")) for d in dtypes))
    bounds = _bounds(body, integer=integer)
    if bounds:
        if not open_bounds:
            bounds = finite(bounds, INT_SPAN if integer else FLOAT_SPAN)
        out["domain" if tensor_only else "range"] = bounds
    length = _length(body)
    if length:
        out["length"] = length
    return out


def finite(bounds: tuple[float, float], span: float) -> tuple[float, float]:
    """Close an open side of a hint's range: ``(1, inf)`` -> ``(1, 1 + span)``."""
    lo, hi = bounds
    if lo == -INF and hi == INF:
        lo, hi = -span, span
    elif lo == -INF:
        lo = hi - span
    elif hi == INF:
        hi = lo + span
    if isinstance(span, int) and float(lo).is_integer() and float(hi).is_integer():
        return int(lo), int(hi)
    return float(lo), float(hi)


# ---- relational sentences ---------------------------------------------------------------
_REF = r"`*(\w+)`*"


def constraints_from_doc(doc: str | None, params: list[str] | tuple[str, ...]
                         ) -> list[str]:
    """Constraint texts for the relational sentences of each parameter's doc: "Must have
    the same type as `x`", "same shape/rank as x", "in the range `[-rank(x), rank(x))`",
    "must be positive"/"non-negative"/">= n" for scalars, "whose size is equal to the
    size of `data`'s first dimension". Only texts ``constraints.parse`` accepts."""
    from dlfuzz.engines.api.constraints import ConstraintError, parse

    names = frozenset(params)
    out: list[str] = []
    m: re.Match[str] | None
    for p, text in param_docs(doc).items():
        if p not in names:
            continue
        flat = " ".join(text.split())
        h = hints(text)
        structures = set(h.get("structures", ()))
        maybe_none = bool(h.get("optional")) or bool(re.search(
            r"\bif\s+(?:non-?none|not\s+none|given|provided|specified)\b", flat, re.I))
        found: list[str] = []
        for m in re.finditer(r"(?:same|matching)\s+(?:d?type|data\s*type)\s+as\s+" + _REF,
                             flat, re.I):
            found.append(f"{p}.dtype == {m.group(1)}.dtype")
        for m in re.finditer(r"same\s+(?:shape|rank|number\s+of\s+dimensions)\s+as\s+"
                             + _REF, flat, re.I):
            found.append(f"{p}.ndims == {m.group(1)}.ndims")
        m = re.search(r"range\s+`?\[\s*-\s*rank\(\s*`?(\w+)`?\s*\)\s*,\s*rank\(\s*`?(\w+)`?"
                      r"\s*\)\s*\)", flat)
        if m and m.group(1) == m.group(2):
            found.append(f"{p} >= -{m.group(1)}.ndims and {p} < {m.group(1)}.ndims")
        m = re.search(r"size\s+(?:is\s+)?(?:equal\s+to|matching|matches)\s+the\s+size\s+of\s+"
                      r"`*(\w+)`*'s\s+first\s+dimension", flat)
        if m:
            found.append(f"{p}.shape[0] == {m.group(1)}.shape[0]")
        if structures and structures <= {"int", "float", "none"}:
            if re.search(r"\bmust\s+be\s+(?:strictly\s+)?positive\b", flat, re.I):
                found.append(f"{p} > 0")
            elif re.search(r"\bmust\s+be\s+non-?negative\b", flat, re.I):
                found.append(f"{p} >= 0")
            m = re.search(r"\bmust\s+be\s+`?(>=|>|<=|<)\s*(" + _NUM + r")`?", flat)
            if m:
                found.append(f"{p} {m.group(1)} {m.group(2)}")
        for text_c in found:
            if maybe_none:
                text_c = f"{p} is None or ({text_c})"
            try:
                parse(text_c, names)
            except ConstraintError:
                continue
            if text_c not in out:
                out.append(text_c)
    return out
