#!/usr/bin/env bash
# Downloads, into .whl/ (ignored by git), the wheels the GPU machine lacks: xdsl and its
# two small dependencies, and nvidia-cutlass (only its headers are used). The GPU machine
# runs Python 3.12 on x86-64 and reaches no package index, so they travel with the call
# (`carry: [".whl"]`); bench/setup_gpu.sh installs them there.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -d .whl xdsl==0.75.0 "immutabledict<4.3.2" ordered-set==4.1 nvidia-cutlass==4.2.0.0
ls .whl
