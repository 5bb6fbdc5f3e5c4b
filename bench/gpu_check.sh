#!/usr/bin/env bash
# The GPU check: one command for a short GPU window (15 minutes in all, at most 10 a command; a machine with its own
# torch, timm and pandas and no package registry). It installs this checkout there (the machine's torch and timm; the
# rest from wheels carried in bench/gpu_wheels), then runs, each step under its own time limit and all of them within
# GPU_CHECK_BUDGET seconds (default 540: 9 minutes). Seconds each took on an H200 (2026-11-26; 2026-11-27):
#   hand         the seed tool's configurations (resnet50, vit_base_patch16_224; fp32, bf16; batch 512; eager) by
#                tbench infer, then beside an independent hand-driven loop (bench/gpu_hand.py): ratios printed   125 s
#   cuda_tests   the whole tests/test_cuda.py                                                     190 s; 237 s
#   map          tbench map on CUDA, with its stage breakdown (rasterio: carried as a wheel)           27 s; 33 s
#   compile      reduce-overhead (resnet18 fp32 at 64)                                                      42 s
#   autotune     max-autotune: only when GPU_CHECK_STEPS names it (over 110 s on an H200, which did not end)
#   oom          a real out-of-memory halving (resnet50 fp32 from a batch no GPU holds; vit_large at bf16 halved
#                to 16384, 4.5 s a batch, ran past 90 s)
#   ddp          tbench train --nproc 1 (NCCL)                                                              47 s
#   serve        tbench serve on the GPU under tbench latency (litserve's needs carried: the image has no pydantic)
#   trt          --backends onnxruntime-trt, where onnxruntime has the TensorRT provider
# The steps together outlast one 10-minute command: the first call ends after compile or oom; a second at once,
#   GPU_CHECK_STEPS=oom,ddp,serve bash bench/gpu_check.sh $OUT, ends the rest (146 s on 2026-11-27). 15 minutes of
#   device time hold both, the machine's start included.
# and leaves ONE tarball, OUT/gpu_check.tgz (OUT: the first argument, else $OUT, else ./gpu_check_out): each step's
# log, steps.txt (name, exit code, seconds, limit), the results folders, nvidia-smi and pip freeze.
#
#   bash bench/gpu_check.sh --wheels     # on a machine with a registry: fill bench/gpu_wheels (git-ignored)
#   bash bench/gpu_check.sh [OUT]        # on the GPU machine
# GPU_CHECK_STEPS=name,name runs only those steps; GPU_CHECK_STEPS=selftest checks the limits and the tarball on a CPU.
set -uo pipefail
cd "$(dirname "$0")/.."
WHEELS=${GPU_CHECK_WHEELS:-bench/gpu_wheels}  # Python 3.12 wheels: the GPU machine's Python
PY=${PYTHON:-python3}
# what the GPU machine lacked (2026-11-26 and -27, an H200 with torch 2.11, timm 1.0.29, pandas 2.x): Python 3.12 wheels
NEEDED=(fastcore==1.8.0 submitit==1.5.0 litserve==0.2.19 python-multipart mlcommons-loadgen filelock
        rasterio==1.4.4 affine cligj click-plugins  # rasterio and its needs: tbench map
        fastapi==0.165.0 starlette==1.10.0 uvicorn==0.54.0 pyzmq==27.3.0 pydantic==2.14.4 pydantic-core==2.50.5
        annotated-types==0.8.0 annotated-doc==0.0.7 typing-inspection==0.4.5 opentelemetry-api==1.45.2)  # litserve's
PLATFORMS=(--platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform any)

if [ "${1:-}" = "--wheels" ]; then
  rm -rf "$WHEELS"; mkdir -p "$WHEELS"
  $PY -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp "${PLATFORMS[@]}" \
    -d "$WHEELS" "${NEEDED[@]}" || exit 1
  $PY -m pip wheel -q --no-deps -w "$WHEELS" . || exit 1
  ls "$WHEELS"; exit 0
fi

OUT=${1:-${OUT:-gpu_check_out}}; mkdir -p "$OUT"
WORK=$(mktemp -d); LOGS=$WORK/logs; mkdir -p "$LOGS"
BUDGET=${GPU_CHECK_BUDGET:-540}; RESERVE=15   # seconds kept for packing the tarball
START=$(date +%s)
ONLY=${GPU_CHECK_STEPS:-}

want() { [ -z "$ONLY" ] || [ "$1" = install ] || [[ ",$ONLY," == *",$1,"* ]]; }  # install: always
left() { echo $(( BUDGET - RESERVE - ($(date +%s) - START) )); }

# step NAME LIMIT CMD...: CMD under min(LIMIT, the budget left), its output in logs/NAME.log, a line in steps.txt
step() {
  local name=$1 limit=$2; shift 2
  want "$name" || return 0
  local l; l=$(left)
  if [ "$l" -lt 10 ]; then echo "$name skipped: out of time (budget ${BUDGET}s)" | tee -a "$LOGS/steps.txt"; return 0; fi
  [ "$limit" -gt "$l" ] && limit=$l
  local t0; t0=$(date +%s)
  timeout --kill-after=10 "$limit" "$@" > "$LOGS/$name.log" 2>&1; local rc=$?
  local what=ok; [ $rc -eq 124 ] || [ $rc -eq 137 ] && what="timed out"; [ $rc -ne 0 ] && [ "$what" = ok ] && what=failed
  echo "$name rc=$rc $what $(( $(date +%s) - t0 ))s (limit ${limit}s)" | tee -a "$LOGS/steps.txt"
}

pack() {
  tar czf "$OUT/gpu_check.tgz" -C "$WORK" . && echo "gpu check: $OUT/gpu_check.tgz ($(( $(date +%s) - START ))s)"
}

if [ "$ONLY" = selftest ]; then  # the limits, the budget and the tarball, on any machine
  ONLY=quick,slow,late
  step quick 5 echo fine
  step slow 1 sleep 30
  BUDGET=$(( $(date +%s) - START + RESERVE + 5 )); step late 60 echo never
  pack; exit 0
fi

GPU_ARGS=(--device cuda --no-progress --wandb disabled --wait-idle 0)
R=$WORK/results

{ nvidia-smi || echo "no nvidia-smi"; } > "$LOGS/nvidia-smi.txt" 2>&1
if ls "$WHEELS"/*.whl >/dev/null 2>&1; then
  step install 120 $PY -m pip install --no-index --no-deps --find-links "$WHEELS" "$WHEELS"/*.whl
fi
$PY -m pip freeze > "$LOGS/pip-freeze.txt" 2>&1
if ! $PY -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" > "$LOGS/cuda.txt" 2>&1; then
  echo "no CUDA device: every GPU step skipped" | tee -a "$LOGS/steps.txt"; pack; exit 0
fi

step hand 150 bash -c "tbench infer --models resnet50 vit_base_patch16_224 --precisions fp32 bf16 --batch-sizes 512 \
  --compile-modes none --repeats 2 --timed-seconds 2 ${GPU_ARGS[*]} --results-dir $R/hand && $PY bench/gpu_hand.py $R/hand"
step cuda_tests 300 $PY -m pytest -q -x -p no:cacheprovider tests/test_cuda.py
step map 60 tbench map --synthetic --model resnet18 --device cuda --results-dir "$R/map" --no-progress
# every step names its precisions and compile modes: the defaults on CUDA are 4 precisions x 2 modes (8 rows)
step compile 60 tbench infer --models resnet18 --precisions fp32 --compile-modes reduce-overhead --batch-sizes 64 \
  --repeats 1 --timed-seconds 1 "${GPU_ARGS[@]}" --results-dir "$R/compile"
step oom 120 tbench infer --models resnet50 --precisions fp32 --compile-modes none --batch-sizes 65536 \
  --repeats 1 --timed-seconds 1 "${GPU_ARGS[@]}" --results-dir "$R/oom"
step ddp 90 tbench train --models resnet18 --nproc 1 --precisions amp --compile-modes none --batch-sizes 64 \
  --repeats 1 --timed-seconds 2 \
  "${GPU_ARGS[@]}" --results-dir "$R/ddp"
step serve 120 bash -c "tbench serve --model resnet18 --device cuda --port 8123 > $LOGS/serve-server.log 2>&1 & s=\$!; \
  for i in \$(seq 90); do kill -0 \$s 2>/dev/null || break; \
    curl -sf http://127.0.0.1:8123/v1/metadata >/dev/null && break; sleep 1; done; \
  tbench latency http://127.0.0.1:8123 --runs 1 --trials 50 --wandb disabled --no-progress --results-dir $R/serve; \
  rc=\$?; kill \$s; wait \$s; exit \$rc"
if [[ ",$ONLY," == *",autotune,"* ]]; then
  step autotune 300 tbench infer --models resnet18 --precisions fp32 --compile-modes max-autotune --batch-sizes 64 --repeats 1 \
    --timed-seconds 1 "${GPU_ARGS[@]}" --results-dir "$R/autotune"
fi
if $PY -c "import onnxruntime as o, sys; sys.exit(0 if 'TensorrtExecutionProvider' in o.get_available_providers() else 1)" 2>/dev/null; then
  step trt 120 tbench infer --models resnet18 --backends onnxruntime-trt --batch-sizes 64 --repeats 1 \
    "${GPU_ARGS[@]}" --results-dir "$R/trt"
else want trt && echo "trt skipped: onnxruntime has no TensorrtExecutionProvider here" | tee -a "$LOGS/steps.txt"; fi
pack
