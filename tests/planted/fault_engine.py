"""Test-only engine: ordinary cases with planted faults mixed in (through the numpy backend).

The numpy call of a fault case is a function of ``planted_faults`` (segfault, abort, ...);
torch and jax compute the identity of the same input, so every fault case has backends
that finish normally — which is what makes a hang or an OOM a finding. The faults come
in the first batch only; later batches are ordinary, to show the campaign goes on.
"""

from __future__ import annotations

import numpy as np

from dlfuzz.cases import ApiCase, Call, Ref, Tensor
from dlfuzz.engines.base import Engine

FAULTS = ("segfault", "abort", "sigfpe", "hang_sleep", "allocate_50gb", "exit7",
          "flood_stdout")


class FaultEngine(Engine):
    name = "faults"

    def __init__(self, seed: int = 0, libraries=("numpy", "torch", "jax"), apis=None) -> None:
        self.libraries = tuple(libraries)
        self.rng = np.random.default_rng(seed)
        self.batch = 0

    def reseed(self, batch: int) -> None:
        self.batch = batch
        self.rng = np.random.default_rng([7, batch])

    def _case(self, fault: str | None) -> ApiCase:
        x = Tensor.from_numpy(self.rng.normal(size=4).astype(np.float32))
        numpy_target = f"planted_faults.{fault}" if fault else "numpy.positive"
        calls = {"numpy": Call(numpy_target, (Ref(0),)),
                 "torch": Call("torch.clone", (Ref(0),)),
                 "jax": Call("jax.numpy.positive", (Ref(0),))}
        return ApiCase(f"planted.{fault or 'identity'}", (x,),
                       tuple((lib, c) for lib, c in calls.items() if lib in self.libraries))

    def propose(self, n: int) -> list[ApiCase]:
        faults = list(FAULTS) if self.batch == 0 else []
        cases = [self._case(None) for _ in range(max(0, n - len(faults)))]
        for i, fault in enumerate(faults):
            cases.insert(1 + 2 * i, self._case(fault))
        return cases

    def feedback(self, case, outcomes, findings) -> None:
        pass
