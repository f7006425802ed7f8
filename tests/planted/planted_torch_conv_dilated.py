"""Test-only: a wrong ``torch.nn.functional.conv2d`` for one stride/dilation combination.

Only stride 2 together with dilation 2 is wrong (the kernel is applied flipped), the kind
of bug that sits behind a dependency constraint: the call must first be *valid* (channels
of input and weight, groups, kernel no larger than the padded input) before the wrong
branch is reached, which random inputs almost never are.
"""

import torch
import torch.nn.functional as F

_real_conv2d = F.conv2d


def _pair(v):
    if isinstance(v, int):
        return (v, v)
    return tuple(v) if not isinstance(v, str) else v


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    if _pair(stride) == (2, 2) and _pair(dilation) == (2, 2):
        weight = weight.flip(-1, -2)
    return _real_conv2d(input, weight, bias, stride, padding, dilation, groups)


F.conv2d = conv2d
torch.conv2d = conv2d
