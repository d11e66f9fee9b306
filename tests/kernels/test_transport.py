"""kernels.transport: exact EMD on host arrays, and Sinkhorn's two stopping schedules give the same numbers."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from gpumetrics.kernels.transport import emd_batch, emd_host, sinkhorn_batch
from tests.helpers.oracles import import_oracle
from tests.helpers.syncs import SyncCounter


def _batch(seed: int, pairs: int = 12, n: int = 6, m: int = 5) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    a, b = (torch.rand(pairs, n, generator=g, dtype=torch.float64),
            torch.rand(pairs, m, generator=g, dtype=torch.float64))
    a[:, -2:] = 0.0  # padding
    b[::2, -1] = 0.0
    a, b = a / a.sum(1, keepdim=True), b / b.sum(1, keepdim=True)
    cost = torch.rand(pairs, n, m, generator=g, dtype=torch.float64) * 2
    return a, b, cost


@pytest.mark.filterwarnings("ignore:Sinkhorn did not converge")  # stopped early on purpose
@pytest.mark.parametrize("path", ["kernel", "log"])
@pytest.mark.parametrize("max_iter", [7, 40, 1000])
@pytest.mark.parametrize("tol", [1e-6, 1e-3])
def test_lazy_stopping_gives_the_eager_numbers(path, max_iter, tol) -> None:
    a, b, cost = _batch(max_iter)
    reg = 0.05
    if path == "log":  # max C / reg ≥ 600 takes the log-domain iteration; small costs elsewhere still converge early
        cost, reg = cost * 0.02, 0.003
        cost[:, 0, 0] = 2.0
    eager = sinkhorn_batch(a, b, cost, reg=reg, max_iter=max_iter, tol=tol, read_every_check=True)
    lazy = sinkhorn_batch(a, b, cost, reg=reg, max_iter=max_iter, tol=tol, read_every_check=False)
    assert torch.equal(eager, lazy)
    assert sinkhorn_batch(a, b, cost, reg=reg, max_iter=max_iter, tol=tol).equal(eager)  # the CPU default is eager


def test_lazy_stopping_reads_the_flag_at_doubling_intervals() -> None:
    a, b, cost = _batch(3)
    reads = {}
    for eager in (True, False):
        with SyncCounter() as counter:
            sinkhorn_batch(a, b, cost, reg=0.01, max_iter=1000, tol=1e-300, read_every_check=eager)  # never converges
        reads[eager] = counter.counts["item"]
    # the kernel-or-log choice, the reads (20, 40, …, 640), and after max_iter the check for a far-off plan
    assert reads == {True: 1 + 100 + 1, False: 1 + 6 + 1}


@pytest.mark.parametrize("eager", [True, False])
def test_an_unconverged_plan_far_off_its_marginals_warns(eager) -> None:
    """Mass 4/11 vs 0.4 across a word distance of 1.7619 at reg 0.01 (a WMD pair found fuzzing against POT's exact
    EMD, 0.0641): after 1,000 iterations the plan's cost is 2.8e-10, no bound of anything — warned; converged with
    more iterations, silent."""
    a = torch.tensor([[4 / 11, 7 / 11]], dtype=torch.float64)
    b = torch.tensor([[0.4, 0.6]], dtype=torch.float64)
    cost = torch.tensor([[[0.0, 1.7619], [1.7619, 0.0]]], dtype=torch.float64)
    with pytest.warns(RuntimeWarning, match="did not converge for 1 pair"):
        far = sinkhorn_batch(a, b, cost, reg=0.01, max_iter=1000, read_every_check=eager)
    assert float(far) < 1e-9
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        close = sinkhorn_batch(a, b, cost, reg=0.01, max_iter=30_000, read_every_check=eager)
    assert float(close) == pytest.approx((0.4 - 4 / 11) * 1.7619, rel=1e-3)


def test_emd_host_equals_emd_batch_and_pot() -> None:
    ot = import_oracle("ot", "POT")
    a, b, cost = _batch(5)
    out = emd_host(a.numpy(), b.numpy(), cost.numpy())
    assert torch.equal(emd_batch(a, b, cost), torch.from_numpy(out))
    for i in range(a.shape[0]):
        rows, cols = a[i].numpy() > 0, b[i].numpy() > 0
        assert out[i] == ot.emd2(a[i].numpy()[rows], b[i].numpy()[cols],
                                 np.ascontiguousarray(cost[i].numpy()[rows][:, cols]))
