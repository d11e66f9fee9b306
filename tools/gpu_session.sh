#!/usr/bin/env bash
# One call on a lent GPU machine (docs/gpu.md): the CUDA suite, then the GPU benchmark suite case by case, within one
# time budget; everything it learns goes to $OUT.
#
#   device tool: command "bash tools/gpu_session.sh", carry [".whl"], timeout_s 600
#
# The machine's Python has torch, torchvision, torchmetrics, transformers, scipy, numba, triton and pytest; the other
# packages the suite and the benchmarks import travel as wheels in .whl/ (docs/gpu.md: how to download them).
# Budget (seconds, environment): SESSION_BUDGET (default 540, under the tool's 600 s per call), CUDA_SUITE_BUDGET
# (default 200; the runs on an H200 took 185 and 179 s; 0 skips the suite: a second call on the still-warm machine
# for the cases a first call's budget cut), CASE_LIMIT (default 150 per benchmark case; FILES_CASE_LIMIT, default 240,
# for fid_gpu_files: 2 x 10,000 JPEGs through three pipelines). The suite's
# counts go into $OUT/latest.json and $OUT/BENCHMARKS.md's GPU section (`python -m benchmarks --record-cuda-suite`, from
# $OUT/cuda-suite.xml); its per-test sync counts and sites (`sync @ gpumetrics/…`) into $OUT/cuda-syncs.txt. Benchmark
# cases run one `python -m benchmarks --only` each, merging into $OUT/latest.json and $OUT/BENCHMARKS.md (copies of the
# repo's), so a case cut by the budget loses only itself. Case order: the rows whose goal a change bets on and the
# rows no GPU has measured (edit_gpu_kernel_long / _medium: the wavefront Levenshtein kernel against the column kernel,
# which decide WAVEFRONT_MIN_WORDS; edit_gpu_long: the device route with it; edit_gpu_kernel_short: the auto
# dispatch's idle wavefront launch on short pairs; fid_gpu_forward: the folded half-precision Inception against
# autocast, and the 10,000 img/s goal; clip_gpu_update_bf16: the batch tokenizer; fid_gpu_files), then the other
# unmeasured rows (torch.compile last: its compilation is slow), then the other cases the first run measured, then the
# main image cases on the device. GPU_BENCH_CASES
# overrides the case list (priority order); BENCH_DEVICE / BENCH_ARGS / SKIP_WHEELS are for a dry run on a CPU machine:
# `SKIP_WHEELS=1 BENCH_DEVICE=cpu BENCH_ARGS=--quick bash tools/gpu_session.sh`.
set -uo pipefail
start=$(date +%s)
OUT=${OUT:-/tmp/gpumetrics-gpu}
mkdir -p "$OUT"
left() { echo $(( ${SESSION_BUDGET:-540} - ($(date +%s) - start) )); }

if [ -z "${SKIP_WHEELS:-}" ] && compgen -G ".whl/*.whl" >/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
        >/tmp/wheels.log 2>&1 || { echo "wheel install failed"; tail -20 /tmp/wheels.log | tee "$OUT/device.txt"; exit 1; }
    export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
{
    nvidia-smi -L 2>&1 || echo "no nvidia-smi"
    python3 -c "import sys, torch; print('python', sys.version.split()[0], '| torch', torch.__version__, '| cuda', \
torch.version.cuda, '|', torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'no CUDA device')"
    nproc
    # Triton builds its launcher with the C compiler and Python's headers on first use
    echo "cc: $(command -v cc gcc clang | tr '\n' ' ')| nvcc: $(command -v nvcc)"
    python3 -c "import os, sysconfig; h = os.path.join(sysconfig.get_paths()['include'], 'Python.h'); \
print('Python.h', h, os.path.exists(h))"
    python3 -c "import torchvision, triton; print('torchvision', torchvision.__version__, '| triton', triton.__version__)"
} >"$OUT/device.txt" 2>&1
cat "$OUT/device.txt"

if [ "${CUDA_SUITE_BUDGET:-200}" != 0 ]; then
    suite_start=$(date +%s)
    # what `make test-cuda CUDA_PYTHON=python3` runs, without needing make on the machine (tests/conftest.py runs the
    # two-process DDP tests last, so a budget cut loses them and nothing else). SIGINT on the budget: pytest still writes
    # its summary and the junit XML. pytest-timeout (on the machine) ends a hung test.
    per_test=""; python3 -c "import pytest_timeout" 2>/dev/null && per_test="--timeout=150"
    timeout -s INT -k 20 "${CUDA_SUITE_BUDGET:-200}" python3 -m pytest -o addopts="" --strict-markers -ra -q \
        -p no:cacheprovider -m cuda --continue-on-collection-errors $per_test tests \
        --junitxml="$OUT/cuda-suite.xml" --durations=10 -s >"$OUT/cuda-suite.log" 2>&1
    echo "cuda suite: exit $? in $(( $(date +%s) - suite_start )) s" | tee -a "$OUT/cuda-suite.log"
    grep -E "passed|failed|error" "$OUT/cuda-suite.log" | tail -3
    grep -E "CUDA host syncs per (update|compute)|^  [^ ].*: [0-9]+$|sync @ " "$OUT/cuda-suite.log" \
        >"$OUT/cuda-syncs.txt" || true
fi
cp benchmarks/results/latest.json "$OUT/latest.json"
cp BENCHMARKS.md "$OUT/BENCHMARKS.md"
# the suite's counts into the GPU section (an all-skipped or cut-off XML is recorded as it is; a missing one is not)
note=""; [ "${BENCH_DEVICE:-cuda}" = cpu ] && note="dry run on a CPU: the CUDA tests skip"
python3 -m benchmarks --device "${BENCH_DEVICE:-cuda}" --record-cuda-suite "$OUT/cuda-suite.xml" \
    --cuda-suite-note "$note" --results "$OUT/latest.json" --table "$OUT/BENCHMARKS.md" 2>&1 | tail -3
# the rows a change bets on and the never-measured ones first (see the header)
cases=${GPU_BENCH_CASES:-"edit_gpu_kernel_long edit_gpu_kernel_medium edit_gpu_long edit_gpu_kernel_short \
fid_gpu_files edit_gpu_short_strings fid_gpu_forward fid_gpu_forward_compiled edit_gpu_uneven wer_gpu \
clip_gpu_update_bf16 clip_gpu_update_parts clip_gpu_resize fid_gpu_forward_large_batch edit_gpu_short_tokens \
clip_gpu_update_tf32 \
clip_gpu_update_fp16 clip_gpu_update_fp32 fid_update clip_score_update fid_files frechet_distance kid_compute"}
for case in $cases; do
    budget=$(left)
    case_limit=${CASE_LIMIT:-150}; [ "$case" = fid_gpu_files ] && case_limit=${FILES_CASE_LIMIT:-240}
    limit=$(( budget < case_limit ? budget : case_limit ))
    if [ "$limit" -lt 20 ]; then echo "bench: budget spent, skipped $case" | tee -a "$OUT/bench.log"; continue; fi
    case_start=$(date +%s)
    timeout -k 10 "$limit" python3 -m benchmarks --device "${BENCH_DEVICE:-cuda}" --only "$case" ${BENCH_ARGS:-} \
        --results "$OUT/latest.json" --table "$OUT/BENCHMARKS.md" >>"$OUT/bench.log" 2>&1
    echo "bench $case: exit $? in $(( $(date +%s) - case_start )) s" | tee -a "$OUT/bench.log"
done
# the GPU machine's host cores decide auto's routes for strings (kernels.host.host_beats_device_route: its thresholds
# came from the 2-core CPU): its CPU rows go to files of their own, never merged into the repo's (keyed "cpu" there)
host_cases=${HOST_BENCH_CASES:-"edit_long_encode_separated edit_encode_separated wer_encode_separated"}
for case in $host_cases; do
    budget=$(left)
    if [ "$budget" -lt 30 ]; then echo "bench: budget spent, skipped host $case" | tee -a "$OUT/bench.log"; continue; fi
    case_start=$(date +%s)
    timeout -k 10 $(( budget < 60 ? budget : 60 )) python3 -m benchmarks --device cpu --only "$case" ${BENCH_ARGS:-} \
        --results "$OUT/host-latest.json" --table "$OUT/host-BENCHMARKS.md" >>"$OUT/bench.log" 2>&1
    echo "bench host $case: exit $? in $(( $(date +%s) - case_start )) s" | tee -a "$OUT/bench.log"
done
grep -E "ratio|FAILED" "$OUT/bench.log" | tail -40
echo "session: $(( $(date +%s) - start )) s"
exit 0
