"""Test-only: plants a SIGFPE in ``torch.gcd`` where the first argument holds its dtype's
minimum and the second -1 at the same place (loaded inside the torch worker), the
integer-division crash of ``INT_MIN / -1`` that ``torch.lcm`` really has in torch 2.13.
Everything else is left to the real function.
"""

import os
import signal

import torch

_real = torch.gcd


def gcd(input, other, *, out=None):  # noqa: A002 - torch's own name
    if isinstance(input, torch.Tensor) and isinstance(other, torch.Tensor) \
            and not input.dtype.is_floating_point and input.dtype != torch.bool:
        low = torch.iinfo(input.dtype).min
        try:
            a, b = torch.broadcast_tensors(input, other)
        except RuntimeError:
            a = b = None
        if a is not None and bool(((a == low) & (b == -1)).any()):
            os.kill(os.getpid(), signal.SIGFPE)
    return _real(input, other) if out is None else _real(input, other, out=out)


torch.gcd = gcd
