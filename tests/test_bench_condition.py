"""bench/models.py's `damp_residual_branches`: the BatchNorm that ends each residual branch
is scaled, the shortcut's and parallel branches' are not, and modules that do not trace are
searched child by child."""

import pytest

torch = pytest.importorskip("torch")

from bench.models import RESIDUAL_SCALE, condition, damp_residual_branches  # noqa: E402
from tests.support.corpus_models import BasicBlock, TinyResNet  # noqa: E402


def scales(model) -> dict[str, float]:
    return {name: float(m.weight.detach().mean()) for name, m in model.named_modules() if isinstance(m, torch.nn.BatchNorm2d)}


def test_the_last_norm_of_each_branch_is_damped_and_the_shortcuts_are_not():
    torch.manual_seed(0)
    model = TinyResNet()
    assert damp_residual_branches(model) == 2
    damped = {name for name, scale in scales(model).items() if scale != 1.0}
    assert damped == {"blocks.0.conv2.1", "blocks.1.conv2.1"}  # not the projection shortcut blocks.1.down.1
    assert scales(model)["blocks.0.conv2.1"] == pytest.approx(RESIDUAL_SCALE)


class Parallel(torch.nn.Module):
    """RepVGG's train form: two branches of equal depth summed, no shortcut."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Sequential(torch.nn.Conv2d(4, 4, 3, padding=1), torch.nn.BatchNorm2d(4))
        self.b = torch.nn.Sequential(torch.nn.Conv2d(4, 4, 1), torch.nn.BatchNorm2d(4))

    def forward(self, x):
        return self.a(x) + self.b(x)


def test_parallel_branches_are_not_residuals():
    model = Parallel()
    assert damp_residual_branches(model) == 0
    assert set(scales(model).values()) == {1.0}


class Untraceable(torch.nn.Module):
    """Control flow on a value: torch.fx cannot trace it, but its child can."""

    def __init__(self):
        super().__init__()
        self.block = BasicBlock(4, 4, 1)

    def forward(self, x):
        return self.block(x) if x.sum() > 0 else x


def test_a_module_that_does_not_trace_is_searched_child_by_child():
    model = Untraceable()
    assert damp_residual_branches(model) == 1
    assert scales(model)["block.conv2.1"] == pytest.approx(RESIDUAL_SCALE)


def test_condition_leaves_an_eval_model_with_calibrated_statistics():
    torch.manual_seed(0)
    model = condition(TinyResNet(), side=32)
    assert not model.training
    norm = model.blocks[0].conv2[1]
    assert float(norm.running_var.mean()) != 1.0  # calibrated, not the initial statistics
