"""Test-only: extends the ``planted_torch_cumsum`` bug to float64, so torch's own float64
reference run shares it (preload after ``planted_torch_cumsum``)."""

import planted_torch_cumsum
import torch

planted_torch_cumsum.DTYPES.add(torch.float64)
