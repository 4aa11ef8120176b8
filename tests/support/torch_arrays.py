"""numpy arrays to torch device tensors and back, bf16 included (numpy's bfloat16 comes
from ml_dtypes, which torch does not read directly). torch is imported only when called."""

from __future__ import annotations

import numpy as np


def to_torch(array: np.ndarray, device="cuda"):
    import torch

    if array.dtype.name == "bfloat16":
        return torch.from_numpy(array.view(np.uint16).copy()).view(torch.bfloat16).to(device)
    return torch.from_numpy(np.ascontiguousarray(array)).to(device)


def to_numpy_f32(tensor) -> np.ndarray:
    import torch

    return tensor.detach().to(torch.float32).cpu().numpy()
