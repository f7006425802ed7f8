"""The api engine's options (``--engine api``): input generator, violate-mode share,
spec files, special values. Light on purpose: the CLI and the settings loader read it
without loading the engine's spec tables."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from dlfuzz.engines.base import EngineSettings

GENERATORS = ("random", "typed", "adjust", "z3")


@dataclass(frozen=True)
class ApiEngineSettings(EngineSettings):
    """Options of ``ApiEngine``."""

    engine: ClassVar[str] = "api"

    # random: no type information; typed: TensorJSFuzz Alg. 1; adjust: Alg. 1 + 2; z3.
    generator: str = "adjust"
    violate_share: float = 0.1  # share of inputs that break one constraint
    # share of valid groups pushed to an edge of the value space (engines/api/edges.py)
    edge_share: float = 0.35
    # format-2 spec files instead of the built-in ones (empty: built-in)
    spec_files: tuple[str, ...] = field(default=(), metadata={"flag": "--spec-file"})
    # NaN/Inf/extreme values in generated tensors
    specials: bool = field(default=True, metadata={"flag": "--no-specials"})
    # the backward pass of differentiable cases, checked (engines/api/gradients.py)
    gradients: bool = field(default=True, metadata={"flag": "--no-gradients"})
    # inputs per signature, every group a new signature (0: groups grow and signatures
    # are reused as the measured compile cost asks, which depends on the machine)
    signature_inputs: int = 0

    def validate(self) -> None:
        if self.generator not in GENERATORS:
            raise self.invalid("generator", f"choose one of {', '.join(GENERATORS)}")
        if isinstance(self.violate_share, bool) or not 0.0 <= self.violate_share <= 1.0:
            raise self.invalid("violate_share", "give a share in [0, 1]")
        if isinstance(self.edge_share, bool) or not 0.0 <= self.edge_share <= 1.0:
            raise self.invalid("edge_share", "give a share in [0, 1]")
        _check_signature_inputs(self)

    def check_files(self) -> None:
        self.require_files("spec_files", self.spec_files, "spec file")


@dataclass(frozen=True)
class NumpyApiEngineSettings(EngineSettings):
    """Options of ``NumpyApiEngine`` (``--engine numpy-api``): its APIs are drawn by their
    shape rules, so the only choice is how many inputs a signature gets."""

    engine: ClassVar[str] = "numpy-api"

    # as ApiEngineSettings.signature_inputs
    signature_inputs: int = 0
    # as ApiEngineSettings.gradients
    gradients: bool = field(default=True, metadata={"flag": "--no-gradients"})

    def validate(self) -> None:
        _check_signature_inputs(self)


def _check_signature_inputs(settings: ApiEngineSettings | NumpyApiEngineSettings) -> None:
    value = settings.signature_inputs
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise settings.invalid("signature_inputs",
                               "give a whole number of inputs, or 0 to adapt to compile cost")
