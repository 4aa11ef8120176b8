"""CompiledModel.__call__ without a GPU: the compiled library and the CUDA driver are fakes
that work on host memory (the "model" doubles its input), so the call path's order of
copies, launches, capture and replay, its streams and its outputs are checked here; the
real thing runs in tests/test_users_path_gpu.py on a GPU."""

from __future__ import annotations

import ctypes
import gc
import weakref
from pathlib import Path

import numpy as np
import pytest

from boltir import dlpack
from boltir.diagnostics import BoltError
from boltir.graph_call import GRAPH, LAUNCHES
from boltir.manifest import TensorSpec
from boltir.runtime import CompiledModel

SHAPE = (2, 3)
NBYTES = 6 * 4


class FakeLibrary:
    """libmodel.so's ABI on host memory: the model writes 2 * input."""

    def __init__(self, capture_code: int = 0):
        self.calls: list[tuple] = []
        self.capture_code = capture_code
        self.graph = None

    @staticmethod
    def _double(source: int, destination: int) -> None:
        values = np.frombuffer((ctypes.c_float * 6).from_address(source), dtype=np.float32)
        ctypes.memmove(destination, (2 * values).astype(np.float32).ctypes.data, NBYTES)

    def boltir_model_run(self, context, inputs, outputs, stream):
        self.calls.append(("run", stream.value or 0))
        self._double(inputs[0], outputs[0])
        return 0

    def boltir_model_capture(self, context, inputs, outputs, stream):
        self.calls.append(("capture", stream.value or 0, inputs[0], outputs[0]))
        if self.capture_code == 0:
            self.graph = (inputs[0], outputs[0])
        return self.capture_code

    def boltir_model_replay(self, context, stream):
        self.calls.append(("replay", stream.value or 0))
        self._double(*self.graph)
        return 0

    def boltir_copy(self, destination, source, nbytes, kind):
        destination = destination.value if isinstance(destination, ctypes.c_void_p) else destination
        source = source.value if isinstance(source, ctypes.c_void_p) else source
        ctypes.memmove(destination, source, nbytes.value)
        self.calls.append(("copy", kind))
        return 0

    def boltir_model_error_string(self, code):
        return b"operation not permitted when stream is capturing"

    def boltir_device_free(self, pointer):
        return 0

    def boltir_model_destroy(self, context):
        return 0


class FakeDriver:
    def __init__(self, library: FakeLibrary):
        self.library = library

    def make_current(self):
        pass

    def new_stream(self) -> int:
        return 77

    def copy_async(self, destination, source, nbytes, stream):
        ctypes.memmove(destination, source, nbytes)
        self.library.calls.append(("copy_async", destination, source, stream))

    def wait(self, stream, after):
        self.library.calls.append(("wait", stream, after))


def fake_model(monkeypatch, capture_code: int = 0) -> tuple[CompiledModel, FakeLibrary, list]:
    model = CompiledModel.__new__(CompiledModel)
    library = FakeLibrary(capture_code)
    buffers = [np.zeros(6, np.float32), np.zeros(6, np.float32)]  # the staging and result buffers
    model.directory, model.debug, model.library, model.context = Path("fake"), False, library, ctypes.c_void_p(1)
    model.inputs, model.outputs = [TensorSpec("x", SHAPE, "f32")], [TensorSpec("y", SHAPE, "f32")]
    model._staging = [ctypes.c_void_p(buffers[0].ctypes.data)]
    model._results = [ctypes.c_void_p(buffers[1].ctypes.data)]
    model._captured = False
    from boltir.graph_call import GraphCall

    model._graph_call = GraphCall(model)
    model._graph_call.driver = FakeDriver(library)
    monkeypatch.setattr(CompiledModel, "close", lambda self: None)
    return model, library, buffers


def device_input(values: np.ndarray) -> dlpack.DeviceArray:
    """An array that says it is on the GPU (the fakes read its host memory)."""
    return dlpack.DeviceArray(values.ctypes.data, values.shape, values.dtype.name, owner=values)


def read(array: dlpack.DeviceArray) -> np.ndarray:
    return np.frombuffer((ctypes.c_float * 6).from_address(array.address), dtype=np.float32).reshape(array.shape).copy()


def test_the_first_call_runs_and_captures_later_calls_replay(monkeypatch):
    model, library, (staging, results) = fake_model(monkeypatch)
    x = np.arange(6, dtype=np.float32).reshape(SHAPE)
    (y,) = model(device_input(x))
    assert isinstance(y, dlpack.DeviceArray) and hasattr(y, "__dlpack__")
    np.testing.assert_array_equal(read(y), 2 * x)
    assert [c[0] for c in library.calls] == ["copy_async", "run", "capture"]
    # the graph reads boltir's own buffers, never the caller's memory
    _, stream, graph_input, graph_output = library.calls[2]
    assert (graph_input, graph_output) == (staging.ctypes.data, results.ctypes.data) and stream == 77
    assert library.calls[0][1:] == (staging.ctypes.data, x.ctypes.data, 77)
    library.calls.clear()
    x2 = np.full(SHAPE, 5, np.float32)
    (y2,) = model(x=device_input(x2))
    assert [c[0] for c in library.calls] == ["copy_async", "replay"]
    assert y2 is y and y.address == results.ctypes.data  # the outputs are the model's buffers: valid until the next call
    np.testing.assert_array_equal(read(y2), np.full(SHAPE, 10))
    assert model._graph_call.state == GRAPH


def test_no_caller_tensor_is_kept(monkeypatch):
    model, _, _ = fake_model(monkeypatch)
    x = np.ones(SHAPE, np.float32)
    wrapper = device_input(x)
    watch = weakref.ref(wrapper)
    model(wrapper)
    model(device_input(x))
    del wrapper
    gc.collect()
    assert watch() is None
    assert dlpack._exported == {}  # every capsule read was let go


def test_host_inputs_come_back_as_fresh_numpy(monkeypatch):
    model, library, _ = fake_model(monkeypatch)
    x = np.arange(6, dtype=np.float32).reshape(SHAPE)
    (a,) = model(x)
    (b,) = model(x + 1)
    assert isinstance(a, np.ndarray) and a is not b
    np.testing.assert_array_equal(a, 2 * x)
    np.testing.assert_array_equal(b, 2 * x + 2)
    assert ("replay", 0) in library.calls  # host calls replay on the legacy default stream


def test_torch_cpu_tensors_come_back_as_torch(monkeypatch):
    torch = pytest.importorskip("torch")
    model, _, _ = fake_model(monkeypatch)
    (y,) = model(torch.ones(SHAPE))
    assert isinstance(y, torch.Tensor) and torch.equal(y, torch.full(SHAPE, 2.0))


def test_a_call_on_another_stream_waits_for_the_last(monkeypatch):
    model, library, _ = fake_model(monkeypatch)
    model(device_input(np.ones(SHAPE, np.float32)))  # on boltir's stream, 77
    library.calls.clear()
    model(np.ones(SHAPE, np.float32))  # host: the legacy default stream
    assert library.calls[1] == ("wait", 0, 77)
    library.calls.clear()
    model(np.ones(SHAPE, np.float32))
    assert not any(c[0] == "wait" for c in library.calls)


def test_capture_that_fails_leaves_launches_with_one_warning(monkeypatch, capsys):
    model, library, _ = fake_model(monkeypatch, capture_code=1900)
    x = np.ones(SHAPE, np.float32)
    for _ in range(3):
        (y,) = model(device_input(x))
        np.testing.assert_array_equal(read(y), 2 * x)
    assert [c[0] for c in library.calls if c[0] in ("run", "capture", "replay")] == ["run", "capture", "run", "run"]
    assert model._graph_call.state == LAUNCHES
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "CUDA graph capture failed" in err and "launch by launch" in err


def test_outputs_synchronize_a_consumer_on_another_stream(monkeypatch):
    model, library, _ = fake_model(monkeypatch)
    (y,) = model(device_input(np.ones(SHAPE, np.float32)))
    library.calls.clear()
    y.__dlpack__(stream=5)
    assert library.calls == [("wait", 5, 77)]
    library.calls.clear()
    y.__dlpack__(stream=77)
    assert library.calls == []
    assert y.__cuda_array_interface__["stream"] == 77 and y.__cuda_array_interface__["data"][0] == y.address


def test_bad_inputs_are_one_line(monkeypatch):
    model, _, _ = fake_model(monkeypatch)
    with pytest.raises(BoltError, match=r"input 'x' must be f32\[2, 3\], got f32\[3, 2\]"):
        model(device_input(np.ones((3, 2), np.float32)))
    with pytest.raises(BoltError, match=r"input 'x' must be f32\[2, 3\], got f16\[2, 3\]"):
        model(np.ones(SHAPE, np.float16))
    with pytest.raises(BoltError, match="unknown input 'z'"):
        model(z=np.ones(SHAPE, np.float32))
    transposed = np.ones((3, 2), np.float32).T
    with pytest.raises(BoltError, match="input 'x' must be contiguous"):
        model(_StridedDevice(transposed))


class _StridedDevice:
    """A device array (by DLPack) with a transposed layout."""

    def __init__(self, array):
        self.array = array

    def __dlpack_device__(self):
        return (dlpack.CUDA, 0)

    def __dlpack__(self, stream=None):
        return _with_device(self.array.__dlpack__(), dlpack.CUDA)


def _with_device(capsule, device_type):
    managed = dlpack.DLManagedTensor.from_address(dlpack._capsule_get_pointer(capsule, b"dltensor"))
    managed.dl_tensor.device.device_type = device_type
    return capsule


def test_no_driver_is_named(monkeypatch):
    from boltir import runtime

    model, _, _ = fake_model(monkeypatch)
    monkeypatch.setattr(runtime, "driver_present", lambda: False)
    model.library.boltir_model_error_string = lambda code: b"CUDA driver version is insufficient for CUDA runtime version"
    with pytest.raises(BoltError) as error:
        model._check(1035)
    assert error.value.message.endswith("no NVIDIA driver found (libcuda.so.1 is not installed): install the NVIDIA driver; "
                                        "boltir.interp.run runs a model on the CPU")
    monkeypatch.setattr(runtime, "driver_present", lambda: True)
    with pytest.raises(BoltError, match=r"no usable GPU here \(CUDA driver version is insufficient"):
        model._check(1035)


def test_outputs_outlive_close_until_the_model_goes(monkeypatch):
    """A caller that reads an output after close() (bench/models.py did) reads memory that is
    still the model's: close() frees the rest, the outputs go with the last reference."""
    import gc

    model, library, (_, results) = fake_model(monkeypatch)
    freed = []
    library.boltir_device_free = lambda pointer: freed.append(pointer.value)
    x = np.arange(6, dtype=np.float32).reshape(SHAPE)
    (y,) = model(device_input(x))
    monkeypatch.undo()  # the real close()
    model.close()
    assert results.ctypes.data not in freed
    np.testing.assert_array_equal(read(y), 2 * x)
    del model, y
    gc.collect()
    assert results.ctypes.data in freed
