"""The CUDA target: op-level IR to CUTLASS template instances, CUDA source and a shared
library. Its subpackages, lowest first (each imports only those before it):

- `codegen/`: kernel generators (CUTLASS 2.x and 3.x instances, their epilogues, the data
  and compute kernels), the launcher ABI, the host program, the jinja templates;
- `toolchain/`: nvcc, the object cache, loading a kernel library and launching from it;
- `select/`: kernel choices, the selection heuristic and the tuner's candidates;
- `tune/`: the tuning database, the tuner and its measuring worker, the db/tune selectors;
- `passes/`: the target's own passes, `select-kernels` and `lower-op-to-cutlass`.
"""
