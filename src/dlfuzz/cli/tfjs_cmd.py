"""``dlfuzz tfjs install``: TF.js releases (and the shared tools) into dlfuzz's cache.

Versions live side by side (``install.tfjs_dir``); a campaign picks one with
``dlfuzz run --tfjs-version V``, which reaches the workers as ``$DLFUZZ_TFJS_VERSION``.
"""

from __future__ import annotations

import argparse
import os

from dlfuzz.backends.tfjs import install
from dlfuzz.backends.tfjs.backend import VERSION_ENV
from dlfuzz.cli.common import plain_console, printable


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tfjs", help="TF.js releases for the tfjs-* backends")
    verbs = p.add_subparsers(dest="tfjs_verb", required=True)
    inst = verbs.add_parser("install", help="npm-install TF.js releases into the cache")
    inst.add_argument("--version", action="append", metavar="V", dest="versions",
                      help=f"release to install (repeatable; default {install.DEFAULT_VERSION})")
    inst.add_argument("--no-tools", action="store_true",
                      help="skip playwright-core and typescript (shared by all versions)")
    inst.set_defaults(func=run_install)
    ls = verbs.add_parser("list", help="installed releases")
    ls.set_defaults(func=run_list)


def run_install(args: argparse.Namespace) -> int:
    console = plain_console()
    for version in args.versions or [install.DEFAULT_VERSION]:
        console.print(f"TF.js {version}: {install.ensure_installed(version)}")
    if not args.no_tools:
        console.print(f"tools: {install.ensure_tools()}")
    return 0


def run_list(args: argparse.Namespace) -> int:
    for version in install.installed_versions():
        print(printable(f"{version}\t{install.tfjs_dir(version)}"))
    return 0


def select_version(version: str, backends: tuple[str, ...]) -> None:
    """Before workers start: install the chosen release if needed and export its number.

    Done on the host, so an npm failure is one clear error rather than every tfjs worker
    failing to start, and the workers (which inherit the environment) all agree.
    """
    if not version and not any(b.startswith("tfjs-") for b in backends):
        return
    version = install.check_version(version or install.DEFAULT_VERSION)
    if any(b.startswith("tfjs-") for b in backends):
        install.ensure_installed(version)
        if "tfjs-webgl" in backends:
            install.ensure_tools()
    os.environ[VERSION_ENV] = version
