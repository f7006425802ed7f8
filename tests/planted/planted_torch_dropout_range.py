"""Test-only: ``torch.nn.functional.dropout`` silently accepts a probability outside [0, 1].

The real function raises ``ValueError`` for ``p < 0`` or ``p > 1``; this one clamps ``p``
and returns a result, the boundary bug violate mode must find.
"""

import torch.nn.functional as F

_real_dropout = F.dropout


def dropout(input, p=0.5, training=True, inplace=False):  # noqa: A002
    return _real_dropout(input, min(max(float(p), 0.0), 1.0), training, inplace)


F.dropout = dropout
