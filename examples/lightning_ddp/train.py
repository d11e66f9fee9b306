"""Validate the glossary translator with gpumetrics metrics on 1..N CPU processes (Lightning DDP, gloo).

    python examples/lightning_ddp/train.py --devices 2 --output metrics.json
"""

from __future__ import annotations

import argparse
import json
import warnings
from pathlib import Path

import lightning as L

from data import VAL_FILE, TranslationData
from model import GlossTranslator


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=2, help="CPU processes (DDP ranks); default 2")
    parser.add_argument("--batch-size", type=int, default=3, help="validation batch size per rank; default 3")
    parser.add_argument("--data", type=Path, default=VAL_FILE, help="JSONL records {id, source, references}")
    parser.add_argument("--output", type=Path, help="write the logged metrics here as JSON (rank 0)")
    args = parser.parse_args(argv)
    if args.devices < 1:
        parser.error(f"--devices must be at least 1, got {args.devices}")
    if args.batch_size < 1:
        parser.error(f"--batch-size must be at least 1, got {args.batch_size}")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    # a toy data set on CPU: Lightning's hints about DataLoader workers do not apply
    warnings.filterwarnings("ignore", ".*does not have many workers.*")
    trainer = L.Trainer(
        accelerator="cpu",
        devices=args.devices,
        strategy="ddp" if args.devices > 1 else "auto",  # "ddp" re-runs this script once per extra rank
        use_distributed_sampler=False,  # TranslationData shards the data itself, without repeating samples
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    model = GlossTranslator()
    (metrics,) = trainer.validate(model, datamodule=TranslationData(args.data, args.batch_size), verbose=False)
    if trainer.is_global_zero:
        report = {"world_size": trainer.world_size, "samples_per_rank": model.samples_per_rank, "metrics": metrics}
        text = json.dumps(report, indent=2, sort_keys=True)
        if args.output is None:
            print(text)
        else:
            args.output.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
