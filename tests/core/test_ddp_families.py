"""The CUDA DDP test's worker (tests/cuda/test_cuda_ddp.py) on the CPU: two gloo processes give the one-process value
for a metric of every family, so the sync's logic (additive states bucketed into one all_reduce per op and dtype, the
rank check of the state layouts, the uneven gathers of cat states) is checked for every family without a GPU, and the
worker the CUDA suite spawns runs on CPU CI too (it ran on the CPU by hand only)."""

from __future__ import annotations

import pytest

from tests.core.test_host_syncs import _cases, update_for_compute
from tests.cuda.test_cuda_ddp import FAMILIES, N, _families, _worker, assert_every_rank_gives
from tests.helpers.meteor_jar import skip_without_meteor_data
from testkit.ddp import run_ddp_function


@pytest.fixture(scope="module")
def two_cpu_processes(tmp_path_factory) -> list[dict]:
    return run_ddp_function(_worker, _families(), str(tmp_path_factory.mktemp("ddp")), "cpu")


@pytest.mark.ddp
@pytest.mark.filterwarnings("ignore:.*(rank-deficient|singular):UserWarning")  # FID of 8 samples, as the CUDA test
@pytest.mark.parametrize("name", FAMILIES)
def test_two_cpu_processes_equal_one_for_every_family(name, tmp_path, two_cpu_processes):
    skip_without_meteor_data(name)
    make, batch = _cases(tmp_path)[name]
    single = make()
    update_for_compute(name, single, batch(N))
    assert_every_rank_gives(single.compute(), two_cpu_processes, name)
