"""Test-only: makes some torch calls slow (loaded inside the torch worker).

``torch.abs``, ``torch.exp`` and ``torch.add`` sleep ``PLANTED_SLOW_S`` seconds (from the
environment, which workers inherit; 0 or unset: no delay) before running, so a batch of a
few hundred cases takes minutes: what the tests of stopping mid-batch need.
"""

import os
import time

import torch

_DELAY_S = float(os.environ.get("PLANTED_SLOW_S", "0") or 0)


def _slow(real):
    def call(*args, **kwargs):
        if _DELAY_S > 0:
            time.sleep(_DELAY_S)
        return real(*args, **kwargs)

    call.__name__ = real.__name__
    return call


for _name in ("abs", "exp", "add"):
    setattr(torch, _name, _slow(getattr(torch, _name)))
