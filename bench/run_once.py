"""Loads a compiled model directory and runs it once on random numpy inputs, without
torch: what `compute-sanitizer --tool memcheck` watches.

    compute-sanitizer --tool memcheck --error-exitcode 1 python3 -m bench.run_once DIR
"""

import sys

import numpy as np

from boltir.runtime import load

model = load(sys.argv[1])
rng = np.random.default_rng(0)
inputs = {}
for spec in model.inputs:
    if np.issubdtype(spec.numpy_dtype, np.integer):
        inputs[spec.name] = rng.integers(0, 1000, spec.shape).astype(spec.numpy_dtype)
    else:
        inputs[spec.name] = rng.standard_normal(spec.shape).astype(spec.numpy_dtype)
outputs = model(**inputs)
for spec, value in zip(model.outputs, outputs):
    print(f"{spec.name}: {spec.describe()} finite={bool(np.isfinite(value.astype(np.float32)).all())} "
          f"mean={float(value.astype(np.float64).mean()):.4g}")
model.close()
