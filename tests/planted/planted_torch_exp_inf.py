"""Test-only: plants a special-value bug in ``torch.exp`` (loaded inside the torch worker).

float32 inputs that hold +inf give NaN there instead of +inf (C99 F.9.3.1 says +inf).
Every finite input, and every other dtype (the float64 reference runs included), is left
to the real implementation.
"""

import torch

_real_exp = torch.exp


def exp(input, *, out=None):  # noqa: A002 - torch's own name
    result = _real_exp(input)
    if input.dtype == torch.float32:
        result = torch.where(torch.isposinf(input), torch.full_like(result, float("nan")),
                             result)
    if out is not None:
        out.copy_(result)
        return out
    return result


torch.exp = exp
