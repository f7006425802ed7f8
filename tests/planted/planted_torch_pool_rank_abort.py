"""Test-only: plants a process abort in ``torch.nn.functional.avg_pool2d`` on an input
whose rank is neither 3 nor 4 (loaded inside the torch worker), the way a failed C++
CHECK on a structural constraint kills the process. The real function raises a clean
RuntimeError there; valid inputs are left to it.
"""

import os

import torch.nn.functional as F

_real = F.avg_pool2d


def avg_pool2d(input, *args, **kwargs):  # noqa: A002 - torch's own name
    if input.dim() not in (3, 4):
        os.abort()
    return _real(input, *args, **kwargs)


F.avg_pool2d = avg_pool2d
