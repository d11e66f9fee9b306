#!/usr/bin/env bash
# The GPU machine's Python on this CPU machine, before device time is spent (docs/gpu.md): a Python 3.12 venv with
# the versions the device image holds (the device tool's KINDS.md: torch 2.11 with Triton 3.6, NumPy 2.5, SciPy 1.18,
# transformers 5.17, torchmetrics 1.9, and the other packages the suite imports), the wheels of .whl/ installed
# beside it as tools/gpu_session.sh installs them there. It then
#   1. collects the CUDA suite: a module that cannot be imported there is an error here (its CUDA tests would be lost);
#   2. runs every GPU row's contenders once on the CPU with the rows' CUDA check lifted (tools/gpu_rows_on_cpu.py):
#      an import, API or value error in a GPU row shows here;
#   3. dry-runs tools/gpu_session.sh on the CPU (BENCH_DEVICE=cpu, --quick): the GPU rows fail with their "need
#      CUDA" error, every other row must run.
# SIM (venv path, default /tmp/gpumetrics-devsim), PY312 (a Python 3.12), OUT (default /tmp/gpumetrics-devsim-out).
set -euo pipefail
cd "$(dirname "$0")/.."
SIM=${SIM:-/tmp/gpumetrics-devsim}
OUT=${OUT:-/tmp/gpumetrics-devsim-out}
# the first Python 3.12 that runs (a pyenv shim named python3.12 exits 127 where 3.12 is not the selected version)
PY312=${PY312:-$(for py in $(command -v python3.12) /root/.pyenv/versions/3.12.*/bin/python; do
    "$py" -c "import sys; assert sys.version_info[:2] == (3, 12)" 2>/dev/null && { echo "$py"; break; }; done; true)}
if [ ! -x "$SIM/bin/python" ]; then
    [ -n "$PY312" ] || { echo "no Python 3.12 found: set PY312"; exit 1; }
    "$PY312" -m venv "$SIM"
    "$SIM/bin/pip" install -q "torch==2.11.0" "torchvision==0.26.0" "torchmetrics==1.9.0" "transformers==5.17.0" \
        "numpy==2.5.2" scipy numba pytest pytest-timeout hypothesis scikit-learn lightning sacrebleu pillow pyyaml \
        pandas regex sentencepiece tqdm tiktoken six click joblib absl-py lxml requests filelock fsspec sympy \
        networkx jinja2 psutil tabulate rich timm safetensors huggingface-hub opencv-python-headless
fi
site=$(mktemp -d)
trap 'rm -rf "$site"' EXIT
"$SIM/bin/python" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$site" .whl/*.whl

echo "== the CUDA suite's collection"
collected=$(PYTHONPATH="$site:$PWD" "$SIM/bin/python" -m pytest -o addopts="" --strict-markers -q -p no:cacheprovider \
    -m cuda --collect-only tests 2>&1) || { echo "$collected" | grep -E "^(E |ERROR)" ; echo "collection failed"; exit 1; }
echo "$collected" | tail -1

echo "== the GPU rows' contenders on the CPU"
PYTHONPATH="$site:$PWD" "$SIM/bin/python" tools/gpu_rows_on_cpu.py

echo "== tools/gpu_session.sh on the CPU"
rm -rf "$OUT"
OUT="$OUT" BENCH_DEVICE=cpu BENCH_ARGS=--quick PATH="$SIM/bin:$PATH" bash tools/gpu_session.sh >"$OUT.log" 2>&1
gpu_rows=$(grep -cE "FAILED: [a-z0-9_]*_gpu(_[a-z0-9_]*)?\[" "$OUT/bench.log" || true)
need_cuda=$(grep -cE "^ValueError: the GPU .* need --device cuda" "$OUT/bench.log" || true)
failed=$(grep -E "FAILED: " "$OUT/bench.log" | grep -v -E "FAILED: [a-z0-9_]*_gpu(_[a-z0-9_]*)?\[" || true)
grep -E "^cuda suite|passed|session:" "$OUT.log" | tail -3
if [ -n "$failed" ]; then echo "rows that should run on the CPU failed:"; echo "$failed"; exit 1; fi
if [ "$gpu_rows" != "$need_cuda" ]; then echo "$gpu_rows GPU rows failed, only $need_cuda for want of CUDA"; exit 1; fi
echo "ok: $OUT ($gpu_rows GPU rows refused the CPU, as they should)"
