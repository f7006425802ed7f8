"""The model engine's options (``--engine model``): method, seed models, inputs per model.
Light on purpose: the CLI and the settings loader read it without loading the methods."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from dlfuzz.engines.base import EngineSettings

# Input sets per model when ``inputs_per_model`` is 0. LEMON and DLJSFuzzer run several
# inputs on each mutant (DLJSFuzzer's tensor rules make them); a synthesized graph is one
# of many disposable ones, and its inputs cost what a new graph costs: in a 60 s
# torch-vs-ORT campaign 1 input per graph ran 42 models/s, 4 inputs 11 (about 45 cases/s
# either way), as NNSmith runs one input per model.
DEFAULT_INPUTS: dict[str, int] = {"lemon": 4, "dljsfuzzer": 4, "synth": 1}
# ... and when a backend of the campaign compiles every new model (jax-jit, tf-xla,
# torch-compile): a compilation costs 100-150 ms against about 1 ms a run, so each
# graph is worth many input sets (deliverable: "many inputs per build"). Synth graphs on
# torch, ort, jax-jit and tf-xla, executor alone: 16 sets 2.5 models/s (40 cases/s),
# 32 sets 2.2 models/s (70 cases/s).
COMPILED_INPUTS: dict[str, int] = {"lemon": 4, "dljsfuzzer": 4, "synth": 32}

# method name -> "module:Class" (imported only when chosen)
METHODS: dict[str, str] = {
    "lemon": "dlfuzz.engines.model.lemon:LemonMethod",
    "dljsfuzzer": "dlfuzz.engines.model.dljsfuzzer:DljsMethod",
    "synth": "dlfuzz.engines.model.synth:SynthMethod",
}


@dataclass(frozen=True)
class ModelEngineSettings(EngineSettings):
    """Options of ``ModelEngine``."""

    engine: ClassVar[str] = "model"

    method: str = "lemon"  # lemon | dljsfuzzer | synth
    # seeds: built-in names or .keras/.h5/.onnx/.json files (empty: the method's default)
    seed_models: tuple[str, ...] = field(default=(), metadata={"flag": "--seed-model"})
    # input sets run per generated model; 0: the method's own (``DEFAULT_INPUTS``)
    inputs_per_model: int = 0
    # a training step of differentiable models, checked (engines/model/training.py)
    gradients: bool = field(default=True, metadata={"flag": "--no-gradients"})

    def validate(self) -> None:
        if self.method not in METHODS:
            raise self.invalid("method", f"choose one of {', '.join(METHODS)}")
        if self.method == "synth" and self.seed_models:
            raise self.invalid("seed_models", "--method synth builds every graph from the op "
                                              "catalog and takes no seed model; leave it out "
                                              "or choose --method lemon or dljsfuzzer")
        if isinstance(self.inputs_per_model, bool) or self.inputs_per_model < 0:
            raise self.invalid("inputs_per_model", "must be at least 1 (or 0: the method's "
                                                   "own default)")

    def check_files(self) -> None:
        # Built-in seed names have no suffix; anything with one is a model file.
        self.require_files("seed_models", [s for s in self.seed_models if Path(s).suffix],
                           "model file")
