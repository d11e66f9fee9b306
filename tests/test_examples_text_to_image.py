"""The text-to-image example (``examples/text_to_image/evaluate.py``) under torchrun: 2 processes (gloo, CPU) give the
1-process FID, KID and CLIP scores (English open_clip and Russian ruCLIP, tiny random models)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from PIL import Image

from tests.helpers.ruclip_models import TINY_RUCLIP, save_ruclip_folder
from testkit.checkout import checkout_pythonpath

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "text_to_image" / "evaluate.py"
TINY_OPEN_CLIP = {
    "embed_dim": 16,
    "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "patch_size": 16, "head_width": 16},
    "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1},
}
PROMPTS = [("a red fox in the snow", "en"), ("рыжая лиса на снегу", "ru"), ("a city at night", "en"),
           ("ночной город", "ru"), ("two cats on a sofa", "en"), ("a bowl of fruit", "en"), ("кот спит", "ru"),
           ("a mountain lake", "en"), ("горное озеро", "ru"), ("an old bicycle", "en"), ("маяк у моря", "ru")]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("text_to_image")
    prompts = folder / "prompts.jsonl"
    prompts.write_text("".join(json.dumps({"id": i, "prompt": p, "lang": lang}, ensure_ascii=False) + "\n"
                               for i, (p, lang) in enumerate(PROMPTS)), encoding="utf-8")
    real = folder / "real"
    real.mkdir()
    generator = torch.Generator().manual_seed(0)
    for i in range(9):
        pixels = torch.randint(0, 256, (40, 40, 3), dtype=torch.uint8, generator=generator)
        Image.fromarray(pixels.numpy()).save(real / f"{i}.png")
    clip_config = folder / "tiny-clip.json"
    clip_config.write_text(json.dumps(TINY_OPEN_CLIP))
    ruclip = save_ruclip_folder(folder / "tiny-ruclip", TINY_RUCLIP)
    return {"prompts": prompts, "real": real, "clip": clip_config, "ruclip": ruclip, "folder": folder}


def _run(inputs: dict, processes: int) -> dict:
    output = inputs["folder"] / f"scores{processes}.json"
    env = {k: v for k, v in os.environ.items()
           if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")}
    env.update(PYTHONPATH=checkout_pythonpath(), OMP_NUM_THREADS="1",
               CUDA_VISIBLE_DEVICES="")
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={processes}",
               str(EXAMPLE), "--prompts", str(inputs["prompts"]), "--real", str(inputs["real"]),
               "--inception-weights", "random", "--fid-dims", "64", "--clip-model", str(inputs["clip"]),
               "--clip-pretrained", "random", "--ruclip-model", str(inputs["ruclip"]), "--ruclip-pretrained", "random",
               "--kid-subset-size", "5", "--image-size", "48", "--batch-size", "3", "--output", str(output)]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads(output.read_text(encoding="utf-8"))


@pytest.mark.ddp
def test_two_processes_give_the_one_process_scores(inputs):
    one, two = _run(inputs, 1), _run(inputs, 2)
    assert one["world_size"] == 1 and two["world_size"] == 2
    assert one["signatures"] == two["signatures"]
    for key in ("fid", "kid_mean", "kid_std", "clip_score_en", "clip_score_ru"):
        assert two[key] == pytest.approx(one[key], rel=1e-9, abs=1e-12), key
    assert one["fid"] > 0 and 0 <= one["clip_score_en"] <= 100 and 0 <= one["clip_score_ru"] <= 100


def test_stand_in_generator_is_deterministic_per_prompt():
    import importlib.util

    spec = importlib.util.spec_from_file_location("text_to_image_evaluate", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    a = module.generate(["a cat", "a dog"], 16, torch.device("cpu"))
    b = module.generate(["a dog"], 16, torch.device("cpu"))
    assert a.shape == (2, 3, 16, 16) and a.dtype == torch.uint8 and torch.equal(a[1], b[0])
    assert [len(module.shard(list(range(11)), r, 3)) for r in range(3)] == [4, 4, 3]
    assert sorted(sum((module.shard(list(range(11)), r, 4) for r in range(4)), [])) == list(range(11))
