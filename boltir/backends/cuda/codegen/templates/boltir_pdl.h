// boltir_pdl.h: programmatic dependent launch (PDL) for the kernels boltir writes itself.
// On sm_90 a grid launched with cudaLaunchAttributeProgrammaticStreamSerialization may begin
// while the previous grid in the stream still runs, so launch latency overlaps that grid's
// tail instead of following it. Every kernel that is launched this way must call enter()
// before it touches global memory; a kernel that does not is launched with <<<>>>.
#ifndef BOLTIR_PDL_H
#define BOLTIR_PDL_H

#include <stdlib.h>
#include <string.h>

#include <utility>

namespace boltir_pdl {

/// The first statement of every boltir kernel: waits until the grids it depends on have
/// completed and their writes are visible, then lets the next grid start launching (it
/// waits in turn, so the chain stays ordered). No-ops for a plain launch and below sm_90.
__device__ __forceinline__ void enter() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/// The first statement of a wrapper around a library's 3.x GEMM or conv kernel, which waits
/// on its predecessors itself (compiled with the library's GDC switch) but triggers its
/// dependents only after its mainloop: lets the next grid start launching at once. It
/// touches no memory; the next grid still waits for this one to complete.
__device__ __forceinline__ void trigger() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/// Whether this unit launches with PDL: compiled for sm_90a (which defines BOLTIR_PDL), and
/// not switched off with BOLTIR_PDL=0 in the environment (read once per process).
inline bool enabled() {
#if defined(BOLTIR_PDL) && BOLTIR_PDL
  static bool const on = [] {
    char const *value = getenv("BOLTIR_PDL");
    return value == nullptr || value[0] != '0';
  }();
  return on;
#else
  return false;
#endif
}

/// Whether the 3.x GEMM and conv kernels let the next grid launch from their first
/// instruction (boltir::rt::launch_3x), rather than where the library triggers it (after
/// its mainloop, so that only the epilogue overlaps the next launch). BOLTIR_PDL=late keeps
/// the library's placement, for A/B comparisons (read once per process).
inline bool early_trigger() {
  static bool const on = [] {
    char const *value = getenv("BOLTIR_PDL");
    return value == nullptr || strcmp(value, "late") != 0;
  }();
  return on;
}

/// Whether the 3.x GEMMs of few rows prefetch their B operand (a layer's weight) into the L2
/// before they wait on their predecessors (boltir::rt::launch_3x): the weight's DRAM read
/// then overlaps the previous kernel. BOLTIR_PDL=noprefetch keeps PDL and the early trigger
/// without it, for A/B comparisons (read once per process).
inline bool prefetch_weights() {
  static bool const on = [] {
    char const *value = getenv("BOLTIR_PDL");
    return value == nullptr || strcmp(value, "noprefetch") != 0;
  }();
  return on;
}

/// This CTA's share of `bytes` at `data` (split evenly over the grid's CTAs, in 16-byte
/// units) prefetched into the L2 by one thread: a hint, with no effect on what any load
/// later reads (the L2 is where the GPU's writes meet), so it may run before
/// griddepcontrol.wait.
__device__ __forceinline__ void prefetch_share(void const *data, unsigned long long bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (data == nullptr || threadIdx.x + threadIdx.y + threadIdx.z != 0) {
    return;
  }
  unsigned long long const ctas = 1ull * gridDim.x * gridDim.y * gridDim.z;
  unsigned long long const cta = blockIdx.x + 1ull * gridDim.x * (blockIdx.y + 1ull * gridDim.y * blockIdx.z);
  unsigned long long const share = (bytes / 16 + ctas - 1) / ctas * 16;
  unsigned long long const begin = cta * share;
  if (begin >= bytes) {
    return;
  }
  unsigned long long const size = (share < bytes - begin ? share : bytes - begin) / 16 * 16;
  if (size > 0) {
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(static_cast<char const *>(data) + begin),
                 "r"(static_cast<unsigned>(size))
                 : "memory");
  }
#endif
}

/// kernel<<<grid, block, shared_bytes, stream>>>(args...), with PDL where enabled(). A
/// failed launch is left for cudaGetLastError, as with <<<>>>.
template <typename... Params, typename... Args>
inline void launch(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared_bytes, cudaStream_t stream,
                   Args &&...args) {
  if (!enabled()) {
    kernel<<<grid, block, shared_bytes, stream>>>(std::forward<Args>(args)...);
    return;
  }
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared_bytes;
  config.stream = stream;
  config.attrs = attribute;
  config.numAttrs = 1;
  (void)cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}

}  // namespace boltir_pdl

#endif  // BOLTIR_PDL_H
