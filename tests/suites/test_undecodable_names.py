"""The names of undecodable image files (``missing_image: zero``) are metric states: they survive what the counts
survive — a checkpoint read back with ``weights_only=True``, ``gpumetrics evaluate --resume``, ``merge_state`` (in
call order) and a DDP sync (the other rank's files) — and ``reset()`` forgets them. Random-weight tiny models."""

from __future__ import annotations

import io
import json
import re
import warnings

import numpy as np
import pytest
import torch
from PIL import Image

from gpumetrics import cli
from gpumetrics.harness.config import load_config
from gpumetrics.harness.runner import evaluate
from gpumetrics.image.undecodable import NAMED_UNDECODABLE, undecodable_images
from gpumetrics.suites.image import ImageGenerationScore
from testkit.ddp import run_ddp_function

TINY_OPEN_CLIP = {
    "embed_dim": 16,
    "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "patch_size": 16, "head_width": 16},
    "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1},
}
GOOD = [f"{i}.png" for i in range(6)]
#: truncated JPEG, garbage bytes behind a PNG signature, an empty file
BAD = ["cut.jpg", "junk.png", "empty.png"]


def make_images(root) -> dict:
    """Good PNGs, the :data:`BAD` files, real statistics and a tiny CLIP config under ``root``; the metric options."""
    root.mkdir(parents=True, exist_ok=True)
    generator = torch.Generator().manual_seed(3)
    for name in GOOD:
        pixels = torch.randint(0, 256, (20, 24, 3), dtype=torch.uint8, generator=generator)
        Image.fromarray(pixels.numpy()).save(root / name)
    Image.open(root / GOOD[0]).save(root / "whole.jpg", quality=90)
    (root / "cut.jpg").write_bytes((root / "whole.jpg").read_bytes()[:300])
    (root / "junk.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"garbage" * 9)
    (root / "empty.png").write_bytes(b"")
    np.savez(root / "real.npz", mu=np.zeros(64), sigma=np.eye(64))
    (root / "clip.json").write_text(json.dumps(TINY_OPEN_CLIP), encoding="utf-8")
    return {"real": str(root / "real.npz"), "image_root": str(root), "fid_feature": 64, "inception_weights": "random",
            "clip_backend": "open_clip", "clip_model": str(root / "clip.json"), "clip_pretrained": "random",
            "missing_image": "zero", "workers": 0, "no_cache": True, "batch_size": 2}


def _warning(metric) -> tuple[dict, str]:
    """``compute()`` as floats, and the one warning about undecodable files."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = {key: float(value) for key, value in metric.compute().items()}
    (message,) = [str(w.message) for w in caught if "cannot be decoded" in str(w.message)]
    return result, message


def _named(message: str) -> list[str]:
    """The file names a warning names, in order."""
    return re.findall(r"'[^']*/([^/']+)': ", message)


@pytest.fixture(scope="module")
def options(tmp_path_factory):
    return make_images(tmp_path_factory.mktemp("images"))


def test_merge_state_names_both_sides_files_in_call_order(options):
    first, second = ImageGenerationScore(**options), ImageGenerationScore(**options)
    first.update([GOOD[0], "junk.png", GOOD[1], "absent.png"], ["a cat", "a dog", "a bird", "a fish"])
    second.update([GOOD[2], "empty.png", GOOD[3]], ["a cat", "a dog", "a bird"])
    first.merge_state(second)
    result, message = _warning(first)
    assert _named(message) == ["junk.png", "empty.png"]  # the second metric's file after the first's
    assert message.startswith("s_image_generation: 2 image file(s) cannot be decoded, each scored CLIP 0")
    assert result["clip_failed"] == 3 and result["clip_undecodable"] == 2
    # the merged metric is the one pass over both metrics' samples: CLIP and FID of the four good images
    whole = ImageGenerationScore(**options)
    whole.update([GOOD[0], "junk.png", GOOD[1], "absent.png", GOOD[2], "empty.png", GOOD[3]], ["a cat", "a dog",
                 "a bird", "a fish", "a cat", "a dog", "a bird"])
    expected, same = _warning(whole)
    assert same == message and result == pytest.approx(expected, rel=1e-6, abs=1e-7)

    third = ImageGenerationScore(**options)
    third.update(["cut.jpg", GOOD[4]], ["a cat", "a dog"])
    third.merge_state(first)
    _, message = _warning(third)
    assert _named(message) == ["cut.jpg", "junk.png", "empty.png"]
    # bounded: a fourth file is counted, not named
    fourth = ImageGenerationScore(**options)
    fourth.update(["junk.png", GOOD[5]], ["a cat", "a dog"])
    third.merge_state(fourth)
    assert len(third.undecodable_named) == NAMED_UNDECODABLE
    _, message = _warning(third)
    assert _named(message) == ["cut.jpg", "junk.png", "empty.png"] and message.startswith(
        "s_image_generation: 4 image file(s)") and message.endswith(", …)")
    third.reset()
    assert undecodable_images(third) == [] and third.undecodable_named == []


def test_merge_state_adds_a_real_folder_once(options, tmp_path):
    """Both metrics read the real set (a folder) before the merge: the merged FID is the one pass's, not that of the
    real set counted twice."""
    real = tmp_path / "real"
    real.mkdir()
    generator = torch.Generator().manual_seed(9)
    for name in GOOD:
        pixels = torch.randint(0, 256, (20, 24, 3), dtype=torch.uint8, generator=generator)
        Image.fromarray(pixels.numpy()).save(real / name)
    options = {**options, "real": str(real)}
    first, second, whole = (ImageGenerationScore(**options) for _ in range(3))
    first.update([GOOD[0], GOOD[1], "junk.png"], ["a cat", "a dog", "a bird"])
    second.update([GOOD[2], GOOD[3]], ["a cat", "a dog"])
    whole.update([GOOD[0], GOOD[1], "junk.png", GOOD[2], GOOD[3]], ["a cat", "a dog", "a bird", "a cat", "a dog"])
    for metric in (first, second, whole):
        metric.load_real()
    first.merge_state(second)
    assert int(first.fid.real_count) == len(GOOD)
    assert _warning(first)[0] == pytest.approx(_warning(whole)[0], rel=1e-6, abs=1e-7)


def test_the_names_travel_in_a_weights_only_checkpoint(options):
    metric = ImageGenerationScore(**options)
    metric.update(["empty.png", GOOD[0], "cut.jpg", GOOD[1]], ["a cat", "a dog", "a bird", "a fish"])
    metric.persistent(True)
    buffer = io.BytesIO()
    torch.save(metric.state_dict(), buffer)
    buffer.seek(0)
    restored = ImageGenerationScore(**options)
    restored.load_state_dict(torch.load(buffer, weights_only=True))
    assert undecodable_images(restored) == undecodable_images(metric)
    assert [path.rsplit("/", 1)[1] for path, _ in undecodable_images(restored)] == ["empty.png", "cut.jpg"]
    restored.update([GOOD[2], "junk.png"], ["a cat", "a dog"])
    result, message = _warning(restored)
    assert _named(message) == ["empty.png", "cut.jpg", "junk.png"] and result["clip_undecodable"] == 3


def _rank_names(rank: int, options: dict, second_rank_bad: bool) -> list[tuple[dict, str]]:
    metric = ImageGenerationScore(**options)
    if rank == 0:
        metric.update([GOOD[0], GOOD[1], "junk.png"], ["a cat", "a dog", "a bird"])
    else:
        metric.update(["cut.jpg" if second_rank_bad else GOOD[4], GOOD[2], GOOD[3]], ["a cat", "a dog", "a bird"])
    computed = [_warning(metric)]
    metric.update([GOOD[5]], ["a fish"])  # after the sync, each rank's own names again, then both once more
    computed.append(_warning(metric))
    return computed


@pytest.mark.parametrize("second_rank_bad", [True, False])
def test_each_ddp_rank_names_the_other_rank_s_files(options, second_rank_bad):
    """Both ranks warn, naming the files of both in rank order — also rank 1 when it read none (it warned nothing)."""
    rank0, rank1 = run_ddp_function(_rank_names, options, second_rank_bad)
    for (first, message0), (second, message1) in zip(rank0, rank1):
        named = ["junk.png", "cut.jpg"] if second_rank_bad else ["junk.png"]
        assert _named(message0) == _named(message1) == named
        assert first == second and first["clip_undecodable"] == first["clip_failed"] == len(named)


def test_evaluate_resume_still_names_the_files_read_before_the_interruption(tmp_path, capsys):
    options = make_images(tmp_path / "images")
    names = ["junk.png", GOOD[0], "cut.jpg", GOOD[1], GOOD[2], GOOD[3], GOOD[4], GOOD[5]]
    with open(tmp_path / "p.jsonl", "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps({"id": i, "prediction": name}) + "\n" for i, name in enumerate(names))
    with open(tmp_path / "r.jsonl", "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps({"id": i, "references": [f"picture {i}"]}) + "\n" for i in range(len(names)))
    task = {"name": "gen", "metric": "s_image_generation", "predictions": "p.jsonl", "references": "r.jsonl",
            "options": {key: value for key, value in options.items() if key != "no_cache"}}
    config = tmp_path / "c.yaml"
    config.write_text(json.dumps({"tasks": [task]}), encoding="utf-8")

    def interrupt(label, done, total):
        if label == "gen" and done >= 4:  # both bad files read, the checkpoint of sample 3 written
            raise KeyboardInterrupt

    folder = tmp_path / "ck"
    with pytest.raises(KeyboardInterrupt):
        evaluate(load_config(config), batch_size=2, progress=interrupt, checkpoint_dir=folder, checkpoint_every=1)
    assert (folder / "rank0-of1.pt").is_file()
    with pytest.warns(UserWarning, match="cannot be decoded") as caught:
        code = cli.main(["evaluate", str(config), "--batch-size", "2", "--checkpoint-dir", str(folder), "--resume",
                         "-o", str(tmp_path / "r.json")])
    assert code == 0, capsys.readouterr().err
    (message,) = [str(w.message) for w in caught if "cannot be decoded" in str(w.message)]
    assert _named(message) == ["junk.png", "cut.jpg"] and message.startswith("s_image_generation: 2 image file(s)")
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert report["timing"]["resumed"] and report["tasks"][0]["details"]["clip_undecodable"] == 2


def test_image_generation_forward_accumulates_like_update(tmp_path):
    """``forward`` of S_ImageGeneration accumulates and returns None, as FID's does (the FID of one batch is
    undefined): torchmetrics' forward reset the FID and CLIP children for the batch and merged back only the parent's
    own states, so the score after forwards was the last batch's."""
    options = make_images(tmp_path / "data")
    prompts = ["a cat", "a dog", "a car", "a tree", "x", "y"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full, stepped = ImageGenerationScore(**options), ImageGenerationScore(**options)
        full.update(GOOD[:3], prompts[:3])  # the same batches: an encoder's float32 rounding depends on the batch
        full.update(GOOD[3:], prompts[3:])
        assert stepped(GOOD[:3], prompts[:3]) is None and stepped(GOOD[3:], prompts[3:]) is None
        expected = {key: float(value) for key, value in full.compute().items()}
        assert {key: float(value) for key, value in stepped.compute().items()} == expected
