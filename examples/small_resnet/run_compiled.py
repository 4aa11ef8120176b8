"""Runs the compiled example on the GPU and compares it with the interpreter's f16
pipeline output and with onnxruntime; without a GPU, says so and checks the op-level
interpreter instead: `run_compiled.py MODEL.onnx INPUT.npz OUT_DIR`."""

import sys

import numpy as np
import onnxruntime

from boltir import BoltError
from boltir.compiler import lower_model
from boltir.interp import run
from boltir.runtime import load

model_path, inputs_path, directory = sys.argv[1:4]
with np.load(inputs_path) as npz:
    inputs = {name: npz[name] for name in npz.files}
session = onnxruntime.InferenceSession(model_path, providers=["CPUExecutionProvider"])
(reference,) = session.run(None, inputs)
try:
    compiled = load(directory)
except BoltError as error:
    print(f"no GPU here ({error.message}); running the lowered model in the interpreter instead")
    module, _, _ = lower_model(model_path, arch="sm80", dtype="f16")
    (got,) = run(module, inputs)
    where = "the interpreter (f16 pipeline)"
else:
    (got,) = compiled(**inputs)
    where = "the compiled library on the GPU"
error = np.linalg.norm(got.astype(np.float64) - reference) / np.linalg.norm(reference)
print(f"{where}: {got.reshape(-1)[:4]}... relative error {error:.2e} against onnxruntime (f32)")
if not error < 1e-2:
    sys.exit("the compiled model does not match onnxruntime")
print("OK")
