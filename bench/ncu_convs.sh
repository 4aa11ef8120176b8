#!/usr/bin/env bash
# Nsight Compute on the convs issue 15 still misses (VGG-16's 224² halo convs in every mode,
# MobileNetV2's 28² depthwise conv in every timed tile), under BOLTIR_BENCH_PROFILE: each
# kernel launched twice, plainly. One report per family in $OUT (ncu_halo.txt, ncu_dw.txt).
#   run: bash bench/ncu_convs.sh      carry: [".whl"]
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/setup_gpu.sh || exit 1
OUT="${OUT:-/tmp/boltir-out}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
HALO="vgg16 3x3 64->64 224² N32,vgg16 stem 3x3 16->64 224² N32"
sections=(--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats
          --section ComputeWorkloadAnalysis)
python3 -m bench.check_halo_conv --only none --timing-only "$HALO" --build-only > /dev/null
python3 -m bench.check_depthwise --timing --only 28x28x192 --build-only > /dev/null
BOLTIR_BENCH_PROFILE=1 ncu --clock-control none --kernel-name-base demangled -k regex:boltir_halo_conv "${sections[@]}" \
  python3 -m bench.check_halo_conv --only none --timing-only "$HALO" > "$OUT/ncu_halo.txt" 2>&1
echo "halo: rc $?, $(grep -c 'boltir_halo_conv' "$OUT/ncu_halo.txt") kernel lines"
BOLTIR_BENCH_PROFILE=1 ncu --clock-control none --kernel-name-base demangled -k regex:boltir_depthwise "${sections[@]}" \
  python3 -m bench.check_depthwise --timing --only 28x28x192 > "$OUT/ncu_dw.txt" 2>&1
echo "depthwise: rc $?, $(grep -c 'boltir_depthwise' "$OUT/ncu_dw.txt") kernel lines"
