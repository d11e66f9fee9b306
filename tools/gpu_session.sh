#!/usr/bin/env bash
# One call on a lent GPU machine (see docs/gpu.md): the CUDA suite, then the GPU benchmark rows; logs and tables go to
# $OUT. The machine's Python has torch, torchvision, torchmetrics, transformers, scipy, numba and triton; the other
# test oracles travel as wheels in .whl/ (docs/gpu.md lists them). Time limits leave room for a rerun in a 15-minute
# device budget: CUDA_SUITE_TIMEOUT (default 300 s) and BENCH_TIMEOUT (default 180 s).
set -uo pipefail
OUT=${OUT:-/tmp/gpumetrics-gpu}
mkdir -p "$OUT"
if compgen -G ".whl/*.whl" >/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
        && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH} || exit 1
fi
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
{ nvidia-smi -L; python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"; } \
    >"$OUT/device.txt" 2>&1
start=$(date +%s)
timeout "${CUDA_SUITE_TIMEOUT:-300}" make -s test-cuda CUDA_PYTHON=python3 \
    PYTEST_CUDA_ARGS="--junitxml=$OUT/cuda-suite.xml" 2>&1 | tee "$OUT/cuda-suite.log"
echo "cuda suite wall: $(( $(date +%s) - start )) s" | tee -a "$OUT/cuda-suite.log"
timeout "${BENCH_TIMEOUT:-180}" python3 -m benchmarks --device cuda --only ${GPU_BENCH_CASES:-edit_distance_short \
    edit_distance_long char_error_rate fid_update clip_score_update} --results "$OUT/bench.json" --table "$OUT/BENCH.md" \
    2>&1 | tee "$OUT/bench.log"
exit 0
