"""The CUDA backend: CUTLASS templates, the emitter and the nvcc driver."""
