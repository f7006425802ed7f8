"""Test-only: plants a divergence only at infinite inputs in ``torch.cumsum``.

Wherever the input holds ±inf the whole result becomes NaN; finite inputs are left to
the real implementation. Only special values show it: a ``special-value`` bug.
"""

import torch

_real_cumsum = torch.cumsum


def cumsum(input, dim, *, dtype=None, out=None):  # noqa: A002 - torch's own names
    result = _real_cumsum(input, dim, dtype=dtype)
    if result.is_floating_point() and bool(torch.isinf(input).any()):
        result = torch.full_like(result, float("nan"))
    if out is not None:
        out.copy_(result)
        return out
    return result


torch.cumsum = cumsum
