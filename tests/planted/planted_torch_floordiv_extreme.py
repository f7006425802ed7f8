"""Test-only: plants a SIGFPE in ``torch.floor_divide`` where an integer dividend holds
its dtype's minimum and the divisor -1 at the same place (loaded inside the torch
worker), the classic integer-division crash. Everything else is left to the real
function.
"""

import os
import signal

import torch

_real = torch.floor_divide


def floor_divide(input, other, *, out=None):  # noqa: A002 - torch's own name
    if isinstance(input, torch.Tensor) and not input.dtype.is_floating_point \
            and not input.dtype.is_complex and input.dtype != torch.bool:
        low = torch.iinfo(input.dtype).min
        divisor = other if isinstance(other, torch.Tensor) else torch.tensor(other)
        try:
            a, b = torch.broadcast_tensors(input, divisor)
        except RuntimeError:
            a = b = None
        if a is not None and bool(((a == low) & (b == -1)).any()):
            os.kill(os.getpid(), signal.SIGFPE)
    return _real(input, other) if out is None else _real(input, other, out=out)


torch.floor_divide = floor_divide
