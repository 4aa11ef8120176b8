#!/usr/bin/env bash
# Downloads CuPy for the GPU machine into .whl_cupy/ (ignored by git), for the users'-path
# DLPack check (bench/users_path.py, issue 18): `carry: [".whl", ".whl_cupy", ...]`;
# bench/setup_gpu.sh installs it when present. The machine reaches no package index, and
# cupy-cuda13x's wheel (69 MB) is over a call's 64 MiB carry, so this keeps the wheel
# without what boltir's check never imports: thrust's bindings (cupy's sort), cuTENSOR,
# cuSOLVER, cuSPARSE and cupyx.scipy's extension modules (47 MB left; `import cupy`,
# `cupy.from_dlpack` and `cupy.asnumpy` work, checked with Python 3.12 without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .whl_cupy /tmp/boltir-cupy
python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -d /tmp/boltir-cupy cupy-cuda13x==14.2.0 fastrlock==0.8.4 "cuda-pathfinder==1.*"
cp /tmp/boltir-cupy/fastrlock-*.whl /tmp/boltir-cupy/cuda_pathfinder-*.whl .whl_cupy/
python3 - /tmp/boltir-cupy/cupy_cuda13x-14.2.0-*.whl .whl_cupy <<'PY'
import sys
import zipfile
from pathlib import Path

source, target = Path(sys.argv[1]), Path(sys.argv[2]) / Path(sys.argv[1]).name
left_out = ("cupy/cuda/thrust.", "cupyx/_cutensor.", "cupyx/_cusolver.", "cupyx/scipy/",
            "cupy_backends/cuda/libs/cusolver.", "cupy_backends/cuda/libs/cusparse.")
with zipfile.ZipFile(source) as wheel, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as trimmed:
    for entry in wheel.infolist():
        if not entry.filename.startswith(left_out):
            trimmed.writestr(entry, wheel.read(entry.filename))
print(f"{target}: {target.stat().st_size / 2**20:.1f} MiB")
PY
ls -la .whl_cupy
