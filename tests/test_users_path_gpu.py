"""The users' path on a real GPU (marked gpu: skipped, with the reason, where there is
none): a plain call replaying its CUDA graph, on torch's default and side streams, DLPack
inputs and outputs, torch.compile(backend="boltir") and compile_module. The same paths
with fakes run everywhere in tests/test_graph_call.py and tests/test_torch_backend.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from boltir.graph_call import GRAPH

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    import boltir
    from boltir.torch_backend import local_arch

    directory = tmp_path_factory.mktemp("small_resnet")
    subprocess.run([sys.executable, str(ROOT / "examples/small_resnet/make_model.py"), str(directory)], check=True,
                   capture_output=True)
    boltir.compile(directory / "small_resnet.onnx", directory / "out", arch=local_arch(), dtype="f16", progress=False)
    image = np.load(directory / "input.npz")["image"]
    return directory / "out", image


def test_a_plain_call_replays_its_graph_on_any_stream(compiled):
    torch = pytest.importorskip("torch")
    from boltir.runtime import load

    directory, image = compiled
    model = load(directory)
    (expected,) = load(directory, debug=True)(image=image)  # launch by launch, checked against the interpreter
    x = torch.from_numpy(image).cuda()
    (first,) = model(x)
    first = first.clone()
    (second,) = model(image=x)
    assert model._graph_call.state == GRAPH and isinstance(second, torch.Tensor) and second.is_cuda
    np.testing.assert_allclose(first.cpu().numpy(), expected, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(second.cpu().numpy(), expected, rtol=1e-3, atol=1e-3)
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        y = torch.from_numpy(image).cuda() * 1.0  # produced on the side stream
        (third,) = model(y)
        got = third.clone()
    torch.cuda.synchronize()
    np.testing.assert_allclose(got.cpu().numpy(), expected, rtol=1e-3, atol=1e-3)
    (host,) = model(image)  # numpy in, numpy out, after calls on other streams
    np.testing.assert_allclose(host, expected, rtol=1e-3, atol=1e-3)


def test_the_caller_may_free_its_input_at_once(compiled):
    torch = pytest.importorskip("torch")
    from boltir.runtime import load

    directory, image = compiled
    model = load(directory)
    model(torch.from_numpy(image).cuda())
    x = torch.from_numpy(image).cuda()
    (out,) = model(x)
    del x
    garbage = torch.full((1, 3, 32, 32), float("nan"), device="cuda")  # likely the freed block
    expected = model(image)[0]
    np.testing.assert_allclose(out.cpu().numpy(), expected, rtol=1e-3, atol=1e-3)
    assert torch.isnan(garbage).all()


def test_dlpack_inputs_and_outputs(compiled):
    torch = pytest.importorskip("torch")
    from boltir.dlpack import DeviceArray
    from boltir.runtime import load

    directory, image = compiled
    model = load(directory)
    expected = model(image)[0]

    class Foreign:  # a DLPack producer boltir knows nothing about
        def __init__(self, tensor):
            self.tensor = tensor

        def __dlpack__(self, stream=None):
            return self.tensor.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return self.tensor.__dlpack_device__()

    (out,) = model(Foreign(torch.from_numpy(image).cuda()))
    assert isinstance(out, DeviceArray)
    np.testing.assert_allclose(torch.from_dlpack(out).cpu().numpy(), expected, rtol=1e-3, atol=1e-3)
    cupy = pytest.importorskip("cupy")
    (out,) = model(cupy.asarray(image))
    np.testing.assert_allclose(cupy.asnumpy(cupy.from_dlpack(out)), expected, rtol=1e-3, atol=1e-3)


def test_torch_compile_with_the_boltir_backend(tmp_path, monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.setenv("BOLTIR_CACHE_DIR", str(tmp_path))
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
                                torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(16, 10)).cuda().eval()
    x = torch.randn(4, 3, 32, 32, device="cuda")
    with torch.no_grad():
        expected = model(x)
        fast = torch.compile(model, backend="boltir", options={"dtype": "f16"})
        got = fast(x)
        got = fast(x)
    from boltir.accuracy import relative_l2

    assert relative_l2(got.float().cpu().numpy(), expected.cpu().numpy()) < 1e-2
    import boltir

    module = boltir.compile_module(model, (x,))  # the model's own precision: f32
    with torch.no_grad():
        assert relative_l2(module(x).cpu().numpy(), expected.cpu().numpy()) < 1e-3


def test_torch_compile_dynamic_builds_buckets_on_the_gpu(tmp_path, monkeypatch):
    """dynamic=True with max_size: one bucketed library; batches 2, 8 and 5 run on it
    (the 2- and 8-buckets, 5 padded to 8 and sliced back), each against eager."""
    torch = pytest.importorskip("torch")
    from boltir import torch_backend
    from boltir.accuracy import relative_l2
    from boltir.runtime import BucketedModel

    monkeypatch.setenv("BOLTIR_CACHE_DIR", str(tmp_path))
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
                                torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(16, 10)).cuda().eval()
    torch._dynamo.reset()
    fast = torch.compile(model, backend="boltir", dynamic=True, options={"dtype": "f16", "max_size": 8})
    with torch.no_grad():
        for batch in (2, 8, 5):  # not 3, which dynamo would tie to the 3 channels
            x = torch.randn(batch, 3, 32, 32, device="cuda")
            got = fast(x)
            assert got.shape == (batch, 10)
            assert relative_l2(got.float().cpu().numpy(), model(x).cpu().numpy()) < 1e-2
    assert [type(m).__name__ for m in torch_backend._loaded.values()].count(BucketedModel.__name__) == 1
    torch._dynamo.reset()
