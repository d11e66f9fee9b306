"""Small metrics that exercise each kind of state of the reducer."""

import torch
from torchmetrics.utilities.data import dim_zero_cat

from gpumetrics.core import Metric


class SumAndCat(Metric):
    """Sum, max and count states plus a ``cat`` state of 2-d rows; ``compute`` returns all of them."""

    signature_name = "toy"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_state("total", torch.zeros(3, dtype=torch.float64), dist_reduce_fx="sum")
        self.add_state("count", torch.tensor(0, dtype=torch.long), dist_reduce_fx="sum")
        self.add_state("peak", torch.tensor(float("-inf"), dtype=torch.float64), dist_reduce_fx="max")
        self.add_state("rows", [], dist_reduce_fx="cat")

    def update(self, values: torch.Tensor) -> None:
        self.total += values.double().sum(0)
        self.count += values.shape[0]
        self.peak = torch.maximum(self.peak, values.max().double())
        self.rows.append(values)

    def compute(self):
        rows = dim_zero_cat(self.rows) if isinstance(self.rows, list) and self.rows else self.rows
        order = torch.argsort(rows[:, 0]) if len(rows) else torch.arange(0)
        return {"total": self.total, "count": self.count.double(), "peak": self.peak, "rows": rows[order]}


class Float32Sums(Metric):
    """Two float32 sum states, a mean state and a count: the reducer's buckets (one all_reduce per op and dtype)."""

    signature_name = "toy_sums"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_state("total", torch.zeros(3), dist_reduce_fx="sum")
        self.add_state("squares", torch.tensor(0.0), dist_reduce_fx="sum")
        self.add_state("level", torch.tensor(0.0), dist_reduce_fx="mean")
        self.add_state("count", torch.tensor(0), dist_reduce_fx="sum")

    def update(self, values: torch.Tensor) -> None:
        self.total += values.sum(0).to(self.total.dtype)
        self.squares += (values ** 2).sum().to(self.squares.dtype)
        self.level = torch.full_like(self.level, float(values.shape[0]))
        self.count += values.shape[0]

    def compute(self):
        return {"total": self.total, "squares": self.squares, "level": self.level, "count": self.count}


class ThreeCats(Metric):
    """Two float64 ``cat`` states (rows of 2, scalars) and an int64 one: the reducer gathers each dtype in one go."""

    signature_name = "toy_cats"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_state("pairs", [], dist_reduce_fx="cat")
        self.add_state("scores", [], dist_reduce_fx="cat")
        self.add_state("ids", [], dist_reduce_fx="cat")

    def update(self, values: torch.Tensor) -> None:
        self.pairs.append(values.double().reshape(-1, 2))
        self.scores.append(values.double().sum(1))
        self.ids.append(values.long().reshape(-1))

    def compute(self):
        return {name: dim_zero_cat(getattr(self, name)) for name in ("pairs", "scores", "ids")}


def sum_and_cat(values: torch.Tensor):
    metric = SumAndCat()
    metric.update(values)
    return metric.compute()
