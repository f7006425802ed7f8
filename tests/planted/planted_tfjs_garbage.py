"""Test-only: plants run-to-run garbage into tfjs-cpu's Relu (``planted_tfjs_garbage.js``).

Preloaded into the tfjs-cpu worker (``--preload tfjs-cpu=planted_tfjs_garbage``).
"""

from pathlib import Path

from dlfuzz.backends.tfjs.backend import add_patch

add_patch(Path(__file__).with_suffix(".js"))
