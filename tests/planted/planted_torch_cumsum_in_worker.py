"""Test-only: a wrong ``torch.cumsum`` that shows only inside a dlfuzz worker.

float32 inputs get 1.0 added to the last element of the scan while the dlfuzz worker
module is loaded: the bug is real for every re-run in a worker, yet a standalone
reproducer (which imports this module too, as ``dlfuzz reproduce`` does) sees the real
torch. Triage must not call such a finding confirmed.
"""

import sys

import torch

_real_cumsum = torch.cumsum


def cumsum(input, dim, *, dtype=None, out=None):  # noqa: A002 - torch's own names
    result = _real_cumsum(input, dim, dtype=dtype)
    if input.dtype == torch.float32 and "dlfuzz.executor.worker" in sys.modules:
        result = result.clone()
        result.select(dim, -1).add_(1.0)
    if out is not None:
        out.copy_(result)
        return out
    return result


torch.cumsum = cumsum
