"""Exports one bench model (bench/models.py), compiles it with boltir and runs it once in
debug mode (launch by launch against the interpreter), then once normally against PyTorch
fp32: the tool for a model whose output is wrong.

    python3 -m bench.debug_model resnet50 1 [sm90|sm90-2x|sm80]
"""

import sys
from pathlib import Path

import boltir.compiler
from bench import models
from boltir import BoltError
from boltir.accuracy import relative_l2
from boltir.runtime import load

name, batch = sys.argv[1], int(sys.argv[2])
arch, cutlass = models.BUILDS[sys.argv[3] if len(sys.argv) > 3 else "sm90"]
work = Path("/tmp/boltir-debug")
work.mkdir(exist_ok=True)
model = models.make_model(name)
inputs = models.example_inputs(name, batch)
models.export(name, model, inputs, work / f"{name}.onnx")
result = boltir.compiler.compile(work / f"{name}.onnx", work / name, arch=arch, dtype="f16", progress=False, cutlass=cutlass)
arrays = {k: v.numpy() for k, v in inputs.items()}
# Launch by launch first: it names the launch that fails or diverges, which a plain run cannot.
try:
    load(result.directory, debug=True)(**arrays)
except BoltError as error:
    print("DEBUG:", error.message)
try:
    (ours,) = load(result.directory)(**arrays)
except BoltError as error:
    print("RUN:", error.message)
    sys.exit(1)
import torch  # noqa: E402 - only after the boltir runs, which need no torch

with torch.no_grad():
    out = model(**inputs) if name == "bert" else model(*inputs.values())
reference = (out.last_hidden_state if hasattr(out, "last_hidden_state") else out).numpy()
print("relative error vs torch fp32:", relative_l2(ours, reference))
