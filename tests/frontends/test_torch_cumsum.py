"""The PyTorch frontend's aten.cumsum (its dtype argument; integers and booleans summed
as int64, as torch does) and aten.gather (torch's rule out[i][j] = self[i][index[i][j]]
along `dim`, the index smaller than the data off `dim` too), imported through
torch.export and compared with PyTorch in the interpreter, at the graph and op level."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the PyTorch frontend tests need torch: pip install boltir[torch]")

from torch import nn  # noqa: E402

import boltir  # noqa: E402
from boltir.dialects import graph  # noqa: E402
from boltir.frontends.torch import import_module  # noqa: E402
from boltir.interp import run  # noqa: E402
from boltir.pipelines import available_passes, default_pipeline, parse_pipeline_spec, run_passes  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::DeprecationWarning")


class Lambda(nn.Module):
    def __init__(self, function):
        super().__init__()
        self.function = function

    def forward(self, *args):
        return self.function(*args)


def check(model: nn.Module, inputs: tuple, lower: bool = True):
    """The imported module (and its op-level lowering at f32) against PyTorch."""
    module = import_module(model, inputs)
    feeds = {f"arg{i}": x.numpy() for i, x in enumerate(inputs)}
    with torch.no_grad():
        expected = model(*inputs).numpy()
    stages = [module]
    if lower:
        lowered = module.clone()
        run_passes(lowered, parse_pipeline_spec(default_pipeline(dtype="f32"), available_passes()), boltir.make_context())
        stages.append(lowered)
    for stage in stages:
        (got,) = run(stage, feeds)
        assert got.dtype == expected.dtype and got.shape == expected.shape
        if expected.dtype.kind == "f":
            np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
        else:
            np.testing.assert_array_equal(got, expected)
    return module


@pytest.mark.parametrize(
    ("function", "make_input"),
    [
        pytest.param(lambda x: torch.cumsum(x, 1), lambda: torch.randn(3, 7), id="f32"),
        pytest.param(lambda x: torch.cumsum(x, -1), lambda: torch.randn(2, 3, 5), id="negative-dim"),
        pytest.param(lambda x: torch.cumsum(x, 0), lambda: torch.randint(-9, 9, (6, 4), dtype=torch.int32), id="int32-to-int64"),
        pytest.param(lambda x: torch.cumsum(x, 1, dtype=torch.int32), lambda: torch.randint(-9, 9, (2, 8)), id="dtype-int32"),
        pytest.param(lambda x: torch.cumsum(x, 1, dtype=torch.float32), lambda: torch.randint(-9, 9, (2, 8)), id="dtype-f32"),
        pytest.param(lambda x: torch.cumsum(x > 0, 1), lambda: torch.randn(2, 8), id="bool"),
        pytest.param(lambda x: x.cumsum(0), lambda: torch.randn(()), id="0-d"),
    ],
)
def test_cumsum(function, make_input):
    x = make_input()
    module = check(Lambda(function), (x,), lower=x.dim() > 0)
    assert any(isinstance(op, graph.CumSumOp) for op in module.walk()) == (x.dim() > 0)


@pytest.mark.parametrize(
    ("data_shape", "index_shape", "dim"),
    [((2, 512), (2, 16), 1), ((5, 3), (7, 3), 0), ((3, 4, 5), (2, 6, 5), 1), ((3, 4, 5), (3, 4, 2), -1)],
)
def test_gather(data_shape, index_shape, dim):
    generator = torch.Generator().manual_seed(0)
    data = torch.randn(data_shape, generator=generator)
    index = torch.randint(0, data_shape[dim], index_shape, generator=generator)
    check(Lambda(lambda x, i: torch.gather(x, dim, i)), (data, index))


class PositionIds(nn.Module):
    """RoBERTa's embeddings' index arithmetic: position ids from the non-pad tokens, and
    the token types read from a zero buffer through torch.gather."""

    def __init__(self, pad: int = 1, positions: int = 40, dim: int = 8):
        super().__init__()
        self.pad = pad
        self.register_buffer("token_type_ids", torch.zeros(1, positions, dtype=torch.long))
        self.positions, self.types = nn.Embedding(positions, dim), nn.Embedding(2, dim)

    def forward(self, input_ids):
        mask = input_ids.ne(self.pad).int()
        position_ids = (torch.cumsum(mask, dim=1).type_as(mask) * mask).long() + self.pad
        types = torch.gather(self.token_type_ids.expand(position_ids.shape[0], -1), dim=1, index=position_ids)
        return self.positions(position_ids) + self.types(types)


def test_roberta_position_ids():
    ids = torch.randint(2, 30, (2, 16), generator=torch.Generator().manual_seed(1))
    ids[0, -4:] = 1
    check(PositionIds().eval(), (ids,))
