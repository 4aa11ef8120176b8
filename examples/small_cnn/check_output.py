"""Compares bolt-run's output with the expected one: `check_output.py OUT.npz EXPECTED.npz`."""

import sys

import numpy as np

with np.load(sys.argv[1]) as got, np.load(sys.argv[2]) as expected:
    for name in expected.files:
        value, reference = got[name], expected[name]
        error = np.linalg.norm(value - reference) / np.linalg.norm(reference)
        print(f"{name}: {value.reshape(-1)[:5]}... relative error {error:.2e} against numpy loops")
        if not error < 1e-5:
            sys.exit(f"{name} does not match the reference")
print("OK: the interpreter matches the reference")
