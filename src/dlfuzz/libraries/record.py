"""The ``Library`` record: every fact dlfuzz keeps about one library under test.

Before this record existed the same facts lived in a dozen tables keyed by library
name (module names, target prefixes, dtype spellings, reproducer imports, versions,
data files ...), and adding a library meant finding them all. Now a library is one
value; the tables elsewhere read its fields. The record holds strings only, so
building it never imports the library it describes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

# The canonical dtype names of ``dlfuzz.cases.DTYPES``, repeated here because that module
# imports numpy and this package imports no array library (a unit test keeps them equal).
DTYPE_NAMES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
               "uint64", "float16", "bfloat16", "float32", "float64", "complex64",
               "complex128")


def _frozen(mapping: Mapping[str, str]) -> Mapping[str, str]:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class Library:
    """One library under test; every field is plain data (no import happens here).

    Fields that a library does not have are empty ("" or ()), never missing: a caller
    asks ``if lib.lowering`` rather than catching a KeyError.
    """

    name: str  # dlfuzz's key: "torch", "tf", "jax", ...; what specs and cases say
    title: str  # how people write it: "PyTorch", "TensorFlow"
    modules: tuple[str, ...]  # top-level Python import names whose code is this library
    imports: tuple[str, ...]  # conventional import statements ("import tensorflow as tf")
    prefixes: tuple[str, ...]  # what the API targets of this library start with
    dtypes: Mapping[str, str]  # canonical dtype name -> the library's spelling in source
    distributions: tuple[str, ...] = ()  # PyPI distributions; the first is the library's own
    npm: str = ""  # npm package, for a JavaScript library (its version is the one selected)
    default_release: str = ""  # npm: the release used unless the environment picks one
    release_env: str = ""  # npm: environment variable naming the selected release
    repro_header: str = ""  # import lines a Python reproducer starts with ("" = not Python)
    doc_url: str = ""  # pattern with {api}, {path} (dots -> "/", alias root) and {leaf}
    backends: tuple[tuple[str, str], ...] = ()  # (backend name, "module:Class"), in order
    lowering: str = ""  # name in dlfuzz.ir.lower.LOWERINGS; "" = no model lowering
    includes: tuple[str, ...] = ()  # other libraries shipped inside (tf.keras is Keras)
    namespaces: tuple[str, ...] = ()  # public function namespaces (same-name counterparts)
    numpy_module: str = ""  # the library's NumPy-compatible module (NumPy API engine)
    linalg_module: str = ""  # and its linear algebra module
    api_spec: str = ""  # API spec file in dlfuzz/engines/api/data ("" = none)
    layers: str = ""  # prefix of the layer classes programs use ("torch.nn.")
    program_files: Mapping[str, str] = field(default_factory=dict)  # program engine data
    program_backends: tuple[str, ...] = ()  # backends that run this library's programs
    # autodiff its backends run (gradient cases, ``cases.grad``; training steps): reverse
    # mode, and forward mode with a float64 self-check where the library has them
    autodiff: bool = False
    # whether those backends check their own gradients in float64 (forward mode, finite
    # differences); TF.js cannot (float32 only): its gradients are judged against others'
    gradient_self_check: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtypes", _frozen(self.dtypes))
        object.__setattr__(self, "program_files", _frozen(self.program_files))

    @property
    def aliases(self) -> dict[str, str]:
        """Conventional short name -> module (``tf`` -> ``tensorflow``), from ``imports``."""
        out: dict[str, str] = {}
        for statement in self.imports:
            words = statement.split()
            if len(words) == 4 and words[0] == "import" and words[2] == "as":
                out[words[3]] = words[1]
        return out

    @property
    def backend_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.backends)

    def dtype(self, name: str) -> str:
        """The library's spelling of canonical dtype ``name`` (``jnp.bool_``)."""
        try:
            return self.dtypes[name]
        except KeyError:
            from dlfuzz.errors import UsageError

            known = ", ".join(self.dtypes) or "none"
            raise UsageError(f"dtype {name!r} has no spelling in library {self.name!r}; "
                             f"it spells: {known}") from None

    def owns(self, target: str) -> bool:
        """Whether the dotted API ``target`` belongs to this library (by its prefixes)."""
        return any(target.startswith(p) for p in self.prefixes)

    def doc_link(self, api: str) -> str:
        """The documentation page of ``api`` ("" when the library has no pattern)."""
        if not self.doc_url:
            return ""
        root, dot, rest = api.partition(".")
        short = {module: alias for alias, module in self.aliases.items()}
        for module, alias in short.items():  # tensorflow.math.add -> tf/math/add
            if api == module or api.startswith(module + "."):
                root, dot, rest = alias, ".", api[len(module) + 1:]
                break
        path = (root + dot + rest).replace(".", "/")
        return self.doc_url.format(api=api, path=path, leaf=api.rpartition(".")[2])
