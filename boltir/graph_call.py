"""`CompiledModel.__call__`: a plain call at CUDA-graph speed.

    (y,) = model(x)          # x: a torch CUDA tensor, any object with __dlpack__ (CuPy, JAX), or numpy

- **The graph.** The first call runs the model launch by launch (a warm-up, and its
  results), then records the same launches as a CUDA graph on a stream of boltir's own
  (the legacy default stream cannot be captured; recording runs nothing, so nothing has
  to be joined). Every later call replays the graph on the caller's stream. Where capture
  fails, one warning says so and calls stay launch by launch.
- **Inputs.** The graph reads only the model's own input buffers: each call copies the
  inputs in, on the caller's stream, before the replay. No caller's tensor is kept past
  the call, so the caller's allocator may reuse its memory at once.
- **Streams.** The caller's stream is torch's current stream for torch tensors, CuPy's
  current stream for CuPy arrays, and a stream of boltir's own for other DLPack producers
  (asked through `__dlpack__(stream=...)` to make their data ready on it). A call on
  another stream than the last one first waits for the last one (an event), so two calls
  never overlap on the shared buffers.
- **Outputs** are the model's own output buffers, valid until the next call (as with
  torch.compile's CUDA graphs): torch tensors for torch inputs, `DeviceArray`s (with
  `__dlpack__` and `__cuda_array_interface__`) for other device inputs, fresh numpy arrays
  for host inputs. Clone what must outlive the next call.
"""

from __future__ import annotations

import ctypes
import sys

import numpy as np

from boltir.cuda_driver import CudaDriver
from boltir.diagnostics import BoltError
from boltir.dlpack import CUDA, CUDA_HOST, DeviceArray, has_dlpack, read_dlpack
from boltir.dtypes import ir_name_of_numpy

HOST_TO_DEVICE = 1
NEW, GRAPH, LAUNCHES = "new", "graph", "launches"
"""How calls run: not yet called; replaying the captured graph; launch by launch (capture failed)."""


def torch_if_tensor(value):
    """torch, when `value` is a torch tensor (torch is never imported for other inputs)."""
    torch = sys.modules.get("torch")
    return torch if torch is not None and isinstance(value, torch.Tensor) else None


def input_kind(value) -> str:
    """"torch" (a CUDA tensor), "device" (another array in device memory), "host"."""
    torch = torch_if_tensor(value)
    if torch is not None:
        return "torch" if value.is_cuda else "host"
    if has_dlpack(value) and value.__dlpack_device__()[0] == CUDA:
        return "device"
    if hasattr(value, "__cuda_array_interface__"):
        return "device"
    return "host"


def interface_contiguous(interface: dict) -> bool:
    """Whether a `__cuda_array_interface__` describes a row-major array (strides None, or
    the row-major ones)."""
    if interface.get("strides") is None:
        return True
    expected, stride = [], np.dtype(interface["typestr"]).itemsize
    for size in reversed(interface["shape"]):
        expected.insert(0, stride)
        stride *= size
    return all(s == e for s, e, size in zip(interface["strides"], expected, interface["shape"]) if size != 1)


class GraphCall:
    """The call path of one CompiledModel (its library, context, input and output buffers)."""

    def __init__(self, model):
        self.model = model
        self.state = NEW
        self.driver: CudaDriver | None = None
        self.own_stream: int | None = None
        self.last_stream: int | None = None
        self.torch_outputs = None
        self.device_outputs: list[DeviceArray] | None = None

    # ----------------------------------------------------------------- streams

    def cuda(self) -> CudaDriver:
        if self.driver is None:
            self.driver = CudaDriver.load()
        self.driver.make_current()
        return self.driver

    def enter(self, stream: int) -> None:
        """Orders this call after the last one, when that ran on another stream."""
        if self.last_stream is not None and self.last_stream != stream:
            self.cuda().wait(stream, after=self.last_stream)
        self.last_stream = stream

    def caller_stream(self, kind: str, first) -> int:
        if kind == "torch":
            torch = sys.modules["torch"]
            return torch.cuda.current_stream(first.device).cuda_stream
        if type(first).__module__.split(".")[0] == "cupy":
            return sys.modules["cupy"].cuda.get_current_stream().ptr
        if self.own_stream is None:
            self.own_stream = self.cuda().new_stream()
        return self.own_stream

    # ------------------------------------------------------------------ inputs

    def device_address(self, spec, value, kind: str, stream: int, keep: list) -> int:
        """The address of a device input, checked against its spec; `keep` holds what keeps
        it alive until the copies are queued."""
        if kind == "torch":
            if not value.is_contiguous():
                value = value.contiguous()  # on the caller's stream, like the copy after it
                keep.append(value)
            shape, dtype, address = tuple(value.shape), str(value.dtype).removeprefix("torch."), value.data_ptr()
        elif has_dlpack(value):
            view = read_dlpack(value, stream=stream or 1)  # 1: the legacy default stream, in DLPack's words
            keep.append(view.capsule)
            if view.device_type not in (CUDA, CUDA_HOST):
                raise BoltError(f"input '{spec.name}' is on DLPack device type {view.device_type}; give device or host arrays")
            if not view.contiguous:
                raise BoltError(f"input '{spec.name}' must be contiguous (row-major)")
            shape, dtype, address = view.shape, view.dtype, view.address
        else:
            interface = value.__cuda_array_interface__
            if not interface_contiguous(interface):
                raise BoltError(f"input '{spec.name}' must be contiguous (row-major)")
            shape, dtype, address = tuple(interface["shape"]), np.dtype(interface["typestr"]).name, interface["data"][0]
        self.check_spec(spec, shape, dtype)
        return address

    @staticmethod
    def check_spec(spec, shape, dtype: str) -> None:
        dtype = ir_name_of_numpy(dtype)
        if tuple(shape) != spec.shape or dtype != spec.dtype:
            raise BoltError(f"input '{spec.name}' must be {spec.describe()}, got {dtype}[{', '.join(map(str, shape))}]")

    # ------------------------------------------------------------------- calls

    def __call__(self, values: list) -> list:
        kinds = {input_kind(v) for v in values}
        if len(kinds) > 1 and "host" in kinds:
            raise BoltError("inputs must be all host arrays (numpy) or all device tensors")
        kind = next(iter(kinds)) if len(kinds) == 1 else "device"
        if kind == "host" or not values:
            return self.call_host(values)
        return self.call_device(values, kind)

    def call_host(self, values: list) -> list:
        model = self.model
        torch_inputs = [v for v in values if torch_if_tensor(v) is not None]
        for spec, staging, value in zip(model.inputs, model._staging, values):
            array = np.ascontiguousarray(value.numpy() if torch_if_tensor(value) is not None else value)
            self.check_spec(spec, array.shape, array.dtype.name)
            model._check(model.library.boltir_copy(staging, array.ctypes.data_as(ctypes.c_void_p), ctypes.c_size_t(spec.nbytes),
                                                   HOST_TO_DEVICE), "copying an input: ")
        self.enter(0)  # the host copies above are on the legacy default stream
        self.run(0)
        outputs = [model._download(p.value, spec) for p, spec in zip(model._results, model.outputs)]
        if torch_inputs:  # torch in, torch out (on the host)
            torch = sys.modules["torch"]
            return [torch.from_numpy(out) if out.dtype.name != "bfloat16" else
                    torch.from_numpy(out.view(np.int16)).view(torch.bfloat16) for out in outputs]
        return outputs

    def call_device(self, values: list, kind: str) -> list:
        model = self.model
        stream = self.caller_stream(kind, values[0])
        driver = self.cuda()
        self.enter(stream)
        keep: list = []
        for spec, staging, value in zip(model.inputs, model._staging, values):
            address = self.device_address(spec, value, input_kind(value), stream, keep)
            driver.copy_async(staging.value, address, spec.nbytes, stream)
        keep.clear()  # the copies are queued: the caller's memory is theirs again
        self.run(stream)
        if kind == "torch":
            return list(self.torch_views())
        return self.device_arrays(stream)

    def run(self, stream: int) -> None:
        """The model on `stream`, over the input and output buffers: the graph's replay
        once captured; the first call runs the launches, then captures them."""
        model = self.model
        if self.state == GRAPH or (self.state == NEW and model._captured):
            self.state = GRAPH
            model._check(model.library.boltir_model_replay(model.context, ctypes.c_void_p(stream)), "replaying: ")
            return
        inputs = model._pointer_array([p.value for p in model._staging])
        outputs = model._pointer_array([p.value for p in model._results])
        model._check(model.library.boltir_model_run(model.context, inputs, outputs, ctypes.c_void_p(stream)), "running: ")
        if self.state == NEW:
            self.capture()

    def capture(self) -> None:
        """Records the launches as the model's graph on boltir's own stream; a failure
        leaves calls launch by launch, with one warning."""
        model = self.model
        try:
            if self.own_stream is None:
                self.own_stream = self.cuda().new_stream()
            model.capture(self.own_stream)
            self.state = GRAPH
        except BoltError as error:
            self.state = LAUNCHES
            sys.stderr.write(f"warning: {model.directory}: CUDA graph capture failed ({error.message.removeprefix('error: ')}); "
                             "calls run launch by launch\n")

    # ----------------------------------------------------------------- outputs

    def torch_views(self) -> list:
        """torch tensors over the output buffers, made once."""
        if self.torch_outputs is None:
            torch = sys.modules["torch"]
            self.torch_outputs = [torch.from_dlpack(array) for array in self.output_arrays(None, sync=False)]
        return self.torch_outputs

    def device_arrays(self, stream: int) -> list[DeviceArray]:
        if self.device_outputs is None:
            self.device_outputs = self.output_arrays(stream, sync=True)
        for array in self.device_outputs:
            array.stream = stream
        return list(self.device_outputs)

    def output_arrays(self, stream: int | None, sync: bool) -> list[DeviceArray]:
        model = self.model
        model._results_handed_out = True  # close() keeps them: the arrays below hold the model
        synchronize = (lambda consumer, producer: self.cuda().wait(consumer, after=producer)) if sync else None
        return [DeviceArray(p.value, spec.shape, spec.numpy_dtype.name, owner=model, stream=stream, synchronize=synchronize)
                for p, spec in zip(model._results, model.outputs)]
