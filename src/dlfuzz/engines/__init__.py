"""Engines generate test cases; see ``base.Engine`` for the protocol."""

from dlfuzz.engines.base import Engine

__all__ = ["Engine"]
