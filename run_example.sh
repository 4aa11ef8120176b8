#!/usr/bin/env bash
# The main job on the bundled example, from a fresh machine: a venv, boltir installed,
# then the small conv -> relu -> gemm network printed, run in the interpreter, and
# checked against an independent numpy computation.
set -euo pipefail
cd "$(dirname "$0")"
source scripts/setup_venv.sh

example=examples/small_cnn
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

echo "== the network as graph IR (weights elided for reading)"
bolt-opt "$example/small_cnn.mlir" --elide-weights

echo "== running it in the numpy interpreter"
bolt-run "$example/small_cnn.mlir" --inputs "$example/input.npz" -o "$out/output.npz"
python "$example/check_output.py" "$out/output.npz" "$example/expected.npz"
