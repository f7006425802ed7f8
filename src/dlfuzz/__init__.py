"""dlfuzz: finds bugs in deep learning libraries.

The package root stays light on purpose: importing ``dlfuzz`` never imports a deep
learning library. Those load only inside worker processes, when a backend is chosen.
"""

from dlfuzz.errors import DlfuzzError, InternalError, UsageError

__version__ = "0.1.0"
__all__ = ["DlfuzzError", "InternalError", "UsageError", "__version__"]
