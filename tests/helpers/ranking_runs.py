"""Ranking runs shared by the ranking tests, importable where ranx and pytrec_eval are not installed (the CUDA suite
on a GPU machine): the metric names compared with ranx, and runs full of tied scores."""

from __future__ import annotations

import torch

#: the metrics compared with ranx (our names, which are ranx's)
RANX = ["ndcg", "ndcg@3", "ndcg@10", "ndcg_burges@5", "map", "map@5", "mrr", "mrr@3",
        "precision", "precision@5", "precision@30", "recall", "recall@5", "f1@5", "hits@5", "hit_rate@2",
        "r-precision"]


def heavy_ties(seed: int, q: int = 40, d: int = 200, values: int = 3) -> dict:
    """Queries of 1–``d`` ranked documents (a random, non-prefix mask) with ``values`` distinct scores, random graded
    labels and judged documents the run missed: ``scores``, ``relevance``, ``mask``, ``doc_ids`` ``[q, d]``,
    ``qrels`` ``[q, d + 4]``, ``missed`` ``[q, 4]``."""
    g = torch.Generator().manual_seed(seed)
    scores = torch.randint(0, values, (q, d), generator=g).double() / values
    lengths = torch.randint(1, d + 1, (q,), generator=g)
    keep = torch.rand(q, d, generator=g).argsort(1) < lengths[:, None]  # `lengths[i]` random columns of each row
    relevance = torch.randint(0, 4, (q, d), generator=g) * (torch.rand(q, d, generator=g) < 0.3) * keep
    missed = torch.randint(0, 3, (q, 4), generator=g)
    return {"scores": scores, "relevance": relevance, "mask": keep, "doc_ids": torch.arange(d).expand(q, d),
            "qrels": torch.cat([relevance, missed], 1), "missed": missed}
