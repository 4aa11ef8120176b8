// The toolkit's <curand_kernel.h> where it has one, else nothing: CUTLASS example 41's
// kernel_forward.h includes it for dropout, which it compiles only with HAS_PYTORCH, and a
// CUDA toolkit installed from pip (nvidia-cuda-nvcc) has no cuRAND headers.
#pragma once
#if __has_include_next(<curand_kernel.h>)
#include_next <curand_kernel.h>
#endif
