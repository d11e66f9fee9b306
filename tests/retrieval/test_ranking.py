"""Ranking metrics vs pytrec_eval (trec_eval), ranx, sklearn ``ndcg_score`` and torchmetrics retrieval, to 1e-9."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

from gpumetrics import RankingMetrics
from gpumetrics.functional import ranking_metrics
from tests.helpers.harness import assert_close, check_metric
from tests.helpers.ranking_runs import RANX, heavy_ties
from tests.helpers.oracles import import_oracle

pytrec_eval = import_oracle("pytrec_eval", "pytrec-eval-terrier")
ranx = import_oracle("ranx")

warnings.filterwarnings("ignore", category=UserWarning, module="ranx")  # numba's threading-layer notes


def random_run(seed: int, q: int, d: int, levels: int = 4, tie_values: int = 5, extra: int = 3,
               min_length: int = 1) -> dict:
    """Padded run with ties (scores from ``tie_values`` values), graded labels, ragged lengths, empty queries, and
    judged relevant documents the run missed (``qrels`` = the row's labels + ``extra`` unretrieved judgments)."""
    g = torch.Generator().manual_seed(seed)
    scores = torch.randint(0, tie_values, (q, d), generator=g).double() / tie_values
    relevance = torch.randint(0, levels, (q, d), generator=g) * (torch.rand(q, d, generator=g) < 0.4)
    lengths = torch.randint(min_length, d + 1, (q,), generator=g)
    mask = torch.arange(d)[None, :] < lengths[:, None]
    relevance[q // 3] = 0  # an empty query (nothing relevant in the run; qrels may still add some)
    relevance = relevance * mask
    missed = torch.randint(0, levels, (q, extra), generator=g) * (torch.rand(q, extra, generator=g) < 0.5)
    missed[q // 3] = 0
    doc_ids = torch.stack([torch.randperm(d + extra, generator=g)[:d] for _ in range(q)])
    return {"scores": scores, "relevance": relevance, "mask": mask, "doc_ids": doc_ids,
            "qrels": torch.cat([relevance, missed], 1), "missed": missed}


def to_dicts(run: dict, with_missed: bool = True) -> tuple[dict, dict]:
    """trec-style qrels / run dicts (docnos zero-padded, so string order = numeric order of ``doc_ids``)."""
    qrels, trec_run = {}, {}
    scores, relevance, mask, doc_ids = run["scores"], run["relevance"], run["mask"], run["doc_ids"]
    for i in range(scores.shape[0]):
        docs = {f"d{int(doc_ids[i, j]):05d}": float(scores[i, j]) for j in range(scores.shape[1]) if mask[i, j]}
        judged = {f"d{int(doc_ids[i, j]):05d}": int(relevance[i, j]) for j in range(scores.shape[1]) if mask[i, j]}
        used = set(doc_ids[i].tolist())
        free = [x for x in range(scores.shape[1] + run["missed"].shape[1] + 100) if x not in used]
        if with_missed:
            for j, label in enumerate(run["missed"][i].tolist()):
                judged[f"d{free[j]:05d}"] = int(label)
        trec_run[f"q{i:04d}"], qrels[f"q{i:04d}"] = docs, judged
    return qrels, trec_run


TREC = {  # our name → trec_eval measure
    "map": "map", "map@5": "map_cut_5", "ndcg": "ndcg", "ndcg@3": "ndcg_cut_3", "ndcg@10": "ndcg_cut_10",
    "ndcg@100": "ndcg_cut_100", "mrr": "recip_rank", "precision@1": "P_1", "precision@5": "P_5",
    "precision@30": "P_30", "recall@5": "recall_5", "recall@30": "recall_30", "r_precision": "Rprec",
    "hit_rate@1": "success_1", "hit_rate@5": "success_5",
}


@pytest.mark.parametrize("seed", range(8))
def test_trec_eval_parity_per_query(seed):
    run = random_run(seed, q=40, d=12 + seed * 3)
    qrels, trec_run = to_dicts(run)
    measures = {"map_cut.5", "ndcg_cut.3,10,100", "P.1,5,30", "recall.5,30", "success.1,5", "map", "ndcg",
                "recip_rank", "Rprec"}
    expected = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(trec_run)
    ours = ranking_metrics(run["scores"], run["relevance"], metrics=list(TREC), mask=run["mask"],
                           doc_ids=run["doc_ids"], qrels=run["qrels"], reduction="none")
    for name, measure in TREC.items():
        reference = torch.tensor([expected[f"q{i:04d}"][measure] for i in range(40)], dtype=torch.float64)
        assert_close(ours[name], reference, 1e-9, what=f"{name} vs trec_eval {measure}")
    mean = ranking_metrics(run["scores"], run["relevance"], metrics=list(TREC), mask=run["mask"],
                           doc_ids=run["doc_ids"], qrels=run["qrels"])
    for name, measure in TREC.items():
        assert abs(float(mean[name]) - np.mean([v[measure] for v in expected.values()])) < 1e-9


def test_trec_eval_relevance_level_and_string_docnos():
    run = random_run(3, q=30, d=15, levels=5)
    qrels, trec_run = to_dicts(run)
    expected = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg_cut.10", "recip_rank", "P.5"}, relevance_level=2
                                              ).evaluate(trec_run)
    docnos = [[f"d{int(i)}" for i in row] for row in run["doc_ids"]]  # not zero-padded: "d10" < "d9"
    qrels, trec_run = {}, {}
    for i, row in enumerate(docnos):
        trec_run[f"q{i:04d}"] = {docnos[i][j]: float(run["scores"][i, j]) for j in range(15) if run["mask"][i, j]}
        qrels[f"q{i:04d}"] = {docnos[i][j]: int(run["relevance"][i, j]) for j in range(15) if run["mask"][i, j]}
        qrels[f"q{i:04d}"].update({f"x{j}": int(label) for j, label in enumerate(run["missed"][i].tolist())})
    expected = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg_cut.10", "recip_rank", "P.5"}, relevance_level=2
                                              ).evaluate(trec_run)
    ours = ranking_metrics(run["scores"], run["relevance"], metrics=["map", "ndcg@10", "mrr", "precision@5"],
                           mask=run["mask"], doc_ids=docnos, qrels=run["qrels"], relevance_level=2,
                           reduction="none")
    for name, measure in {"map": "map", "ndcg@10": "ndcg_cut_10", "mrr": "recip_rank", "precision@5": "P_5"}.items():
        reference = torch.tensor([expected[f"q{i:04d}"][measure] for i in range(30)], dtype=torch.float64)
        assert_close(ours[name], reference, 1e-9, what=name)



def _ranx_per_query(qrels: dict, run, metrics: list[str]) -> dict:
    out = ranx.evaluate(ranx.Qrels(qrels) if isinstance(qrels, dict) else qrels, run, metrics, return_mean=False,
                        save_results_in_run=False)
    return out if len(metrics) > 1 else {metrics[0]: out}


@pytest.mark.parametrize("seed", range(6))
def test_ranx_parity_with_ties(seed):
    # ranx's Run keeps tied documents in input order for short lists (numba's insertion sort): D ≤ 15
    run = random_run(100 + seed, q=30, d=6 + seed, min_length=1)
    qrels, ranx_run = to_dicts(run)
    expected = _ranx_per_query(qrels, ranx.Run(ranx_run), RANX)
    ours = ranking_metrics(run["scores"], run["relevance"], metrics=RANX, mask=run["mask"], qrels=run["qrels"],
                           ties="ranx", reduction="none")
    for name in RANX:
        assert_close(ours[name], torch.from_numpy(np.asarray(expected[name], dtype=np.float64)), 1e-9, what=name)


@pytest.mark.parametrize("seed", range(3))
def test_ranx_parity_long_lists(seed):
    """100 documents: distinct scores through ranx's Run; tied scores through ranx's pre-sorted typed-list input."""
    run = random_run(200 + seed, q=25, d=100, tie_values=10_000_000, extra=5)
    qrels, ranx_run = to_dicts(run)
    expected = _ranx_per_query(qrels, ranx.Run(ranx_run), RANX)
    ours = ranking_metrics(run["scores"], run["relevance"], metrics=RANX, mask=run["mask"], qrels=run["qrels"],
                           ties="ranx", reduction="none")
    for name in RANX:
        assert_close(ours[name], torch.from_numpy(np.asarray(expected[name], dtype=np.float64)), 1e-9, what=name)

    from numba.typed import List as TypedList

    tied = random_run(300 + seed, q=25, d=100, tie_values=4, extra=5)
    run_rows, qrel_rows = TypedList(), TypedList()
    order = torch.sort(tied["scores"], dim=1, descending=True, stable=True).indices
    for i in range(25):
        ranked = [int(j) for j in order[i] if tied["mask"][i, j]]
        run_rows.append(np.array([[float(j), float(tied["scores"][i, j])] for j in ranked], dtype=np.float64))
        judged = [(float(j), float(tied["relevance"][i, j])) for j in range(100) if tied["relevance"][i, j] > 0]
        judged += [(1000.0 + j, float(label)) for j, label in enumerate(tied["missed"][i].tolist()) if label > 0]
        judged.sort(key=lambda pair: -pair[1])
        qrel_rows.append(np.array(judged or [[-1.0, 0.0]], dtype=np.float64))
    expected = ranx.evaluate(qrel_rows, run_rows, RANX, return_mean=False)
    # a typed list is used as given (no sort): our stable order is trec_eval's ties with ids falling along the row
    ours = ranking_metrics(tied["scores"], tied["relevance"], metrics=RANX, mask=tied["mask"], qrels=tied["qrels"],
                           doc_ids=-torch.arange(100).expand(25, 100), reduction="none")
    for name in RANX:
        assert_close(ours[name], torch.from_numpy(np.asarray(expected[name], dtype=np.float64)), 1e-9, what=name)


def _ranx_reference(run: dict, ties: str) -> dict:
    qrels, trec_run = to_dicts(run)
    if ties == "ranx_dict":
        return ranx.evaluate(qrels, trec_run, RANX, return_mean=False)
    return ranx.evaluate(ranx.Qrels(qrels), ranx.Run(trec_run), RANX, return_mean=False, save_results_in_run=False,
                         make_comparable=ties == "ranx_comparable")


@pytest.mark.parametrize("ties", ["ranx", "ranx_comparable", "ranx_dict"])
@pytest.mark.parametrize("seed, values", [(0, 2), (1, 3), (2, 5), (3, 40)])
def test_ranx_tie_order_on_queries_of_1_to_200_documents(ties, seed, values):
    """numba's quicksort reorders tied documents of queries longer than 15: every query equals ranx, and the test can
    fail (a stable sort gives other values on some of these queries)."""
    run = heavy_ties(seed, values=values)
    expected = _ranx_reference(run, ties)
    options = {"mask": run["mask"], "qrels": run["qrels"], "reduction": "none"}
    ours = ranking_metrics(run["scores"], run["relevance"], metrics=RANX, ties=ties, **options)
    for name in RANX:
        assert_close(ours[name], torch.from_numpy(np.asarray(expected[name], dtype=np.float64)), 1e-12, what=name)
    if ties == "ranx":
        from gpumetrics.retrieval import ranking

        with pytest.MonkeyPatch.context() as patch:  # the old ties="ranx": a stable descending sort
            patch.setattr(ranking, "_ranx_order", lambda scores, mask, order, ties: order)
            stable = ranking_metrics(run["scores"], run["relevance"], metrics=RANX, ties=ties, **options)
        assert any(not torch.equal(ours[name], stable[name]) for name in ("ndcg", "map", "mrr", "precision@5")), \
            "a stable sort gives ranx's values here: the test would not see a wrong tie order"


@pytest.mark.parametrize("ties", ["ranx", "ranx_dict"])
def test_ranx_tie_order_flat_inputs_and_python_fallback(ties, monkeypatch):
    """Flat ``query_ids`` inputs take each query's documents in input order, as ranx's dict does; without numba the
    Python port of numba's quicksort gives the same values."""
    from gpumetrics.retrieval import ranking

    run = heavy_ties(7, q=12, d=60, values=2)
    expected = _ranx_reference(run, ties)
    rows, cols = run["mask"].nonzero(as_tuple=True)
    flat = ranking_metrics(run["scores"][rows, cols], run["relevance"][rows, cols], metrics=RANX, ties=ties,
                           query_ids=rows, reduction="none")
    padded = ranking_metrics(run["scores"], run["relevance"], metrics=RANX, mask=run["mask"], qrels=run["qrels"],
                             ties=ties, reduction="none")
    monkeypatch.setattr(ranking, "_numba_argsort_rows", lambda: None)
    python = ranking_metrics(run["scores"], run["relevance"], metrics=RANX, mask=run["mask"], qrels=run["qrels"],
                             ties=ties, reduction="none")
    for name in RANX:
        reference = torch.from_numpy(np.asarray(expected[name], dtype=np.float64))
        assert_close(padded[name], reference, 1e-12, what=name)
        assert_close(python[name], reference, 1e-12, what=f"{name} (Python port)")
        if name in ("precision@5", "mrr", "ndcg@10", "hits@5"):  # flat inputs carry no unretrieved judgments
            assert_close(flat[name], ranking_metrics(run["scores"], run["relevance"], metrics=name, mask=run["mask"],
                                                     ties=ties, reduction="none")[name], 1e-12, what=name)


def test_quicksort_port_equals_numba_argsort():
    from numba import njit

    from gpumetrics.retrieval.ranking import _quicksort_argsort

    argsort = njit(lambda values: np.argsort(values))  # numba's default kind: its quicksort
    rng = np.random.default_rng(0)
    for n in [*range(0, 70), 100, 128, 200, 513]:
        for distinct in (1, 2, 3, 10, 10**9):
            values = rng.integers(0, distinct, n).astype(np.float64)
            for case in (values, np.sort(values), np.sort(values)[::-1].copy()):
                assert _quicksort_argsort(case.tolist()) == argsort(case).tolist(), (n, distinct)


@pytest.mark.parametrize("seed", range(6))
def test_sklearn_ndcg_with_tie_averaging(seed):
    from sklearn.metrics import ndcg_score

    g = torch.Generator().manual_seed(seed)
    q, d = 20, 3 + seed * 4
    scores = torch.randint(0, 4, (q, d), generator=g).double()
    relevance = torch.randint(0, 4, (q, d), generator=g) * (torch.rand(q, d, generator=g) < 0.5)
    relevance[0] = 0
    for k in (1, 3, d, d + 5):
        ours = ranking_metrics(scores, relevance, metrics=[f"ndcg@{k}"], ties="average", reduction="none")[f"ndcg@{k}"]
        reference = [ndcg_score(relevance[i:i + 1].numpy(), scores[i:i + 1].numpy(), k=k) for i in range(q)]
        assert_close(ours, reference, 1e-9, what=f"ndcg@{k} vs sklearn")
        mean = ranking_metrics(scores, relevance, metrics=[f"ndcg@{k}"], ties="average")[f"ndcg@{k}"]
        assert abs(float(mean) - ndcg_score(relevance.numpy(), scores.numpy(), k=k)) < 1e-9


@pytest.mark.parametrize("empty, action", [("zero", "neg"), ("one", "pos"), ("skip", "skip")])
def test_torchmetrics_retrieval_flat_inputs(empty, action):
    from torchmetrics import retrieval as R

    g = torch.Generator().manual_seed(7)
    n = 400
    query_ids = torch.randint(0, 40, (n,), generator=g) * 3
    scores = torch.rand(n, generator=g, dtype=torch.float64)  # distinct: torchmetrics' argsort breaks ties its own way
    target = (torch.rand(n, generator=g) < 0.25).long()
    target[query_ids == query_ids[0]] = 0
    cases = {
        "map": R.RetrievalMAP, "map@5": lambda **o: R.RetrievalMAP(top_k=5, **o), "mrr": R.RetrievalMRR,
        "precision@3": lambda **o: R.RetrievalPrecision(top_k=3, **o),
        "precision@50": lambda **o: R.RetrievalPrecision(top_k=50, **o),
        "recall@4": lambda **o: R.RetrievalRecall(top_k=4, **o),
        "hit_rate@2": lambda **o: R.RetrievalHitRate(top_k=2, **o),
        "ndcg@5": lambda **o: R.RetrievalNormalizedDCG(top_k=5, **o), "ndcg": R.RetrievalNormalizedDCG,
        "r_precision": R.RetrievalRPrecision,
    }
    ours = ranking_metrics(scores, target, metrics=list(cases), query_ids=query_ids, ties="ranx", empty=empty)
    for name, make in cases.items():
        reference = make(empty_target_action=action)(scores, target, indexes=query_ids)
        if name == "map@5":  # torchmetrics divides AP@k by the hits in the top k; trec_eval and ranx by all R
            continue
        assert abs(float(ours[name]) - float(reference)) < 1e-6, name  # torchmetrics computes in float32


def test_edge_cases():
    scores = torch.tensor([[0.3, 0.2, 0.1]])
    relevance = torch.tensor([[0, 0, 1]])
    out = ranking_metrics(scores, relevance, metrics=["precision@10", "recall@1000", "mrr@2", "ndcg@1000000",
                                              "r_precision", "hits@100"])
    assert float(out["precision@10"]) == pytest.approx(0.1)  # P@k divides by k beyond the list
    assert float(out["recall@1000"]) == 1.0 and float(out["mrr@2"]) == 0.0 and float(out["hits@100"]) == 1.0
    assert float(out["ndcg@1000000"]) == pytest.approx(0.5) and float(out["r_precision"]) == 0.0
    # a query whose run is empty (mask all False) but that has judged relevant documents scores 0
    out = ranking_metrics(torch.zeros(2, 3), torch.zeros(2, 3, dtype=torch.long),
                          metrics=["map", "ndcg@3", "precision"],
                          mask=torch.tensor([[False] * 3, [True, False, False]]), qrels=torch.tensor([[1, 2], [0, 1]]))
    assert all(float(v) == 0.0 for v in out.values())
    # empty conventions
    scores, relevance = torch.tensor([[0.5, 0.4], [0.9, 0.1]]), torch.tensor([[0, 1], [0, 0]])
    assert float(ranking_metrics(scores, relevance, metrics="mrr", empty="zero")["mrr"]) == 0.25
    assert float(ranking_metrics(scores, relevance, metrics="mrr", empty="one")["mrr"]) == 0.75
    assert float(ranking_metrics(scores, relevance, metrics="mrr", empty="skip")["mrr"]) == 0.5
    assert math.isnan(float(ranking_metrics(scores, relevance, metrics="mrr", empty="skip",
                                            reduction="none")["mrr"][1]))
    with pytest.raises(ValueError, match="empty='error'"):
        ranking_metrics(scores, relevance, metrics="mrr", empty="error")
    # tie conventions on one query: three tied documents, the middle one relevant
    scores, relevance = torch.tensor([[1.0, 1.0, 1.0]]), torch.tensor([[0, 1, 0]])
    mrr = {t: float(ranking_metrics(scores, relevance, metrics="mrr", ties=t)["mrr"])
           for t in ("trec_eval", "ranx", "optimistic", "pessimistic")}
    assert mrr == {"trec_eval": 0.5, "ranx": 0.5, "optimistic": 1.0, "pessimistic": 1 / 3}
    ids = torch.tensor([[5, 9, 1]])
    assert float(ranking_metrics(scores, relevance, metrics="mrr", doc_ids=ids)["mrr"]) == 1.0  # id 9 first
    assert float(ranking_metrics(scores, relevance, metrics="precision@1",
                                 ties="average")["precision@1"]) == pytest.approx(1 / 3)
    # exponential gain
    out = ranking_metrics(torch.tensor([[0.9, 0.1]]), torch.tensor([[1, 3]]), metrics=["ndcg", "ndcg_burges"],
                          gain="linear")
    assert float(out["ndcg"]) == pytest.approx((1 + 3 / math.log2(3)) / (3 + 1 / math.log2(3)))
    assert float(out["ndcg_burges"]) == pytest.approx((1 + 7 / math.log2(3)) / (7 + 1 / math.log2(3)))
    assert float(ranking_metrics(torch.tensor([[0.9, 0.1]]), torch.tensor([[1, 3]]), metrics="ndcg", gain="exponential")
                 ["ndcg"]) == float(out["ndcg_burges"])
    # a single flat query, bool labels
    out = ranking_metrics(torch.tensor([0.2, 0.9]), torch.tensor([True, False]), metrics="mrr",
                          query_ids=torch.tensor([4, 4]))
    assert float(out["mrr"]) == 0.5


@pytest.mark.parametrize("call, match", [
    (lambda: ranking_metrics(torch.rand(2, 3), torch.zeros(2, 4), metrics="map"), "`relevance` must have the shape"),
    (lambda: ranking_metrics(torch.rand(2, 3), torch.zeros(2, 3), metrics="nope@3"), "`metrics` holds 'nope@3'"),
    (lambda: ranking_metrics(torch.rand(2, 3), torch.zeros(2, 3), metrics="ndcg@0"), "k must be ≥ 1"),
    (lambda: ranking_metrics(torch.rand(2, 3), torch.zeros(2, 3), metrics="r_precision@3"), "takes no @k"),
    (lambda: ranking_metrics(torch.rand(2, 3), torch.zeros(2, 3), metrics="map", ties="random"),
     "`ties` must be one of"),
    (lambda: ranking_metrics(torch.rand(2, 3), torch.zeros(2, 3), metrics="map", gain="log"), "`gain` must be one of"),
    (lambda: ranking_metrics(torch.rand(2, 3), torch.zeros(2, 3), metrics="map", empty="nan"),
     "`empty` must be one of"),
    (lambda: ranking_metrics(torch.rand(2, 3), torch.zeros(2, 3), metrics="mrr", ties="average"), "ties='average'"),
    (lambda: ranking_metrics(torch.full((1, 2), math.nan), torch.ones(1, 2), metrics="map"), "`scores` holds NaN"),
    (lambda: ranking_metrics(torch.rand(1, 2), torch.tensor([[1.0, math.nan]]), metrics="map"),
     "`relevance` holds NaN"),
    # an infinite label: nDCG was inf / inf = NaN (+inf), or -inf a silent non-relevant label; trec_eval reads ints
    (lambda: ranking_metrics(torch.rand(1, 2), torch.tensor([[math.inf, 1.0]]), metrics="ndcg@10"),
     "`relevance` holds NaN or an infinite label"),
    (lambda: ranking_metrics(torch.rand(1, 2), torch.tensor([[-math.inf, 1.0]]), metrics="map"),
     "`relevance` holds NaN or an infinite label"),
    (lambda: ranking_metrics(torch.rand(1, 2), torch.ones(1, 2), metrics="map", qrels=torch.tensor([[math.inf]])),
     "`qrels` holds NaN or an infinite label"),
    (lambda: ranking_metrics(torch.rand(2, 3), torch.zeros(2, 3), metrics="map", mask=torch.ones(2, 3)),
     "`mask` must be a bool"),
    (lambda: ranking_metrics(torch.rand(2, 3), torch.zeros(2, 3), metrics="map", qrels=torch.ones(3, 1)),
     "`qrels` must be"),
    (lambda: ranking_metrics(torch.rand(4), torch.zeros(4), metrics="map", query_ids=torch.zeros(3, dtype=torch.long)),
     "`query_ids` must be"),
    (lambda: ranking_metrics(torch.rand(2, 3), torch.zeros(2, 3), metrics="map", doc_ids=torch.rand(2, 3)),
     "`doc_ids`"),
    (lambda: ranking_metrics("abc", torch.zeros(2, 3), metrics="map"), "`scores` must be a tensor"),
    (lambda: ranking_metrics(torch.rand(2, 3), torch.zeros(2, 3), metrics="map", relevance_level=0),
     "`relevance_level`"),
    (lambda: RankingMetrics(metrics=[]), "`metrics` must be"),
    # found by fuzzing: NaN made every label irrelevant (every metric 0, silently); meta tensors (no values) failed
    # deep inside torch with NotImplementedError; [] docnos for zero queries read as float ids
    (lambda: ranking_metrics(torch.rand(2, 3), torch.ones(2, 3), relevance_level=math.nan), "finite number > 0"),
    (lambda: RankingMetrics(relevance_level=math.inf), "`relevance_level` must be a finite number > 0"),
    (lambda: ranking_metrics(torch.rand(2, 3, device="meta"), torch.ones(2, 3)), "`scores` is a tensor on the meta"),
    (lambda: ranking_metrics(torch.rand(3), torch.ones(3), query_ids=torch.zeros(3, dtype=torch.long, device="meta")),
     "`query_ids` is a tensor on the meta"),
    (lambda: RankingMetrics().update(torch.rand(1, 2), torch.ones(1, 2), mask=torch.ones(1, 2, dtype=torch.bool,
                                                                                       device="meta")), "`mask` is a"),
    (lambda: ranking_metrics(torch.rand(0, 3), torch.ones(0, 3), doc_ids=[]), r"`doc_ids` must have the shape"),
    (lambda: ranking_metrics(torch.rand(1, 2), torch.ones(1, 2), doc_ids=""), "`doc_ids` must be a tensor"),
    (lambda: ranking_metrics(torch.rand(3), torch.ones(3), doc_ids="abc"), "`doc_ids` must be a tensor"),
])
def test_bad_input_names_the_argument(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def test_module_ddp_checkpoint_and_functional_agree():
    run = random_run(11, q=30, d=10)
    batches = [(run["scores"][a:b], run["relevance"][a:b], run["mask"][a:b], run["doc_ids"][a:b],
                run["qrels"][a:b]) for a, b in ((0, 7), (7, 8), (8, 30))]
    metrics = ["ndcg@5", "map", "mrr", "precision@3", "recall@10", "r_precision"]

    def functional(scores, relevance, mask, doc_ids, qrels, **options):
        return ranking_metrics(scores, relevance, mask=mask, doc_ids=doc_ids, qrels=qrels, **options)

    joined_qrels, joined_run = to_dicts(run)
    expected = pytrec_eval.RelevanceEvaluator(joined_qrels,
                                              {"ndcg_cut.5", "map", "recip_rank", "P.3", "recall.10", "Rprec"}
                                              ).evaluate(joined_run)

    def reference(*_):
        names = {"ndcg@5": "ndcg_cut_5", "map": "map", "mrr": "recip_rank", "precision@3": "P_3",
                 "recall@10": "recall_10", "r_precision": "Rprec"}
        return {ours: float(np.mean([v[theirs] for v in expected.values()])) for ours, theirs in names.items()}

    for empty in ("zero", "skip"):
        check_metric(RankingMetrics, functional, reference if empty == "zero" else None, batches,
                     {"metrics": metrics, "empty": empty}, check_forward=False, ddp=empty == "zero")
    empty_metric = RankingMetrics(metrics)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert all(float(v) == 0.0 for v in empty_metric.compute().values())


@pytest.mark.parametrize("name", ["ranking_ndcg_map_mrr", "ranking_ranx_ties"])
def test_benchmark_case_runs_at_a_tiny_size(name):
    from benchmarks.__main__ import CASES, load_cases, run_case

    load_cases()
    rows = run_case(CASES[name], 40, "cpu", repeats=1)  # raises when gpumetrics and the anchor disagree
    assert rows and all(row["ours_s"] > 0 for row in rows)


def test_queries_absent_from_the_run_and_ir_measures():
    """A judged query the run lacks scores 0 and counts in the mean: ranx's make_comparable, ir_measures' default."""
    import ir_measures

    run = random_run(21, q=12, d=9)
    run["mask"][3] = False  # query 3: judged (qrels hold relevant documents) but nothing retrieved
    run["relevance"][3] = 0
    run["qrels"][3, -1] = 2
    run["missed"][3, -1] = 2
    qrels, trec_run = to_dicts(run)
    del trec_run["q0003"]
    names = ["ndcg@5", "map", "mrr", "recall@5"]
    ours = ranking_metrics(run["scores"], run["relevance"], metrics=names, mask=run["mask"], qrels=run["qrels"],
                           ties="ranx")
    ranx_run = ranx.Run(trec_run).make_comparable(ranx.Qrels(qrels))
    expected = ranx.evaluate(ranx.Qrels(qrels), ranx_run, names, save_results_in_run=False)
    for name in names:
        assert abs(float(ours[name]) - float(expected[name])) < 1e-9, name
    measures = {"ndcg@5": ir_measures.nDCG @ 5, "map": ir_measures.AP, "mrr": ir_measures.RR,
                "recall@5": ir_measures.R @ 5}
    # ir_measures (pytrec_eval underneath) also averages over every judged query, the missing one scoring 0
    ours = ranking_metrics(run["scores"], run["relevance"], metrics=names, mask=run["mask"], doc_ids=run["doc_ids"],
                           qrels=run["qrels"])
    aggregate = ir_measures.calc_aggregate(list(measures.values()), qrels, trec_run)
    for name, measure in measures.items():
        assert abs(float(ours[name]) - aggregate[measure]) < 1e-9, name


def test_trec_eval_ties_scores_equal_in_float32():
    """trec_eval keeps each score as a C float: float64 scores that round to one float32 (or overflow it) are tied and
    ordered by docno, descending — 1 + 2⁻²⁴ ties with 1.0, 5e-324 with 0.0 and -0.0, 1e308 with inf."""
    values = [1.0, 1.0 + 2**-24, 1.0 + 2**-23, 1.0 - 2**-30, 5e-324, 0.0, -0.0, 1e308, math.inf, -1e308, -math.inf,
              0.1, 0.1 + 2**-40]
    g = torch.Generator().manual_seed(5)
    q, d = 12, 18
    scores = torch.tensor(values, dtype=torch.float64)[torch.randint(0, len(values), (q, d), generator=g)]
    relevance = torch.randint(0, 3, (q, d), generator=g)
    relevance[:, 0] = 1  # every query judged relevant somewhere
    docnos = [[f"d{int(j)}" for j in torch.randperm(d, generator=g)] for _ in range(q)]
    run = {f"q{i}": {docnos[i][j]: float(scores[i, j]) for j in range(d)} for i in range(q)}
    qrels = {f"q{i}": {docnos[i][j]: int(relevance[i, j]) for j in range(d)} for i in range(q)}
    names = {"map": "map", "ndcg@5": "ndcg_cut_5", "mrr": "recip_rank", "precision@3": "P_3", "r_precision": "Rprec"}
    expected = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg_cut.5", "recip_rank", "P.3", "Rprec"}).evaluate(run)
    ours = ranking_metrics(scores, relevance, metrics=list(names), doc_ids=docnos, reduction="none")
    for name, measure in names.items():
        reference = torch.tensor([expected[f"q{i}"][measure] for i in range(q)], dtype=torch.float64)
        assert_close(ours[name], reference, 1e-12, what=f"{name} vs trec_eval {measure}")


def test_nested_list_scores_keep_float64():
    """Python floats are doubles: list inputs are not rounded to torch's default float32 (which would tie them)."""
    scores = [[1.0, 1.0 + 2**-30, 1.0 - 2**-40, 0.5 + 2**-45, 0.5], [1e308, 3.5e38, 3.4e38, 0.0, 1e-300]]
    relevance = [[1, 0, 1, 0, 1], [0, 1, 0, 1, 1]]
    run = {f"q{i}": {f"d{j}": s for j, s in enumerate(row)} for i, row in enumerate(scores)}
    qrels = {f"q{i}": {f"d{j}": r for j, r in enumerate(row)} for i, row in enumerate(relevance)}
    names = ["map", "mrr", "ndcg@2", "precision@2"]
    expected = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), names, return_mean=False, save_results_in_run=False)
    ours = ranking_metrics(scores, relevance, metrics=names, ties="ranx", reduction="none")
    for name in names:
        assert_close(ours[name], torch.from_numpy(np.asarray(expected[name], dtype=np.float64)), 1e-12, what=name)
    metric = RankingMetrics(names, ties="ranx")
    metric.update(scores, relevance)
    for name, value in metric.compute().items():
        assert abs(float(value) - float(np.mean(expected[name]))) < 1e-12, name


@pytest.mark.parametrize("level", [1, 2])
def test_negative_labels_are_judged_non_relevant_as_trec_eval_and_ranx_score_them(level):
    """TREC qrels mark judged non-relevant (spam, junk) documents -1 or -2: trec_eval and ranx score them with gain 0
    and never as relevant; so do we (in the run and in ``qrels``)."""
    from ranx import Qrels, Run, evaluate

    run = random_run(5 + level, q=30, d=14, levels=5)
    g = torch.Generator().manual_seed(level)
    negative = -torch.randint(1, 3, run["relevance"].shape, generator=g) * (torch.rand(30, 14, generator=g) < 0.3)
    run["relevance"] = torch.where(negative < 0, negative, run["relevance"]) * run["mask"]
    run["missed"][:, 0] = -1
    run["qrels"] = torch.cat([run["relevance"], run["missed"]], 1)
    qrels, trec_run = to_dicts(run)
    measures = {"map_cut.5", "ndcg_cut.3,10,100", "P.1,5,30", "recall.5,30", "success.1,5", "map", "ndcg",
                "recip_rank", "Rprec"}
    expected = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=level).evaluate(trec_run)
    ours = ranking_metrics(run["scores"], run["relevance"], metrics=list(TREC), mask=run["mask"],
                           doc_ids=run["doc_ids"], qrels=run["qrels"], relevance_level=level, reduction="none")
    for name, measure in TREC.items():
        reference = torch.tensor([expected[f"q{i:04d}"][measure] for i in range(30)], dtype=torch.float64)
        assert_close(ours[name], reference, 1e-9, what=f"{name} vs trec_eval {measure}, negative labels")
    if level == 1:
        names = {"map": "map", "ndcg@5": "ndcg@5", "ndcg_burges": "ndcg_burges", "mrr": "mrr",
                 "r_precision": "r-precision"}
        reference = evaluate(Qrels(qrels), Run(trec_run), list(names.values()), return_mean=False)
        ours = ranking_metrics(run["scores"], run["relevance"], metrics=list(names), mask=run["mask"],
                               doc_ids=run["doc_ids"], qrels=run["qrels"], ties="ranx", reduction="none")
        for name, measure in names.items():
            assert_close(ours[name], torch.tensor(reference[measure], dtype=torch.float64), 1e-9,
                         what=f"{name} vs ranx {measure}, negative labels")


def test_numpy_inputs_equal_tensor_inputs():
    """Numeric numpy arrays (float64 kept, unsigned ints widened) and numpy arrays of docnos are taken as the
    tensors and lists they hold; an array of other objects is refused by name."""
    run = random_run(21, q=12, d=9)
    names = ["map", "ndcg@5", "mrr", "precision@3"]
    want = ranking_metrics(run["scores"], run["relevance"], metrics=names, mask=run["mask"], doc_ids=run["doc_ids"],
                           qrels=run["qrels"], reduction="none")
    got = ranking_metrics(run["scores"].numpy(), run["relevance"].numpy().astype(np.uint8), metrics=names,
                          mask=run["mask"].numpy(), doc_ids=run["doc_ids"].numpy(), qrels=run["qrels"].numpy(),
                          reduction="none")
    for name in names:
        assert torch.equal(got[name], want[name]), name
    docnos = [[f"d{int(i):05d}" for i in row] for row in run["doc_ids"]]
    want = ranking_metrics(run["scores"], run["relevance"], metrics=names, mask=run["mask"], doc_ids=docnos)
    got = ranking_metrics(run["scores"].numpy(), run["relevance"].numpy(), metrics=names, mask=run["mask"].numpy(),
                          doc_ids=np.array(docnos))
    assert all(torch.equal(got[name], want[name]) for name in names)
    with pytest.raises(TypeError, match="`scores` must be a tensor"):
        ranking_metrics(np.array([[object(), object()]]), torch.zeros(1, 2), metrics="map")


@pytest.mark.parametrize("argument", ["scores", "relevance", "doc_ids", "qrels", "query_ids"])
def test_complex_tensors_are_refused_by_name(argument):
    """Complex scores were cast with ``.double()`` (the imaginary part dropped, only torch's warning said so); complex
    labels, doc ids, qrels or query ids failed deep inside torch (NotImplementedError, RuntimeError; found by
    fuzzing). Every one is a ``TypeError`` naming the argument, before any state changes."""
    inputs = {"scores": torch.tensor([3.0, 1.0, 2.0]), "relevance": torch.tensor([1, 0, 1]),
              "doc_ids": torch.tensor([0, 1, 2]), "qrels": torch.tensor([1, 0, 1]), "query_ids": torch.zeros(3).long()}
    inputs[argument] = inputs[argument].to(torch.complex64) + 1j
    options = {"query_ids": inputs["query_ids"]} if argument == "query_ids" else \
        {"doc_ids": inputs["doc_ids"], "qrels": inputs["qrels"]}
    metric = RankingMetrics(["map"])
    metric.update(torch.tensor([[2.0, 1.0]]), torch.tensor([[0, 1]]))
    with pytest.raises(TypeError, match=f"`{argument}` must hold real numbers"):
        metric.update(inputs["scores"], inputs["relevance"], **options)
    assert metric.compute()["map"].item() == 0.5


@pytest.mark.parametrize("ties", ["trec_eval", "ranx", "average", "optimistic"])
def test_flat_queries_of_very_different_lengths_are_padded_in_groups(ties, monkeypatch):
    """Flat queries grouped by length (no group padded past twice its documents) score as one padded batch does:
    every query in its place, ranx's and trec_eval's tie orders unchanged."""
    from gpumetrics.retrieval import ranking

    g = torch.Generator().manual_seed(3)
    lengths = torch.tensor([400, 3, 17, 1, 90, 16, 2, 250, 5, 33, 8, 1, 64])
    query_ids = torch.randperm(lengths.numel(), generator=g).repeat_interleave(lengths) * 7  # unsorted, sparse ids
    scores = torch.randint(0, 4, (query_ids.numel(),), generator=g).double()
    relevance = torch.randint(0, 3, (query_ids.numel(),), generator=g)
    names = ["ndcg@10", "precision@5", "recall@20", "r_precision"] + ([] if ties == "average" else ["map", "mrr"])
    whole = ranking_metrics(scores, relevance, metrics=names, query_ids=query_ids, ties=ties, reduction="none")
    monkeypatch.setattr(ranking, "_PAD_SLACK_CELLS", 0)
    assert len(ranking._width_groups(lengths.numpy())[1]) > 2
    grouped = ranking_metrics(scores, relevance, metrics=names, query_ids=query_ids, ties=ties, reduction="none")
    for name in names:
        assert_close(grouped[name], whole[name], 1e-12, what=name)  # sums over other widths: rounding only
    metric = RankingMetrics(names, ties=ties)
    metric.update(scores, relevance, query_ids=query_ids)
    for name, value in metric.compute().items():
        assert_close(value, whole[name].mean(), 1e-12, what=name)


def test_one_long_flat_query_among_many_short_ones_is_not_padded_to_its_length():
    """One query of 10^6 documents and 5,000 of 3: padding every query to the longest took 5,001 × 10^6 cells
    (40 GB per float64 tensor); grouped by length the batch needs memory for its 10^6 + 15,000 entries."""
    g = torch.Generator().manual_seed(0)
    short, long_length = 5_000, 1_000_000
    query_ids = torch.cat([torch.arange(1, short + 1).repeat_interleave(3), torch.zeros(long_length, dtype=torch.long)])
    scores = torch.rand(query_ids.numel(), generator=g, dtype=torch.float64)
    relevance = (torch.arange(query_ids.numel()) % 3 == 0).long()
    out = ranking_metrics(scores, relevance, metrics=["mrr", "precision@3"], query_ids=query_ids, reduction="none")
    alone = ranking_metrics(scores[-long_length:], relevance[-long_length:], metrics=["mrr", "precision@3"])
    short_ones = ranking_metrics(scores[:-long_length].reshape(short, 3), relevance[:-long_length].reshape(short, 3),
                                 metrics=["mrr", "precision@3"], reduction="none")
    for name in ("mrr", "precision@3"):
        assert out[name].shape == (short + 1,)
        assert_close(out[name][0], alone[name], 1e-12, what=name)
        assert_close(out[name][1:], short_ones[name], 1e-12, what=name)
