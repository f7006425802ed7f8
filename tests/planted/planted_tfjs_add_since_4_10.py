"""Test-only: a wrong ``Add`` kernel on tfjs-cpu that exists only from TF.js 4.10.0 on
(``planted_tfjs_add_since_4_10.js``): a planted *regression* for ``dlfuzz bisect``.

Preloaded into the tfjs-cpu worker (``--preload tfjs-cpu=planted_tfjs_add_since_4_10``);
the patch goes to the Node child now and again after every restart of it, and into the
tfjs-cpu reproducer when it runs with the campaign's preloads (as ``dlfuzz bisect`` does
under each probed release, so the verdict follows the loaded release's version).
"""

from pathlib import Path

from dlfuzz.backends.tfjs.backend import add_patch

add_patch(Path(__file__).with_suffix(".js"))
