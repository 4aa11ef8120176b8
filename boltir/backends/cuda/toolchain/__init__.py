"""nvcc and what surrounds it: compiling translation units in parallel through a content-hash
object cache, linking shared libraries, loading them and launching kernels from Python."""
