#!/usr/bin/env bash
# Nsight Compute on the kernels issues 15 and 16 still miss (VGG-16's 224² halo convs in every
# mode and tile, MobileNetV2's 28² depthwise conv in every timed tile, the Hopper attention at
# b32 h12 s512 d64 in every schedule and on SDPA's backends, MobileNetV2's 28² block fused whole or in part by our
# depthwise_pointwise kernel, BERT b1's FFN GEMMs at M = 128 on the heuristic's tile and the
# tuner's small-M candidates), under BOLTIR_BENCH_PROFILE: each kernel launched twice, plainly,
# and a plain copy of the depthwise conv's bytes for its floor. One report each in $OUT
# (ncu_halo.txt, ncu_dw.txt, ncu_copy.txt, ncu_attention.txt, ncu_dwpw.txt, ncu_smallm.txt,
# ncu_wgsplit.txt); NCU_ONLY=halo,dw,copy,attention,dwpw,smallm,wgsplit picks some (default: the first four);
# NCU_HALO names other halo convs (check_halo_conv --timing-only texts, e.g. "repvgg_a0 3x3/2 48->48 112² N32").
#   run: bash bench/ncu_kernels.sh      carry: [".whl"]
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/setup_gpu.sh || exit 1
OUT="${OUT:-/tmp/boltir-out}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
HALO="${NCU_HALO:-vgg16 3x3 64->64 224² N32,vgg16 stem 3x3 16->64 224² N32}"  # NCU_HALO: other timed convs of check_halo_conv
# the sections, and each stall reason's warps per issued instruction (what WarpStateStats's
# text page leaves out: the sixteenth session's reports had no stall breakdown)
sections=(--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats
          --section ComputeWorkloadAnalysis --section SchedulerStats
          --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio$")
only="${NCU_ONLY:-halo,dw,copy,attention}"
profile() {  # name, kernel regex, command...
  local name="$1" regex="$2"
  shift 2
  BOLTIR_BENCH_PROFILE=1 ncu --clock-control none --kernel-name-base demangled -k "regex:$regex" "${sections[@]}" \
    "$@" > "$OUT/ncu_$name.txt" 2>&1
  echo "$name: rc $?, $(grep -c '^==PROF== Profiling' "$OUT/ncu_$name.txt") launches profiled"
}
if [[ ",$only," == *,halo,* ]]; then
  python3 -m bench.check_halo_conv --only none --timing-only "$HALO" --build-only > /dev/null
  profile halo boltir_halo_conv python3 -m bench.check_halo_conv --only none --timing-only "$HALO"
fi
if [[ ",$only," == *,dw,* ]]; then
  python3 -m bench.check_depthwise --timing --only 28x28x192 --build-only > /dev/null
  profile dw boltir_depthwise python3 -m bench.check_depthwise --timing --only 28x28x192
fi
if [[ ",$only," == *,copy,* ]]; then  # the depthwise conv's bytes as a plain copy: its floor under the same profiler
  profile copy "copy|elementwise" python3 -c "import torch; x = torch.empty(32 * 28 * 28 * 192, dtype=torch.float16, device='cuda'); \
y = torch.empty_like(x); [y.copy_(x) for _ in range(2)]; torch.cuda.synchronize()"
fi
if [[ ",$only," == *,dwpw,* ]]; then
  python3 -m bench.check_depthwise_pointwise --timing --only block4 --build-only > /dev/null
  profile dwpw boltir_depthwise_pointwise python3 -m bench.check_depthwise_pointwise --timing --only block4
fi
if [[ ",$only," == *,attention,* ]]; then
  ATTENTION="b32 h12 s512 d64 BHSD"
  python3 -m bench.check_attention --only "$ATTENTION" --build-only > /dev/null
  profile attention "fmha|attention|boltir|sdpa|flash|cudnn" python3 -m bench.check_attention --only "$ATTENTION"
fi
if [[ ",$only," == *,smallm,* ]]; then  # both FFN GEMMs: the heuristic's 2.x and 3.x tiles and every small-M candidate
  SMALLM="128x768x3072,128x3072x768"
  python3 -m bench.kernels --only "$SMALLM" --build-only > /dev/null
  profile smallm "boltir" python3 -m bench.kernels --only "$SMALLM"
fi
if [[ ",$only," == *,wgsplit,* ]]; then  # where the cluster tiles' warps wait: SourceCounters' top stall lines
  python3 -m bench.kernels --only 128x768x3072 --build-only > /dev/null
  profile wgsplit "wgsplit" --section SourceCounters --cache-control none python3 -m bench.kernels --only 128x768x3072
fi
