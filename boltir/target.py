"""The GPU targets boltir compiles for: one record per target, read by every layer.

A target is named by its CUDA architecture ("sm80": A100-class, "sm90": H100/H200-class).
The same names are also the `arch` of a `cutlass` dialect instance, where they say which
generation of CUTLASS template the kernel is (sm80: a 2.x mma.sync kernel, which runs on
both targets; sm90: a 3.x wgmma/TMA kernel, which runs only on Hopper). Both uses read the
record of that name, so the nvcc flags, shared-memory limit and the rest live here once.

The peaks are what the roofline model divides by. For sm90 they are the H200 ceilings
measured with PyTorch (8192³ f16/bf16 matrix products, device-to-device copy; TF32 is the
datasheet figure); for sm80 they are the A100-SXM4-80GB datasheet figures (no A100 has
been measured here). The figures and their dates are in `bench/RESULTS.md`.

    from boltir.target import get_target
    target = get_target("sm90")
    target.multiprocessors, target.peak_flops("f16"), target.dram_bytes_per_second
"""

from __future__ import annotations

from dataclasses import dataclass, field

from boltir.diagnostics import BoltError


@dataclass(frozen=True)
class GpuTarget:
    """Everything boltir needs to know about one GPU generation."""

    arch: str
    """CUDA architecture name: "sm80", "sm90"."""
    description: str
    multiprocessors: int
    """The SM count of the reference GPU: the grid the heuristic fills."""
    shared_memory_bytes: int
    """The most shared memory one threadblock may use (cudaDevAttrMaxSharedMemoryPerBlockOptin)."""
    peak_tensor_flops: dict[str, float] = field(hash=False)
    """Dense tensor-core FLOP/s by element type (f32 means TF32)."""
    dram_bytes_per_second: float
    """DRAM bandwidth, reads and writes together."""
    nvcc_arch_flags: tuple[str, ...]
    """The `-gencode` flags of a kernel written for this arch."""
    compile_memory_bytes: int
    """Peak host memory of one nvcc process compiling one such kernel (sets parallelism)."""
    cutlass_generations: tuple[str, ...]
    """CUTLASS template generations that run here: 2.x everywhere, 3.x on Hopper."""
    alignment_bytes: int = 16
    """Tensor-core kernels load 16 bytes per access along the contiguous axis."""
    fixed_channels: tuple[int, ...] = (1, 2, 4)
    """Input channel counts CUTLASS 2.x's fixed-channels conv (an image's first conv) takes as is."""
    nvcc_defines: tuple[str, ...] = ()
    """Macros every kernel for this arch is compiled with."""
    cluster_ctas: dict[int, int] = field(default_factory=dict, hash=False)
    """CTAs of thread block clusters of each size that run at once on the reference GPU, one
    CTA a multiprocessor (cudaOccupancyMaxActiveClusters × the size, `bench/cluster_capacity.cu`).
    A cluster runs inside one GPC, so large clusters leave multiprocessors idle. A size not
    listed: every multiprocessor."""

    def concurrent_ctas(self, cluster: int, sms: int | None = None) -> int:
        """How many CTAs in clusters of `cluster` run at once, one a multiprocessor, on a GPU
        of `sms` multiprocessors (the reference GPU's by default; others in proportion)."""
        sms = self.multiprocessors if sms is None else sms
        ctas = self.cluster_ctas.get(cluster, self.multiprocessors) * sms // self.multiprocessors
        return max(cluster, ctas // cluster * cluster)

    def peak_flops(self, element: str) -> float:
        """Tensor-core FLOP/s for `element` ("f16", "bf16", "f32"); f16's for others."""
        return self.peak_tensor_flops.get(element, self.peak_tensor_flops["f16"])

    def bound_seconds(self, flops: float, bytes_moved: float, element: str = "f16") -> float:
        """The roofline bound: max(FLOPs / peak, bytes / bandwidth)."""
        return max(flops / self.peak_flops(element), bytes_moved / self.dram_bytes_per_second)


TARGETS: dict[str, GpuTarget] = {
    "sm80": GpuTarget(
        arch="sm80",
        description="A100 (Ampere): CUTLASS 2.x kernels",
        multiprocessors=108,
        shared_memory_bytes=163 * 1024,
        peak_tensor_flops={"f16": 312e12, "bf16": 312e12, "f32": 156e12},
        dram_bytes_per_second=2.039e12,
        # A 2.x kernel also carries sm_90 code, so that one object serves an sm90 build.
        nvcc_arch_flags=("-gencode=arch=compute_80,code=[sm_80,sm_90]",),
        compile_memory_bytes=800_000_000,
        cutlass_generations=("2.x",),
    ),
    "sm90": GpuTarget(
        arch="sm90",
        description="H100/H200 (Hopper): CUTLASS 3.x kernels (wgmma, TMA) and 2.x ones",
        multiprocessors=132,
        shared_memory_bytes=227 * 1024,
        peak_tensor_flops={"f16": 664e12, "bf16": 763e12, "f32": 494e12},
        dram_bytes_per_second=4.265e12,
        # Plain sm_90 compiles a 3.x kernel's body out; it then fails only at launch.
        nvcc_arch_flags=("-gencode=arch=compute_90a,code=sm_90a",),
        compile_memory_bytes=4_000_000_000,
        cutlass_generations=("2.x", "3.x"),
        # Programmatic dependent launch: our kernels (templates/boltir_pdl.h) and CUTLASS
        # 3.x GEMMs let the next launch overlap their tail.
        nvcc_defines=("-DBOLTIR_PDL=1", "-DCUTLASS_ENABLE_GDC_FOR_SM90"),
        # measured on an H100 SXM (132 SMs); the H200 is the same chip, not yet measured
        cluster_ctas={1: 132, 2: 132, 4: 120, 8: 120, 16: 112},
    ),
}

ARCHS: tuple[str, ...] = tuple(TARGETS)
DEFAULT_ARCH = "sm90"


def get_target(arch: str) -> GpuTarget:
    """The record of `arch`, or one error that lists the known targets."""
    try:
        return TARGETS[arch]
    except KeyError:
        raise BoltError(f"unknown GPU target '{arch}'; expected one of {', '.join(ARCHS)}") from None
