"""Test-only: native faults in tfjs' Neg kernel (``planted_tfjs_faults.js``)."""

from pathlib import Path

from dlfuzz.backends.tfjs.backend import add_patch

add_patch(Path(__file__).with_suffix(".js"))
