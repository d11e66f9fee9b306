"""DDP with CUDA tensors: two processes sharing one GPU (gloo over CUDA tensors) give the one-process value for a
metric of every family; the CLI under ``torchrun --nproc_per_node=1 --device cuda`` (NCCL) equals the CPU run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tests.core.test_host_syncs import BUDGETS, _cases, update_for_compute
from tests.helpers.meteor_jar import missing_meteor_data, skip_without_meteor_data
from testkit.ddp import run_ddp_function
from testkit.checkout import checkout_pythonpath

pytestmark = [pytest.mark.cuda, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")]
ROOT = Path(__file__).resolve().parents[2]
#: one module of each family (text, edit, n-gram, METEOR, image, detection, classification, ranking, WMD)
FAMILIES = ["TokenF1", "CharErrorRate", "EditDistance(torch)", "BLEUScore", "ROUGEScore", "CIDErScore", "METEORScore",
            "FrechetInceptionDistance", "CLIPScore", "OCREndToEnd", "ZeroShotDetectionF1", "MulticlassF1Score",
            "RankingMetrics", "WordMoversDistance"]
N = 8  # samples, split 5 / 3 between the two processes
#: float32 networks: cuDNN / cuBLAS may pick other algorithms for 5 or 3 samples than for 8
NETWORK_FAMILIES, NETWORK_RTOL = ("FrechetInceptionDistance", "CLIPScore"), 1e-5


def _shard(value, lo, hi):
    if isinstance(value, (torch.Tensor, list)):
        return value[lo:hi]
    if isinstance(value, tuple):
        return tuple(_shard(v, lo, hi) for v in value)
    return value


def _to_cuda(value):
    if isinstance(value, torch.Tensor):
        return value.to("cuda")
    if isinstance(value, (list, tuple)):
        return type(value)(_to_cuda(v) for v in value)
    if isinstance(value, dict):
        return {k: _to_cuda(v) for k, v in value.items()}
    return value


def _families() -> list[str]:
    return [name for name in FAMILIES if not missing_meteor_data(name)]


def _worker(rank: int, names: list[str], tmp: str, device: str = "cuda") -> dict:
    """Every family in one pair of processes (a spawn costs seconds: one for all, not one per family); a family that
    raises is reported by name and the others still run."""
    own = Path(tmp) / f"rank{rank}"  # each process writes its own case files (model config, images)
    own.mkdir()
    cases = _cases(own)
    lo, hi = (0, 5) if rank == 0 else (5, N)
    results = {}
    for name in names:
        make, batch = cases[name]
        try:
            metric = make().to(device)
            args = _shard(batch(N), lo, hi)
            update_for_compute(name, metric, _to_cuda(args) if device == "cuda" else args)
            value = metric.compute()
            results[name] = {k: v.cpu() for k, v in value.items()} if isinstance(value, dict) else value.cpu()
        except Exception as error:  # noqa: BLE001 - reported per family by the test
            results[name] = f"{type(error).__name__}: {error}"
    return results


@pytest.fixture(scope="module")
def two_process_results(tmp_path_factory) -> list[dict]:
    # fresh interpreters: CUDA in a child forked from a process that initialised the driver is undefined
    return run_ddp_function(_worker, _families(), str(tmp_path_factory.mktemp("ddp")), start_method="spawn")


@pytest.mark.parametrize("name", FAMILIES)
def test_two_processes_on_one_gpu_equal_one(name, tmp_path, two_process_results):
    assert name in BUDGETS
    skip_without_meteor_data(name)
    make, batch = _cases(tmp_path)[name]
    single = make().to("cuda")
    update_for_compute(name, single, _to_cuda(batch(N)))
    assert_every_rank_gives(single.compute(), two_process_results, name)


def assert_every_rank_gives(expected, per_rank: list[dict], name: str) -> None:
    """Each rank's result of family ``name`` (:func:`_worker`) equals the one-process ``expected`` (any device)."""
    rtol = NETWORK_RTOL if name in NETWORK_FAMILIES else 1e-9
    wanted = expected if isinstance(expected, dict) else {None: expected}
    for rank, results in enumerate(per_rank):
        result = results[name]
        assert not isinstance(result, str), f"rank {rank}: {result}"
        got = result if isinstance(expected, dict) else {None: result}
        for key, want in wanted.items():
            torch.testing.assert_close(got[key].double(), want.cpu().double(), rtol=rtol, atol=1e-12)


def _report(args: list[str], out: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": checkout_pythonpath()}
    subprocess.run(args + ["--output", str(out), "--no-checkpoint"], check=True, cwd=ROOT, env=env, timeout=600)
    report = json.loads(out.read_text())
    return report


def test_cli_under_torchrun_with_nccl_equals_the_cpu_run(tmp_path):
    cpu = _report([sys.executable, "-m", "gpumetrics", "evaluate", "configs/demo.yaml", "--device", "cpu"],
                  tmp_path / "cpu.json")
    cuda = _report([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=1", "-m", "gpumetrics", "evaluate",
                    "configs/demo.yaml", "--device", "cuda"], tmp_path / "cuda.json")
    assert cuda["run"]["world_size"] == 1 and cuda["run"]["distributed_backend"] == "nccl"
    assert cuda["device"].startswith("cuda") and cuda["run"]["device_name"] == torch.cuda.get_device_name(0)
    assert cpu["run"]["distributed_backend"] is None
    for a, b in zip(cpu["tasks"], cuda["tasks"]):
        assert a["name"] == b["name"]
        assert b["score"] == pytest.approx(a["score"], rel=1e-12, abs=1e-15)
