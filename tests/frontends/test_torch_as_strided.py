"""aten.as_strided in the PyTorch frontend: read as a reshape when it is one (a row-major
view of all of a row-major tensor; adaptive_avg_pool2d to 1x1 decomposes so), else one
line naming the op and its arguments."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the PyTorch frontend tests need torch: pip install boltir[torch]")

import boltir.interp
from boltir.diagnostics import BoltError
from boltir.frontends.torch import import_module


class Strided(torch.nn.Module):
    def __init__(self, size, stride, offset=0):
        super().__init__()
        self.size, self.stride, self.offset = size, stride, offset

    def forward(self, x):
        return torch.as_strided(x + 1, self.size, self.stride, self.offset)


@pytest.mark.parametrize(("size", "stride"), [((6, 4), (4, 1)), ((2, 12, 1), (12, 1, 5)), ((24,), (1,))])
def test_row_major_as_strided_is_a_reshape(size, stride):
    x = torch.randn(2, 3, 4)
    module = import_module(Strided(size, stride), (x,))
    (got,) = boltir.interp.run(module, {"x": x.numpy()})
    np.testing.assert_array_equal(got, torch.as_strided(x + 1, size, stride).numpy())


@pytest.mark.parametrize(("size", "stride", "offset"), [((4, 6), (1, 4), 0), ((2, 4), (4, 1), 4), ((2, 2), (4, 1), 0)])
def test_other_as_strided_is_one_line(size, stride, offset):
    with pytest.raises(BoltError) as error:
        import_module(Strided(size, stride, offset), (torch.randn(2, 3, 4),))
    message = str(error.value)
    assert "\n" not in message
    assert f"as_strided to size {list(size)}, stride {list(stride)}, offset {offset} is supported only as a reshape" in message


def test_adaptive_average_pool_to_one_imports():
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.AdaptiveAvgPool2d(1), torch.nn.LayerNorm([8, 1, 1])).eval()
    x = torch.randn(2, 3, 9, 9)
    module = import_module(model, (x,))
    (got,) = boltir.interp.run(module, {"input": x.numpy()})
    with torch.no_grad():
        np.testing.assert_allclose(got, model(x).numpy(), rtol=1e-5, atol=1e-5)
