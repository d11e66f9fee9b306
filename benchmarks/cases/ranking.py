"""Ranking metrics (NDCG@10 + MAP + MRR) vs ranx, pytrec_eval, ir_measures and torchmetrics retrieval.

Data: Q queries × 100 retrieved documents with distinct random scores (so every tool ranks the same way), graded
labels 0–3 (≈ 10 % relevant), and 2 judged relevant documents per query the run missed (they count in the ideal DCG
and in AP's denominator). gpumetrics scores padded tensors built once; each anchor scores its own native input built
once (ranx ``Qrels``/``Run`` objects — the runner's warm-up call compiles its numba kernels —, trec-style dicts for
pytrec_eval and ir_measures, flat tensors for torchmetrics).
"""

from __future__ import annotations

import warnings

import numpy as np
import torch

from benchmarks.registry import Contenders, register
from gpumetrics.functional import ranking_metrics

DOCS, MISSED = 100, 2
NAMES = ("ndcg@10", "map", "mrr")


def ranking_data(size: int, seed: int = 0) -> dict:
    g = torch.Generator().manual_seed(seed)
    scores = torch.rand(size, DOCS, generator=g, dtype=torch.float64)
    relevance = torch.randint(1, 4, (size, DOCS), generator=g) * (torch.rand(size, DOCS, generator=g) < 0.1)
    missed = torch.randint(1, 4, (size, MISSED), generator=g)
    return {"scores": scores, "relevance": relevance, "qrels": torch.cat([relevance, missed], 1), "missed": missed}


def trec_dicts(data: dict) -> tuple[dict, dict]:
    scores, relevance, missed = data["scores"].tolist(), data["relevance"].tolist(), data["missed"].tolist()
    run, qrels = {}, {}
    for q, (row, labels, extra) in enumerate(zip(scores, relevance, missed)):
        query = f"q{q}"
        run[query] = {f"d{d}": s for d, s in enumerate(row)}
        judged = {f"d{d}": label for d, label in enumerate(labels) if label}
        judged.update({f"m{j}": label for j, label in enumerate(extra)})
        qrels[query] = judged
    return qrels, run


def _close(ours: dict, anchor: dict, tol: float) -> bool:
    return all(abs(float(ours[name]) - float(anchor[name])) <= tol for name in NAMES)


@register("ranking_ndcg_map_mrr", sizes=(10_000,), quick_sizes=(500,), repeats=5)
def ranking_case(size: int, device: str) -> Contenders:
    import ir_measures
    import pytrec_eval
    from ranx import Qrels, Run, evaluate

    data = ranking_data(size)
    scores, relevance, qrels_tensor = (data[k].to(device) for k in ("scores", "relevance", "qrels"))
    qrels, run = trec_dicts(data)
    ranx_qrels, ranx_run = Qrels(qrels), Run(run)

    def ours() -> dict:
        out = ranking_metrics(scores, relevance, metrics=list(NAMES), qrels=qrels_tensor)
        return {name: float(value) for name, value in out.items()}

    def ranx_eval() -> dict:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = evaluate(ranx_qrels, ranx_run, list(NAMES), save_results_in_run=False)
        return {name: float(out[name]) for name in NAMES}

    def trec_eval() -> dict:
        per_query = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "map", "recip_rank"}).evaluate(run)
        means = {m: np.mean([v[m] for v in per_query.values()]) for m in ("ndcg_cut_10", "map", "recip_rank")}
        return {"ndcg@10": means["ndcg_cut_10"], "map": means["map"], "mrr": means["recip_rank"]}

    def ir_measures_eval() -> dict:
        out = ir_measures.calc_aggregate([ir_measures.nDCG @ 10, ir_measures.AP, ir_measures.RR], qrels, run)
        return {"ndcg@10": out[ir_measures.nDCG @ 10], "map": out[ir_measures.AP], "mrr": out[ir_measures.RR]}

    flat_scores = data["scores"].reshape(-1).float()
    flat_target = data["relevance"].reshape(-1)
    indexes = torch.arange(size).repeat_interleave(DOCS)

    def torchmetrics_eval() -> dict:
        from torchmetrics.retrieval import RetrievalMAP, RetrievalMRR, RetrievalNormalizedDCG

        binary = (flat_target > 0).long()
        return {
            "ndcg@10": float(RetrievalNormalizedDCG(top_k=10)(flat_scores, flat_target, indexes=indexes)),
            "map": float(RetrievalMAP()(flat_scores, binary, indexes=indexes)),
            "mrr": float(RetrievalMRR()(flat_scores, binary, indexes=indexes)),
        }

    return Contenders(
        ours={"ranking_metrics(ndcg@10, map, mrr)": ours},
        anchors={
            "ranx 0.3 evaluate (numba, compiled)": ranx_eval,
            "pytrec_eval (trec_eval 9)": trec_eval,
            "ir_measures calc_aggregate": ir_measures_eval,
            "torchmetrics retrieval (NDCG@10, MAP, MRR)": torchmetrics_eval,
        },
        check=lambda ours_value, anchor: _close(ours_value, anchor, 1e-9),
        note=f"{DOCS} documents per query, distinct scores, graded labels, {MISSED} unretrieved relevant per query; "
             "torchmetrics cannot see unretrieved documents, so its numbers differ (not checked)",
    )


@register("ranking_ranx_ties", sizes=(10_000,), quick_sizes=(500,), repeats=5)
def ranking_ranx_ties_case(size: int, device: str) -> Contenders:
    """Heavy ties (5 distinct scores over 100 documents): ties="ranx" reproduces numba's quicksort order on the CPU."""
    from ranx import Qrels, Run, evaluate

    data = ranking_data(size, seed=1)
    data["scores"] = torch.floor(data["scores"] * 5) / 5
    scores, relevance, qrels_tensor = (data[k].to(device) for k in ("scores", "relevance", "qrels"))
    qrels, run = trec_dicts(data)
    qrels = {f"q{int(q[1:]):07d}": v for q, v in qrels.items()}  # ranx orders queries by id: keep ours
    run = {f"q{int(q[1:]):07d}": v for q, v in run.items()}
    ranx_qrels, ranx_run = Qrels(qrels), Run(run)

    def ours() -> dict:
        out = ranking_metrics(scores, relevance, metrics=list(NAMES), qrels=qrels_tensor, ties="ranx")
        return {name: float(value) for name, value in out.items()}

    def ranx_eval() -> dict:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = evaluate(ranx_qrels, ranx_run, list(NAMES), save_results_in_run=False)
        return {name: float(out[name]) for name in NAMES}

    return Contenders(
        ours={"ranking_metrics(ndcg@10, map, mrr, ties=ranx)": ours},
        anchors={"ranx 0.3 evaluate (numba, compiled)": ranx_eval},
        check=lambda ours_value, anchor: _close(ours_value, anchor, 1e-9),
        note=f"{DOCS} documents per query, 5 distinct scores (every query tied), graded labels, {MISSED} unretrieved "
             "relevant per query; ranx's tie order: numba's np.argsort of every tied query on the CPU",
    )
