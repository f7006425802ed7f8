"""How the libraries spell dtypes and shapes in their messages and docs, in dlfuzz names.

Shared by the error-message rules and by offline extraction (``specgen.docstrings``):
"Float", "DT_HALF", "torch.FloatTensor", "tf.float32" and "[2, 3]" mean the same thing
wherever they are read.
"""

from __future__ import annotations

import re

from dlfuzz.cases import COMPLEX_DTYPES, DTYPES, FLOAT_DTYPES, INT_DTYPES

DTYPE_ALIASES = {"half": "float16", "float": "float32", "double": "float64",
                 "cfloat": "complex64", "cdouble": "complex128", "long": "int64",
                 "int": "int32", "short": "int16", "byte": "uint8", "char": "int8",
                 "boolean": "bool", "bool": "bool"}


def dtype_names(words: list[str]) -> tuple[str, ...]:
    """TF/torch dtype spellings -> dlfuzz dtype names, dropping those dlfuzz lacks
    (string, qint8, resource, variant: they cannot be generated)."""
    out: list[str] = []
    for w in words:
        w = w.strip("`'\" ").lower().removeprefix("tf.").removeprefix("torch.")
        name = DTYPE_ALIASES.get(w, w)
        if name in DTYPES and name not in out:
            out.append(name)
    return tuple(out)


TORCH_DTYPES = {"complexfloat": "complex64", "complexdouble": "complex128",
                "floattensor": "float32", "doubletensor": "float64", "longtensor": "int64",
                "inttensor": "int32", "halftensor": "float16", "booltensor": "bool",
                "bytetensor": "uint8", "uint16": "uint16", "uint32": "uint32",
                "uint64": "uint64", "bfloat16": "bfloat16"}
FAMILY_WORDS = {"floating": FLOAT_DTYPES, "float": FLOAT_DTYPES, "integer": INT_DTYPES,
                "int": INT_DTYPES, "bool": ("bool",), "boolean": ("bool",),
                "complexfloating": COMPLEX_DTYPES, "complex": COMPLEX_DTYPES,
                "inexact": FLOAT_DTYPES + COMPLEX_DTYPES,
                "signedinteger": INT_DTYPES[:4], "unsignedinteger": INT_DTYPES[4:]}
SHAPE = r"[\[(][\d, ]*[\])]"


def dtype_of(word: str) -> str | None:
    """A dtype as any of the libraries spells it in messages: Float, DT_HALF, int32,
    torch.FloatTensor, ComplexFloat, tf.float32 -> dlfuzz names."""
    w = word.strip("'\"`.,").lower().split(".")[-1].removeprefix("dt_")
    if w in TORCH_DTYPES:
        return TORCH_DTYPES[w]
    got = dtype_names([w])
    return got[0] if got else None


def shape_of(text: str) -> tuple[int, ...]:
    """(2, 3) from "[2, 3]", "[2,3]", "(2, 3)", "(2,)", "2x3", "[]"."""
    return tuple(int(n) for n in re.findall(r"-?\d+", text))
