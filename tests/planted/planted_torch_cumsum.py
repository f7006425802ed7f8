"""Test-only: plants a wrong result in ``torch.cumsum`` (loaded inside the torch worker).

float32 inputs whose scanned axis has length >= 7 get 1.0 added to the last element.
Everything else is left to the real implementation. A test that needs the same bug on
another dtype adds it to ``DTYPES`` from a second preloaded module.
"""

import torch

_real_cumsum = torch.cumsum
DTYPES = {torch.float32}


def cumsum(input, dim, *, dtype=None, out=None):  # noqa: A002 - torch's own names
    result = _real_cumsum(input, dim, dtype=dtype)
    if input.dtype in DTYPES and input.dim() > 0 and input.shape[dim] >= 7:
        result = result.clone()
        result.select(dim, -1).add_(1.0)
    if out is not None:
        out.copy_(result)
        return out
    return result


torch.cumsum = cumsum
