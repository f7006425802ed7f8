"""Same-name counterpart candidates of TF.js ops in TensorFlow (tfjs -> tf).

TF.js mirrors TensorFlow's op set under camelCase names (``tf.squaredDifference`` is
``tensorflow.math.squared_difference``), with JavaScript's positional parameters instead
of keywords. This table says, per op, which TensorFlow function computes the same thing
and how the tfjs parameters map onto it: ``args`` are passed by position (while present),
everything else by keyword under its ``rename`` name, ``extra`` adds keywords for a tf
parameter without a default that tfjs defaults (``concat``'s axis 0), and
``requires_default`` marks tfjs parameters tf cannot express. The table is data, in
``hints/tfjs_counterparts.json``.

Nothing here is trusted: ``python -m dlfuzz.specgen.counterparts.tfjs``
writes the candidates (``--out``), and ``python -m dlfuzz.specgen.counterparts
validate --library tfjs --kinds precision --candidates FILE`` keeps those that agree with
tfjs-cpu on generated valid inputs, per dtype (DLLens Eq. 1 with dlfuzz's tolerances).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from dlfuzz.engines.api.counterparts.model import Counterpart, dump
from dlfuzz.specgen import hintfiles

TF = "tensorflow"
_TABLES = hintfiles.load("tfjs_counterparts")
UNARY: dict[str, str] = _TABLES["unary"]  # tfjs op (parameter x) -> TensorFlow function
BINARY: dict[str, str] = _TABLES["binary"]  # tfjs op (a, b) -> function (x, y by position)
REDUCE: dict[str, str] = _TABLES["reduce"]  # tfjs op (x, axis, keepDims) -> tf.math function
# tfjs op -> {target, args, rename, extra, requires_default}
SPECIAL: dict[str, dict[str, Any]] = _TABLES["special"]


def snake(name: str) -> str:
    """``keepDims`` -> ``keep_dims``: TensorFlow's spelling of a tfjs parameter name."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", lambda m: "_" + m.group(1).lower(), name)


def candidates() -> list[Counterpart]:
    """Every candidate of the table (unvalidated)."""
    out: list[Counterpart] = []

    def add(api: str, target: str, args: list[str], rename: dict[str, str] | None = None,
            extra: dict[str, Any] | None = None, requires: dict[str, Any] | None = None
            ) -> None:
        # a parameter after an absent one goes by keyword: under tf's snake_case name
        names = {a: snake(a) for a in args if snake(a) != a} | dict(rename or {})
        out.append(Counterpart(api, "tf", "same-name", f"{TF}.{target}", args=tuple(args),
                               rename=tuple(names.items()),
                               extra=tuple((extra or {}).items()),
                               requires_default=tuple((requires or {}).items())))

    for op, target in UNARY.items():
        add(f"tf.{op}", target, ["x"])
    for op, target in BINARY.items():
        names = {"pow": ["base", "exp"], "bitwiseAnd": ["x", "y"]}.get(op, ["a", "b"])
        add(f"tf.{op}", target, names)
    for op, target in REDUCE.items():
        add(f"tf.{op}", f"math.{target}", ["x", "axis", "keepDims"], {"keepDims": "keepdims"})
    for api, call in SPECIAL.items():
        add(api, call["target"], call["args"], call["rename"], call["extra"],
            call["requires_default"])
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m dlfuzz.specgen.counterparts.tfjs",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True, help="candidates file to write")
    ap.add_argument("--status", default="unvalidated candidates",
                    help="the header's status field")
    args = ap.parse_args(argv)
    cands = candidates()
    dump("tfjs", cands, args.out, header={"status": args.status})
    print(json.dumps({"candidates": len(cands), "apis": len({c.api for c in cands})}),
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
