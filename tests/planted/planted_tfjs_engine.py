"""Test-only engine: small random TF.js calls with their NumPy and JAX equivalents.

Stands in for the TF.js API engine (specs are another helper's work) so the planted
tfjs tests depend only on the backends: elementwise add/mul/sub and matMul on float32
inputs of random small shapes, each with the numpy and jax call of the same computation
(the float64 reference libraries).
"""

from __future__ import annotations

import numpy as np

from dlfuzz.cases import ApiCase, Call, Ref, Tensor
from dlfuzz.engines.base import Engine

OPS = {  # tfjs target -> (numpy target, jax target)
    "tf.add": ("numpy.add", "jax.numpy.add"),
    "tf.mul": ("numpy.multiply", "jax.numpy.multiply"),
    "tf.sub": ("numpy.subtract", "jax.numpy.subtract"),
    "tf.matMul": ("numpy.matmul", "jax.numpy.matmul"),
}


class TfjsEngine(Engine):
    name = "planted-tfjs"

    def __init__(self, seed: int = 0, libraries=("tfjs", "numpy", "jax"), apis=None) -> None:
        self.libraries = tuple(libraries)
        self.rng = np.random.default_rng(seed)
        self.ops = [op for op in OPS if not apis or op in apis]

    def _case(self) -> ApiCase:
        op = self.ops[int(self.rng.integers(len(self.ops)))]
        if op == "tf.matMul":
            m, k, n = (int(v) for v in self.rng.integers(1, 6, size=3))
            shapes = [(m, k), (k, n)]
        else:
            rank = int(self.rng.integers(1, 3))
            shape = tuple(int(v) for v in self.rng.integers(1, 8, size=rank))
            shapes = [shape, shape]
        xs = tuple(Tensor.from_numpy(self.rng.normal(size=s).astype(np.float32))
                   for s in shapes)
        numpy_target, jax_target = OPS[op]
        calls = {"tfjs": Call(op, (Ref(0), Ref(1))),
                 "numpy": Call(numpy_target, (Ref(0), Ref(1))),
                 "jax": Call(jax_target, (Ref(0), Ref(1)))}
        return ApiCase(op, xs, tuple((lib, c) for lib, c in calls.items()
                                     if lib in self.libraries))

    def propose(self, n: int) -> list[ApiCase]:
        return [self._case() for _ in range(n)]

    def feedback(self, case, outcomes, findings) -> None:
        pass
