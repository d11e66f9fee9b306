"""Per-sample scores of a task, summarised in memory bounded by ``keep``: a histogram and the worst samples.

The report's HTML page shows both. Every part merges across batches, checkpoints and processes exactly: histogram
counts add up, and the worst samples are the first ``keep`` of one total order — worse score first, then earlier
position in the references file — whichever process or batch saw them.
"""

from __future__ import annotations

import math
from typing import Any, Optional, Sequence

import torch
from torch import Tensor

from gpumetrics.harness.records import Batch

BINS = 20
KEEP = 10
MAX_TEXT = 1000  # characters of a prediction or reference kept for the report


def _clip(value: Any) -> Any:
    if isinstance(value, str):
        return value if len(value) <= MAX_TEXT else value[:MAX_TEXT] + "…"
    if isinstance(value, list):
        return [_clip(item) for item in value]
    return value


class SampleSummary:
    """Histogram over ``[low, high]`` in ``bins`` bins and the ``keep`` worst samples of one task.

    Args:
        name: what the per-sample score is (the task metric's name).
        higher_is_better: ``True``: the lowest scores are the worst; ``False``: the highest; ``None``: lowest.

    Example:
        >>> from gpumetrics.harness.records import Batch
        >>> summary = SampleSummary("token_f1", higher_is_better=True, keep=1)
        >>> summary.add(Batch(["a", "b"], ["x", "y"], [["x"], ["z"]]), torch.tensor([1.0, 0.0]), first_position=0)
        >>> summary.to_dict()["worst"]
        [{'id': 'b', 'score': 0.0, 'prediction': 'y', 'references': ['z']}]
    """

    def __init__(self, name: str, higher_is_better: Optional[bool], low: float = 0.0, high: float = 1.0,
                 bins: int = BINS, keep: int = KEEP) -> None:
        self.name, self.higher_is_better = name, higher_is_better
        self.edges = torch.linspace(low, high, bins + 1, dtype=torch.float64)
        self.counts = torch.zeros(bins, dtype=torch.int64)
        self.below = self.above = self.nan = 0
        self.keep = keep
        self.worst: list[tuple[float, int, str, Any, Any]] = []  # (score, position, id, prediction, references)

    def _badness(self, score: float) -> float:
        return score if self.higher_is_better is not False else -score

    def add(self, batch: Batch, scores: Tensor, first_position: int) -> None:
        """Count ``scores`` (``[B]``, one per sample of ``batch``; ``first_position``: the batch's first sample's
        position in the task) and keep the worst."""
        scores = scores.detach().to("cpu", torch.float64).reshape(-1)
        if scores.numel() != len(batch):
            raise ValueError(f"per-sample scorer returned {scores.numel()} scores for a batch of {len(batch)} samples")
        finite = scores[~torch.isnan(scores)]
        self.nan += scores.numel() - finite.numel()
        low, high = float(self.edges[0]), float(self.edges[-1])
        self.below += int((finite < low).sum())
        self.above += int((finite > high).sum())
        inside = finite[(finite >= low) & (finite <= high)]
        bins = torch.bucketize(inside, self.edges[1:-1], right=True)
        self.counts += torch.bincount(bins, minlength=self.counts.numel())
        badness = torch.where(torch.isnan(scores), torch.full_like(scores, math.inf),
                              scores if self.higher_is_better is not False else -scores)
        take = min(self.keep, scores.numel())
        if take == 0:
            return
        # stable sort: equal scores keep file order, as the merge's (badness, position) key does
        order = torch.sort(badness, stable=True).indices[:take].tolist()
        candidates = [(scores[i].item(), first_position + i, batch.ids[i], _clip(batch.predictions[i]),
                       _clip(batch.references[i]))
                      for i in order]
        self._merge_worst(candidates)

    def _merge_worst(self, candidates: Sequence[tuple]) -> None:
        def key(entry: tuple) -> tuple:
            score = entry[0]
            return (math.inf if math.isnan(score) else self._badness(score), entry[1])

        self.worst = sorted([*self.worst, *candidates], key=key)[: self.keep]

    def state(self) -> dict:
        """Everything, as plain data (checkpoints, ``all_gather_object``)."""
        return {"counts": self.counts.tolist(), "below": self.below, "above": self.above, "nan": self.nan,
                "worst": [list(entry) for entry in self.worst]}

    def load(self, state: dict) -> None:
        self.counts = torch.tensor(state["counts"], dtype=torch.int64)
        self.below, self.above, self.nan = state["below"], state["above"], state["nan"]
        self.worst = [tuple(entry) for entry in state["worst"]]

    def merge(self, state: dict) -> None:
        """Add another summary's :meth:`state` (another process's samples)."""
        self.counts += torch.tensor(state["counts"], dtype=torch.int64)
        self.below += state["below"]
        self.above += state["above"]
        self.nan += state["nan"]
        self._merge_worst([tuple(entry) for entry in state["worst"]])

    def to_dict(self) -> dict:
        """The report's ``samples`` entry of a task."""
        return {
            "name": self.name,
            "higher_is_better": self.higher_is_better,
            "histogram": {"edges": self.edges.tolist(), "counts": self.counts.tolist(), "below": self.below,
                          "above": self.above, "nan": self.nan},
            "worst": [{"id": i, "score": s, "prediction": p, "references": r} for s, _, i, p, r in self.worst],
        }
