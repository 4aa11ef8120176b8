"""Kernel generators: op-level or cutlass ops to CUDA source. Each generator module
implements `generator.KernelGenerator`; the host program (`host_program`) builds on them."""
