import pytest
import torch

import gpumetrics
from gpumetrics.core import as_reference_lists, as_text_list, check_choice, check_same_length
from tests.core.toy_metrics import Float32Sums, SumAndCat, ThreeCats, sum_and_cat
from testkit.ddp import record_collectives, run_ddp_function
from tests.helpers.harness import check_metric


def _reference(values):
    order = torch.argsort(values[:, 0])
    return {
        "total": values.double().sum(0),
        "count": float(values.shape[0]),
        "peak": values.max().double(),
        "rows": values[order],
    }


@pytest.mark.ddp
def test_harness_on_toy_metric_sum_max_cat_states():
    generator = torch.Generator().manual_seed(0)
    batches = [(torch.rand(n, 3, generator=generator),) for n in (4, 1, 7, 2)]
    check_metric(SumAndCat, sum_and_cat, _reference, batches)


def _all_reduce_is_used(rank):
    """Sum states must travel by all_reduce, not all_gather: count the collectives the reducer issues."""
    with record_collectives() as recorded:
        metric = SumAndCat()
        if rank == 1:
            metric.update(torch.ones(2, 3))
        value = metric.compute()
    calls = {name: sum(1 for called, _ in recorded if called == name) for name in ("all_reduce", "all_gather")}
    return calls, value


@pytest.mark.ddp
def test_sum_states_use_one_all_reduce_per_op_and_dtype_and_empty_rank_is_fine():
    results = run_ddp_function(_all_reduce_is_used)
    for calls, value in results:
        # the signature check, total (float64 sum), count (int64 sum), peak (max); one gather for the cat state
        assert calls == {"all_reduce": 4, "all_gather": 1}
        assert value["count"].item() == 2
        assert value["rows"].shape == (2, 3)
    assert torch.equal(results[0][1]["total"], results[1][1]["total"])


def _rank_context(rank):
    import os

    import torch.distributed as dist

    return rank, dist.get_world_size(), os.environ.get("GPUMETRICS_TEST_PROBE"), os.getcwd()


@pytest.mark.ddp
@pytest.mark.parametrize("start_method", ["forkserver", "spawn"])
def test_ranks_see_the_callers_environment_and_directory(start_method, monkeypatch, tmp_path):
    """Forked ranks come from a fork server started once per session: they must still see the environment and the
    working directory of the moment of the call, as spawned ones do."""
    for probe in ("one", "two"):  # the server outlives the first call
        monkeypatch.setenv("GPUMETRICS_TEST_PROBE", probe)
        monkeypatch.chdir(tmp_path)
        assert run_ddp_function(_rank_context, start_method=start_method) == [
            (rank, 2, probe, str(tmp_path)) for rank in range(2)
        ]
        tmp_path = tmp_path / probe
        tmp_path.mkdir()


def test_signature_names_version():
    signature = SumAndCat().signature()
    assert signature.startswith("toy|") and "version:" in signature


def test_text_checks_name_the_argument():
    with pytest.raises(TypeError, match=r"`preds`"):
        as_text_list(None, "preds")
    with pytest.raises(TypeError, match=r"`preds\[1\]`"):
        as_text_list(["a", 3], "preds")
    with pytest.raises(TypeError, match=r"`target\[0\]\[1\]`"):
        as_reference_lists([["a", None]], "target")
    with pytest.raises(ValueError, match=r"`target\[0\]`"):
        as_reference_lists([[]], "target")
    with pytest.raises(ValueError, match=r"`target\[2\]`"):
        as_reference_lists(["a", ("b",), []], "target")
    with pytest.raises(TypeError, match=r"`target\[1\]\[0\]`"):
        as_reference_lists(["a", (b"b",)], "target")
    with pytest.raises(ValueError, match="same number"):
        check_same_length([1], "preds", [], "target")


def test_reference_lists_fast_and_item_paths_agree_and_restore_gc():
    import gc

    class Text(str):
        pass

    batch = ["a", ("b", "c"), ["d"], [Text("e")], Text("f"), ("g",)]
    assert as_reference_lists(batch, "target") == [["a"], ["b", "c"], ["d"], ["e"], ["f"], ["g"]]
    assert as_reference_lists(["a", []], "target", allow_empty=True) == [["a"], []]
    assert as_reference_lists(["x", "y"], "target") == [["x"], ["y"]]
    assert gc.isenabled()
    gc.disable()
    try:
        as_reference_lists(["a"], "target")
        assert not gc.isenabled()  # a caller's choice to keep the collector off is kept
    finally:
        gc.enable()
    with pytest.raises(ValueError, match="`preset`"):
        check_choice("bad", "preset", ["squad"])


_TEXT_FUNCTIONS = {  # functional → whether its target takes several references per sample
    "bleu_score": True, "rouge_score": True, "cider_score": True, "meteor_score": True, "exact_match": True,
    "token_f1": True, "char_error_rate": False, "word_error_rate": False, "edit_distance": False,
    "normalized_edit_similarity": False, "string_accuracy": False,
}


@pytest.mark.parametrize("name", sorted(_TEXT_FUNCTIONS))
def test_text_metrics_take_numpy_arrays_and_pandas_columns(name):
    """Texts often come as a data frame's column: numpy arrays (str and object dtype, references as rows or as
    arrays) and pandas Series score as the lists they hold; an array of numbers is still refused by name."""
    import numpy as np
    import pandas as pd

    import gpumetrics.functional as F

    metric = getattr(F, name)
    preds = ["the cat sat on the mat", "a dog", "Кошка спит", ""]
    refs = [["the cat is on the mat", "a cat sat"], ["a dog barks", "dogs"], ["кошка спит", "спит"], ["x", "y"]]
    target = refs if _TEXT_FUNCTIONS[name] else [group[0] for group in refs]
    want = metric(preds, target)
    columns = [(np.array(preds), np.array(target)), (pd.Series(preds), pd.Series(target)),
               (np.array(preds, dtype=object), pd.Series([np.array(group) for group in target])
                if _TEXT_FUNCTIONS[name] else np.array(target, dtype=object))]
    for column_preds, column_target in columns:
        got = metric(column_preds, column_target)
        assert str(got) == str(want), (type(column_preds), got, want)
    with pytest.raises(TypeError, match="`preds"):
        metric(np.arange(4.0), target)


def test_host_list_leaves_other_values_alone():
    from gpumetrics.core.checks import host_list

    import numpy as np
    import pandas as pd

    assert host_list(np.array([["a", "b"], ["c", "d"]])) == [["a", "b"], ["c", "d"]]
    assert host_list(pd.Index(["x"])) == ["x"] and type(host_list(np.array(["é"]))[0]) is str
    marker = ("a",)
    tensor = torch.ones(2)
    assert host_list(marker) is marker and host_list(tensor) is tensor


_FLAGS = ("_update_count", "_to_sync", "_should_unsync", "_is_synced", "compute_on_cpu", "_enable_grad")


@pytest.mark.parametrize("call", ["update", "forward"])
def test_a_rejected_batch_leaves_the_metric_as_it_was(call):
    """torchmetrics counts an update before running it, and its ``forward`` resets the states to score the batch
    alone: a batch that raised counted as an update, and through ``forward`` erased everything accumulated before
    it (``TokenF1``: 1.0 became 0.0) and left the step's sync flags set."""
    import gpumetrics

    metric = gpumetrics.TokenF1()
    metric.update(["a b"], ["a b"])
    metric.compute()
    flags = {name: getattr(metric, name) for name in _FLAGS}
    with pytest.raises(TypeError, match="`preds`"):
        getattr(metric, call)(None, ["x"])
    with pytest.raises(TypeError, match=r"`target\[0\]`"):
        getattr(metric, call)(["x"], [None])
    assert {name: getattr(metric, name) for name in _FLAGS} == flags
    assert float(metric.compute()) == 1.0
    assert float(metric(["a"], ["b"])) == 0.0 and float(metric.compute()) == 0.5 and metric._update_count == 2

    toy = SumAndCat()  # raises after it changed its sum: forward restores every state
    toy(torch.ones(2, 3))
    with pytest.raises(RuntimeError):
        toy(torch.ones(0, 3))
    value = toy.compute()
    assert value["total"].tolist() == [2.0] * 3 and value["count"] == 2 and len(value["rows"]) == 2

    class FullStateToy(SumAndCat):  # torchmetrics' other forward: updates the accumulated states in place first
        full_state_update = True

        def update(self, values: torch.Tensor) -> None:
            super().update(values)
            if bool((values < 0).any()):
                raise RuntimeError("rejected after the states changed")

    full = FullStateToy()
    full(torch.ones(2, 3))
    with pytest.raises(RuntimeError, match="after the states changed"):
        full(-torch.ones(1, 3))
    value = full.compute()
    assert value["total"].tolist() == [2.0] * 3 and value["count"] == 2 and len(value["rows"]) == 2

    fresh = gpumetrics.TokenF1()
    with pytest.raises(TypeError):
        fresh.update(None, ["x"])
    assert fresh._update_count == 0 and not fresh.update_called


def _bucketed_sums(rank):
    with record_collectives() as calls:
        metric = Float32Sums()
        metric.update(torch.full((1 + rank, 3), 1.0 + rank))
        value = metric.compute()
    half = Float32Sums()
    if rank == 1:
        half.set_dtype(torch.float16)
    half.update(torch.ones(2, 3))
    try:
        half.compute()
        refused = ""
    except ValueError as error:
        refused = str(error)
    return calls, {name: tensor.tolist() for name, tensor in value.items()}, refused


@pytest.mark.ddp
def test_additive_states_of_one_op_and_dtype_travel_in_one_all_reduce():
    results = run_ddp_function(_bucketed_sums)
    for calls, value, refused in results:
        # the signature check (16 bytes), total + squares + level (float32 SUM, 5 values), count (int64)
        assert calls == [("all_reduce", 16), ("all_reduce", 20), ("all_reduce", 8)]
        assert value == {"total": [5.0] * 3, "squares": 27.0, "level": 1.5, "count": 3}
        # states of other dtypes on one rank would fill buffers that do not match: refused on every rank
        assert "states differ in dtype or shape" in refused and "rank 1 `total=float16[3]" in refused, refused


def _three_cats(rank):
    with record_collectives() as calls:
        metric = ThreeCats()
        if rank != 1:  # rank 1 holds nothing: its rows and dtypes come from the others
            metric.update(torch.arange(4 * (rank + 1), dtype=torch.float32).reshape(-1, 4) + 100 * rank)
        value = metric.compute()
    return [name for name, _ in calls], {name: tensor.tolist() for name, tensor in value.items()}


@pytest.mark.ddp
def test_cat_states_of_one_dtype_travel_in_one_all_gather():
    results = run_ddp_function(_three_cats, world_size=3)
    rows = torch.cat([torch.arange(4, dtype=torch.float32).reshape(-1, 4),
                      torch.arange(12, dtype=torch.float32).reshape(-1, 4) + 200])
    expected = {"pairs": rows.double().reshape(-1, 2).tolist(), "scores": rows.double().sum(1).tolist(),
                "ids": rows.long().reshape(-1).tolist()}
    for calls, value in results:
        # the signature check, the shapes of the three states, one gather for float64 (pairs + scores), one for int64
        assert calls == ["all_reduce", "all_gather_object", "all_gather", "all_gather"]
        assert value == expected


def _mixed_options(rank):
    """Each rank builds the metric with its own options; every rank reports what ``compute()`` did."""
    from gpumetrics import MulticlassF1Score, TokenF1

    outcomes = []
    for build, batch in (
        # same state shapes: the states used to add up silently into one number
        (lambda: TokenF1(preset=("squad", "aij2022")[rank]), (["the cat sat"], ["a cat sat"])),
        # other state shapes: the ranks used to wait in mismatched all_reduces until the 30-minute timeout
        (lambda: MulticlassF1Score(num_classes=3 + rank), (torch.tensor([0, 1, 2]), torch.tensor([0, 2, 2]))),
        # a per-sample `cat` state on one rank only: mismatched collectives as well
        (lambda: TokenF1(reduction=("mean", "none")[rank]), (["a b"], ["a"])),
        # a user's sync function (torchmetrics' gather semantics) skipped the check
        (lambda: TokenF1(preset=("squad", "aij2022")[rank], dist_sync_fn=user_gather), (["a b"], ["a"])),
    ):
        metric = build()
        metric.update(*batch)
        try:
            outcomes.append(("value", metric.compute()))
        except ValueError as error:
            outcomes.append(("refused", str(error)))
    for sync in (None, user_gather):  # the check passes and the sync still works once the ranks agree
        same = TokenF1(dist_sync_fn=sync)
        same.update(["the cat sat"], ["a cat sat"])
        outcomes.append(("value", float(same.compute())))
    return outcomes


def user_gather(tensor, group=None):
    from torchmetrics.utilities.distributed import gather_all_tensors

    return gather_all_tensors(tensor, group)


@pytest.mark.ddp
def test_ranks_with_different_options_are_refused_on_every_rank():
    results = run_ddp_function(_mixed_options)
    for outcomes in results:
        for (kind, message), option in zip(outcomes[:4], ("preset", "num_classes", "reduction", "preset")):
            assert kind == "refused" and f"different options ({option})" in message, message
            assert "rank 0 `" in message and "rank 1 `" in message
        assert outcomes[4:] == [("value", 1.0)] * 2  # squad drops the articles
    assert "token_f1|preset:squad`" in results[0][0][1] and "token_f1|preset:aij2022`" in results[0][0][1]


def _update_on_one_rank_after_compute(rank):
    """Rank 1 gets one more batch after the first ``compute()``; rank 0 has nothing more and computes again."""
    from gpumetrics import TokenF1

    metric = TokenF1(reduction="sum")
    metric.update(["a b"], ["a b"])
    first = float(metric.compute())
    if rank == 1:
        metric.update(["c"], ["c"])
    return first, float(metric.compute()), float(metric.compute())


@pytest.mark.ddp
def test_compute_syncs_again_on_a_rank_that_did_not_update_since():
    # torchmetrics answered rank 0's second compute() from its cache, skipping the collectives rank 1 entered
    assert run_ddp_function(_update_on_one_rank_after_compute) == [(2.0, 3.0, 3.0)] * 2


@pytest.mark.parametrize("build, batch", [
    (SumAndCat, (torch.ones(2, 3),)),
    (Float32Sums, (torch.ones(2, 3),)),
    (gpumetrics.BLEUScore, (["the cat sat"], [["the cat sat down"]])),
    (gpumetrics.CharErrorRate, (["abc"], ["abd"])),
])
def test_a_metric_built_or_reset_under_inference_mode_updates_outside_it(build, batch):
    # its states were inference tensors: "Inplace update to inference tensor outside InferenceMode" on update
    expected = build()
    expected.update(*batch)
    expected.update(*batch)
    with torch.inference_mode():
        metric = build()
    metric.update(*batch)
    with torch.inference_mode():
        metric.update(*batch)  # and inside it, on the same states
    assert str(metric.compute()) == str(expected.compute())
    with torch.inference_mode():
        metric.reset()
    metric.update(*batch)
    metric.update(*batch)
    assert str(metric.compute()) == str(expected.compute())


def _both_gathers(rank):
    """Ours and torchmetrics' ``gather_all_tensors`` on values whose shapes differ across ranks in every way the
    contract allows (sizes in any dimension, empty on one rank, 0-d, a non-contiguous view)."""
    from torchmetrics.utilities.distributed import gather_all_tensors as torchmetrics_gather

    from gpumetrics.core.distributed import gather_all_tensors

    generator = torch.Generator().manual_seed(rank)
    values = [
        torch.randn(((2, 3), (1, 5))[rank], generator=generator),
        torch.arange(4 * (1 - rank), dtype=torch.int64).reshape(-1, 2),  # rank 1: [0, 2]
        torch.tensor(float(rank) + 0.5),
        torch.randn(3, 4, 2, generator=generator, dtype=torch.float64)[:, rank:, ::2],  # non-contiguous
        torch.ones(2, 2, dtype=torch.bool) if rank else torch.zeros(3, 1, dtype=torch.bool),
    ]
    return [([t.tolist() for t in gather_all_tensors(value)], [t.tolist() for t in torchmetrics_gather(value)],
             [t.dtype for t in gather_all_tensors(value)])
            for value in values]


@pytest.mark.ddp
def test_gather_all_tensors_equals_torchmetrics_on_uneven_shapes():
    for rank_results in run_ddp_function(_both_gathers):
        for ours, theirs, dtypes in rank_results:
            assert ours == theirs
            assert len(set(dtypes)) == 1


def _mesh_fails_once(rank, marker_dir):
    """Raise gloo's mesh error on rank 1 of the first start only (a marker file remembers the start)."""
    import os

    marker = os.path.join(marker_dir, "started")
    if rank == 1 and not os.path.exists(marker):
        open(marker, "w").close()
        raise RuntimeError("Gloo connectFullMesh failed with [pair.cc:561] Connection closed by peer [127.0.0.1]:1")
    return rank


def _fails_on_rank_1(rank):
    if rank == 1:
        raise RuntimeError("an error of the test's own code")
    return rank


@pytest.mark.ddp
def test_a_start_whose_gloo_mesh_did_not_form_is_retried_and_other_failures_are_not(tmp_path):
    assert run_ddp_function(_mesh_fails_once, str(tmp_path)) == [0, 1]
    with pytest.raises(AssertionError, match="an error of the test's own code"):
        run_ddp_function(_fails_on_rank_1)
