"""Evaluate a text-to-image model on several GPUs: FID, KID and CLIP score (English prompts through an open_clip model,
Russian ones through ruCLIP), accumulated where the images are made and reduced once at the end.

    torchrun --nproc_per_node=8 examples/text_to_image/evaluate.py --prompts prompts.jsonl --real real_images/ \\
        --clip-model ViT-B-32 --clip-pretrained openai --ruclip-model ruclip-vit-large-patch14-336 --output scores.json

Each process takes a contiguous share of the prompts (no padding, no prompt twice), generates their images with
``generate`` — here a small deterministic stand-in, since no generator weights can be fetched; put your model there —
and feeds them to the metrics on its device. Each process also reads its share of the real images. ``compute()``
reduces every metric's states once (FID: float64 sums, one all-reduce each; KID: the features; CLIP: a sum and a
count), so the scores equal a one-process run. Prompts are JSON Lines ``{"id": …, "prompt": "…", "lang": "en"|"ru"}``.
"""

from __future__ import annotations

import argparse
import json
import os
import zlib
from pathlib import Path

import torch
import torch.distributed as dist

from gpumetrics import CLIPScore, FrechetInceptionDistance, KernelInceptionDistance
from gpumetrics.image.image_files import add_image_files
from gpumetrics.image.io import list_images


def generate(prompts: list[str], size: int, device: torch.device) -> torch.Tensor:
    """Stand-in generator: ``uint8[B, 3, size, size]``, a smooth image seeded by each prompt's text (deterministic,
    whichever process makes it)."""
    images = []
    for prompt in prompts:
        generator = torch.Generator().manual_seed(zlib.crc32(prompt.encode("utf-8")))
        coarse = torch.rand(1, 3, 8, 8, generator=generator)
        images.append(torch.nn.functional.interpolate(coarse, size=(size, size), mode="bilinear")[0])
    return (torch.stack(images) * 255).round().to(torch.uint8).to(device)


def read_prompts(path: Path) -> list[dict]:
    records = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if line.strip():
                record = json.loads(line)
                if record.get("lang") not in ("en", "ru") or not isinstance(record.get("prompt"), str):
                    raise ValueError(f"{path}:{number}: expected {{'id', 'prompt', 'lang': 'en'|'ru'}}")
                records.append(record)
    return records


def shard(items: list, rank: int, world: int) -> list:
    """Contiguous share ``rank`` of ``world`` (sizes differ by at most one; a process may get none)."""
    per, extra = divmod(len(items), world)
    start = rank * per + min(rank, extra)
    return items[start : start + per + (rank < extra)]


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prompts", type=Path, required=True)
    parser.add_argument("--real", type=Path, required=True, help="folder of real images")
    parser.add_argument("--inception-weights", default=None, help="pytorch-fid weights file ('random': tests only)")
    parser.add_argument("--fid-dims", type=int, default=2048, choices=(64, 192, 768, 2048))
    parser.add_argument("--clip-model", required=True, help="open_clip architecture or config JSON (English prompts)")
    parser.add_argument("--clip-pretrained", required=True, help="open_clip tag or checkpoint ('random': tests only)")
    parser.add_argument("--ruclip-model", required=True, help="ruCLIP checkpoint folder (Russian prompts)")
    parser.add_argument("--ruclip-pretrained", default=None, help="ruCLIP state_dict ('random': tests only)")
    parser.add_argument("--kid-subset-size", type=int, default=1000)
    parser.add_argument("--image-size", type=int, default=256)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args(argv)

    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    cuda = torch.cuda.is_available()
    device = torch.device(f"cuda:{os.environ.get('LOCAL_RANK', '0')}" if cuda else "cpu")
    if world > 1:
        if cuda:
            torch.cuda.set_device(device)
        dist.init_process_group("nccl" if cuda else "gloo")
    try:
        fid = FrechetInceptionDistance(feature=args.fid_dims, weights=args.inception_weights).to(device)
        kid = KernelInceptionDistance(feature=args.fid_dims, weights=args.inception_weights,
                                      subset_size=args.kid_subset_size).to(device)
        clip_en = CLIPScore("open_clip", args.clip_model, args.clip_pretrained).to(device)
        clip_ru = CLIPScore("ruclip", args.ruclip_model, args.ruclip_pretrained, scale=100).to(device)

        real_files = shard(list_images(args.real), rank, world)
        for metric in (fid, kid):
            add_image_files(metric, real_files, True, args.batch_size, device)
        prompts = shard(read_prompts(args.prompts), rank, world)
        for start in range(0, len(prompts), args.batch_size):
            batch = prompts[start : start + args.batch_size]
            images = generate([p["prompt"] for p in batch], args.image_size, device)
            fid.update(images, real=False)
            kid.update(images, real=False)
            for clip, lang in ((clip_en, "en"), (clip_ru, "ru")):
                keep = [i for i, p in enumerate(batch) if p["lang"] == lang]
                if keep:
                    clip.update(images[keep], [batch[i]["prompt"] for i in keep])
        kid_mean, kid_std = kid.compute()
        scores = {
            "fid": float(fid.compute()), "kid_mean": float(kid_mean), "kid_std": float(kid_std),
            "clip_score_en": float(clip_en.compute()), "clip_score_ru": float(clip_ru.compute()),
            "signatures": {name: m.signature() for name, m in
                           (("fid", fid), ("kid", kid), ("clip_en", clip_en), ("clip_ru", clip_ru))},
            "world_size": world,
        }
        if rank == 0 and args.output is not None:
            args.output.write_text(json.dumps(scores, indent=2, ensure_ascii=False), encoding="utf-8")
        return scores
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


if __name__ == "__main__":
    print(json.dumps(main(), ensure_ascii=False))
