"""TF.js API specs (``data/tfjs.json``): TensorJSFuzz's type extraction for tfjs-core.

Run offline (``python -m dlfuzz.specgen tfjs``). Nothing is imported in
Python: ``tfjs_dts.js`` (Node + the TypeScript compiler from dlfuzz's tools cache) reads
the installed package's ``dist/ops/**/*.d.ts`` and ``*.js`` and prints, per exported op,
the parameter types, JSDoc, JS defaults and translated checks. This module maps them:

- ``Tensor``/``TensorLike`` (and ``T extends Tensor3D|Tensor4D``) -> ``tensor`` with the
  ranks the type names (``Tensor4D`` = 4, ``Scalar`` = 0); ``Tensor[]`` -> ``tensors``;
  ``number|Scalar`` -> a number or a rank-0 tensor;
- ``number`` -> ``int`` or ``float`` from the parameter name and its JSDoc (axis, size,
  k, strides... are integers); ``[number, number]`` -> ``ints`` of length 2,
  ``number[]`` and ``ShapeMap[R]`` -> ``ints``; ``boolean`` -> ``bool``;
- literal unions (``'valid'|'same'``, ``'NHWC'|'NCHW'``) -> ``values``; ``DataType`` ->
  ``dtype``; the ``Reduction`` enum -> its integer values;
- tensor dtypes: ``convertToTensor(x, 'x', op, 'float32')`` pins ``x`` to float32 (and
  rejects anything else: a ``validation`` constraint); otherwise float32 and int32, bool
  for the logical ops (tfjs has float32, int32, bool, complex64 and string only);
- constraints: the op's checking code (``tfjs_asserts``), then ``HINTS`` (``hints/tfjs.json``).

JS has no keyword arguments: every parameter is ``positional``; an optional one left out
before one that is passed gets its JS default (taken from the implementation's parameter
initializer, so ``null`` never replaces a real default). Options-object parameters
(``tf.fused.*``) and nested-list parameters (``paddings: Array<[number, number]>``) have
no structure in the spec language: those ops are listed with ``skip``. So are ops with no
tensor input (creation, random generators, windows), string-tensor ops (the host sends
numbers only) and ``tf.print``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from dlfuzz.engines.api.constraints import Constraint, ConstraintError, make
from dlfuzz.engines.api.libspecs import LibParam, LibSpec
from dlfuzz.errors import UsageError
from dlfuzz.specgen import hintfiles, tfjs_asserts

SCRIPT = Path(__file__).with_name("tfjs_dts.js")
TFJS_DTYPES = ("float32", "int32", "bool", "complex64")
DEFAULT_DTYPES = ("float32", "int32")
_INT_SUFFIXES = ("Size", "Length", "Dims", "Mask", "Width", "Depth", "Segments", "Rows",
                 "Columns", "Shape", "Step", "Samples", "Buckets", "Rank", "Axis")
_REDUCTION = {"NONE": 0, "MEAN": 1, "SUM": 2, "SUM_BY_NONZERO_WEIGHTS": 3}

# ---- the hand-hints table (hints/tfjs.json): what neither the .d.ts nor the op's JS says ---
_TABLES = hintfiles.load("tfjs")
# Integer-valued `number` parameters the name suffixes miss.
INT_NAMES: frozenset[str] = _TABLES["int_names"]
# Output depends on a random state: no differential comparison.
RANDOM: frozenset[str] = _TABLES["random"]
# Value ranges by parameter name (every op): sizes small and positive, so that outputs
# have positive dimensions. Fields are LibParam fields.
NAME_FIELDS: dict[str, dict[str, Any]] = _TABLES["name_fields"]
# Per op: "params" (field overrides), "constraints" (hand; SHAPES/BROADCAST/AXIS macros
# allowed), "drop" (parameters never passed), "skip", "axis": False (no generic axis rule).
HINTS: dict[str, dict[str, Any]] = _TABLES["apis"]
# Element-wise binary ops whose kernels broadcast (assertAndGetBroadcastShape in the
# backends' shared code, not in the op): (first, second) parameter names.
BROADCAST: dict[str, tuple[str, str]] = _TABLES["broadcast"]
NOT_BROADCAST: frozenset[str] = _TABLES["not_broadcast"]


def version_dir(version: str | None = None) -> Path:
    """The installed tfjs version directory (installing it through J-RUN's installer)."""
    from dlfuzz.backends.tfjs import install

    return install.ensure_installed(version or install.DEFAULT_VERSION)


def versions() -> dict[str, str]:
    """What the data file records: the tfjs-core release the specs were read from."""
    core = version_dir() / "node_modules" / "@tensorflow" / "tfjs-core" / "package.json"
    return {"tfjs": json.loads(core.read_text())["version"]}


def run_script(*args: str) -> dict[str, Any]:
    """``node tfjs_dts.js ARGS`` with typescript from the tools cache, parsed."""
    from dlfuzz.backends.tfjs import install

    node = shutil.which("node")
    if node is None:
        raise UsageError("tfjs spec extraction needs `node` on PATH; install Node.js 20+")
    env = dict(os.environ, NODE_PATH=str(install.ensure_tools() / "node_modules"))
    proc = subprocess.run([node, str(SCRIPT), *args], capture_output=True, text=True,
                          env=env, timeout=300, check=False)
    if proc.returncode != 0:
        raise UsageError(f"{SCRIPT.name} {' '.join(args)} failed (exit {proc.returncode}): "
                         f"{proc.stderr.strip()[-1500:]}")
    return json.loads(proc.stdout)


# ---- types -------------------------------------------------------------------------------
def _is_int_name(name: str, doc: str) -> bool:
    if name in INT_NAMES or name.endswith(_INT_SUFFIXES):
        return True
    return bool(re.search(r"\binteger\b|\bnumber of\b", doc, re.I))


def _number_lists(atoms: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [a for a in atoms if a["k"] == "tuple" and all(
        any(x["k"] in ("number", "lit") for x in item) for item in a["items"])] + [
        a for a in atoms if a["k"] == "array" and any(x["k"] == "number" for x in a["of"])]


def map_param(raw: dict[str, Any], default: dict[str, Any] | None) -> dict[str, Any] | str:
    """LibParam fields for one parameter, or the reason it has no structure."""
    atoms, name, doc = raw["atoms"], raw["name"], raw.get("doc", "")
    kinds = {a["k"] for a in atoms}
    f: dict[str, Any] = {"name": name, "passing": "positional", "doc": doc[:300]}
    structures: list[str] = []
    tensors = [a for a in atoms if a["k"] in ("tensor", "tensorlike")]
    if tensors:
        structures.append("tensor")
        ranks = [a["rank"] for a in tensors if a["k"] == "tensor"] or [
            a["rank"] for a in tensors]
        if ranks and None not in ranks:
            f["rank"] = (min(ranks), max(ranks))
    lists = [a for a in atoms if a["k"] == "array"
             and any(x["k"] in ("tensor", "tensorlike") for x in a["of"])]
    if lists:
        structures.append("tensors")
        ranks = [x["rank"] for a in lists for x in a["of"] if x["k"] == "tensor"]
        if ranks and None not in ranks:
            f["rank"] = (min(ranks), max(ranks))
    integer = _is_int_name(name, doc)
    if "number" in kinds:
        structures.insert(0, "int" if integer else "float")
    nested = [a for a in atoms if a["k"] == "array" and any(x["k"] in ("tuple", "array")
                                                             for x in a["of"])]
    if nested and not structures:
        return "nested list parameter"
    numlists = _number_lists(atoms)
    if numlists or any(a["k"] == "other" and a["text"].startswith("ShapeMap") for a in atoms):
        structures.append("ints" if integer or not numlists or any(
            a["k"] == "array" for a in numlists) else "floats")
        lengths = [len(a["items"]) for a in numlists if a["k"] == "tuple"]
        if lengths and len(lengths) == len(numlists):
            f["length"] = (min(lengths), max(lengths))
    lits = [a["v"] for a in atoms if a["k"] == "lit" and not isinstance(a["v"], bool)]
    if lits:
        kind = "str" if all(isinstance(v, str) for v in lits) else "int"
        if kind not in structures:
            structures.append(kind)
        f["values"] = tuple(lits)
    if "boolean" in kinds or any(a["k"] == "lit" and isinstance(a["v"], bool) for a in atoms):
        structures.append("bool")
    refs = {a.get("name") for a in atoms if a["k"] == "ref"}
    if "DataType" in refs:
        structures.append("dtype")
        f["dtypes"] = ("float32", "int32", "bool")
    if "Reduction" in refs:
        structures.append("int")
        f["values"] = tuple(_REDUCTION.values())
    if "string" in kinds and not structures:
        return "free string"
    if "null" in kinds:
        structures.append("none")
    if not structures or kinds & {"function", "object"} and len(structures) == 0:
        return "no generatable type (" + " ".join(raw["typeText"].split())[:60] + ")"
    f["structures"] = tuple(dict.fromkeys(structures))
    if raw["optional"] or default is not None:
        f["optional"] = True
        value = _default_value(default)
        f["default"] = value
        if value is None and "none" not in f["structures"]:
            f["structures"] = (*f["structures"], "none")
    return f


def _default_value(default: dict[str, Any] | None) -> Any:
    if default is None:
        return None
    if "value" in default:
        return default["value"]
    text = default.get("text", "")
    if text.startswith("Reduction."):
        return _REDUCTION.get(text.split(".", 1)[1])
    if text == "Number.NEGATIVE_INFINITY":
        return float("-inf")
    return None


# ---- one op --------------------------------------------------------------------------------
def _dtypes(op: dict[str, Any], name: str) -> tuple[str, ...]:
    forced = (op.get("dtypes") or {}).get(name)
    if forced in TFJS_DTYPES:
        return (forced,)
    if re.search(r"logical", op["api"], re.I):
        return ("bool",)
    return DEFAULT_DTYPES


def build_spec(op: dict[str, Any], tally: tfjs_asserts.Tally | None = None) -> LibSpec:
    """The spec of one op from the script's JSON (skip set when it cannot be fuzzed)."""
    api = op["api"]
    hint = HINTS.get(api, {})
    defaults = op.get("defaults") or {}
    overrides = hint.get("params", {})
    params: list[LibParam] = []
    skip = hint.get("skip", "")
    notes: list[str] = []
    drop = set(hint.get("drop", ()))
    for raw in op["params"]:
        name = raw["name"]
        fields = map_param(raw, defaults.get(name)) if name not in drop else "dropped (hint)"
        if isinstance(fields, str) and "structures" in overrides.get(name, {}):
            fields = {"name": name, "passing": "positional", "doc": raw.get("doc", "")[:300]}
            if raw["optional"] or name in defaults:
                fields.update(optional=True, default=_default_value(defaults.get(name)))
        if isinstance(fields, str):
            if raw["optional"] or name in defaults:
                notes.append(f"{name}: {fields}, not passed")
                # a later parameter still needs this position: pass the JS default
                fields = {"name": name, "structures": ("none",), "optional": True,
                          "default": _default_value(defaults.get(name)), "passing": "positional"}
                params.append(LibParam(**fields))
                continue
            skip = skip or fields
            fields = {"name": name, "structures": ("none",), "passing": "positional"}
        if raw.get("rest"):
            fields["passing"] = "variadic"
        structures = set(overrides.get(name, {}).get("structures") or fields["structures"])
        if {"tensor", "tensors"} & structures:
            fields["dtypes"] = _dtypes(op, name)
        if structures & {"int", "float", "ints", "floats"}:
            fields.update(NAME_FIELDS.get(name, {}))
        fields.update(overrides.get(name, {}))
        params.append(LibParam(**fields))
    while params and params[-1].structures == ("none",) and params[-1].optional:
        params.pop()  # trailing placeholders: simply not passed
    constraints: list[Constraint] = []
    if not skip:
        names = [p.name for p in params]
        tensor_only = [p.name for p in params if set(p.structures) <= {"tensor", "none"}]
        constraints = tfjs_asserts.dtype_constraints(op, tensor_only)
        constraints += tfjs_asserts.constraints_for(op, names, tally)
        constraints += _hand(api, hint, params, constraints)
        skip = _auto_skip(op, params)
    return LibSpec(library="tfjs", api=api, params=tuple(params),
                   constraints=tuple(constraints), group=op.get("group", "core"),
                   random=api in RANDOM or hint.get("random", False),
                   notes="; ".join(notes), skip=skip)


def _hand(api: str, hint: dict[str, Any], params: list[LibParam],
          have: list[Constraint]) -> list[Constraint]:
    """Hint constraints plus two generic rules the op's JS does not state: axes inside
    ``[-rank, rank)`` of the first tensor (checked in kernels through parseAxisParam) and
    broadcasting of element-wise binary ops (checked in the backends)."""
    texts = list(hint.get("constraints", ()))
    tensors = [p.name for p in params if p.tensor_like]
    names = {p.name for p in params}
    axis = next((p for p in params if p.name == "axis"), None)
    if axis is not None and tensors and hint.get("axis", True) and not any(
            "axis" in c.names and "min(axis)" in c.text for c in have):
        if "ints" in axis.structures:
            texts.append(f"AXIS(axis, {tensors[0]})")
        else:  # a plain comparison: Algorithm 2 repairs it by writing the axis
            none = "axis is None or " if "none" in axis.structures else ""
            texts.append(f"{none}-{tensors[0]}.ndims <= axis < {tensors[0]}.ndims")
    if {"pad", "dimRoundingMode"} <= names:  # conv_util.checkPadOnDimRoundingMode
        texts.append("dimRoundingMode is None or pad.type == 'int'")
    pair = BROADCAST.get(api) or (("a", "b") if {"a", "b"} <= names else None)
    if pair and api not in NOT_BROADCAST and not any(
            f"{pair[0]}.shape[-1] == {pair[1]}.shape[-1]" in c.text for c in have):
        texts.append(f"BROADCAST({pair[0]}, {pair[1]})")
    if pair:  # TensorJSFuzz Table 1: tf.add a.dtype == b.dtype (TensorFlow requires it)
        texts.append(f"{pair[1]}.dtype == {pair[0]}.dtype")
    out = []
    for text in texts:
        for item in tfjs_asserts.expand_macro(text):
            try:
                out.append(make(item, "hand"))
            except ConstraintError as exc:
                raise UsageError(f"tfjs hint for {api}: constraint {item!r}: {exc}") from None
    return out


def _auto_skip(op: dict[str, Any], params: list[LibParam]) -> str:
    if not any(p.tensor_like for p in params):
        return "no tensor input (creation op)"
    if op["api"].startswith("tf.string."):
        return "string tensors (the host sends numeric tensors only)"
    return ""


def extract(dist: Path | None = None) -> list[LibSpec]:
    """Every tfjs-core op of the installed default version, in export order."""
    if dist is None:
        dist = version_dir() / "node_modules" / "@tensorflow" / "tfjs-core" / "dist"
    data = run_script("core", str(dist))
    tally = tfjs_asserts.Tally()
    specs = [build_spec(op, tally) for op in data["ops"]]
    print(tally.summary(), file=sys.stderr)
    return specs


def specs_from_files(dts: Path, js: Path | None = None) -> list[LibSpec]:
    """Specs of the ops of one declaration (and implementation) file: for tests."""
    args = ["files", str(dts)] + ([str(js)] if js is not None else [])
    return [build_spec(op) for op in run_script(*args)["ops"]]
