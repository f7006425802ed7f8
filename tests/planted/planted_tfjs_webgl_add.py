"""Test-only: plants a wrong ``Add`` kernel into tfjs-webgl (``planted_tfjs_webgl_add.js``).

Preloaded into the tfjs-webgl worker (``--preload tfjs-webgl=planted_tfjs_webgl_add``); the patch
goes to the Chromium page now and again after every restart of it.
"""

from pathlib import Path

from dlfuzz.backends.tfjs.backend import add_patch

add_patch(Path(__file__).with_suffix(".js"))
