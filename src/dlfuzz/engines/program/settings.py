"""The program engine's options (``--engine program``): seed programs, mutants per block,
a user data set. Light on purpose: read by the CLI and the settings loader."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from dlfuzz.engines.base import EngineSettings


@dataclass(frozen=True)
class ProgramEngineSettings(EngineSettings):
    """Options of ``ProgramEngine``."""

    engine: ClassVar[str] = "program"

    # seeds: built-in names or seed program .py files (empty: every built-in seed)
    seed_programs: tuple[str, ...] = field(default=(), metadata={"flag": "--seed-program"})
    times_mt: int = 4  # mutants per code block and parent (MoCo's times_mt)
    program_data: str = ""  # a user .npz (x, y) instead of synthetic data

    def validate(self) -> None:
        if isinstance(self.times_mt, bool) or self.times_mt < 1:
            raise self.invalid("times_mt", "must be at least 1")

    def check_files(self) -> None:
        self.require_files("seed_programs", [s for s in self.seed_programs if s.endswith(".py")],
                           "seed program")
        if self.program_data:
            self.require_files("program_data", [self.program_data], "data file (.npz)")
