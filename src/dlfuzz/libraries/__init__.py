"""Every library dlfuzz tests, as one ``Library`` record each, and the one resolver.

``get("torch")`` is the record (import names, target prefixes, dtype spellings,
distributions, reproducer header, documentation links, backends, data files);
``resolve("torch.linalg.svd")`` is the object a target names; ``version("tf")`` the
installed version. Importing this package imports no library under test.
"""

from dlfuzz.libraries.known import (
    LIBRARIES,
    all_libraries,
    get,
    is_known,
    name_of_backend,
    names,
    of_backend,
)
from dlfuzz.libraries.record import DTYPE_NAMES, Library
from dlfuzz.libraries.resolve import ResolveError, resolve
from dlfuzz.libraries.versions import selected_release, version, versions

__all__ = ["DTYPE_NAMES", "LIBRARIES", "Library", "ResolveError", "all_libraries", "get",
           "is_known", "name_of_backend", "names", "of_backend", "resolve", "selected_release", "version",
           "versions"]
