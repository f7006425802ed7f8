"""Test-only: plants a wrong ``tanh`` backward into TF.js (``planted_tfjs_tanh_backward.js``).

Preloaded into a tfjs worker (``--preload tfjs-cpu=planted_tfjs_tanh_backward``); the
patch goes to the Node child (or the webgl page) now and after every restart of it. The
forward pass stays tfjs' own, so only gradient cases and training steps can see it.
"""

from pathlib import Path

from dlfuzz.backends.tfjs.backend import add_patch

add_patch(Path(__file__).with_suffix(".js"))
