"""Test-only: plants a wrong ``Add`` kernel into tfjs-cpu (``planted_tfjs_add.js``).

Preloaded into the tfjs-cpu worker (``--preload tfjs-cpu=planted_tfjs_add``); the patch
goes to the Node child now and again after every restart of it.
"""

from pathlib import Path

from dlfuzz.backends.tfjs.backend import add_patch

add_patch(Path(__file__).with_suffix(".js"))
