"""Offline extractor of the program engine's knowledge base (MoCo §III-C, without an LLM).

``python -m dlfuzz.specgen.program_knowledge torch|keras [--similarity]
[--calibrate N]`` imports the library in-process and, for every layer class of
``torch.nn`` / ``keras.layers`` (containers, losses, wrappers and aliases left out), reads
the constructor's signature (names, defaults, annotations, positional-only) and its
docstring (``docstrings.param_docs`` + ``hints``: structures, enum values, ranges,
defaults), the ``__init__`` checks (``validation.constraints_from_source``) and the
relational doc sentences (``docstrings.constraints_from_doc``), then merges the hand table
``engines/program/data/hand_rules.json`` (what neither says: legal intervals, sampling ranges, enum lists,
inter-parameter constraints). It writes ``data/<lib>.json`` (format 2, ``libspecs.dump``)
and ``data/<lib>_context.json`` (see ``knowledge``'s module doc and ``knowledge_context``).

Calibration (MoCo has none; it keeps generated values honest): each layer is built with
values drawn by ``knowledge.random_value`` for every parameter; extracted constraints that
reject constructions which succeeded are dropped, and the valid-construction rate is
printed per API so the hand table can be fixed where constructors fail.
"""

from __future__ import annotations

import argparse
import inspect
import json
import math
import os
import re
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from dlfuzz import libraries
from dlfuzz.engines.api.constraints import Constraint, ConstraintError, Env, holds, make, names_in
from dlfuzz.engines.api.libspecs import LibParam, LibSpec, dump
from dlfuzz.engines.program import knowledge as kb
from dlfuzz.engines.program.knowledge_context import context_for
from dlfuzz.specgen.docstrings import constraints_from_doc, hints, param_docs

HAND_FILE = kb.DATA_DIR / "hand_rules.json"
TORCH_EXCLUDE = frozenset({
    "Container", "Module", "ModuleDict", "ModuleList", "ParameterDict", "ParameterList",
    "Sequential", "DataParallel", "RNNBase", "RNNCellBase", "TransformerDecoder",
    "TransformerEncoder", "AdaptiveLogSoftmaxWithLoss", "SyncBatchNorm"})
KERAS_EXCLUDE = frozenset({
    "TFSMLayer", "InputLayer", "Lambda", "Wrapper", "Layer", "Bidirectional",
    "TimeDistributed", "RNN", "StackedRNNCells", "FlaxLayer", "JaxLayer",
    "TorchModuleWrapper", "Pipeline", "SpectralNormalization", "StringLookup",
    "TextVectorization", "IntegerLookup", "Hashing", "HashedCrossing", "CategoryEncoding",
    "Discretization", "MaxNumBoundingBoxes", "EinsumDense", "GRUCell", "LSTMCell",
    "SimpleRNNCell"})
_JSONABLE = (type(None), bool, int, float, str)


# ---- class lists ------------------------------------------------------------------------
def layer_classes(library: str) -> list[tuple[str, type]]:
    """(API path, class) of every layer the knowledge base covers, in library order."""
    if library == "torch":
        import torch.nn as nn

        out = []
        for name, obj in vars(nn).items():
            if (inspect.isclass(obj) and issubclass(obj, nn.Module) and not name.startswith("_")
                    and name not in TORCH_EXCLUDE and not name.endswith(("Loss", "Loss2d"))):
                out.append((libraries.get("torch").layers + name, obj))
        return out
    if library == "keras":
        os.environ.setdefault("KERAS_BACKEND", "torch")
        import keras

        seen: dict[type, str] = {}
        for name, obj in vars(keras.layers).items():
            if not (inspect.isclass(obj) and issubclass(obj, keras.layers.Layer)) \
                    or name in KERAS_EXCLUDE:
                continue
            alias = name.startswith("Convolution") or ("Pool" in name and "Pooling" not in name)
            if obj not in seen or (not alias and _is_alias(seen[obj])):
                seen[obj] = name
        return [(libraries.get("keras").layers + n, c) for c, n in seen.items()]
    raise SystemExit(f"unknown library {library!r}; use torch or keras")


def _is_alias(name: str) -> bool:
    return name.startswith("Convolution") or ("Pool" in name and "Pooling" not in name)


def _dims(name: str) -> int | None:
    m = re.search(r"([123])[dD](?:Transpose)?$", name)
    return int(m.group(1)) if m else None


# ---- one spec ---------------------------------------------------------------------------
def _jsonable(v: Any) -> Any:
    if isinstance(v, tuple | list) and all(isinstance(i, _JSONABLE) for i in v):
        return list(v)
    if isinstance(v, _JSONABLE) and not (isinstance(v, float) and not math.isfinite(v)):
        return v
    if callable(v) and hasattr(v, "__name__"):
        return v.__name__
    raise TypeError(v)


def _structures_of_default(v: Any) -> list[str]:
    if v is None:
        return ["none"]
    if isinstance(v, bool):
        return ["bool"]
    if isinstance(v, int):
        return ["int"]
    if isinstance(v, float):
        return ["float"]
    if isinstance(v, str):
        return ["str"]
    if isinstance(v, list):
        return ["floats"] if any(isinstance(i, float) for i in v) else ["ints"]
    return []


def _hand_rule(hand: dict[str, Any], cls_name: str, pname: str) -> tuple[dict[str, Any], str]:
    """The merged hand rule of a param (generic name rule, suffix rule, API override)."""
    rule: dict[str, Any] = {}
    how = ""
    for suffix, r in hand.get("suffix", {}).items():
        if pname.endswith(suffix):
            rule.update(r)
            how = "suffix"
    if pname in hand["params"]:
        rule.update(hand["params"][pname])
        how = "name"
    override = hand["apis"].get(cls_name, {}).get("params", {}).get(pname)
    if override:
        rule.update(override)
        how = "api"
    return rule, how


_KIND_WORDS: dict[object, str] = {inspect.Parameter.POSITIONAL_ONLY: "positional",
                                   inspect.Parameter.KEYWORD_ONLY: "keyword"}


def _signature_params(cls: type[Any]) -> list[tuple[str, Any, str]]:
    """(name, default or inspect._empty, kind) of the constructor; docstring names when the
    signature is only ``*args, **kwargs`` (torch's RNNs)."""
    try:
        sig = inspect.signature(cls.__init__)
    except (TypeError, ValueError):
        return []
    out = []
    for p in list(sig.parameters.values())[1:]:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        kind = _KIND_WORDS.get(p.kind, "either")
        out.append((p.name, p.default, kind))
    if not out:
        out = [(n, inspect.Parameter.empty, "keyword") for n in param_docs(cls.__doc__ or "")]
    return out


def build_spec(library: str, api: str, cls: type, hand: dict[str, Any],
               stats: dict[str, int]) -> tuple[LibSpec, dict[str, str]]:
    """The LibSpec of one layer class and the legal intervals of its params."""
    cls_name = api.rsplit(".", 1)[1]
    docs = param_docs(cls.__doc__ or "")
    dims = _dims(cls_name)
    params: list[LibParam] = []
    legal_map: dict[str, str] = {}
    for name, default, kind in _signature_params(cls):
        if name in hand["drop"] or name.startswith("_"):
            continue
        h = hints(docs.get(name, ""), open_bounds=True)
        rule, how = _hand_rule(hand, cls_name, name)
        if how:
            stats[f"hand_{how}"] = stats.get(f"hand_{how}", 0) + 1
        optional = default is not inspect.Parameter.empty or "default" in h
        try:
            dflt = _jsonable(default) if default is not inspect.Parameter.empty \
                else _jsonable(h.get("default"))
        except TypeError:
            dflt = None
        structures = list(rule.get("type") or h.get("structures") or
                          (_structures_of_default(dflt) if optional else []))
        if optional and dflt is None and "none" not in structures:
            structures.append("none")
        structures = [s for s in structures if s in ("int", "float", "bool", "str", "none",
                                                     "ints", "floats", "tensor")]
        if not structures:
            if not optional:
                stats["unknown_required"] = stats.get("unknown_required", 0) + 1
            structures = ["none"] if dflt is None else _structures_of_default(dflt) or ["none"]
        values = rule["values"] if "values" in rule else h.get("values")
        sample = rule.get("sample")
        legal = rule.get("legal")
        if sample is None and h.get("range") and ({"int", "float", "ints", "floats"}
                                                 & set(structures)):
            lo, hi = h["range"]
            legal = f"[{lo}, {hi}]".replace("-inf]", "-inf)").replace("[-inf", "(-inf") \
                .replace("inf]", "inf)")
            span = 4 if "int" in structures else 1.0
            sample = [lo if math.isfinite(lo) else (hi - span), hi if math.isfinite(hi)
                      else (lo if math.isfinite(lo) else 0) + span]
            stats["doc_range"] = stats.get("doc_range", 0) + 1
        if legal:
            legal_map[name] = legal
        kw: dict[str, Any] = {"name": name, "structures": tuple(structures),
                              "optional": optional, "default": dflt, "passing": kind}
        if sample is not None:
            integer = bool({"int", "ints"} & set(structures)) and not (
                {"float", "floats"} & set(structures))
            kw["range"] = (int(sample[0]), int(sample[1])) if integer else (
                float(sample[0]), float(sample[1]))
        if values:
            kw["values"] = tuple(values)
        if dims and {"ints", "floats"} & set(structures):
            n = 2 * dims if (cls_name.endswith(("Pad1d", "Pad2d", "Pad3d")) and
                             name == "padding") else dims
            if cls_name in ("Cropping1D", "ZeroPadding1D"):
                n = 2  # (left, right) of the one spatial axis
            kw["length"] = (n, n)
        elif "ints" in structures:
            kw["length"] = (1, 3)
        doc = " ".join(docs.get(name, "").split())
        if doc:
            kw["doc"] = doc[:300]
        params.append(LibParam(**kw))
    names = frozenset(p.name for p in params)
    constraints = _constraints(cls, cls_name, hand, names, stats)
    random = bool(re.search(r"Dropout|Random|Noise|RReLU|MixUp|CutMix|AugMix|RandAugment",
                            cls_name))
    spec = LibSpec(library=library, api=api, params=tuple(params), constraints=constraints,
                   group="layer", random=random,
                   notes=" ".join((cls.__doc__ or "").strip().split("\n\n")[0].split())[:400])
    return spec, legal_map


def _constraints(cls: type[Any], cls_name: str, hand: dict[str, Any], names: frozenset[str],
                 stats: dict[str, int]) -> tuple[Constraint, ...]:
    from dlfuzz.specgen.validation import constraints_from_source

    found: list[Constraint] = []
    texts: set[str] = set()

    def add(text: str, source: str) -> None:
        try:
            c = make(text, source, names)
        except ConstraintError:
            return
        if c.text not in texts:
            texts.add(c.text)
            found.append(c)
            stats[f"constraint_{source}"] = stats.get(f"constraint_{source}", 0) + 1

    for text in hand["apis"].get(cls_name, {}).get("constraints", []):
        add(text, "hand")
    try:
        for text in constraints_from_source(cls.__init__, sorted(names)):
            add(text, "validation")
    except Exception:  # noqa: BLE001 - source unavailable or untranslatable: no constraints
        pass
    for text in constraints_from_doc(cls.__doc__ or "", sorted(names)):
        add(text, "doc")
    return tuple(found)


# ---- calibration ------------------------------------------------------------------------
def draw_all(rng: np.random.Generator, spec: LibSpec, seed_values: dict[str, Any]
             ) -> dict[str, Any]:
    """Values for every param that random generation can draw, one param at a time."""
    values = dict(seed_values)
    for p in spec.params:
        v = kb.random_value(rng, spec, p.name, values)
        if v is not None:
            values[p.name] = v
    return values


def required_values(rng: np.random.Generator, spec: LibSpec) -> dict[str, Any]:
    """Values for the required params (no default) so a constructor can be called."""
    values: dict[str, Any] = {}
    for p in spec.params:
        if not p.optional:
            v = kb.random_value(rng, spec, p.name, values)
            if v is not None:
                values[p.name] = v
    return values


def construct(cls: type, values: dict[str, Any]) -> str | None:
    """None when the constructor accepts the values, else the exception's type and text."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            cls(**values)
        except Exception as exc:  # noqa: BLE001 - any refusal is data here
            return f"{type(exc).__name__}: {str(exc)[:120]}"
    return None


def calibrate(specs: list[LibSpec], classes: dict[str, type], n: int, seed: int = 0
              ) -> tuple[list[LibSpec], dict[str, tuple[int, int]], list[str]]:
    """Build every layer ``n`` times with all params drawn; return the specs with the
    extracted (non-hand) constraints that a successful construction violated dropped, the
    per-API (ok, tried) and sample failure messages. APIs whose required params have no
    drawable value (Reshape's target_shape: only a seed can give it) are left out of the
    rates and listed as ``needs seed values``."""
    from dataclasses import replace

    rng = np.random.default_rng(seed)
    rates: dict[str, tuple[int, int]] = {}
    failures: list[str] = []
    out = []
    for spec in specs:
        cls = classes[spec.api]
        required = {p.name for p in spec.params if not p.optional}
        if not required <= set(required_values(rng, spec)):
            failures.append(f"{spec.api}: needs seed values for "
                            + ", ".join(sorted(required)))
            out.append(spec)
            continue
        free = replace(spec, constraints=tuple(c for c in spec.constraints
                                               if c.source == "hand"))
        wrong: set[str] = set()
        for _ in range(max(2, n // 2)):  # extracted constraints against real constructors
            values = draw_all(rng, free, required_values(rng, free))
            if construct(cls, values) is None:
                env = {**kb.defaults(spec), **values}
                wrong |= {c.text for c in spec.constraints if c.source != "hand"
                          and names_in(c.tree) <= set(env) and not holds(c, Env(env))}
        if wrong:
            spec = replace(spec, constraints=tuple(c for c in spec.constraints
                                                   if c.text not in wrong))
        ok = 0
        for _ in range(n):
            values = draw_all(rng, spec, required_values(rng, spec))
            err = construct(cls, values)
            if err is None:
                ok += 1
            elif sum(f.startswith(spec.api + "(") for f in failures) < 2:
                failures.append(f"{spec.api}({values}) -> {err}")
        rates[spec.api] = (ok, n)
        out.append(spec)
    return out, rates, failures


# ---- boundary probing -------------------------------------------------------------------
def probe_input(library: str, api: str, values: dict[str, Any]) -> np.ndarray | None:
    """A small input the layer should take: a rank it accepts (batch 2, sizes 6) with the
    context params' sizes in place; integer indices for embeddings; None for layers with
    several tensor inputs."""
    ctx = kb.context(library, api)
    if ctx.get("arity", 1) != 1:
        return None
    lo, hi = ctx.get("ranks", [3, 3])
    rank = hi if hi <= 5 else max(lo, 3)
    shape = [2] + [6] * (rank - 1)
    for param, axis in ctx.get("match", {}).items():
        v = values.get(param)
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            shape[int(axis)] = v
        elif isinstance(v, tuple | list) and v and int(axis) == -1:
            shape[-len(v):] = list(v)
    if ctx.get("input") == "indices":
        return np.random.default_rng(0).integers(0, 3, size=shape[:2]).astype(np.int64)
    return np.random.default_rng(0).standard_normal(shape).astype(np.float32)


def probe(library: str, cls: type, api: str, values: dict[str, Any],
          forward: bool = True) -> str | None:
    """None when the layer is built from ``values`` and (``forward``) runs on
    ``probe_input``; else the refusal as ``Type: message``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            layer = cls(**values)
            x = probe_input(library, api, values) if forward else None
            if x is not None:
                if library == "torch":
                    import torch

                    with torch.no_grad():
                        layer(torch.from_numpy(x))
                else:
                    layer(x)
        except Exception as exc:  # noqa: BLE001 - any refusal is data here
            return f"{type(exc).__name__}: {' '.join(str(exc).split())[:160]}"
    return None


def boundary_review(library: str, seed: int = 1) -> tuple[int, list[dict[str, Any]]]:
    """Each API x param with a boundary value, tried on top of drawn required values.
    Returns (how many were tried, the ones the layer accepted: constructor and, where the
    same layer with legal values runs on the probe input, the forward pass too)."""
    rng = np.random.default_rng(seed)
    classes = dict(layer_classes(library))
    tried, accepted = 0, []
    for api, spec in kb.load_kb(library).items():
        base = required_values(rng, spec)
        if not {p.name for p in spec.params if not p.optional} <= set(base):
            continue
        forward = probe_input(library, api, base) is not None and probe(
            library, classes[api], api, base) is None
        for p in spec.params:
            value = kb.boundary_value(rng, spec, p.name)
            if value is None:
                continue
            tried += 1
            if probe(library, classes[api], api, {**base, p.name: value}, forward) is None:
                accepted.append({"api": api, "param": p.name, "value": value,
                                 "legal": kb.context(library, api).get("legal", {}).get(
                                     p.name, "enum"), "forward": forward})
    return tried, accepted


REVIEW_FILE = kb.DATA_DIR / "boundary_review.json"


def write_review(library: str, accepted: list[dict[str, Any]]) -> None:
    """Record the accepted boundary values of ``library`` in ``data/boundary_review.json``,
    keeping the verdict and note a person gave an (api, param) before. New entries get
    verdict "candidate" (a possible boundary bug: an illegal value silently accepted) or
    "unverified" (constructor only: no probe input runs that layer)."""
    review = json.loads(REVIEW_FILE.read_text(encoding="utf-8")) if REVIEW_FILE.exists() \
        else {}
    old = {(e["api"], e["param"]): e for e in review.get(library, [])}
    rows = []
    for a in accepted:
        prev = old.get((a["api"], a["param"]), {})
        rows.append({"api": a["api"], "param": a["param"], "value": a["value"],
                     "legal": a["legal"],
                     "verdict": prev.get("verdict", "candidate" if a["forward"]
                                         else "unverified"),
                     "note": prev.get("note", "")})
    review[library] = rows
    text = "{\n" + ",\n".join(
        f" {json.dumps(lib)}: [\n" + ",\n".join("  " + json.dumps(r) for r in entries)
        + "\n ]" for lib, entries in sorted(review.items())) + "\n}\n"
    REVIEW_FILE.write_text(text, encoding="utf-8")


# ---- main -------------------------------------------------------------------------------
def extract(library: str, calibrate_n: int = 20) -> dict[str, Any]:
    """Write the library's spec and context files; return a summary."""
    hand_all = json.loads(HAND_FILE.read_text(encoding="utf-8"))
    hand = hand_all[library]
    stats: dict[str, int] = {}
    classes = dict(layer_classes(library))
    specs: list[LibSpec] = []
    contexts: dict[str, Any] = {}
    for api, cls in classes.items():
        spec, legal_map = build_spec(library, api, cls, hand, stats)
        specs.append(spec)
        ctx = context_for(library, api.rsplit(".", 1)[1], spec)
        if legal_map:
            ctx["legal"] = legal_map
        contexts[api] = ctx
    spec_path, ctx_path = kb._files(library)
    version = libraries.version(library)
    dump(library, specs, spec_path, {library: version})
    ctx_path.write_text(json.dumps({"format": 1, "library": library, "apis": contexts},
                                   indent=1, sort_keys=False) + "\n", encoding="utf-8")
    kb._kb.cache_clear()
    kb._contexts.cache_clear()
    summary: dict[str, Any] = {"library": library, "apis": len(specs), "stats": stats}
    if calibrate_n:
        specs = list(kb.load_kb(library).values())
        specs, rates, failures = calibrate(specs, classes, calibrate_n)
        dropped = sum(len(a.constraints) for a in kb.load_kb(library).values()) - sum(
            len(s.constraints) for s in specs)
        summary["constraints_dropped_by_calibration"] = dropped
        dump(library, specs, spec_path, {library: version})
        kb._kb.cache_clear()
        ok = sum(a for a, _ in rates.values())
        tried = sum(b for _, b in rates.values())
        summary["valid_construction_rate"] = round(ok / max(tried, 1), 4)
        summary["worst"] = sorted(((a / b, api) for api, (a, b) in rates.items()))[:15]
        summary["failures"] = failures[:60]
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dlfuzz.specgen.program_knowledge")
    parser.add_argument("library", choices=sorted(kb.FILES))
    parser.add_argument("--calibrate", type=int, default=20, metavar="N",
                        help="constructions per API for the calibration (0: none)")
    parser.add_argument("--similarity", action="store_true",
                        help="also recompute the similarity table (loads the embedding model)")
    parser.add_argument("--boundary", action="store_true",
                        help="only list boundary values the layers accept (no extraction)")
    args = parser.parse_args(argv)
    if args.boundary:
        tried, accepted = boundary_review(args.library)
        write_review(args.library, accepted)
        json.dump({"tried": tried, "accepted": accepted}, sys.stdout, indent=1, default=str)
        print()
        return 0
    summary = extract(args.library, args.calibrate)
    if args.similarity:
        from dlfuzz.engines.program.similarity import write_table

        write_table(args.library)
        summary["similarity"] = "written"
    json.dump(summary, sys.stdout, indent=1, default=str)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["build_spec", "calibrate", "construct", "draw_all", "extract", "layer_classes",
           "required_values", "Path"]
