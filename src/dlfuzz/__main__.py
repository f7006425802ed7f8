"""``python -m dlfuzz`` is the ``dlfuzz`` command."""

from dlfuzz.cli.main import main

main()
