"""Test-only: torch max pooling silently accepts a negative ``padding``.

Real torch raises ("pad must be non-negative") when a max pooling layer with a negative
padding runs; this patch turns negative padding into 0 in ``_MaxPoolNd.__init__``, so a
program with ``nn.MaxPool2d(2, padding=-1)`` trains and evaluates without a word: the
boundary bug the program engine's boundary checking (BC) must find, localize to the block
and the parameter, and reproduce.
"""

from torch.nn.modules import pooling

_real_init = pooling._MaxPoolNd.__init__


def __init__(self, kernel_size, stride=None, padding=0, *args, **kwargs):  # noqa: N807
    if isinstance(padding, int):
        padding = max(padding, 0)
    else:
        padding = tuple(max(int(p), 0) for p in padding)
    _real_init(self, kernel_size, stride, padding, *args, **kwargs)


pooling._MaxPoolNd.__init__ = __init__
