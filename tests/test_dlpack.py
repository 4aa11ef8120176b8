"""boltir.dlpack on the CPU: reading torch's and numpy's capsules, and DeviceArray read by
numpy and torch (host memory; device memory is the same code with another device type)."""

from __future__ import annotations

import gc
import subprocess
import sys
import weakref
from pathlib import Path

import numpy as np
import pytest

from boltir import dlpack
from boltir.diagnostics import BoltError


ROOT = Path(__file__).resolve().parents[1]


class Owner:
    pass


def host_array(values: np.ndarray, owner=None) -> dlpack.DeviceArray:
    return dlpack.DeviceArray(values.ctypes.data, values.shape, values.dtype.name, owner=owner, device_type=dlpack.CPU)


def test_numpy_and_torch_read_a_device_array_and_keep_its_owner():
    torch = pytest.importorskip("torch")
    values = np.arange(12, dtype=np.float32).reshape(3, 4)
    owner = Owner()
    watch = weakref.ref(owner)
    array = host_array(values, owner)
    del owner
    seen = np.from_dlpack(array)
    tensor = torch.from_dlpack(array)
    del array
    gc.collect()
    assert watch() is not None  # the consumers' views keep it alive
    np.testing.assert_array_equal(seen, values)
    assert torch.equal(tensor, torch.from_numpy(values))
    del seen, tensor
    gc.collect()
    assert watch() is None and dlpack._exported == {}


def test_a_capsule_nobody_consumes_frees_its_tensor():
    array = host_array(np.ones(4, np.float32))
    capsule = array.__dlpack__()
    assert len(dlpack._exported) == 1
    del capsule
    gc.collect()
    assert dlpack._exported == {}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "int64", "int32", "bool", "uint8"])
def test_reading_torch_tensors(dtype):
    torch = pytest.importorskip("torch")
    tensor = torch.zeros(2, 3, dtype=getattr(torch, dtype))
    view = dlpack.read_dlpack(tensor)
    assert (view.address, view.shape, view.dtype, view.device_type) == (tensor.data_ptr(), (2, 3), dtype, dlpack.CPU)
    assert view.contiguous
    assert not dlpack.read_dlpack(tensor.t()).contiguous
    assert dlpack.read_dlpack(tensor[:, 1:]).address == tensor.data_ptr() + tensor.element_size()


def test_reading_numpy_and_the_round_trip():
    values = np.arange(6, dtype=np.int32).reshape(2, 3)
    view = dlpack.read_dlpack(values)
    assert view.address == values.ctypes.data and view.dtype == "int32" and view.contiguous
    back = dlpack.read_dlpack(host_array(values))
    assert (back.address, back.shape, back.dtype, back.strides) == (values.ctypes.data, (2, 3), "int32", None)


def test_what_dlpack_cannot_carry_is_refused():
    with pytest.raises(BoltError, match="DeviceArray of dtype complex64"):
        dlpack.DeviceArray(0, (1,), "complex64")
    with pytest.raises(BoltError, match="type code 5, 64 bits"):  # complex
        dlpack.read_dlpack(np.zeros(2, np.complex64))
    array = host_array(np.ones(2, np.float32))
    with pytest.raises(BufferError, match="copy=True"):
        array.__dlpack__(copy=True)
    with pytest.raises(AttributeError, match="host memory"):
        array.__cuda_array_interface__


EXIT_WITH_TENSORS_IN_A_CYCLE = """
import gc
import numpy as np
import torch
from boltir import dlpack
values = np.arange(6, dtype=np.float32).reshape(2, 3)
array = dlpack.DeviceArray(values.ctypes.data, values.shape, "float32", owner=values, device_type=dlpack.CPU)
class Cycle:
    pass
for _ in range(50):
    c = Cycle(); c.me = c; c.tensors = [torch.from_dlpack(array) for _ in range(4)]
    c.capsule = array.__dlpack__()  # one nobody consumes
del c, array
gc.disable()  # the cycles go in the interpreter's last collection, after the modules' globals
"""


def test_tensors_freed_at_exit_after_the_module_call_a_live_deleter():
    """torch tensors over our arrays in reference cycles are freed after boltir.dlpack's
    globals are cleared: the deleter must still be there (it was not: SIGILL or SIGSEGV at
    exit, as bench.models saw on the H200)."""
    pytest.importorskip("torch")
    for _ in range(3):
        done = subprocess.run([sys.executable, "-c", EXIT_WITH_TENSORS_IN_A_CYCLE], capture_output=True, text=True,
                              cwd=ROOT, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        assert "Exception ignored" not in done.stderr, done.stderr[-2000:]
