"""The one resolver: a target string -> the Python object it names.

Accepted forms:

* ``"pkg.mod:attr.sub"``: import ``pkg.mod``, then follow the attributes (registries,
  plugins, method tables);
* ``"pkg.mod.attr.sub"``: a dotted path; the longest importable module prefix is
  imported and the rest are attributes, so ``torch.linalg.svd``,
  ``tensorflow.math.add``, ``jax.numpy.fft.fft`` and ``torch.Tensor.add`` all resolve.
  A conventional alias as the first part (``tf``, ``jnp``, ``np``, from the library
  records' import statements) stands for its module.

Nothing is cached: a worker resolves a case's target on every call, so a preloaded patch
that replaces the attribute is seen, as a user program would see it. The common case
(the module is already imported) is one ``sys.modules`` lookup and one ``getattr``.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

from dlfuzz.errors import UsageError
from dlfuzz.libraries.known import LIBRARIES

_ALIASES: dict[str, str] = {alias: module for lib in LIBRARIES
                            for alias, module in lib.aliases.items()}


class ResolveError(UsageError):
    """A target that names nothing. ``__cause__`` is the library's own ImportError or
    AttributeError: what ``import pkg.mod; pkg.mod.attr`` would have raised."""

    def __init__(self, target: str, reason: str) -> None:
        super().__init__(f"cannot resolve {target!r}: {reason}; give an importable "
                         f"'package.module.attr' or 'package.module:attr'")
        self.target = target


def resolve(target: str) -> Any:
    """The object ``target`` names; a ResolveError saying which part is missing."""
    if ":" in target:
        return _resolve_colon(target)
    head, _, attr = target.rpartition(".")
    module = sys.modules.get(head)
    if module is not None:
        try:
            return getattr(module, attr)
        except AttributeError:
            pass  # maybe a nested attribute of a shorter module; the walk says
    return _walk(target)


def _resolve_colon(target: str) -> Any:
    module_name, _, attrs = target.partition(":")
    try:
        obj = sys.modules.get(module_name) or importlib.import_module(module_name)
    except ImportError as exc:
        raise ResolveError(target, f"cannot import {module_name} ({exc})") from exc
    return _follow(target, obj, module_name, attrs.split(".") if attrs else [])


def _walk(target: str) -> Any:
    parts = target.split(".")
    if parts[0] in _ALIASES and parts[0] not in sys.modules:
        parts = _ALIASES[parts[0]].split(".") + parts[1:]
    head = ".".join(parts[:-1])
    head_error: ImportError | None = None  # what plain "import head" raised
    for cut in range(len(parts), 0, -1):
        name = ".".join(parts[:cut])
        module = sys.modules.get(name)
        if module is None:
            try:
                module = importlib.import_module(name)
            except ModuleNotFoundError as exc:
                if name == head:
                    head_error = exc
                if exc.name == name or name.startswith(f"{exc.name}."):
                    continue  # this prefix is no module (a deeper import failing is a bug)
                raise ResolveError(target, f"importing {name} failed ({exc})") from exc
            except Exception as exc:  # noqa: BLE001 - a module that fails to import
                raise ResolveError(target, f"importing {name} failed ({exc})") from exc
        try:
            return _follow(target, module, name, parts[cut:])
        except ResolveError:
            if head_error is not None:  # as "import head" would have failed
                raise ResolveError(target, str(head_error)) from head_error
            raise
    error = head_error or ModuleNotFoundError(f"No module named {parts[0]!r}", name=parts[0])
    raise ResolveError(target, f"no module {parts[0]!r} to start from") from error


def _follow(target: str, obj: Any, path: str, attrs: list[str]) -> Any:
    for attr in attrs:
        try:
            obj = getattr(obj, attr)
        except AttributeError as exc:
            raise ResolveError(target, f"{path} has no attribute {attr!r}") from exc
        path = f"{path}.{attr}"
    return obj
