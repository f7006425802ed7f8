"""Engines generate test cases; see ``base.Engine`` for the protocol (its hooks) and
``base.EngineSettings`` for an engine's own options."""

from dlfuzz.engines.base import Engine, EngineSettings

__all__ = ["Engine", "EngineSettings"]
