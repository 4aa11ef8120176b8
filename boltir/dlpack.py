"""DLPack, both ways, in ctypes: reading any array that has `__dlpack__` (torch, CuPy, JAX,
numpy), and `DeviceArray`, the array boltir gives back to callers that are not torch.

    view = read_dlpack(x, stream=s)   # address, shape, dtype, strides of x; x made ready on stream s
    array = DeviceArray(address, shape, "float16", owner=model)
    cupy.from_dlpack(array); torch.from_dlpack(array); numpy.from_dlpack(host_array)

Only the unversioned capsule ("dltensor", DLPack 0.x) is asked for and made: every
library that speaks the protocol reads and writes it. Reading never takes ownership: the
capsule keeps the producer's tensor alive until it is dropped, and its destructor tells
the producer (as the protocol says for a capsule nobody consumed).
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np

from boltir.diagnostics import BoltError

CPU, CUDA, CUDA_HOST = 1, 2, 3
"""DLDeviceType values: host memory, device memory, pinned host memory."""

_CAPSULE_NAME = b"dltensor"


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER)]

_capsule_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_get_pointer.restype = ctypes.c_void_p
_capsule_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_is_valid = ctypes.pythonapi.PyCapsule_IsValid
_capsule_is_valid.restype = ctypes.c_int
_capsule_is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, _CAPSULE_DESTRUCTOR]
# The same two calls on a bare PyObject pointer, for the capsule's destructor: the capsule
# is being freed then, and must not be turned into a Python object (a new reference).
_raw_is_valid = ctypes.pythonapi["PyCapsule_IsValid"]
_raw_is_valid.restype = ctypes.c_int
_raw_is_valid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_raw_get_pointer = ctypes.pythonapi["PyCapsule_GetPointer"]
_raw_get_pointer.restype = ctypes.c_void_p
_raw_get_pointer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]

# (type code, bits) <-> numpy dtype name; bfloat16 is ml_dtypes' name (and torch's).
_DTYPES = {(0, 8): "int8", (0, 16): "int16", (0, 32): "int32", (0, 64): "int64",
           (1, 8): "uint8", (1, 16): "uint16", (1, 32): "uint32", (1, 64): "uint64",
           (2, 16): "float16", (2, 32): "float32", (2, 64): "float64", (4, 16): "bfloat16", (6, 8): "bool"}
_CODES = {name: code for code, name in _DTYPES.items()}


@dataclass(frozen=True)
class ArrayView:
    """What a DLPack capsule says of an array. `capsule` keeps the producer's memory alive."""

    address: int
    shape: tuple[int, ...]
    dtype: str
    strides: tuple[int, ...] | None
    """In elements; None: contiguous (row-major)."""
    device_type: int
    device_id: int
    capsule: object

    @property
    def contiguous(self) -> bool:
        if self.strides is None:
            return True
        expected, stride = [], 1
        for size in reversed(self.shape):
            expected.insert(0, stride)
            stride *= size
        return all(s == e for s, e, size in zip(self.strides, expected, self.shape) if size != 1)


def has_dlpack(value) -> bool:
    return hasattr(value, "__dlpack__") and hasattr(value, "__dlpack_device__")


def read_dlpack(value, stream: int | None = None) -> ArrayView:
    """The array behind `value.__dlpack__(stream=stream)`: for device memory the producer
    makes it ready on `stream` (a CUDA stream handle; 1 is the legacy default stream)."""
    try:
        capsule = value.__dlpack__(stream=stream) if stream is not None else value.__dlpack__()
    except TypeError:  # a producer without the stream keyword (DLPack before 0.6)
        capsule = value.__dlpack__()
    if not _capsule_is_valid(capsule, _CAPSULE_NAME):
        raise BoltError(f"{type(value).__name__}.__dlpack__() gave no DLPack tensor capsule")
    managed = DLManagedTensor.from_address(_capsule_get_pointer(capsule, _CAPSULE_NAME))
    tensor = managed.dl_tensor
    key = (tensor.dtype.code, tensor.dtype.bits)
    if key not in _DTYPES or tensor.dtype.lanes != 1:
        raise BoltError(f"a DLPack input of type code {key[0]}, {key[1]} bits, {tensor.dtype.lanes} lanes: "
                        "boltir takes bool, integers and floats")
    shape = tuple(tensor.shape[i] for i in range(tensor.ndim))
    strides = tuple(tensor.strides[i] for i in range(tensor.ndim)) if tensor.strides else None
    return ArrayView((tensor.data or 0) + tensor.byte_offset, shape, _DTYPES[key], strides, tensor.device.device_type,
                     tensor.device.device_id, capsule)


# ------------------------------------------------------------------- producing


_exported: dict[int, tuple] = {}
"""Each live DLManagedTensor we made (by address), with what it keeps alive."""


def _immortal(value):
    """`value`, never freed. A consumer may free our tensors after this module's globals are
    cleared at interpreter exit (a torch tensor in a reference cycle goes in the last
    collection): the deleter's code, the dict and the structures it frees must still be
    there, else the consumer calls into freed memory (SIGILL or SIGSEGV at exit)."""
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(value))
    return value


_immortal(_exported)


def _delete_managed(managed, exported=_exported, addressof=ctypes.addressof) -> None:
    # no module globals here: they may be gone when a consumer frees its tensor at exit
    exported.pop(addressof(managed.contents), None)


def _destroy_unconsumed(capsule, exported=_exported, is_valid=_raw_is_valid, get_pointer=_raw_get_pointer,
                        name=_CAPSULE_NAME) -> None:
    # Nobody consumed the capsule (its name is unchanged): the tensor dies with it.
    if is_valid(capsule, name):
        exported.pop(get_pointer(capsule, name), None)


_delete = _immortal(DELETER(_delete_managed))
_destroy_capsule = _immortal(_CAPSULE_DESTRUCTOR(_destroy_unconsumed))


class DeviceArray:
    """A contiguous array in memory boltir owns (a compiled model's output buffer),
    readable through `__dlpack__` and, on the device, `__cuda_array_interface__`.
    It keeps `owner` alive as long as it, or a consumer's view of it, lives.

    `stream` is the CUDA stream that writes the memory; a consumer that asks for another
    stream gets one that waits for it (through `synchronize(consumer, producer)`)."""

    def __init__(self, address: int, shape: tuple[int, ...], dtype: str, *, owner=None, device_type: int = CUDA,
                 device_id: int = 0, stream: int | None = None, synchronize=None):
        if dtype not in _CODES:
            raise BoltError(f"DeviceArray of dtype {dtype}: boltir makes bool, integers and floats")
        self.address, self.shape, self.dtype = address, tuple(shape), dtype
        self.owner, self.device_type, self.device_id = owner, device_type, device_id
        self.stream, self._synchronize = stream, synchronize

    def __repr__(self) -> str:
        return f"DeviceArray({self.dtype}[{', '.join(map(str, self.shape))}] at {self.address:#x})"

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * np.dtype(_numpy_name(self.dtype)).itemsize

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.device_type, self.device_id

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        if copy:
            raise BufferError("DeviceArray gives its memory only as it is (copy=True is not supported)")
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(f"DeviceArray lives on device {self.__dlpack_device__()}, not {tuple(dl_device)}")
        if self.device_type == CUDA and stream not in (None, -1) and self._synchronize is not None:
            consumer = 0 if stream in (1, 2) else int(stream)  # 1, 2: the default streams
            producer = self.stream or 0
            if consumer != producer:
                self._synchronize(consumer, producer)
        return self._capsule()

    def _capsule(self):
        managed = DLManagedTensor()
        shape = (ctypes.c_int64 * max(1, len(self.shape)))(*self.shape)
        managed.dl_tensor.data = self.address
        managed.dl_tensor.device = DLDevice(self.device_type, self.device_id)
        managed.dl_tensor.ndim = len(self.shape)
        code, bits = _CODES[self.dtype]
        managed.dl_tensor.dtype = DLDataType(code, bits, 1)
        managed.dl_tensor.shape = shape
        managed.dl_tensor.strides = None  # contiguous
        managed.dl_tensor.byte_offset = 0
        managed.deleter = _delete
        address = ctypes.addressof(managed)
        _exported[address] = (managed, shape, self)  # alive until the consumer's deleter runs
        return _capsule_new(address, _CAPSULE_NAME, _destroy_capsule)

    @property
    def __cuda_array_interface__(self) -> dict:
        if self.device_type != CUDA:
            raise AttributeError("__cuda_array_interface__: this array is in host memory")
        return {"shape": self.shape, "typestr": np.dtype(_numpy_name(self.dtype)).str, "data": (self.address, False),
                "version": 3, "strides": None,
                # CAI's stream: where the data is written (1: the legacy default stream; 0 is not allowed)
                "stream": None if self.stream is None else (self.stream or 1)}


def _numpy_name(dtype: str):
    if dtype == "bfloat16":
        import ml_dtypes

        return ml_dtypes.bfloat16
    return dtype
