"""Types of the package root: ``__init__.py`` loads the Python API lazily."""

from dlfuzz.api import Bug as Bug
from dlfuzz.api import Campaign as Campaign
from dlfuzz.api import Place as Place
from dlfuzz.api import Stats as Stats
from dlfuzz.api import open as open
from dlfuzz.api import run as run
from dlfuzz.errors import DlfuzzError as DlfuzzError
from dlfuzz.errors import InternalError as InternalError
from dlfuzz.errors import UsageError as UsageError

__version__: str
__all__: list[str]
