"""Ranking metrics on CUDA equal the CPU's under every ranx tie order, in a module of its own: the reference-tool
tests of ``test_ranking.py`` skip as a whole where ranx is not installed (the GPU machine), this one must not."""

from __future__ import annotations

import pytest
import torch

from gpumetrics.functional import ranking_metrics
from tests.helpers.ranking_runs import RANX, heavy_ties


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_ranx_tie_order_cuda_equals_cpu():
    run = heavy_ties(5, values=2)
    for ties in ("ranx", "ranx_comparable", "ranx_dict"):
        cpu = ranking_metrics(run["scores"], run["relevance"], metrics=RANX, mask=run["mask"], qrels=run["qrels"],
                              ties=ties, reduction="none")
        cuda = ranking_metrics(run["scores"].cuda(), run["relevance"].cuda(), metrics=RANX, mask=run["mask"].cuda(),
                               qrels=run["qrels"].cuda(), ties=ties, reduction="none")
        for name in RANX:  # the same order; sums may round differently on the GPU (issue 27: ≤ 1e-12 relative)
            torch.testing.assert_close(cuda[name].cpu(), cpu[name], rtol=1e-12, atol=1e-15, msg=f"{ties} {name}")
