"""Running a compiled model: `boltir.runtime.load(DIR)` returns a callable module.

    model = boltir.runtime.load("out/")
    (y,) = model(x=numpy_array)                 # numpy in, numpy out
    (y,) = model(x=torch_tensor_on_cuda)        # torch in, torch out, on torch's current stream
    (y,) = model(x=cupy_array)                  # any __dlpack__ array in; a DeviceArray (__dlpack__) out
    model.capture(); model.replay()             # CUDA-graph replay of the last inputs' shapes
    model = boltir.runtime.load("out/", debug=True)   # op by op against the interpreter
    print(boltir.runtime.format_profile(model.profile(x=array)))   # every launch against its roofline bound
    model.profile(x=array, alone=True)          # also each launch timed by itself (`alone_ms`)
    model.profile(x=array, marginal=True)       # also what each launch adds to a graph replay (`marginal_ms`)

A call replays a CUDA graph from its second call on, and its outputs are the model's
own buffers, valid until the next call (boltir/graph_call.py says how, and on which stream).

The directory is what `boltir.compile` / `boltc MODEL -o DIR` writes: `libmodel.so`,
`weights.bin`, `manifest.json` and `module.mlir` (the lowered IR, weights elided; the
debugger rebinds them from `weights.bin`). Without a GPU, loading raises a BoltError
that says so; `boltir.interp.run` is the CPU path.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from boltir.cuda_driver import NO_DRIVER, driver_present
from boltir.diagnostics import BoltError
from boltir.dtypes import ir_name_of_numpy, numpy_dtype_from_name
from boltir.graph_call import GraphCall
from boltir.manifest import TensorSpec, read_manifest
from boltir.shape_ranges import (
    BucketPlan,
    bucket_inputs,
    choose_for_call,
    output_cut,
    slice_to,
)
from boltir.target import get_target

HOST_TO_DEVICE, DEVICE_TO_HOST = 1, 2
ALONE_INNER = 10
"""Copies of a launch back to back in `profile(alone=True)`'s graph: enough that one
replay's launch latency is a small part of the time per copy."""


@dataclass(frozen=True)
class LaunchTime:
    """One launch of a profiled run: its position, op, kernel and median time, and the
    roofline's counts and bound from the manifest (None for a model built without them)."""

    index: int
    op: str
    kernel: str
    family: str
    ms: float
    flops: int | None = None
    bytes: int | None = None
    bound_ms: float | None = None
    """max(FLOPs / peak, bytes / bandwidth) on the model's target."""
    alone_ms: float | None = None
    """The launch's median time when replayed alone, back to back on the model's buffers
    (`profile(alone=True)`); None when not measured."""
    conv: dict | None = None
    """A conv's channels from the manifest: {"in", "out", "depthwise"}; None for other ops."""
    marginal_ms: float | None = None
    """What the launch adds to a graph replay of the whole model: the median, over paired
    replays, of the whole graph less the graph without this launch (`profile(marginal=True)`).
    Unlike `ms` it keeps the overlap that programmatic dependent launch gives neighbouring
    launches; the launches after it read the last run's values, and their inputs may come
    from DRAM rather than the L2, so it can fall short of the launch's own time."""
    gemm: dict | None = None
    """A GEMM's problem from the manifest: {"rows", "n", "k", "weight_bytes"}; None for other ops."""

    @property
    def tflops_per_second(self) -> float | None:
        return None if self.flops is None or self.ms <= 0 else self.flops / (self.ms * 1e-3) / 1e12

    @property
    def gigabytes_per_second(self) -> float | None:
        return None if self.bytes is None or self.ms <= 0 else self.bytes / (self.ms * 1e-3) / 1e9

    @property
    def bound_fraction(self) -> float | None:
        """The bound over the measured time: 1 is the roofline."""
        return None if self.bound_ms is None or self.ms <= 0 else self.bound_ms / self.ms


def launch_bounds(manifest: dict) -> list[tuple[int | None, int | None, float | None]]:
    """(FLOPs, bytes, bound ms) of each launch of a manifest, from its roofline counts and
    its target's peaks; Nones where the manifest has no counts."""
    target = get_target(manifest["arch"])
    bounds = []
    for launch in manifest["launches"]:
        if "flops" not in launch:
            bounds.append((None, None, None))
            continue
        element = launch.get("element", manifest["dtype"])
        bounds.append((launch["flops"], launch["bytes"], 1e3 * target.bound_seconds(launch["flops"], launch["bytes"], element)))
    return bounds


def _device_pointer(value) -> tuple[int, tuple[int, ...], str] | None:
    """(address, shape, dtype name) of a CUDA tensor, or None for a host array."""
    interface = getattr(value, "__cuda_array_interface__", None)
    if interface is None and hasattr(value, "__dlpack_device__"):
        device_type, _ = value.__dlpack_device__()
        if device_type == 2:  # kDLCUDA: torch exposes no CUDA array interface for some dtypes
            import torch  # only a torch tensor gets here without the interface

            tensor = value if isinstance(value, torch.Tensor) else torch.from_dlpack(value)
            if not tensor.is_contiguous():
                raise BoltError("device inputs must be contiguous")
            return tensor.data_ptr(), tuple(tensor.shape), str(tensor.dtype).removeprefix("torch.")
    if interface is None:
        return None
    if interface.get("strides") is not None:
        expected, stride = [], np.dtype(interface["typestr"]).itemsize
        for dim in reversed(interface["shape"]):
            expected.insert(0, stride)
            stride *= dim
        if tuple(interface["strides"]) != tuple(expected):
            raise BoltError("device inputs must be contiguous")
    return interface["data"][0], tuple(interface["shape"]), np.dtype(interface["typestr"]).name


class CompiledModel:
    def __init__(self, directory: Path, debug: bool = False, manifest: dict | None = None):
        """`manifest`: the directory's manifest where the caller has read it already."""
        self.directory = directory
        self.manifest = manifest if manifest is not None else read_manifest(directory)
        self.inputs = [TensorSpec.from_manifest(t) for t in self.manifest["inputs"]]
        self.outputs = [TensorSpec.from_manifest(t) for t in self.manifest["outputs"]]
        self.debug = debug
        self.last_launch_error: float | None = None
        """After a debug call, the largest launch's relative error against the interpreter."""
        try:
            self.library = ctypes.CDLL(str(directory / self.manifest["library"]))
        except OSError as error:
            raise BoltError(f"cannot load {directory / self.manifest['library']}: {error}") from error
        lib = self.library
        lib.boltir_model_error_string.restype = ctypes.c_char_p
        lib.boltir_model_value.restype = ctypes.c_void_p
        for name in ("boltir_model_create", "boltir_model_run", "boltir_model_step", "boltir_model_capture",
                     "boltir_model_replay", "boltir_model_profile", "boltir_model_destroy", "boltir_device_alloc", "boltir_device_free",
                     "boltir_copy", "boltir_synchronize"):
            getattr(lib, name).restype = ctypes.c_int
        self._check(lib.boltir_synchronize())  # the first CUDA call says if there is one
        weights = (directory / "weights.bin").read_bytes()
        self.context = ctypes.c_void_p()
        self._check(lib.boltir_model_create(weights, ctypes.c_size_t(len(weights)), ctypes.byref(self.context)),
                    "creating the model context: ")
        # Device buffers for host (numpy) inputs and outputs, and for graph replay.
        self._staging = [self._alloc(spec.nbytes) for spec in self.inputs]
        self._results = [self._alloc(spec.nbytes) for spec in self.outputs]
        self._captured = False
        self._graph_call = GraphCall(self)

    # ----------------------------------------------------------------- plumbing

    def _check(self, code: int, what: str = "") -> None:
        if code != 0:
            message = self.library.boltir_model_error_string(code).decode(errors="replace")
            if 1000 <= code < 2000 and code - 1000 in (35, 100, 999, 3, 46):
                if not driver_present():  # the runtime says "insufficient driver" when there is none at all
                    raise BoltError(f"{what}{NO_DRIVER}")
                raise BoltError(f"{what}no usable GPU here ({message}); boltir.interp.run runs the model on the CPU")
            raise BoltError(f"{what}{message} (code {code})")

    def _alloc(self, nbytes: int) -> ctypes.c_void_p:
        pointer = ctypes.c_void_p()
        self._check(self.library.boltir_device_alloc(ctypes.c_size_t(nbytes), ctypes.byref(pointer)), "allocating: ")
        return pointer

    def _input_values(self, args, kwargs) -> list:
        """The inputs, given by position or by name, in manifest order."""
        if args and kwargs:
            raise BoltError("pass the inputs either by position or by name, not both")
        names = [spec.name for spec in self.inputs]
        if args:
            if len(args) != len(names):
                raise BoltError(f"the model takes {len(names)} inputs ({', '.join(names)}), got {len(args)}")
            values = dict(zip(names, args))
        else:
            unknown = sorted(set(kwargs) - set(names))
            if unknown:
                raise BoltError(f"unknown input '{unknown[0]}'; the inputs are {', '.join(names)}")
            missing = [n for n in names if n not in kwargs]
            if missing:
                raise BoltError(f"missing input '{missing[0]}' ({self.inputs[names.index(missing[0])].describe()})")
            values = kwargs
        return [values[spec.name] for spec in self.inputs]

    def _bind(self, args, kwargs) -> tuple[list[int], bool]:
        """Device addresses of the inputs, in manifest order; True when they came from the
        host (numpy), so the outputs go back as numpy."""
        pointers, host = [], None
        for spec, staging, value in zip(self.inputs, self._staging, self._input_values(args, kwargs)):
            device = _device_pointer(value)
            on_host = device is None
            if host is not None and host != on_host:
                raise BoltError("inputs must be all numpy arrays or all device tensors")
            host = on_host
            if on_host:
                array = np.asarray(value)
                shape, dtype = tuple(array.shape), ir_name_of_numpy(array.dtype.name)
            else:
                address, shape, dtype = device
                dtype = ir_name_of_numpy(dtype)
            if shape != spec.shape or dtype != spec.dtype:
                raise BoltError(f"input '{spec.name}' must be {spec.describe()}, got {dtype}[{', '.join(map(str, shape))}]")
            if on_host:
                array = np.ascontiguousarray(array)
                self._check(self.library.boltir_copy(staging, array.ctypes.data_as(ctypes.c_void_p),
                                                     ctypes.c_size_t(spec.nbytes), HOST_TO_DEVICE), "copying an input: ")
                pointers.append(staging.value)
            else:
                pointers.append(address)
        return pointers, bool(host)

    def _pointer_array(self, pointers) -> ctypes.Array:
        return (ctypes.c_void_p * max(1, len(pointers)))(*pointers)

    def _download(self, pointer, spec: TensorSpec) -> np.ndarray:
        out = np.empty(spec.shape, dtype=spec.numpy_dtype)
        self._check(self.library.boltir_copy(out.ctypes.data_as(ctypes.c_void_p), ctypes.c_void_p(pointer),
                                             ctypes.c_size_t(spec.nbytes), DEVICE_TO_HOST), "copying an output: ")
        return out

    # ------------------------------------------------------------------- calls

    def __call__(self, *args, **kwargs):
        """The model on these inputs: by CUDA-graph replay from the second call on, outputs
        valid until the next call (see boltir/graph_call.py). With debug=True, launch by
        launch against the interpreter, outputs freshly allocated."""
        if not self.debug:
            return self._graph_call(self._input_values(args, kwargs))
        pointers, host = self._bind(args, kwargs)
        inputs = self._pointer_array(pointers)
        self._run_debug(inputs, pointers, host)
        if host:
            outputs = self._pointer_array([p.value for p in self._results])
            self._check(self.library.boltir_model_run(self.context, inputs, outputs, None), "running: ")
            self._check(self.library.boltir_synchronize(), "running: ")
            return [self._download(p.value, spec) for p, spec in zip(self._results, self.outputs)]
        import torch

        results = [torch.empty(spec.shape, dtype=getattr(torch, spec.numpy_dtype.name), device="cuda") for spec in self.outputs]
        outputs = self._pointer_array([r.data_ptr() for r in results])
        stream = torch.cuda.current_stream().cuda_stream
        self._check(self.library.boltir_model_run(self.context, inputs, outputs, ctypes.c_void_p(stream)), "running: ")
        return results

    def capture(self, stream: int | None = None) -> None:
        """Records a run over the staging buffers as a CUDA graph (copy inputs with
        `set_inputs` first, or after: the graph reads the buffers at replay)."""
        inputs = self._pointer_array([p.value for p in self._staging])
        outputs = self._pointer_array([p.value for p in self._results])
        self._check(self.library.boltir_model_capture(self.context, inputs, outputs, ctypes.c_void_p(stream)), "capturing: ")
        self._captured = True

    def set_inputs(self, *args, **kwargs) -> None:
        pointers, host = self._bind(args, kwargs)
        if not host:
            for pointer, staging, spec in zip(pointers, self._staging, self.inputs):
                self._check(self.library.boltir_copy(staging, ctypes.c_void_p(pointer), ctypes.c_size_t(spec.nbytes), 3))

    def replay(self, stream: int | None = None) -> None:
        self._check(self.library.boltir_model_replay(self.context, ctypes.c_void_p(stream)), "replaying: ")

    def profile(self, *args, repeats: int = 20, alone: bool = False, marginal: bool = False, **kwargs) -> list[LaunchTime]:
        """Each launch's median time over `repeats` runs (after one warm-up), in launch
        order, with its roofline counts and bound. The launches are captured once into a
        CUDA graph with an event between them and the graph is replayed, so launch gaps do
        not count and the times add up to about a graph replay's. A library built before
        that was possible is timed with events between plain launches (each time then
        includes the gap to the next).

        With `alone`, each launch is also timed by itself (`LaunchTime.alone_ms`): ten
        copies of it back to back in a graph of their own, on the model's buffers. A launch
        much slower in the model than alone loses time to its place (what its neighbours
        leave in the L2, launch order), not to its kernel.

        With `marginal`, each launch's cost to a graph replay is also measured
        (`LaunchTime.marginal_ms`): the whole graph and the graph without that launch,
        replayed in turn `repeats` times."""
        pointers, _ = self._bind(args, kwargs)
        inputs = self._pointer_array(pointers)
        launches = self.manifest["launches"]
        times = (ctypes.c_float * max(1, repeats * len(launches)))()
        self._check(self.library.boltir_synchronize(), "profiling: ")  # the inputs' producers, on any stream
        graph_timed = getattr(self.library, "boltir_model_profile_graph", None)
        if graph_timed is not None:
            graph_timed.restype = ctypes.c_int
            self._check(graph_timed(self.context, inputs, repeats, times, None), "profiling: ")
        else:
            self._check(self.library.boltir_model_profile(self.context, inputs, 1, times, None), "profiling: ")
            self._check(self.library.boltir_model_profile(self.context, inputs, repeats, times, None), "profiling: ")
        def medians() -> list[float]:  # each launch's median over the `repeats` rows of `times`
            if not repeats:
                return [0.0] * len(launches)
            samples = np.frombuffer(times, dtype=np.float32)[: repeats * len(launches)].reshape(repeats, len(launches))
            return [float(ms) for ms in np.median(samples, axis=0)]

        in_model = medians()
        alone_medians = [None] * len(launches)
        if alone:
            timed_alone = getattr(self.library, "boltir_model_profile_alone", None)
            if timed_alone is None:
                raise BoltError(f"{self.directory} was built before launches could be timed alone; compile it again")
            timed_alone.restype = ctypes.c_int
            self._check(timed_alone(self.context, inputs, repeats, ALONE_INNER, times, None), "profiling alone: ")
            alone_medians = medians()
        marginal_medians = [None] * len(launches)
        if marginal:
            marginal_medians = self._marginal_medians(inputs, repeats, len(launches))
        return [LaunchTime(i, launch["op"], launch["kernel"], launch["family"], ms, *bound, alone_ms=alone_ms,
                           conv=launch.get("conv"), marginal_ms=marginal_ms, gemm=launch.get("gemm"))
                for i, (launch, ms, bound, alone_ms, marginal_ms) in enumerate(
                    zip(launches, in_model, launch_bounds(self.manifest), alone_medians, marginal_medians))]

    def _marginal_medians(self, inputs, repeats: int, steps: int) -> list[float]:
        """Each launch's median of (whole graph - graph without it) over paired replays."""
        timed = getattr(self.library, "boltir_model_profile_marginal", None)
        if timed is None:
            raise BoltError(f"{self.directory} was built before launches' marginal costs could be timed; compile it again")
        timed.restype = ctypes.c_int
        pairs = (ctypes.c_float * max(1, 2 * repeats * steps))()
        self._check(timed(self.context, inputs, repeats, pairs, None), "profiling marginal costs: ")
        if not repeats:
            return [0.0] * steps
        samples = np.frombuffer(pairs, dtype=np.float32)[: 2 * repeats * steps].reshape(repeats, steps, 2)
        return [float(ms) for ms in np.median(samples[:, :, 0] - samples[:, :, 1], axis=0)]

    def results(self) -> list[np.ndarray]:
        self._check(self.library.boltir_synchronize())
        return [self._download(p.value, spec) for p, spec in zip(self._results, self.outputs)]

    def input_pointers(self) -> list[int]:
        return [p.value for p in self._staging]

    def output_pointers(self) -> list[int]:
        return [p.value for p in self._results]

    # ------------------------------------------------------------------- debug

    def _run_debug(self, inputs, pointers, host) -> None:
        """Launch by launch, each result against the interpreter's value of the same op;
        raises at the first that diverges, else keeps the largest launch error in
        `last_launch_error`."""
        from boltir.debugger import compare_launches

        self.last_launch_error = compare_launches(self, inputs, pointers, host)

    def close(self) -> None:
        """Frees the model's device memory. Output buffers a call handed out stay valid
        until the model object itself goes (each output holds a reference to it), so a
        tensor read after close() is never a dangling pointer."""
        if getattr(self, "context", None) and self.context.value:
            self.library.boltir_model_destroy(self.context)
            self.context = ctypes.c_void_p()
        for pointer in getattr(self, "_staging", []):
            self.library.boltir_device_free(pointer)
        self._staging = []
        if not getattr(self, "_results_handed_out", False):
            self._free_results()

    def _free_results(self) -> None:
        for pointer in getattr(self, "_results", []):
            self.library.boltir_device_free(pointer)
        self._results = []

    def __del__(self):
        try:
            self.close()
            self._free_results()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


def _figure(value: float | None, width: int, digits: int, scale: float = 1.0, suffix: str = "") -> str:
    return "-".rjust(width) if value is None else f"{value * scale:{width - len(suffix)}.{digits}f}{suffix}"


OPTIONAL_TIMES = (("alone", "alone_ms"), ("marginal", "marginal_ms"))
"""The optional per-launch times of a profile, each a column where measured."""


def _optional_columns(launches: list[LaunchTime]) -> list[tuple[str, str]]:
    return [(title, field) for title, field in OPTIONAL_TIMES if any(getattr(t, field) is not None for t in launches)]


def summed_times(launches: list[LaunchTime], field: str) -> float | None:
    """The launches' `field` (ms, alone_ms, marginal_ms, bound_ms) summed; None where one
    of them was not measured."""
    values = [getattr(launch, field) for launch in launches]
    return None if None in values else sum(values)


def format_profile(launches: list[LaunchTime], top: int | None = None) -> str:
    """A table of the launches, slowest first (the `top` slowest): each one's time, share,
    achieved TFLOP/s and GB/s and its bound over its time ("% bound": 100% is the
    roofline); the last line sets the sum of the bounds against the measured total. With
    launches timed alone (`profile(alone=True)`) an "alone" column follows the time, and
    with their marginal costs (`profile(marginal=True)`) a "marginal" column."""
    measured = sum(launch.ms for launch in launches)
    share_of = measured or 1.0
    rows = sorted(launches, key=lambda launch: -launch.ms)[:top]
    optional = _optional_columns(launches)
    lines = [f"{'#':>4}  {'ms':>8}  " + "".join(f"{title:>8}  " for title, _ in optional)
             + f"{'share':>6}  {'TFLOP/s':>8}  {'GB/s':>7}  {'% bound':>7}  {'op':<22} kernel"]
    lines += [f"{r.index:>4}  {r.ms:8.4f}  " + "".join(f"{_figure(getattr(r, field), 8, 4)}  " for _, field in optional)
              + f"{100 * r.ms / share_of:5.1f}%  {_figure(r.tflops_per_second, 8, 1)}  "
              f"{_figure(r.gigabytes_per_second, 7, 0)}  {_figure(r.bound_fraction, 7, 1, 100, '%')}  {r.op:<22} {r.kernel}"
              for r in rows]
    total = f"{len(launches)} launches, {measured:.4f} ms in all"
    bounds = [launch.bound_ms for launch in launches]
    if launches and None not in bounds:
        total += f"; bounds {sum(bounds):.4f} ms, {100 * sum(bounds) / share_of:.1f}% of the measured time"
    for title, field in optional:
        if (summed := summed_times(launches, field)) is not None:
            total += f"; {title} {summed:.4f} ms"
    lines.append(total)
    return "\n".join(lines)


def format_profile_by_family(launches: list[LaunchTime]) -> str:
    """The launches summed per kernel family, largest time first: count, time, share, the
    family's summed bounds and their fraction of its time (which families are far from
    their roofline, and how much of the whole they cost); with launches timed alone or
    their marginal costs, their sums per family follow the time."""
    measured = sum(launch.ms for launch in launches) or 1.0
    families: dict[str, list[LaunchTime]] = {}
    for launch in launches:
        families.setdefault(launch.family, []).append(launch)
    optional = _optional_columns(launches)
    lines = [f"{'family':<24}  {'launches':>8}  {'ms':>8}  " + "".join(f"{title:>8}  " for title, _ in optional)
             + f"{'share':>6}  {'bound ms':>8}  {'% bound':>7}"]
    totals = {family: sum(launch.ms for launch in group) for family, group in families.items()}
    for family, group in sorted(families.items(), key=lambda item: -totals[item[0]]):
        ms = totals[family]
        bound = summed_times(group, "bound_ms")
        lines.append(f"{family:<24}  {len(group):>8}  {ms:8.4f}  "
                     + "".join(f"{_figure(summed_times(group, field), 8, 4)}  " for _, field in optional)
                     + f"{100 * ms / measured:5.1f}%  "
                     f"{_figure(bound, 8, 4)}  {_figure(None if bound is None or ms <= 0 else bound / ms, 7, 1, 100, '%')}")
    return "\n".join(lines)


def load(directory: str | Path, debug: bool = False) -> CompiledModel | BucketedModel:
    """The compiled model in `directory`, ready to call (a `BucketedModel` for a build with
    input ranges, `boltir.buckets`)."""
    manifest = read_manifest(Path(directory))
    if "buckets" in manifest:
        if debug:
            raise BoltError("the launch-by-launch debugger does not run bucketed models yet; compile one bucket's size "
                            "statically to debug it")
        return BucketedModel(Path(directory), manifest)
    return CompiledModel(Path(directory), debug=debug, manifest=manifest)


# ----------------------------------------------------------- bucketed models (issue 19)


class BucketedModel:
    """A model compiled for ranges of input sizes (`boltir.buckets`). A call runs the
    smallest bucket that holds it: inputs padded with zeros, outputs sliced back (an
    exact-size call pads and slices nothing); attentions with padded keys get the call's
    length in `key_lengths`. Each bucket runs as its own CUDA graph, captured on the
    bucket's first call over staging buffers that the inputs are copied into (numpy or
    device tensors alike); outputs come back as numpy for numpy inputs, else as new
    device tensors."""

    def __init__(self, directory: Path, manifest: dict | None = None):
        self.directory = directory
        self.manifest = manifest if manifest is not None else read_manifest(directory)
        self.plan = BucketPlan.from_manifest(self.manifest["inputs"], self.manifest["symbols"])
        self.buckets = self.manifest["buckets"]
        self.dtypes = {t["name"]: t["dtype"] for t in self.manifest["inputs"]}
        self.output_dtypes = [numpy_dtype_from_name(t["dtype"]) for t in self.manifest["outputs"]]
        try:
            self.library = ctypes.CDLL(str(directory / self.manifest["library"]))
        except OSError as error:
            raise BoltError(f"cannot load {directory / self.manifest['library']}: {error}") from error
        lib = self.library
        lib.boltir_model_error_string.restype = ctypes.c_char_p
        for name in ("boltir_model_create", "boltir_bucket_run", "boltir_bucket_graph_run", "boltir_model_destroy",
                     "boltir_device_alloc", "boltir_device_free", "boltir_copy", "boltir_synchronize"):
            getattr(lib, name).restype = ctypes.c_int
        self._check(lib.boltir_synchronize())
        weights = (directory / self.manifest["weights"]).read_bytes()
        self.context = ctypes.c_void_p()
        self._check(lib.boltir_model_create(weights, ctypes.c_size_t(len(weights)), ctypes.byref(self.context)),
                    "creating the model context: ")
        self._staging: dict[tuple[int, str], ctypes.c_void_p] = {}
        """(bucket, input or output name) -> a device buffer; allocated on the bucket's first call."""

    _check = CompiledModel._check
    _alloc = CompiledModel._alloc

    def bucket_for(self, **shapes) -> int:
        """The index of the bucket that runs a call with these input shapes."""
        return choose_for_call(self.plan, shapes)[0].index

    def _buffer(self, bucket: int, name: str, nbytes: int) -> int:
        if (bucket, name) not in self._staging:
            self._staging[bucket, name] = self._alloc(nbytes)
        return self._staging[bucket, name].value

    def _named(self, args, kwargs) -> dict:
        names = list(self.plan.inputs)
        if args and kwargs:
            raise BoltError("pass the inputs either by position or by name, not both")
        if args and len(args) != len(names):
            raise BoltError(f"the model takes {len(names)} inputs ({', '.join(names)}), got {len(args)}")
        return dict(zip(names, args)) if args else dict(kwargs)

    def __call__(self, *args, **kwargs):
        values = self._named(args, kwargs)
        devices = [_device_pointer(value) is not None for value in values.values()]
        if any(devices) and not all(devices):
            raise BoltError("inputs must be all numpy arrays or all device tensors")
        if devices and all(devices):
            return self._call_device(values)
        arrays = {name: np.ascontiguousarray(value) for name, value in values.items()}
        for name, array in arrays.items():
            self._check_dtype(name, ir_name_of_numpy(array.dtype.name))
        index, padded, sizes = bucket_inputs(self.plan, arrays)
        inputs = []
        ordered = {name: padded[name] for name in self.buckets[index]["inputs"]}  # the library's order
        for name, array in self._with_key_lengths(index, ordered, sizes).items():
            inputs.append(self._buffer(index, name, array.nbytes))
            self._check(self.library.boltir_copy(ctypes.c_void_p(inputs[-1]), array.ctypes.data_as(ctypes.c_void_p),
                                                 ctypes.c_size_t(array.nbytes), HOST_TO_DEVICE), "copying an input: ")
        shapes = list(self.buckets[index]["outputs"].values())
        outputs = [self._buffer(index, f"output {i}", int(np.prod(shape)) * dtype.itemsize)
                   for i, (shape, dtype) in enumerate(zip(shapes, self.output_dtypes, strict=True))]
        self._run(index, inputs, outputs, None)
        self._check(self.library.boltir_synchronize(), "running: ")
        results = []
        for pointer, shape, dtype, carried in zip(outputs, shapes, self.output_dtypes, self._carried(index), strict=True):
            out = np.empty(shape, dtype=dtype)
            self._check(self.library.boltir_copy(out.ctypes.data_as(ctypes.c_void_p), ctypes.c_void_p(pointer),
                                                 ctypes.c_size_t(out.nbytes), DEVICE_TO_HOST), "copying an output: ")
            results.append(np.ascontiguousarray(slice_to(out, output_cut(carried, sizes))))
        return results

    def _call_device(self, values: dict) -> list:
        import torch

        tensors = {name: value if isinstance(value, torch.Tensor) else torch.from_dlpack(value) for name, value in values.items()}
        for name, tensor in tensors.items():
            self._check_dtype(name, ir_name_of_numpy(str(tensor.dtype).removeprefix("torch.")))
        bucket, sizes = choose_for_call(self.plan, {name: tuple(t.shape) for name, t in tensors.items()})
        staged = self._device_staging(bucket.index)
        for name, tensor in tensors.items():
            target = staged[name]
            if tuple(tensor.shape) != tuple(target.shape):
                target.zero_()
                target = target[tuple(slice(0, size) for size in tensor.shape)]
            target.copy_(tensor)
        if "key_lengths" in self.buckets[bucket.index]:
            staged[self.buckets[bucket.index]["key_lengths"]["input"]].fill_(sizes[self.buckets[bucket.index]["key_lengths"]["symbol"]])
        outputs = staged["__outputs__"]
        stream = torch.cuda.current_stream().cuda_stream
        self._run(bucket.index, [t.data_ptr() for name, t in staged.items() if name != "__outputs__"],
                  [t.data_ptr() for t in outputs], stream)
        return [slice_to(out, output_cut(carried, sizes)).clone()
                for out, carried in zip(outputs, self._carried(bucket.index), strict=True)]

    def _device_staging(self, index: int) -> dict:
        """Bucket `index`'s device tensors (inputs, key lengths, "__outputs__"), made once."""
        import torch

        cached = getattr(self, "_torch_staging", {})
        self._torch_staging = cached
        if index not in cached:
            bucket = self.buckets[index]
            staged = {name: torch.zeros(shape, dtype=getattr(torch, numpy_dtype_from_name(self.dtypes[name]).name), device="cuda")
                      for name, shape in bucket["inputs"].items()}
            if "key_lengths" in bucket:
                staged[bucket["key_lengths"]["input"]] = torch.zeros(bucket["key_lengths"]["shape"], dtype=torch.int32, device="cuda")
            staged["__outputs__"] = [torch.empty(shape, dtype=getattr(torch, dtype.name), device="cuda")
                                     for shape, dtype in zip(bucket["outputs"].values(), self.output_dtypes, strict=True)]
            cached[index] = staged
        return cached[index]

    def _with_key_lengths(self, index: int, padded: dict, sizes) -> dict:
        entry = self.buckets[index].get("key_lengths")
        if entry is None:
            return padded
        return {**padded, entry["input"]: np.full(entry["shape"], sizes[entry["symbol"]], dtype=np.int32)}

    def _carried(self, index: int) -> list[dict[int, int]]:
        axes = self.buckets[index]["output_axes"]
        return [{int(axis): symbol for axis, symbol in axes[name].items()} for name in self.buckets[index]["outputs"]]

    def _check_dtype(self, name: str, dtype: str) -> None:
        if name in self.dtypes and dtype != self.dtypes[name]:
            raise BoltError(f"input '{name}' must be {self.dtypes[name]}, got {dtype}")

    def _run(self, index: int, inputs: list[int], outputs: list[int], stream) -> None:
        self._check(self.library.boltir_bucket_graph_run(self.context, index, self._pointer_array(inputs),
                                                         self._pointer_array(outputs), ctypes.c_void_p(stream)), "running: ")

    _pointer_array = CompiledModel._pointer_array

    def close(self) -> None:
        if getattr(self, "context", None) and self.context.value:
            self.library.boltir_model_destroy(self.context)
            self.context = ctypes.c_void_p()
        for pointer in getattr(self, "_staging", {}).values():
            self.library.boltir_device_free(pointer)
        self._staging, self._torch_staging = {}, {}

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass
