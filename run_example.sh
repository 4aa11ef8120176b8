#!/usr/bin/env bash
# The main job on the bundled example, from a fresh machine: a venv with boltir, then a
# small ResNet-style CNN written as ONNX, imported with boltc, printed, run in the
# interpreter, and checked against onnxruntime.
set -euo pipefail
cd "$(dirname "$0")"
source scripts/setup_venv.sh

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "== writing the example model (random weights)"
python examples/small_resnet/make_model.py "$work"

echo "== importing it: boltc --emit graph (weights elided for reading)"
boltc "$work/small_resnet.onnx" --emit graph -o "$work/small_resnet.mlir"
bolt-opt "$work/small_resnet.mlir" --elide-weights

echo "== running the imported IR in the numpy interpreter"
bolt-run "$work/small_resnet.mlir" --inputs "$work/input.npz" -o "$work/output.npz"
python examples/small_resnet/check_with_onnxruntime.py "$work/small_resnet.onnx" "$work/input.npz" "$work/output.npz"

echo "== compiling it to CUDA: boltc -o (CUTLASS kernels, host program, shared library)"
boltc "$work/small_resnet.onnx" -o "$work/out" --arch sm80
ls -l "$work/out"
python examples/small_resnet/run_compiled.py "$work/small_resnet.onnx" "$work/input.npz" "$work/out"
