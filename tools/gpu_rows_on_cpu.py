"""Every GPU benchmark row's contenders once on the CPU, with the rows' CUDA check lifted (tools/device_sim.sh).

``python tools/gpu_rows_on_cpu.py [CASE ...]``: for each ``group="gpu"`` case at its quick size, every contender runs
once on the CPU (the Triton kernel under ``TRITON_INTERPRET=1``) and the case's check compares the first of ours with
the first anchor, so an import, API or value error in a GPU row shows here, not in the device call. A contender that
refuses the CPU itself (an error naming CUDA: nvJPEG decoding) is reported and not counted as a failure. Exit status 1
on any other failure.
"""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path

# rows that time the Triton kernel itself run it on CPU tensors through Triton's interpreter (set before triton is
# imported; the routes of the other rows take the tensor kernel on a CPU either way)
os.environ.setdefault("TRITON_INTERPRET", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.kernels.triton_interpret_check import mend_interpreter_scalars  # noqa: E402

mend_interpreter_scalars()

import benchmarks.cases.edit_gpu as edit_gpu  # noqa: E402
import benchmarks.cases.image_gpu as image_gpu  # noqa: E402
from benchmarks.registry import CASES  # noqa: E402


def main(names: list[str]) -> int:
    edit_gpu._cuda = image_gpu._cuda = lambda device: device  # the rows' "needs CUDA" check, lifted
    names = names or [name for name, case in CASES.items() if case.group == "gpu"]
    failures = 0
    for name in names:
        case = CASES[name]
        size = case.quick_sizes[0]
        try:
            contenders = case.setup(size, "cpu")
            results = {}
            for label, run in {**contenders.ours, **contenders.anchors}.items():
                try:
                    results[label] = run()
                except Exception as error:  # noqa: BLE001 - reported, then judged
                    if "CUDA" not in str(error):
                        raise
                    print(f"  {name}: {label!r} refuses the CPU ({str(error).strip()[:120]})")
            first_ours = next(label for label in contenders.ours if label in results)
            first_anchor = next(label for label in contenders.anchors if label in results)
            if contenders.check is not None and not contenders.check(results[first_ours], results[first_anchor]):
                raise AssertionError(f"{first_ours!r} {results[first_ours]!r} vs {first_anchor!r} "
                                     f"{results[first_anchor]!r}")
            print(f"ok {name}[{size}]: {len(results)} contenders ran", flush=True)
        except Exception:  # noqa: BLE001 - every case is tried
            failures += 1
            print(f"FAILED {name}[{size}]", flush=True)
            traceback.print_exc(limit=-3)
    print(f"{failures} of {len(names)} GPU rows failed on the CPU")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
