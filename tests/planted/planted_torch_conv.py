"""Test-only: plants a wrong result in ``torch.nn.functional.conv2d`` (in the torch worker).

A 3x3 kernel at stride 1 is applied flipped (correlation turned into convolution, a
classic kernel-indexing bug); every other kernel size and stride is left alone, so the
LeNet-5 seed (5x5 kernels) is clean until a mutation inserts a 3x3 convolution.
"""

import torch
import torch.nn.functional as F

_real_conv2d = F.conv2d


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    unit = stride in (1, (1, 1), [1, 1])
    if tuple(weight.shape[-2:]) == (3, 3) and unit:
        weight = weight.flip(-1, -2)
    return _real_conv2d(input, weight, bias, stride, padding, dilation, groups)


F.conv2d = conv2d
torch.conv2d = conv2d
