"""Test-only: plants a NaN-handling bug in ``torch.cumsum``.

Where the input holds NaN and no infinity, NaN elements count as 0 (the scan returns
numbers where NaN must propagate); every other input is left to the real implementation.
"""

import torch

_real_cumsum = torch.cumsum


def cumsum(input, dim, *, dtype=None, out=None):  # noqa: A002 - torch's own names
    source = input
    if input.is_floating_point() and bool(torch.isnan(input).any()) \
            and not bool(torch.isinf(input).any()):
        source = torch.nan_to_num(input, nan=0.0)
    result = _real_cumsum(source, dim, dtype=dtype)
    if out is not None:
        out.copy_(result)
        return out
    return result


torch.cumsum = cumsum
