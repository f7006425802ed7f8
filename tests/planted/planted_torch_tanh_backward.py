"""Test-only: plants a wrong backward in ``torch.tanh`` (loaded inside the torch worker).

The forward pass is torch's own; the backward uses ``1 - y * |y|`` for ``1 - y**2``, so
the gradient is wrong wherever the output is negative (a sign bug of the kind a
hand-written derivative formula has). Integer inputs and ``out=`` go to the real
function.
"""

import torch

_real_tanh = torch.tanh


class _PlantedTanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):  # noqa: ANN001, ANN205 - torch's protocol
        y = _real_tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):  # noqa: ANN001, ANN205
        (y,) = ctx.saved_tensors
        return grad * (1 - y * y.abs())


def tanh(input, *, out=None):  # noqa: A002 - torch's own names
    if out is not None or not input.dtype.is_floating_point or input.is_complex():
        return _real_tanh(input, out=out)
    return _PlantedTanh.apply(input)


torch.tanh = tanh
