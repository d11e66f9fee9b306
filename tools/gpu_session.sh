#!/usr/bin/env bash
# One call on a lent GPU machine (docs/gpu.md): the CUDA suite, then the GPU benchmark suite in one process, within
# one time budget; everything it learns goes to $OUT.
#
#   device tool: command "bash tools/gpu_session.sh", carry [".whl"], timeout_s 600
#
# The machine's Python has torch, torchvision, torchmetrics, transformers, scipy, numba, triton and pytest; the other
# packages the suite and the benchmarks import travel as wheels in .whl/ (docs/gpu.md: how to download them).
# Budget (seconds, environment): SESSION_BUDGET (default 540, under the tool's 600 s per call), CUDA_SUITE_BUDGET
# (default 200; the runs on an H200 took 185 and 179 s; 0 skips the suite), HOST_RESERVE (default 45: kept for the
# host rows at the end), CASE_LIMIT (default 150: a benchmark case running longer is killed; fid_gpu_files sets its
# own). The suite's counts go into $OUT/latest.json and $OUT/BENCHMARKS.md's GPU section (`python -m benchmarks
# --record-cuda-suite`, from $OUT/cuda-suite.xml); its per-test sync counts and sites (`sync @ gpumetrics/…`) into
# $OUT/cuda-syncs.txt. The benchmark suite (`python -m benchmarks --suite gpu`) runs every case in one child process
# in priority order (benchmarks.registry.GPU_SUITE_ORDER) and merges each case's rows into $OUT/latest.json and
# $OUT/BENCHMARKS.md (copies of the repo's) as soon as it is timed, so a case cut by its limit or the budget loses
# only itself; the earlier runs started a process per case, which cost 25-45 s each on the H200 machine.
# GPU_BENCH_CASES replaces the case list (in its order); BENCH_DEVICE / BENCH_ARGS / SKIP_WHEELS are for a dry run on
# a CPU machine: `SKIP_WHEELS=1 BENCH_DEVICE=cpu BENCH_ARGS=--quick bash tools/gpu_session.sh`.
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
# the GPU suite in one process (benchmarks/one_process.py), in its priority order (benchmarks.registry.GPU_SUITE_ORDER),
# saved after each case; HOST_RESERVE seconds stay for the host rows below
budget=$(( $(left) - ${HOST_RESERVE:-45} ))
if [ -n "${GPU_BENCH_CASES:-}" ]; then selection=(--only $GPU_BENCH_CASES --one-process); else selection=(--suite gpu); fi
if [ "$budget" -ge 30 ]; then
    bench_start=$(date +%s)
    timeout -k 10 $(( budget + 30 )) python3 -m benchmarks --device "${BENCH_DEVICE:-cuda}" "${selection[@]}" \
        --budget "$budget" --case-limit "${CASE_LIMIT:-150}" ${BENCH_ARGS:-} --results "$OUT/latest.json" \
        --table "$OUT/BENCHMARKS.md" >>"$OUT/bench.log" 2>&1
    echo "bench suite: exit $? in $(( $(date +%s) - bench_start )) s" | tee -a "$OUT/bench.log"
else
    echo "bench: budget spent before the suite" | tee -a "$OUT/bench.log"
fi
# the GPU machine's host cores decide auto's routes for strings (kernels.host.host_beats_device_route: its thresholds
# came from the 2-core CPU): its CPU rows go to files of their own, never merged into the repo's (keyed "cpu" there)
host_cases=${HOST_BENCH_CASES:-"edit_long_encode_separated edit_encode_separated wer_encode_separated"}
budget=$(left)
if [ "$budget" -ge 30 ]; then
    host_start=$(date +%s)
    timeout -k 10 $(( budget + 10 )) python3 -m benchmarks --device cpu --only $host_cases --one-process \
        --budget "$budget" ${BENCH_ARGS:-} --results "$OUT/host-latest.json" --table "$OUT/host-BENCHMARKS.md" \
        >>"$OUT/bench.log" 2>&1
    echo "bench host: exit $? in $(( $(date +%s) - host_start )) s" | tee -a "$OUT/bench.log"
else
    echo "bench: budget spent, skipped the host rows" | tee -a "$OUT/bench.log"
fi
grep -E "ratio|FAILED" "$OUT/bench.log" | tail -40
# the cases a limit or the budget cut, ready for a second call on the warm machine
python3 -c "import json, sys; failures = json.load(open(sys.argv[1])).get('failures', []); \
cut = [f.split('[', 1)[0] for f in failures if '(cut: ' in f]; \
print('cut: GPU_BENCH_CASES=\"' + ' '.join(dict.fromkeys(cut)) + '\"' if cut else 'cut: none')" "$OUT/latest.json" \
    2>/dev/null | tee -a "$OUT/bench.log"
echo "session: $(( $(date +%s) - start )) s"
exit 0
