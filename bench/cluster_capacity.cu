// How many thread block clusters of each size one GPU runs at once, for a CTA that takes
// a whole multiprocessor's shared memory (as our split GEMM's and CUTLASS's sm90 tiles do):
// cudaOccupancyMaxActiveClusters, which knows how the chip's multiprocessors fall into GPCs
// (a cluster lives in one). A grid of more clusters than that runs in two waves, however
// few CTAs it has against the multiprocessor count.
//   nvcc -arch=sm_90a -o /tmp/cluster_capacity bench/cluster_capacity.cu && /tmp/cluster_capacity
// (bench/gpu_run.sh stage "clusters"). Prints one line a (shared memory, cluster size).
#include <cstdio>
#include <cuda_runtime.h>

__global__ void probe(int *out) {
  extern __shared__ int shared[];
  if (threadIdx.x == 0 && out) out[blockIdx.x] = shared[0];
}

int main() {
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    std::printf("error: no CUDA device\n");
    return 1;
  }
  std::printf("device: %s, %d multiprocessors\n", prop.name, prop.multiProcessorCount);
  int const limit = int(prop.sharedMemPerBlockOptin);
  cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, limit);
  cudaFuncSetAttribute(probe, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  std::printf("shared KB | cluster CTAs | clusters at once | CTAs at once\n");
  for (int kilobytes : {120, 135, 172, 200, limit / 1024}) {
    for (int size : {1, 2, 4, 8, 16}) {
      cudaLaunchConfig_t config = {};
      config.gridDim = dim3(size * 64, 1, 1);
      config.blockDim = dim3(384, 1, 1);
      config.dynamicSmemBytes = size_t(kilobytes) * 1024;
      cudaLaunchAttribute cluster;
      cluster.id = cudaLaunchAttributeClusterDimension;
      cluster.val.clusterDim.x = size;
      cluster.val.clusterDim.y = cluster.val.clusterDim.z = 1;
      config.attrs = &cluster;
      config.numAttrs = 1;
      int clusters = 0;
      cudaError_t const error = cudaOccupancyMaxActiveClusters(&clusters, probe, &config);
      if (error != cudaSuccess) {
        std::printf("%d | %d | error: %s | \n", kilobytes, size, cudaGetErrorString(error));
      } else {
        std::printf("%d | %d | %d | %d\n", kilobytes, size, clusters, clusters * size);
      }
    }
  }
  return 0;
}
