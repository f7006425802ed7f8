"""Test-only: tfjs-webgl's page falls back to the cpu backend (``planted_tfjs_fallback.js``)."""

from pathlib import Path

from dlfuzz.backends.tfjs.backend import add_patch

add_patch(Path(__file__).with_suffix(".js"))
