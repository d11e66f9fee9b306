"""A metric that owns metrics is one metric to the base: ``reset``, ``merge_state`` and ``forward`` reach the owned
ones without overrides in the composite, a bounded list state (``add_state(keep_first=k)``) stays bounded through
merges and forwards, and what ``compute()`` reports about the accumulated states is not reported by each batch value
of ``forward`` (``Metric.computing_batch_value``)."""

from __future__ import annotations

import warnings

import pytest
import torch
from torch import nn

from gpumetrics.core import Metric
from gpumetrics.core.warn import warn_caller
from tests.core.toy_metrics import SumAndCat


class Firsts(Metric):
    """Sums its values and names its first two negative values (a bounded record, as the undecodable files)."""

    signature_name = "toy_firsts"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_state("total", torch.zeros((), dtype=torch.float64), dist_reduce_fx="sum")
        self.add_state("negatives", [], dist_reduce_fx="cat", keep_first=2)

    def update(self, values: torch.Tensor) -> None:
        self.total += values.double().sum()
        room = 2 - len(self.negatives)
        self.negatives.extend(v.reshape(1) for v in values[values < 0][:room])

    def compute(self) -> torch.Tensor:
        if self.negatives and not self.computing_batch_value:
            warn_caller(f"negative values: {[float(v) for v in self.negatives]}")
        return self.total


class Holder(nn.Module):
    """A plain module between a composite and a metric it owns."""

    def __init__(self):
        super().__init__()
        self.rows = SumAndCat()


class Composite(Metric):
    """Owns two metrics, one of them through a plain module; no reset / merge_state override."""

    signature_name = "toy_composite"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.firsts = Firsts()
        self.holder = Holder()
        self.add_state("batches", torch.zeros((), dtype=torch.long), dist_reduce_fx="sum")

    def update(self, values: torch.Tensor) -> None:
        self.batches += 1
        self.firsts.update(values)
        self.holder.rows.update(values.reshape(-1, 3))

    def compute(self) -> dict:
        return {"batches": self.batches, "sum": self.firsts.compute(), **self.holder.rows.compute()}


BATCHES = [torch.tensor([1.0, -2.0, 3.0]), torch.tensor([-4.0, -5.0, 6.0, 7.0, 8.0, -9.0]),
           torch.tensor([-1.0, 2.0, -3.0])]


def _values(result: dict) -> dict:
    return {key: value.tolist() for key, value in result.items()}


def _quietly(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


def test_owned_metrics_are_found_through_plain_modules_and_not_inside_owned_metrics():
    metric = Composite()
    assert list(metric.owned_metrics()) == ["firsts", "holder.rows"]
    assert Firsts().owned_metrics() == {}


def test_merge_state_merges_every_owned_metric_in_call_order():
    whole, first, second = Composite(), Composite(), Composite()
    for batch in BATCHES:
        whole.update(batch)
    first.update(BATCHES[0])
    for batch in BATCHES[1:]:
        second.update(batch)
    first.merge_state(second)
    assert _values(_quietly(first.compute)) == _values(_quietly(whole.compute))
    assert [float(v) for v in first.firsts.negatives] == [-2.0, -4.0]  # the first two, in call order
    assert first.holder.rows._update_count == 3 and first._update_count == 3


def test_merge_state_of_a_composite_takes_only_its_own_class():
    with pytest.raises(TypeError, match=r"Composite.merge_state takes another Composite .* got dict"):
        Composite().merge_state({"batches": torch.tensor(1)})
    with pytest.raises(TypeError, match="got Firsts"):
        Composite().merge_state(Firsts())


def test_reset_reaches_the_owned_metrics():
    metric = Composite()
    metric.update(BATCHES[1])
    metric.reset()
    assert float(metric.firsts.total) == 0 and metric.firsts.negatives == [] and metric.holder.rows.rows == []
    metric.update(BATCHES[0])
    fresh = Composite()
    fresh.update(BATCHES[0])
    assert _values(_quietly(metric.compute)) == _values(_quietly(fresh.compute))


def test_keep_first_bounds_merges_and_forwards():
    merged = Firsts()
    merged.update(BATCHES[0])  # one negative
    other = Firsts()
    other.update(BATCHES[1])  # two more
    merged.merge_state(other)
    assert [float(v) for v in merged.negatives] == [-2.0, -4.0]
    stepped = Firsts()
    for batch in BATCHES:
        stepped(batch)
    assert [float(v) for v in stepped.negatives] == [-2.0, -4.0]


def test_forward_reports_accumulated_findings_once_at_compute_not_per_batch():
    """Each step's value is the batch's own, but what compute() says about the states (here: the negative values,
    as the undecodable image files of the image tasks) is said by the compute() over all batches, once — a training
    loop calling the metric every step was warned every step."""
    metric = Composite()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        steps = [metric(batch) for batch in BATCHES]
    assert [str(w.message) for w in caught] == []
    assert [float(step["sum"]) for step in steps] == [2.0, 3.0, -2.0]
    with pytest.warns(UserWarning, match=r"negative values: \[-2.0, -4.0\]") as caught:
        assert float(metric.compute()["sum"]) == 3.0
    assert len(caught) == 1
    assert not metric.computing_batch_value and not metric.firsts.computing_batch_value


def test_forward_of_a_single_metric_marks_its_batch_value_too():
    metric = Firsts()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert float(metric(BATCHES[0])) == 2.0
    assert caught == []
    with pytest.warns(UserWarning, match="negative"):
        metric.compute()


def test_keep_first_is_for_list_states_and_a_positive_count():
    class Bad(Metric):
        def __init__(self, default, keep_first):
            super().__init__()
            self.add_state("x", default, dist_reduce_fx="cat", keep_first=keep_first)

        def update(self) -> None:
            pass

        def compute(self) -> None:
            pass

    with pytest.raises(ValueError, match="`keep_first` bounds a list state; the state 'x' is a tensor"):
        Bad(torch.zeros(0), 2)
    with pytest.raises(ValueError, match="keep_first"):
        Bad([], 0)
