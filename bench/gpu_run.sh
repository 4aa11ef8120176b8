#!/usr/bin/env bash
# One device call, several stages (a lent machine is bare and released soon after each
# call, so everything goes in one command):
#   run: bash bench/gpu_run.sh check kernels tests      carry: [".whl", ".kcache/objects", ".kcache/members"]
# (bench/carry_objects.py first trims .kcache/objects to what the stages need: 64 MiB in all)
# Stages: check (bench/check_kernels.py $CHECK_ARGS), sweep (bench/compile_sweep.py: nvcc on every instance
# the selection sweep emits), data / compute (the op-kernel checks; they take $DATA_ARGS, $COMPUTE_ARGS), attention (bench/check_attention.py
# $ATTENTION_ARGS: the fused attention against the interpreter, then timed against torch's SDPA), splitk
# (bench/check_splitk_conv.py $SPLITK_ARGS: our split-reduction conv against the interpreter), stem
# (bench/check_stem_conv.py $STEM_ARGS: our few-channel conv against the interpreter, then timed), halo
# (bench/check_halo_conv.py $HALO_ARGS: our wgmma conv for 64 channels against the interpreter, then timed), tests
# (pytest -m gpu), kernels (bench/kernels.py $KERNELS_ARGS), models (bench/models.py $MODELS_ARGS),
# tune (bench/tune.py $TUNE_ARGS), sanitize (bench/sanitize.py $SANITIZE_ARGS: memcheck and racecheck on whole models),
# buckets (bench/buckets.py $BUCKETS_ARGS, default ResNet-50), users (bench/users_path.py $USERS_ARGS; carry .whl_cupy
# from bench/fetch_cupy.sh for its CuPy rows), corpus (bench/corpus.py $CORPUS_ARGS, default the first tenth),
# usertests (pytest -m gpu tests/test_users_path_gpu.py), pointwise (bench/pointwise.py $POINTWISE_ARGS, default
# --no-candidates: memory-bound 1x1 convs against their bound), depthwise (bench/check_depthwise.py $DEPTHWISE_ARGS
# against the interpreter, then its --timing against the bound), dwpw (bench/check_depthwise_pointwise.py $DWPW_ARGS:
# the fused depthwise + 1x1 kernel against the interpreter, then its --timing against the pair, $DWPW_TIMING), gemv (bench/check_gemv.py $GEMV_ARGS: our few-rows GEMM against the interpreter), wgsplit (bench/check_wgsplit_gemm.py $WGSPLIT_ARGS: our Hopper GEMM with K split among a cluster's warp groups against the interpreter), wgtrace (bench/trace_wgsplit.py $WGTRACE_ARGS: that GEMM's phases, CTA by CTA), atrace (bench/trace_attention.py $ATRACE_ARGS: our attention mainloop's phases, warp group by warp group), pdl (bench/pdl.py $PDL_ARGS: graph replay with programmatic dependent launch on and off), clusters (bench/cluster_capacity.cu: how many clusters of each size run at once), bertshapes (bench/bert_shapes.py $BERT_SHAPES: BERT launch profiles per shape), warm (bench/warm_gpu.py $WARM_ARGS: a few seconds of matmuls first, so that a fresh card's first timed stage is not at idle clocks). Each stage's full log goes to $OUT/<stage>.log;
# the summaries are printed last, in stage order. A stage's $..._ARGS pass through `bash -c`: write no shell
# characters in them (an `--only` text with `->` is a redirection; match a shorter part such as `16-`).
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/setup_gpu.sh || exit 1
OUT="${OUT:-/tmp/boltir-out}"
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
declare -A commands=(
  [check]="python3 -m bench.check_kernels ${CHECK_ARGS:-}"
  [sweep]="python3 -m bench.compile_sweep ${SWEEP_ARGS:-}"
  [data]="python3 -m bench.check_data_kernels ${DATA_ARGS:-}"
  [compute]="python3 -m bench.check_compute_kernels ${COMPUTE_ARGS:-}"
  [attention]="python3 -m bench.check_attention ${ATTENTION_ARGS:-}"
  [splitk]="python3 -m bench.check_splitk_conv ${SPLITK_ARGS:-}"
  [stem]="python3 -m bench.check_stem_conv ${STEM_ARGS:-}"
  [halo]="python3 -m bench.check_halo_conv ${HALO_ARGS:-}"
  [tests]="python3 -m pytest -q -m gpu -rs -p no:cacheprovider tests/test_compiler.py tests/backends tests/tools/test_bolt_profile.py"
  [kernels]="python3 -m bench.kernels ${KERNELS_ARGS:-}"
  [models]="python3 -m bench.models ${MODELS_ARGS:-}"
  [debug]="python3 -m bench.debug_model ${DEBUG_ARGS:-resnet50 1}"
  [tune]="python3 -m bench.tune ${TUNE_ARGS:-}"
  [sanitize]="python3 -m bench.sanitize ${SANITIZE_ARGS:-}"
  [buckets]="python3 -m bench.buckets ${BUCKETS_ARGS:---models resnet50}"
  [users]="python3 -m bench.users_path ${USERS_ARGS:-}"
  [bertshapes]="python3 -m bench.bert_shapes ${BERT_SHAPES:-1x128 8x32 32x128}"
  [corpus]="python3 -m bench.corpus ${CORPUS_ARGS:---part 1/10 --frontends onnx}"
  [pdl]="python3 -m bench.pdl ${PDL_ARGS:-}"
  [pointwise]="python3 -m bench.pointwise ${POINTWISE_ARGS:---no-candidates}"
  [depthwise]="python3 -m bench.check_depthwise ${DEPTHWISE_ARGS:-} && python3 -m bench.check_depthwise --timing"
  [gemv]="python3 -m bench.check_gemv ${GEMV_ARGS:-}"
  [wgsplit]="python3 -m bench.check_wgsplit_gemm ${WGSPLIT_ARGS:-}"
  [wgtrace]="python3 -m bench.trace_wgsplit ${WGTRACE_ARGS:-}"
  [atrace]="python3 -m bench.trace_attention ${ATRACE_ARGS:-}"
  [dwpw]="python3 -m bench.check_depthwise_pointwise ${DWPW_ARGS:-} && python3 -m bench.check_depthwise_pointwise --timing ${DWPW_TIMING:-}"
  [usertests]="python3 -m pytest -q -m gpu -rs -p no:cacheprovider tests/test_users_path_gpu.py"
  [clusters]="nvcc -arch=sm_90a -o /tmp/cluster_capacity bench/cluster_capacity.cu && /tmp/cluster_capacity"
  [warm]="python3 -m bench.warm_gpu ${WARM_ARGS:-}"
)
# A stage may carry its own limit in seconds: `kernels:260` (else $STAGE_TIMEOUT or 400).
# A stage written `+sweep:560` runs in the background at the lowest CPU priority while the
# next stages run (nvcc on the host's cores beside GPU timing); the call waits for it at the end.
stages=()
for spec in "$@"; do
  stage="${spec%%:*}"
  limit="${STAGE_TIMEOUT:-400}"
  [ "$spec" != "$stage" ] && limit="${spec#*:}"
  background=""
  if [ "${stage:0:1}" = "+" ]; then stage="${stage:1}"; background=1; fi
  stages+=("$stage")
  start=$(date +%s)
  if [ -n "$background" ]; then
    ( timeout "$limit" nice -n 19 bash -c "${commands[$stage]}" >"$OUT/$stage.log" 2>&1
      echo "stage $stage (background): exit $? in $(( $(date +%s) - start )) s (limit $limit s)" ) &
    continue
  fi
  timeout "$limit" bash -c "${commands[$stage]}" >"$OUT/$stage.log" 2>&1  # bash -c: quoted arguments stay whole
  echo "stage $stage: exit $? in $(( $(date +%s) - start )) s (limit $limit s)"
done
wait
# The summaries, printed and also kept in $OUT/0-summary.txt: a call brings back only so
# many files (the first by name) and the last 12,000 characters it printed, so a long
# call's early summaries would otherwise be lost.
for stage in "${stages[@]}"; do
  echo
  echo "=================== $stage"
  # the table (or pytest's summary) is at the end; progress bars are dropped
  grep -v -e '^nvcc:' -e 'it/s\]' "$OUT/$stage.log" | tail -n "${TAIL:-75}"
done | tee "$OUT/0-summary.txt"
