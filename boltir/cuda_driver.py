"""The few CUDA driver calls the runtime makes itself, through `libcuda.so.1` and ctypes:
streams, events and asynchronous copies.

A compiled library links CUDA's runtime statically, so its own functions are the only
runtime calls Python can reach; the driver is what every machine with an NVIDIA GPU has.
Streams and events are the same objects in both APIs (a `cudaStream_t` is a `CUstream`),
so a caller's torch or CuPy stream is passed here as the integer it is. Stream 0 is the
legacy default stream.

    driver = CudaDriver.load()          # a BoltError that says "no NVIDIA driver found" without one
    driver.copy_async(dst, src, nbytes, stream)
    driver.wait(stream, after=other)    # `stream` waits for what `other` has queued so far
"""

from __future__ import annotations

import ctypes

from boltir.diagnostics import BoltError

NO_DRIVER = "no NVIDIA driver found (libcuda.so.1 is not installed): install the NVIDIA driver; boltir.interp.run runs a model on the CPU"
STREAM_NON_BLOCKING = 1
EVENT_DISABLE_TIMING = 2


def driver_present() -> bool:
    """Whether the NVIDIA driver's library can be loaded (it says nothing of a GPU)."""
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


class CudaDriver:
    """libcuda's calls, each checked: a failure is a BoltError naming the call."""

    def __init__(self, library):
        self.library = library
        self.context = ctypes.c_void_p()
        self._event = None

    @staticmethod
    def load(device: int = 0) -> CudaDriver:
        try:
            library = ctypes.CDLL("libcuda.so.1")
        except OSError:
            raise BoltError(NO_DRIVER) from None
        driver = CudaDriver(library)
        handle = ctypes.c_int()
        driver.check(library.cuInit(0), "cuInit")
        driver.check(library.cuDeviceGet(ctypes.byref(handle), device), "cuDeviceGet")
        # The primary context is the one CUDA's runtime (the compiled library) uses.
        driver.check(library.cuDevicePrimaryCtxRetain(ctypes.byref(driver.context), handle), "cuDevicePrimaryCtxRetain")
        return driver

    def check(self, code: int, call: str) -> None:
        if code != 0:
            name = ctypes.c_char_p()
            self.library.cuGetErrorName(code, ctypes.byref(name))
            raise BoltError(f"{call} failed: {(name.value or b'CUDA error').decode()} (driver code {code})")

    def make_current(self) -> None:
        """Binds the primary context to this thread where nothing is bound yet."""
        current = ctypes.c_void_p()
        self.check(self.library.cuCtxGetCurrent(ctypes.byref(current)), "cuCtxGetCurrent")
        if current.value != self.context.value:
            self.check(self.library.cuCtxSetCurrent(self.context), "cuCtxSetCurrent")

    def new_stream(self) -> int:
        """A stream that does not synchronize with the legacy default stream."""
        stream = ctypes.c_void_p()
        self.check(self.library.cuStreamCreate(ctypes.byref(stream), STREAM_NON_BLOCKING), "cuStreamCreate")
        return stream.value or 0

    def copy_async(self, destination: int, source: int, nbytes: int, stream: int) -> None:
        """Device (or mapped host) memory to device memory, queued on `stream`."""
        self.check(self.library.cuMemcpyAsync(ctypes.c_uint64(destination), ctypes.c_uint64(source), ctypes.c_size_t(nbytes),
                                              ctypes.c_void_p(stream)), "cuMemcpyAsync")

    def wait(self, stream: int, after: int) -> None:
        """Work queued on `stream` from now on starts after what `after` holds now."""
        if self._event is None:
            event = ctypes.c_void_p()
            self.check(self.library.cuEventCreate(ctypes.byref(event), EVENT_DISABLE_TIMING), "cuEventCreate")
            self._event = event
        self.check(self.library.cuEventRecord(self._event, ctypes.c_void_p(after)), "cuEventRecord")
        self.check(self.library.cuStreamWaitEvent(ctypes.c_void_p(stream), self._event, 0), "cuStreamWaitEvent")

    def synchronize(self, stream: int) -> None:
        self.check(self.library.cuStreamSynchronize(ctypes.c_void_p(stream)), "cuStreamSynchronize")
