#!/usr/bin/env bash
# The device check of the CUDA work, from an already-built tree, in under 5 minutes:
#   1. the GPU and driver (nvidia-smi);
#   2. every test labelled `gpu` (CUDA kernels against kernels/ref, the CUDA backend against the
#      CPU backend); on a machine with a GPU a skipped test counts as a failure;
#   3. `bench --backend cuda` on a generated Q4_K qwen3moe model of ~4.6 GB (48 layers, hidden
#      2048, 32 experts x 768, 8 used), with CUDA graphs and without; with two GPUs also
#      `bench --tp 2` under mpirun (NCCL);
#   4. the vision encoder: `run --image` with a generated projector of Qwen3-VL-30B's shape (27
#      blocks, width 1152, 16 heads, MLP 4304, patch 16, F16) on a 512x512 image, on the CUDA
#      backend and on the CPU backend (ms per image from the "encoded ..." log line).
#   (The gpu-labelled tests include the vision ops against kernels/ref in test_cuda_kernels and the
#   encoder on the CUDA backend against the reference in vision_cuda_test.)
# Usage: tests/gpu/run-suite.sh [BUILD_DIR]   (default: build/cuda, else build/default; or a
# folder made by tests/gpu/make-bundle.sh, for a GPU machine without this one's libraries)
# Results (logs, bench text and JSON, summary.txt) go to $OUT when set, else to a temporary folder.
# The whole run keeps within ARC_SUITE_BUDGET seconds (default 480, under the device tool's 600 s
# per command): each step's timeout is cut to what is left, and steps that no longer fit are
# reported as left out, so one device call always ends with a complete summary.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${1:-}
if [[ -z $BUILD ]]; then
  for d in build/cuda build/default; do
    if [[ -x $ROOT/$d/bin/arclight-engine ]]; then
      BUILD=$ROOT/$d
      break
    fi
  done
fi
if [[ -z $BUILD || ! -x $BUILD/bin/arclight-engine ]]; then
  echo "run-suite: no built tree with bin/arclight-engine (looked at ${BUILD:-build/cuda and" \
    "build/default}); build first: cmake --preset cuda && cmake --build --preset cuda" >&2
  exit 2
fi
BUILD=$(cd "$BUILD" && pwd)
ENGINE=$BUILD/bin/arclight-engine
RESULTS=${OUT:-$(mktemp -d -t arc-gpu-suite.XXXXXX)}
mkdir -p "$RESULTS"
WORK=$(mktemp -d -t arc-gpu-model.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM  # through the EXIT trap: the model file does not outlive the run
SECONDS=0
FAILED=0
BUDGET=${ARC_SUITE_BUDGET:-480}

log() { printf '[run-suite %3ds] %s\n' "$SECONDS" "$*" | tee -a "$RESULTS/summary.txt"; }
fail() {
  log "FAIL: $*"
  FAILED=1
}
# step_timeout N WHAT: sets tmo to N, or to the seconds left of the budget when fewer; fails
# (and reports WHAT as left out) when under 20 s are left. Usage: step_timeout 150 "x" || continue
step_timeout() {
  local left=$((BUDGET - SECONDS))
  if ((left < 20)); then
    fail "$2: left out, the ${BUDGET} s budget is spent"
    return 1
  fi
  tmo=$((left < $1 ? left : $1))
}

log "tree $BUILD, results in $RESULTS"

# 1. The device.
HAVE_GPU=0
if command -v nvidia-smi >/dev/null 2>&1 &&
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader \
    >"$RESULTS/nvidia-smi.txt" 2>&1; then
  HAVE_GPU=1
  log "GPU: $(head -n 1 "$RESULTS/nvidia-smi.txt")"
else
  fail "no GPU visible to nvidia-smi ($(head -c 300 "$RESULTS/nvidia-smi.txt" 2>/dev/null || true))"
fi

# 2. The gpu-labelled tests, each binary on its own (its log names every skip and failure).
TESTS=()
if command -v ctest >/dev/null 2>&1 && [[ -f $BUILD/CTestTestfile.cmake ]]; then
  mapfile -t TESTS < <(ctest --test-dir "$BUILD" -N -L gpu 2>/dev/null |
    sed -n 's/^ *Test *#[0-9]*: *//p')
else
  # No CMake here, or a bundle from tests/gpu/make-bundle.sh: the CUDA test binaries by name.
  log "no ctest or no CTest files: running $BUILD/tests/*cuda* (benchmarks left out)"
  for bin in "$BUILD"/tests/*cuda*; do
    [[ -f $bin && -x $bin && $(basename "$bin") != bench_* ]] && TESTS+=("$(basename "$bin")")
  done
fi
if [[ ${#TESTS[@]} -eq 0 ]]; then
  fail "no tests labelled gpu in $BUILD (configured without tests?)"
fi
for t in "${TESTS[@]}"; do
  bin=$BUILD/tests/$t
  if [[ ! -x $bin ]]; then
    fail "$t: $bin is not built"
    continue
  fi
  RUN=("$bin" --gtest_brief=1)
  if [[ $t == tp_cuda_test ]] && ! command -v mpirun >/dev/null 2>&1; then
    log "$t: no mpirun on this machine, left out"
    continue
  fi
  if [[ $t == tp_cuda_test ]]; then
    # Tensor parallelism: two ranks. NCCL refuses two ranks on one GPU: with fewer than two
    # GPUs only the cases whose collectives go through host memory run.
    RUN=(mpirun --allow-run-as-root --oversubscribe -np 2 "${RUN[@]}")
    if [[ $(nvidia-smi -L 2>/dev/null | grep -c '^GPU') -lt 2 ]]; then
      RUN+=(--gtest_filter=-Families/NcclTp2.*)
      log "$t: one GPU, the NCCL cases are left out (they need two)"
    fi
  fi
  step_timeout 150 "$t" || continue
  rc=0
  timeout "$tmo" "${RUN[@]}" >"$RESULTS/$t.log" 2>&1 || rc=$?
  passed=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\?\..*/\1/p' "$RESULTS/$t.log" | tail -n 1)
  skipped=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) tests\?.*/\1/p' "$RESULTS/$t.log" | tail -n 1)
  failed=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) tests\?.*/\1/p' "$RESULTS/$t.log" | tail -n 1)
  log "$t: exit $rc, passed ${passed:-0}, skipped ${skipped:-0}, failed ${failed:-0}"
  if [[ $rc -ne 0 ]]; then
    if [[ $rc -eq 124 ]]; then fail "$t timed out ($tmo s)"; else fail "$t (see $t.log)"; fi
    grep -E '^\[  FAILED  \]|Failure$' "$RESULTS/$t.log" | head -n 20 | tee -a "$RESULTS/summary.txt" || true
  elif [[ $HAVE_GPU -eq 1 && ${skipped:-0} -gt 0 ]]; then
    fail "$t skipped ${skipped} tests on a machine with a GPU:"
    grep -A1 'Skipped$' "$RESULTS/$t.log" | grep -v -e 'Skipped$' -e '^--$' | sort | uniq -c |
      head -n 5 | tee -a "$RESULTS/summary.txt" || true
  fi
done

# 3. bench on a multi-GB model (layers and experts repeat layer 0 / expert 0, so writing it takes
# seconds; the bytes read per token are those of a real model of this shape).
MODEL=$WORK/qwen3moe-48x32e-q4k.gguf
log "writing the bench model"
if ! step_timeout 200 "the bench model"; then
  :  # left out, reported by step_timeout
elif timeout "$tmo" "$ENGINE" make-test-model --family qwen3moe --out "$MODEL" --layers 48 \
  --hidden 2048 --heads 32 --kv-heads 4 --head-dim 128 --experts 32 --experts-used 8 \
  --expert-ff 768 --vocab 32000 --type Q4_K --repeat-weights >"$RESULTS/make-model.log" 2>&1; then
  log "model: $(du -h "$MODEL" | cut -f1)"
  BENCH=(bench -m "$MODEL" --backend cuda -p 512 -n 128 -r 3 --bandwidth-mib 2048)
  rc=0
  step_timeout 120 "bench" || rc=125
  [[ $rc -eq 0 ]] && { timeout "$tmo" "$ENGINE" "${BENCH[@]}" >"$RESULTS/bench.txt" \
    2>"$RESULTS/bench.log" || rc=$?; }
  if [[ $rc -eq 0 ]]; then
    grep -E '^(backend|prefill|decode|weights)' "$RESULTS/bench.txt" | tee -a "$RESULTS/summary.txt"
    if step_timeout 120 "bench --json"; then
      timeout "$tmo" "$ENGINE" "${BENCH[@]}" --json >"$RESULTS/bench.json" \
        2>>"$RESULTS/bench.log" || fail "bench --json (see bench.log)"
    fi
    rc=0
    step_timeout 120 "bench --no-cuda-graphs" || rc=125
    [[ $rc -eq 0 ]] && { timeout "$tmo" "$ENGINE" "${BENCH[@]}" --no-cuda-graphs \
      >"$RESULTS/bench-no-graphs.txt" 2>>"$RESULTS/bench.log" || rc=$?; }
    if [[ $rc -eq 125 ]]; then
      :  # left out, reported by step_timeout
    elif [[ $rc -eq 0 ]]; then
      log "without CUDA graphs: $(grep -E '^decode ' "$RESULTS/bench-no-graphs.txt")"
    else
      fail "bench --no-cuda-graphs exited $rc (see bench.log)"
    fi
  elif [[ $rc -ne 125 ]]; then
    fail "bench exited $rc (see bench.log):"
    tail -n 5 "$RESULTS/bench.log" | tee -a "$RESULTS/summary.txt"
  fi
  # Tensor parallelism over NCCL (two GPUs: NCCL refuses two ranks on one).
  # The expert width must halve on 256-value Q4_K blocks: 1024 instead of 768.
  if [[ $(nvidia-smi -L 2>/dev/null | grep -c '^GPU') -ge 2 ]]; then
    TP_MODEL=$WORK/qwen3moe-tp.gguf
    rm -f "$MODEL"
    rc=0
    step_timeout 200 "the tp model" || rc=125
    [[ $rc -eq 0 ]] && { timeout "$tmo" "$ENGINE" make-test-model --family qwen3moe \
      --out "$TP_MODEL" --layers 48 --hidden 2048 --heads 32 --kv-heads 4 --head-dim 128 \
      --experts 32 --experts-used 8 --expert-ff 1024 --vocab 32000 --type Q4_K \
      --repeat-weights >>"$RESULTS/make-model.log" 2>&1 || rc=$?; }
    [[ $rc -eq 0 ]] && { step_timeout 150 "bench --tp 2" || rc=125; }
    [[ $rc -eq 0 ]] && { timeout "$tmo" mpirun --allow-run-as-root --oversubscribe -np 2 \
      "$ENGINE" bench -m "$TP_MODEL" --backend cuda -p 512 -n 128 -r 3 --bandwidth-mib 2048 \
      --tp 2 >"$RESULTS/bench-tp2.txt" 2>"$RESULTS/bench-tp2.log" || rc=$?; }
    if [[ $rc -eq 125 ]]; then
      :  # left out, reported by step_timeout
    elif [[ $rc -eq 0 ]]; then
      grep -E '^(decode|tensor|all-reduce)' "$RESULTS/bench-tp2.txt" | sed 's/^/tp2 /' |
        tee -a "$RESULTS/summary.txt"
    else
      fail "bench --tp 2 exited $rc (see bench-tp2.log)"
      tail -n 5 "$RESULTS/bench-tp2.log" | tee -a "$RESULTS/summary.txt"
    fi
  else
    log "one GPU: bench --tp 2 left out (NCCL needs a GPU per rank)"
  fi
else
  fail "make-test-model failed or ran past $tmo s (see make-model.log)"
fi

# 4. The vision encoder on a 512x512 image (1024 patches, 256 tokens).
VMODEL=$WORK/qwen3vlmoe-tiny.gguf
VPROJ=$WORK/mmproj-qwen3vl-30b-shape.gguf
IMAGE=$WORK/gradient-512.png
log "writing the vision model and projector"
if ! command -v python3 >/dev/null 2>&1; then
  fail "python3 not found: cannot write the test image"
elif ! step_timeout 200 "the vision model"; then
  :  # left out, reported by step_timeout
elif timeout "$tmo" "$ENGINE" make-test-model --family qwen3vlmoe --out "$VMODEL" --hidden 2048 \
  --heads 16 --kv-heads 4 --head-dim 128 --mmproj "$VPROJ" --vision-layers 27 \
  --vision-hidden 1152 --vision-heads 16 --vision-ff 4304 --patch 16 --mmproj-type F16 \
  >"$RESULTS/make-vision-model.log" 2>&1; then
  python3 - "$IMAGE" <<'PY'
import struct, sys, zlib
w = h = 512
raw = b"".join(b"\x00" + bytes(v for x in range(w) for v in ((x * 7 + y * 3) % 256, (x * y) % 256, (x ^ y) % 256)) for y in range(h))
def chunk(t, d):
    return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)
open(sys.argv[1], "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
PY
  for be in cuda cpu; do
    step_timeout 150 "run --image --backend $be" || continue
    rc=0
    timeout "$tmo" "$ENGINE" run -m "$VMODEL" --mmproj "$VPROJ" --image "$IMAGE" --prompt hi -n 1 \
      --backend "$be" >"$RESULTS/vision-$be.txt" 2>"$RESULTS/vision-$be.log" || rc=$?
    if [[ $rc -eq 0 ]]; then
      log "vision encoder on $be: $(grep -o 'encoded .*' "$RESULTS/vision-$be.log" | tail -n 1)"
    else
      fail "run --image --backend $be exited $rc (see vision-$be.log):"
      tail -n 3 "$RESULTS/vision-$be.log" | tee -a "$RESULTS/summary.txt"
    fi
  done
else
  fail "make-test-model for the vision encoder (see make-vision-model.log)"
fi

if [[ $FAILED -eq 0 ]]; then
  log "all passed"
else
  log "FAILED (details above and in $RESULTS)"
fi
exit $FAILED
