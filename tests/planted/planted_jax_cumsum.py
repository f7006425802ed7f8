"""Test-only: plants a wrong result in ``jax.numpy.cumsum`` (loaded inside a jax worker).

Floating inputs (float32 and float64 alike) whose scanned axis has length >= 7 get 1.0
added to the last element. The patch is Python, so ``jax.jit`` traces it too: the eager
and the compiled mode share the bug, as they share a real bug in jax.numpy's code.
"""

import jax.numpy as jnp

_real_cumsum = jnp.cumsum


def cumsum(a, axis=None, dtype=None, out=None):
    result = _real_cumsum(a, axis=axis, dtype=dtype, out=out)
    arr = jnp.asarray(a)
    if arr.ndim == 0 or not jnp.issubdtype(result.dtype, jnp.floating):
        return result
    length = arr.size if axis is None else arr.shape[axis]
    if length >= 7:
        flat_axis = -1 if axis is None else axis
        index = [slice(None)] * result.ndim
        index[flat_axis] = -1
        result = result.at[tuple(index)].add(1.0)
    return result


jnp.cumsum = cumsum
