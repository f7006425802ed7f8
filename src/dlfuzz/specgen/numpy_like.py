"""Build or refresh the numpy spec set from ``numpy_catalog.py`` and the libraries.

Run ``python -m dlfuzz.specgen.numpy_like [--only NAME ...] [--no-calibrate]``. It writes
``engines/api/data/numpy.json`` (format 2: numpy's functions, each with its shape rule)
and ``engines/api/data/counterparts/numpy.json`` (the same function in torch, jax and tf,
as same-name counterparts), and imports numpy, torch, jax and TensorFlow in *this*
process (never done at fuzzing time):

1. **derive**: a library-neutral entry per function (``to_format2`` turns it into the
   API and its counterparts): parameters come from ``inspect.signature`` of the numpy function plus the
   small ``KIND_TABLE`` (name -> kind), unless the catalog lists them; defaults are
   numpy's. Every keyword each library would receive is checked against that library's
   signature (``inspect`` where it works, TorchScript operator schemas for torch
   builtins); an optional parameter some library does not accept is dropped, so specs
   only hold what all bound libraries understand.
2. **calibrate**: every spec runs with every dtype on all four libraries in the sandboxed
   pool; a dtype stays only if the libraries accept it and agree (status, output dtype,
   shape, values) on ordinary inputs. A dtype one library rejects would only produce
   "torch does not support uint8" reports, which are not bugs.

APIs already in the files and not named with ``--only`` are kept as they are, so hand
edits survive a refresh.
"""

from __future__ import annotations

import argparse
import collections
import inspect
import json
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from dlfuzz.cases import Outcome
from dlfuzz.engines.api.counterparts.model import DATA_DIR as COUNTERPARTS_DIR
from dlfuzz.engines.api.libspecs import (
    DATA_DIR,
    DTYPE_FAMILIES,
    FORMAT,
    SPEC_SETS,
    LibSpec,
    load_file,
)
from dlfuzz.engines.api.libspecs import dump as dump_specs
from dlfuzz.libraries import get, resolve
from dlfuzz.specgen.numpy_catalog import Seed, catalog

NUMPY_SPEC_FILE = DATA_DIR / SPEC_SETS["numpy"]
NUMPY_COUNTERPARTS_FILE = COUNTERPARTS_DIR / "numpy.json"
SET_COMMENT = ("numpy-like functions: numpy's own, with the same function in torch, "
               "jax.numpy and tf.experimental.numpy (or tf.linalg) as counterparts")

LIBRARIES = ("numpy", "torch", "jax", "tf")
MODULES = {n: get(n).numpy_module for n in LIBRARIES}
LINALG_MODULES = {n: get(n).linalg_module for n in LIBRARIES}
TORCH_RENAME = {"axis": "dim", "keepdims": "keepdim", "axis1": "dim1", "axis2": "dim2"}

# numpy parameter name -> how to generate it, for parameters the catalog does not list.
KIND_TABLE: dict[str, dict[str, Any]] = {
    **{n: {"kind": "tensor"} for n in ("x", "x1", "x2", "a", "b", "arr", "ary", "m", "v",
                                       "condition", "y", "a1", "a2", "val", "z")},
    "axis": {"kind": "axis", "of": "a"},
    "keepdims": {"kind": "bool"},
    "decimals": {"kind": "int", "range": [-2, 4]},
    "ddof": {"kind": "int", "range": [0, 2]},
}
SKIP = frozenset({"out", "where", "casting", "order", "subok", "signature", "dtype",
                  "initial", "kind", "like", "copy", "device", "mean", "correction",
                  "stable", "sorter", "optimize", "sparse", "extobj"})


# ---- derivation -----------------------------------------------------------------------------
def default_target(lib: str, name: str) -> str:
    if name.startswith("linalg."):
        return f"{LINALG_MODULES[lib]}.{name.split('.', 1)[1]}"
    return f"{MODULES[lib]}.{name}"


def accepted_keywords(lib: str, target: str) -> set[str] | None:
    """Keyword names the function takes; None when it takes any (``**kwargs``)."""
    fn = resolve(target)
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        sig = None
    if sig is not None:
        names = set()
        for p in sig.parameters.values():
            if p.kind is p.VAR_KEYWORD:
                return None
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
                names.add(p.name)
        return names
    if lib == "torch":
        import torch

        op = target.split(".", 1)[1].replace(".", "_")
        names = set()
        for schema in torch._C._jit_get_schemas_for_operator(f"aten::{op}"):
            for arg in schema.arguments:
                names.add("input" if arg.name == "self" else arg.name)
        return names or None
    return None


def _json_default(value: Any) -> Any:
    if value is inspect.Parameter.empty or value is np._NoValue:
        return None
    if isinstance(value, bool | int | float | str) or value is None:
        return value
    if isinstance(value, tuple):
        return list(value)
    return None


def derive(seed: Seed) -> tuple[dict[str, Any], list[str]]:
    """The library-neutral entry of one seed (see ``to_format2``), and notes on what was
    dropped or adjusted."""
    name = seed["name"]
    notes: list[str] = []
    bindings: dict[str, dict[str, Any]] = {}
    for lib in LIBRARIES:
        raw = seed["bindings"].get(lib)
        b = {"target": raw} if isinstance(raw, str) else dict(raw or {})
        b.setdefault("target", default_target(lib, name))
        bindings[lib] = b
    np_fn = resolve(bindings["numpy"]["target"])
    try:
        np_sig: inspect.Signature | None = inspect.signature(np_fn)
    except (TypeError, ValueError):
        np_sig = None
    params = [dict(p) for p in seed["params"]] if seed["params"] is not None else None
    if params is None:
        if np_sig is None:
            raise SystemExit(f"{name}: numpy signature unavailable; list params in catalog")
        params = []
        for p in np_sig.parameters.values():
            if p.name in SKIP or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            if p.name not in KIND_TABLE:
                if p.default is inspect.Parameter.empty:
                    raise SystemExit(f"{name}: required numpy parameter {p.name!r} has no "
                                     "entry in KIND_TABLE; add one or list params")
                continue
            entry = {"name": p.name, **KIND_TABLE[p.name]}
            if p.default is not inspect.Parameter.empty:
                entry["optional"] = True
                entry["default"] = _json_default(p.default)
            params.append(entry)
    if np_sig is not None:  # numpy's defaults are the canonical ones
        for entry in params:
            np_param = np_sig.parameters.get(entry["name"])
            if np_param is not None and entry.get("optional") and entry.get("default") is None:
                entry["default"] = _json_default(np_param.default)
    names = {p["name"] for p in params}
    for lib, b in bindings.items():
        if lib == "torch":
            rename = {k: v for k, v in TORCH_RENAME.items() if k in names}
            rename.update(b.get("rename", {}))
            if rename:
                b["rename"] = rename
    dropped: set[str] = set()
    for lib, b in bindings.items():
        accepted = accepted_keywords(lib, b["target"])
        if accepted is None:
            continue
        positional = {a.lstrip("*") for a in b.get("args", [])}
        for entry in params:
            if entry["kind"] in ("tensor", "tensors") or entry["name"] in positional \
                    or entry["name"] in b.get("drop", []):
                continue
            keyword = b.get("rename", {}).get(entry["name"], entry["name"])
            if keyword not in accepted:
                if not entry.get("optional"):
                    raise SystemExit(f"{name}: {b['target']} does not accept required "
                                     f"keyword {keyword!r}; fix the catalog entry")
                dropped.add(entry["name"])
                notes.append(f"{entry['name']}: dropped, {b['target']} has no {keyword!r}")
        for keyword in b.get("extra", {}):
            if keyword not in accepted:
                raise SystemExit(f"{name}: {b['target']} has no keyword {keyword!r}")
    params = [p for p in params if p["name"] not in dropped]
    for b in bindings.values():
        for key in ("rename", "convert"):
            if key in b:
                b[key] = {k: v for k, v in b[key].items() if k not in dropped}
                if not b[key]:
                    del b[key]
    spec: dict[str, Any] = {"name": name, "group": seed["group"]}
    if seed["shapes"] != "any":
        spec["shapes"] = seed["shapes"]
    spec["dtypes"] = seed["dtypes"]
    spec["params"] = params
    spec["bindings"] = bindings
    if not seed["specials"]:
        spec["specials"] = False
    if seed["unsupported"]:
        spec["unsupported"] = seed["unsupported"]
    text = "; ".join(filter(None, [seed["notes"]] + notes))
    if text:
        spec["notes"] = text
    return spec, notes


# ---- agreement ------------------------------------------------------------------------------
TOLERANCE = {"float64": (1e-7, 1e-10), "complex128": (1e-7, 1e-10), "float32": (2e-4, 1e-5),
             "complex64": (2e-4, 1e-5), "float16": (2e-2, 1e-3), "bfloat16": (5e-2, 1e-2)}


def disagreement(outcomes: Mapping[str, Outcome], reference: str = "numpy") -> str | None:
    """Why the outcomes of one case differ (status, count, dtype, shape, values), or None."""
    bad = [f"{n}: {o.status} {o.exc_type}: {' '.join(o.message.split())[:160]}"
           for n, o in sorted(outcomes.items()) if not o.ok]
    if bad:
        return "; ".join(bad)
    ref = outcomes[reference]
    for name, o in outcomes.items():
        if name == reference:
            continue
        if len(o.outputs) != len(ref.outputs):
            return f"{name}: {len(o.outputs)} outputs, {reference}: {len(ref.outputs)}"
        for i, (a, b) in enumerate(zip(ref.outputs, o.outputs, strict=True)):
            if a.dtype != b.dtype:
                return f"{name}: output {i} dtype {b.dtype}, {reference}: {a.dtype}"
            if a.shape != b.shape:
                return f"{name}: output {i} shape {b.shape}, {reference}: {a.shape}"
            x, y = a.to_numpy(), b.to_numpy()
            if a.dtype in TOLERANCE:
                rtol, atol = TOLERANCE[a.dtype]
                wide = np.complex128 if a.dtype.startswith("complex") else np.float64
                x, y = x.astype(wide), y.astype(wide)
                scale = float(np.nanmax(np.abs(x[np.isfinite(x)]), initial=0.0))
                if not np.allclose(x, y, rtol=rtol, atol=atol * max(scale, 1.0),
                                   equal_nan=True):
                    with np.errstate(invalid="ignore"):
                        diff = np.abs(x - y)
                    worst = float(np.max(diff, initial=0.0, where=np.isfinite(diff)))
                    return f"{name}: output {i} values differ (max abs diff {worst:.3g})"
            elif not np.array_equal(x, y):
                return f"{name}: output {i} values differ"
    return None


# ---- calibration ----------------------------------------------------------------------------
def calibrate(specs: list[LibSpec], counterparts: Mapping[str, list[Any]],
              values_per_dtype: int = 12, keep_ratio: float = 0.75, seed: int = 1
              ) -> dict[str, tuple[list[str], dict[str, str]]]:
    """API -> (dtypes kept, dtype -> reason dropped), by running every library."""
    from dlfuzz.engines.api.rulegen import RuleGenerator
    from dlfuzz.engines.api.values import Profile
    from dlfuzz.executor.pool import Pool, WorkerConfig

    gen = RuleGenerator(seed)
    plain = Profile()
    jobs: list[tuple[str, str]] = []
    cases = []
    for spec in specs:
        for dtype in spec.dtypes:
            for _ in range(values_per_dtype // 4):
                for case in gen.group(spec, 4, counterparts.get(spec.api, ()), dtype=dtype,
                                      profile=plain):
                    jobs.append((spec.api, dtype))
                    cases.append(case)
    with Pool([WorkerConfig(lib) for lib in LIBRARIES]) as pool:
        pool.start()
        if pool.unavailable:
            raise SystemExit(f"backends unavailable: {pool.unavailable}")
        results = []
        for start in range(0, len(cases), 500):
            results += pool.run(cases[start:start + 500])
            print(f"calibrated {len(results)}/{len(cases)} cases", file=sys.stderr)
    tally: dict[tuple[str, str], list[str | None]] = collections.defaultdict(list)
    for job, outcomes in zip(jobs, results, strict=True):
        if job[1] == "bfloat16":  # numpy declines bfloat16 by design: judge the others
            outcomes = {b: o for b, o in outcomes.items() if b != "numpy"}
            tally[job].append(disagreement(outcomes, reference="torch"))
        else:
            tally[job].append(disagreement(outcomes))
    out: dict[str, tuple[list[str], dict[str, str]]] = {}
    for spec in specs:
        kept, reasons = [], {}
        for dtype in spec.dtypes:
            verdicts = tally[(spec.api, dtype)]
            good = sum(v is None for v in verdicts)
            if verdicts and good / len(verdicts) >= keep_ratio:
                kept.append(dtype)
            else:
                reasons[dtype] = collections.Counter(v for v in verdicts if v).most_common(1)[0][0]
        out[spec.api] = (kept, reasons)
    return out


COMPILED = {"jax-jit": "jax", "torch-compile": "torch", "tf-xla": "tf"}
_UNSUPPORTED = re.compile(r"unsupported operations|not supported|no registered|could not find "
                          r"device|not implemented|no kernel", re.I)


def calibrate_compiled(specs: list[LibSpec], counterparts: Mapping[str, list[Any]],
                       backends: tuple[str, ...] = tuple(COMPILED), seed: int = 2
                       ) -> dict[str, dict[str, str]]:
    """API -> {"backend[:dtype]": reason} where a compiled mode rejects, as unsupported,
    what its eager mode computes. Other compiled failures are printed: candidate bugs."""
    from dlfuzz.engines.api.rulegen import RuleGenerator
    from dlfuzz.engines.api.values import Profile
    from dlfuzz.executor.pool import Pool, WorkerConfig

    gen = RuleGenerator(seed)
    cases = [gen.group(spec, 1, counterparts.get(spec.api, ()), dtype=dtype,
                       profile=Profile())[0]
             for spec in specs for dtype in spec.dtypes]
    eager = tuple(dict.fromkeys(COMPILED[b] for b in backends))
    with Pool([WorkerConfig(b) for b in eager + backends]) as pool:
        pool.start()
        results = []
        for start in range(0, len(cases), 200):
            results += pool.run(cases[start:start + 200])
            print(f"compiled {len(results)}/{len(cases)} cases", file=sys.stderr)
    found: dict[str, dict[str, str]] = collections.defaultdict(dict)
    for case, outcomes in zip(cases, results, strict=True):
        dtype = case.tensors[0].dtype if case.tensors else next(
            v.name for _, v in case.params if hasattr(v, "name"))
        for backend in backends:
            got, ref = outcomes[backend], outcomes[COMPILED[backend]]
            if got.ok or not ref.ok:
                continue
            text = " ".join(f"{got.exc_type}: {got.message}".split())
            if _UNSUPPORTED.search(text):
                short = re.sub(r"\s*__inference\S*", "", text).split(" (")[0]
                found[case.api][f"{backend}:{dtype}"] = short[:100]
            else:
                print(f"{case.api} {dtype}: {backend} fails where {COMPILED[backend]} "
                      f"works (candidate bug): {text[:200]}", file=sys.stderr)
    out: dict[str, dict[str, str]] = {}
    for spec in specs:
        entries = found.get(spec.api, {})
        for backend in backends:
            keys = [k for k in entries if k.startswith(backend + ":")]
            if keys and len(keys) == len(spec.dtypes):  # every dtype: the op itself
                reason = entries[keys[0]]
                for k in keys:
                    del entries[k]
                entries[backend] = reason
        if entries:
            out[spec.api] = dict(sorted(entries.items()))
    return out


# ---- format 2: the numpy spec set and its counterparts ------------------------------------
COUNTERPART_LIBRARIES = ("torch", "jax", "tf")
_TENSOR_KINDS = ("tensor", "tensors")


def _dtype_value(value: Any) -> Any:
    """A derived constant in the counterparts file's spelling (``{"dtype": name}``)."""
    if isinstance(value, dict) and set(value) == {"$dtype"}:
        return {"dtype": value["$dtype"]}
    return value


def to_format2(entry: Mapping[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A derived numpy-like function as a format-2 API of the numpy spec set and the
    same-name counterparts that compute it in torch, jax and tf.

    ``entry`` is what ``derive`` builds: numpy's canonical parameters with their kinds and
    one binding per library. numpy's binding is the API's own call (tensors, and the
    names its ``args`` list, positional; the rest by keyword); a constant keyword it adds
    (argsort's ``kind="stable"``) becomes a one-value enum parameter, which the other
    libraries drop unless they take the same keyword.
    """
    bindings = entry["bindings"]
    own = bindings["numpy"]
    raw_params = list(entry["params"])
    tensors = [p["name"] for p in raw_params if p["kind"] in _TENSOR_KINDS]
    passing: dict[str, str] = {}
    for arg in own.get("args", tensors):
        passing[arg.lstrip("*")] = "variadic" if arg.startswith("*") else "positional"
    params: list[dict[str, Any]] = []
    for p in raw_params:
        kind = p["kind"]
        q: dict[str, Any] = {"name": p["name"], "type": [kind]}
        if p.get("optional"):
            q["optional"] = True
        if "default" in p:
            q["default"] = p["default"]
        q["pass"] = passing.get(p["name"], "keyword")
        if kind in _TENSOR_KINDS:
            q["rank"] = p.get("rank", [0, 5])
            for key in ("role", "domain", "nonempty", "count"):
                if key in p:
                    q[key] = p[key]
            if "values" in p:
                q["fill"] = p["values"]
        elif kind == "dtype":
            if "values" in p:
                q["dtypes"] = p["values"]
        elif kind == "enum":
            q["values"] = p["values"]
        elif kind in ("axis", "axes", "perm"):
            for key in ("of", "insert", "distinct", "size"):
                if key in p:
                    q[key] = p[key]
        elif kind in ("int", "float", "ints"):
            q["range"] = p.get("range", [0, 3])
            if kind == "ints":
                q["length"] = p.get("length", [1, 3])
        elif kind == "shape":
            q["rank"] = p.get("rank", [0, 3])
        for key in ("requires", "doc"):
            if key in p:
                q[key] = p[key]
        params.append(q)
    constants = dict(own.get("extra", {}))
    for key, value in constants.items():
        params.append({"name": key, "type": ["enum"], "values": [value], "pass": "keyword",
                       "doc": "a constant numpy is called with"})
    api: dict[str, Any] = {"api": own["target"], "group": entry["group"],
                           "shapes": entry.get("shapes", "any"),
                           "dtypes": list(entry.get("dtypes", ["all"])), "params": params,
                           "constraints": []}
    if entry.get("specials", True) is False:
        api["specials"] = False
    for key in ("unsupported", "notes"):
        if entry.get(key):
            api[key] = entry[key]
    counterparts = []
    for lib in COUNTERPART_LIBRARIES:
        b = bindings.get(lib)
        if not b:
            continue
        cp: dict[str, Any] = {"api": own["target"], "library": lib, "kind": "same-name",
                              "target": b["target"], "args": list(b.get("args", tensors))}
        extra = {k: _dtype_value(v) for k, v in b.get("extra", {}).items()}
        drop = list(b.get("drop", []))
        for key, value in constants.items():
            if extra.get(key) == value:
                del extra[key]  # the parameter passes it
            else:
                drop.append(key)
        for key, value in (("rename", b.get("rename")), ("extra", extra),
                           ("convert", b.get("convert")), ("drop", drop)):
            if value:
                cp[key] = value
        counterparts.append(cp)
    return api, counterparts


# ---- writing --------------------------------------------------------------------------------
def compress_dtypes(dtypes: list[str]) -> list[str]:
    """Spell whole families by name ("float") so the JSON stays readable."""
    out: list[str] = []
    rest = list(dtypes)
    for family in ("float", "int", "uint", "complex", "bool"):
        members = DTYPE_FAMILIES[family]
        if len(members) > 1 and all(m in rest for m in members):
            out.append(family)
            rest = [d for d in rest if d not in members]
    return out + rest


def loaded(apis: list[dict[str, Any]], counterparts: list[dict[str, Any]], beside: Path
           ) -> tuple[list[LibSpec], dict[str, list[Any]]]:
    """Format-2 APIs and counterparts as the runtime reads them (through its own loaders,
    so what is written is what loads)."""
    from dlfuzz.engines.api.counterparts.model import from_json

    tmp = beside.with_suffix(".tmp.json")
    tmp.write_text(json.dumps({"format": FORMAT, "library": "numpy", "apis": apis}),
                   encoding="utf-8")
    try:
        specs = load_file(tmp)
    finally:
        tmp.unlink()
    cps: dict[str, list[Any]] = {}
    for raw in counterparts:
        cp = from_json(raw, beside, 0)
        cps.setdefault(cp.api, []).append(cp)
    return specs, cps


def write(apis: list[dict[str, Any]], counterparts: list[dict[str, Any]],
          spec_path: Path = NUMPY_SPEC_FILE, counterparts_path: Path = NUMPY_COUNTERPARTS_FILE
          ) -> None:
    """Write the numpy spec set and its counterparts file, each checked by the runtime's
    loaders first."""
    from dlfuzz.engines.api.counterparts.model import dump as dump_counterparts

    specs, cps = loaded(apis, counterparts, spec_path)
    dump_specs("numpy", specs, spec_path)
    dump_counterparts("numpy", [cp for group in cps.values() for cp in group],
                      counterparts_path, header={"comment": SET_COMMENT})


def _existing(spec_path: Path, counterparts_path: Path
              ) -> tuple[dict[str, dict[str, Any]], dict[str, list[dict[str, Any]]]]:
    """The APIs and counterparts already written (file form), to keep hand edits."""
    from dlfuzz.engines.api.counterparts.model import load_counterparts
    from dlfuzz.engines.api.counterparts.model import to_json as cp_json
    from dlfuzz.engines.api.libspecs import to_json

    apis = {s.api: to_json(s) for s in load_file(spec_path)} if spec_path.exists() else {}
    cps: dict[str, list[dict[str, Any]]] = {}
    if counterparts_path.exists():
        for api, group in load_counterparts("numpy", counterparts_path).items():
            cps[api] = [cp_json(cp) for cp in group]
    return apis, cps


def _numpy_target(seed: Seed) -> str:
    """The API path of a seed in the spec set (numpy's own function)."""
    raw = seed["bindings"].get("numpy")
    if isinstance(raw, str):
        return raw
    if isinstance(raw, dict) and "target" in raw:
        return str(raw["target"])
    return default_target("numpy", seed["name"])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m dlfuzz.specgen.numpy_like")
    parser.add_argument("--out", type=Path, default=NUMPY_SPEC_FILE,
                        help="the spec set file (format 2)")
    parser.add_argument("--counterparts-out", type=Path, default=NUMPY_COUNTERPARTS_FILE,
                        help="its counterparts file")
    parser.add_argument("--only", nargs="*", default=None, help="rebuild just these functions")
    parser.add_argument("--no-calibrate", action="store_true")
    parser.add_argument("--compiled", action="store_true",
                        help="also find what jax-jit/torch-compile/tf-xla cannot run "
                             "(slow: minutes of compilation)")
    parser.add_argument("--fresh", action="store_true",
                        help="ignore the existing files (hand edits are lost)")
    args = parser.parse_args(argv)

    existing, existing_cps = ({}, {}) if args.fresh else _existing(args.out,
                                                                     args.counterparts_out)
    seeds = [s for s in catalog() if args.only is None or s["name"] in args.only]
    fresh: dict[str, dict[str, Any]] = {}
    fresh_cps: dict[str, list[dict[str, Any]]] = {}
    for s in seeds:
        entry, notes = derive(s)
        api, cps = to_format2(entry)
        fresh[api["api"]], fresh_cps[api["api"]] = api, cps
        for note in notes:
            print(f"{s['name']}: {note}", file=sys.stderr)
    if args.no_calibrate:  # keep the calibrated dtypes of APIs already in the file
        for name, api in fresh.items():
            if name in existing:
                api["dtypes"] = existing[name]["dtypes"]
    order = [_numpy_target(s) for s in catalog()]
    order += [n for n in fresh if n not in order]
    order += [n for n in existing if n not in order]
    merged = [a for a in (fresh.get(n) or existing.get(n) for n in order) if a is not None]
    cps_of = {**existing_cps, **fresh_cps}
    if not args.no_calibrate and fresh:
        # The catalog's dtypes are the candidates.
        specs, cps_by_api = loaded(list(fresh.values()),
                                   [c for n in fresh for c in fresh_cps[n]], args.out)
        verdicts = calibrate(specs, cps_by_api)
        for api in merged:
            if api["api"] in verdicts:
                kept, reasons = verdicts[api["api"]]
                api["dtypes"] = compress_dtypes(kept)
                for dtype, why in reasons.items():
                    print(f"{api['api']}: {dtype} dropped: {why}", file=sys.stderr)
        empty = [a["api"] for a in merged if not a["dtypes"]]
        if empty:
            print(f"no dtype survived, removed: {', '.join(empty)}", file=sys.stderr)
        merged = [a for a in merged if a["dtypes"]]
    if args.compiled:
        specs, cps_by_api = loaded([a for a in merged if a["api"] in fresh],
                                   [c for n in fresh for c in fresh_cps[n]], args.out)
        limits = calibrate_compiled(specs, cps_by_api)
        for api in merged:
            if api["api"] in fresh:
                known = {**api.get("unsupported", {}), **limits.get(api["api"], {})}
                if known:
                    api["unsupported"] = known
    write(merged, [c for a in merged for c in cps_of.get(a["api"], [])], args.out,
          args.counterparts_out)
    print(f"wrote {len(merged)} APIs to {args.out} and their counterparts to "
          f"{args.counterparts_out}", file=sys.stderr)


if __name__ == "__main__":
    main()
