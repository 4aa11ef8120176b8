"""Compares bolt-run's output with onnxruntime's on the same model and input:
`check_with_onnxruntime.py MODEL.onnx INPUT.npz OUTPUT.npz`."""

import sys

import numpy as np
import onnxruntime

model, inputs_path, outputs_path = sys.argv[1:4]
session = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
with np.load(inputs_path) as inputs, np.load(outputs_path) as outputs:
    expected = session.run(None, {name: inputs[name] for name in inputs.files})
    for index, reference in enumerate(expected):
        value = outputs[f"result_{index}"]
        error = np.linalg.norm(value - reference) / np.linalg.norm(reference)
        print(f"result_{index}: {value.reshape(-1)[:4]}... relative error {error:.2e} against onnxruntime")
        if not error < 1e-4:
            sys.exit(f"result_{index} does not match onnxruntime")
print("OK: boltir's import and interpreter match onnxruntime")
