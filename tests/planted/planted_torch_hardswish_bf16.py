"""Test-only: plants a wrong result in ``torch.nn.functional.hardswish`` for bfloat16 only
(loaded inside the torch worker).

bfloat16 inputs get 1.0 added where the input is above 0.5; every other dtype is left to
the real implementation. No other library's counterpart is validated for hardswish, so
only a comparison of torch with itself in another dtype (the dtype oracle) can see it.
"""

import torch
import torch.nn.functional as F

_real = F.hardswish


def hardswish(input, inplace=False):  # noqa: A002 - torch's own name
    result = _real(input, inplace=inplace)
    if input.dtype == torch.bfloat16:
        result = torch.where(input > 0.5, result + 1.0, result)
    return result


F.hardswish = hardswish
