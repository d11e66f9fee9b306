"""Validation data: JSONL records ``{"id", "source", "references": [...]}``, split over the DDP ranks without
padding."""

from __future__ import annotations

import json
from pathlib import Path

import lightning as L
from torch.utils.data import DataLoader, Subset

VAL_FILE = Path(__file__).with_name("val.jsonl")


def read_records(path: Path = VAL_FILE) -> list[dict]:
    with open(path, encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def rank_shard(n_samples: int, rank: int, world_size: int) -> list[int]:
    """Every ``world_size``-th index from ``rank``: each sample on exactly one rank, so shards may differ in size.

    Lightning's default ``DistributedSampler`` would pad the shorter shards with repeated samples, which a corpus
    metric then counts twice; this split is what it would be without the padding.
    """
    if world_size < 1:
        raise ValueError(f"world_size must be at least 1, got {world_size}")
    if not 0 <= rank < world_size:
        raise ValueError(f"rank must be in [0, {world_size}), got {rank}")
    return list(range(rank, n_samples, world_size))


def collate(records: list[dict]) -> dict[str, list]:
    """A batch of records as column lists (the default collate would transpose the reference lists)."""
    return {
        "id": [record["id"] for record in records],
        "source": [record["source"] for record in records],
        "references": [record["references"] for record in records],
    }


class TranslationData(L.LightningDataModule):
    """The validation set; each rank loads only its own shard (run the ``Trainer`` with
    ``use_distributed_sampler=False`` so that Lightning does not wrap the loader in a padding sampler)."""

    def __init__(self, path: Path = VAL_FILE, batch_size: int = 3) -> None:
        super().__init__()
        self.path, self.batch_size = Path(path), batch_size

    def val_dataloader(self) -> DataLoader:
        records = read_records(self.path)
        shard = rank_shard(len(records), self.trainer.global_rank, self.trainer.world_size)
        return DataLoader(Subset(records, shard), batch_size=self.batch_size, shuffle=False, collate_fn=collate)
