"""The reference feature cache: a second pass over the same images runs no extractor and gives the same bits; any
change of the files or the extractor misses; a broken entry is recomputed (tiny images, random Inception weights)."""

from __future__ import annotations

import os

import pytest
import torch
from torch import nn

from gpumetrics.image.feature_cache import FeatureCache, image_set_digest, reference_key
from gpumetrics.image.fid import FrechetInceptionDistance
from gpumetrics.image.image_files import add_image_files
from gpumetrics.image.io import list_images
from gpumetrics.image.kid import KernelInceptionDistance
from tests.helpers.image_files import save_random_images

CPU = torch.device("cpu")


def save_images(folder, seed, n=5, suffix="bmp"):
    """``n`` random 20×26 images; BMP by default, so one pixel can change without changing the file size."""
    return save_random_images(folder, seed, n, (20, 26), suffix)


def fid(state, **options):
    return FrechetInceptionDistance(feature=64, weights=state, **options)


def reference_states(metric, folder, cache, batch_size=2):
    add_image_files(metric, list_images(folder), True, batch_size, CPU, cache=cache, root=folder)
    return metric.side_states("real")


def same_bits(a, b):
    return sorted(a) == sorted(b) and all(torch.equal(a[k], b[k]) and a[k].dtype == b[k].dtype for k in a)


def test_second_fid_pass_runs_no_extractor_and_gives_the_same_bits(tmp_path, inception_state, extracted):
    save_images(tmp_path / "real", 0)
    fake = torch.randint(0, 256, (4, 3, 20, 26), dtype=torch.uint8, generator=torch.Generator().manual_seed(1))
    cache = FeatureCache(tmp_path / "cache")
    values = []
    for run in range(3):  # uncached, first cached (stores), second cached (loads)
        extracted.clear()
        metric = fid(inception_state)
        states = reference_states(metric, tmp_path / "real", None if run == 0 else cache)
        assert extracted == ([2, 2, 1] if run < 2 else []), run  # 5 images in batches of 2
        if run == 0:
            uncached = states
        assert same_bits(states, uncached)
        metric.update(fake, real=False)
        with pytest.warns(UserWarning, match="rank-deficient"):
            values.append(metric.compute())
    assert values[0].item() == values[1].item() == values[2].item()
    assert len(list((tmp_path / "cache").iterdir())) == 1


def test_kid_caches_its_reference_features(tmp_path, inception_state, extracted):
    save_images(tmp_path / "real", 2)
    fake = torch.randint(0, 256, (5, 3, 20, 26), dtype=torch.uint8, generator=torch.Generator().manual_seed(3))
    cache = FeatureCache(tmp_path / "cache")
    values = []
    for run in range(3):
        extracted.clear()
        metric = KernelInceptionDistance(feature=64, weights=inception_state, subsets=3, subset_size=4)
        reference_states(metric, tmp_path / "real", None if run == 0 else cache)
        assert extracted == ([2, 2, 1] if run < 2 else []), run
        metric.update(fake, real=False)
        values.append(torch.stack(metric.compute()))
    assert torch.equal(values[0], values[1]) and torch.equal(values[0], values[2])
    # FID and KID store different states: one folder, two entries
    reference_states(fid(inception_state), tmp_path / "real", cache)
    assert len(list((tmp_path / "cache").iterdir())) == 2


def test_a_changed_file_of_the_same_size_and_mtime_misses(tmp_path, inception_state, extracted):
    folder = tmp_path / "real"
    save_images(folder, 4)
    cache = FeatureCache(tmp_path / "cache")
    before = reference_states(fid(inception_state), folder, cache)
    target = folder / "3.bmp"
    data, stat = bytearray(target.read_bytes()), target.stat()
    pixels = int.from_bytes(data[10:14], "little")  # BMP header: offset of the pixel array
    data[pixels] ^= 0xFF  # one colour value of one pixel (not the row padding)
    target.write_bytes(bytes(data))
    os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert target.stat().st_size == stat.st_size and target.stat().st_mtime_ns == stat.st_mtime_ns
    extracted.clear()
    after = reference_states(fid(inception_state), folder, cache)
    assert extracted == [2, 2, 1]
    assert not same_bits(before, after)
    assert same_bits(after, reference_states(fid(inception_state), folder, None))


def test_the_image_set_digest_covers_content_names_and_membership(tmp_path):
    folder = tmp_path / "real"
    save_images(folder, 5, n=3, suffix="png")
    files = list_images(folder)
    digest = image_set_digest(files, folder)
    assert image_set_digest(files, folder) == digest
    assert image_set_digest(files[:2], folder) != digest  # a file removed
    (folder / "3.png").write_bytes((folder / "0.png").read_bytes())
    assert image_set_digest(list_images(folder), folder) != digest  # a file added (a copy of another)
    (folder / "3.png").unlink()
    (folder / "2.png").rename(folder / "9.png")
    assert image_set_digest([*files[:2], folder / "9.png"], folder) != digest  # renamed, same bytes
    moved = tmp_path / "elsewhere"
    folder.rename(moved)
    (moved / "9.png").rename(moved / "2.png")
    assert image_set_digest(list_images(moved), moved) == digest  # the folder's own location is not part of it
    with pytest.raises(ValueError, match="`root`"):
        image_set_digest(list_images(moved), folder)


def test_the_key_changes_with_the_extractor_and_the_batching(tmp_path, inception_state):
    folder = tmp_path / "real"
    save_images(folder, 6, n=2)
    files = list_images(folder)

    def key(metric, batch_size=2, side="real"):
        return reference_key(metric, side, files, folder, batch_size, CPU)

    base = key(fid(inception_state))
    assert key(fid(inception_state)) == base
    other_weights = {name: value.clone() for name, value in inception_state.items()}
    other_weights["Conv2d_1a_3x3.conv.weight"][0, 0, 0, 0] += 1e-3
    variants = [
        key(fid(inception_state, resize="clean")),
        key(FrechetInceptionDistance(feature=192, weights=inception_state)),
        key(fid(other_weights)),
        key(fid(inception_state, speed_mode="channels_last")),
        key(fid(inception_state), batch_size=3),
        key(fid(inception_state), side="fake"),
        key(KernelInceptionDistance(feature=64, weights=inception_state)),
    ]
    assert len({base, *variants}) == len(variants) + 1


def test_a_different_resize_mode_runs_the_extractor_again(tmp_path, inception_state, extracted):
    folder = tmp_path / "real"
    save_images(folder, 7, n=3)
    cache = FeatureCache(tmp_path / "cache")
    reference_states(fid(inception_state), folder, cache)
    extracted.clear()
    reference_states(fid(inception_state, resize="clean"), folder, cache)
    assert extracted == [2, 1]


@pytest.mark.parametrize("damage", ["garbage", "truncated", "wrong states"])
def test_an_unusable_entry_is_recomputed_with_a_warning(tmp_path, inception_state, extracted, damage):
    folder = tmp_path / "real"
    save_images(folder, 8, n=3)
    cache = FeatureCache(tmp_path / "cache")
    good = reference_states(fid(inception_state), folder, cache)
    (entry,) = (tmp_path / "cache").iterdir()
    if damage == "garbage":
        entry.write_bytes(b"not a torch file")
    elif damage == "truncated":
        entry.write_bytes(entry.read_bytes()[: entry.stat().st_size // 2])
    else:  # a readable entry whose states do not fit the metric (as if written for other dims)
        key = entry.stem
        cache.store(key, {**good, "real_sum": torch.zeros(3, dtype=torch.float64)})
    extracted.clear()
    with pytest.warns(UserWarning, match="feature cache: ignoring the unusable entry"):
        states = reference_states(fid(inception_state), folder, cache)
    assert extracted == [2, 1] and same_bits(states, good)
    extracted.clear()
    assert same_bits(reference_states(fid(inception_state), folder, cache), good)  # rewritten whole
    assert extracted == [] and [p.name for p in (tmp_path / "cache").iterdir()] == [entry.name]


def test_a_custom_feature_module_is_never_cached(tmp_path):
    class MeanColour(nn.Module):
        dims = 3

        def forward(self, images):
            return images.float().mean((2, 3))

    folder = tmp_path / "real"
    save_images(folder, 9, n=3)
    metric = FrechetInceptionDistance(feature=MeanColour())
    reference_states(metric, folder, FeatureCache(tmp_path / "cache"))
    assert int(metric.real_count) == 3 and not (tmp_path / "cache").exists()


def test_cache_needs_an_empty_side_and_a_root(tmp_path, inception_state):
    folder = tmp_path / "real"
    save_images(folder, 10, n=2)
    metric = fid(inception_state)
    with pytest.raises(ValueError, match="`root`"):
        add_image_files(metric, list_images(folder), True, 2, CPU, cache=FeatureCache(tmp_path / "cache"))
    metric.update_features(torch.rand(2, 64), real=True)
    with pytest.raises(ValueError, match="`cache` needs an empty real side"):
        reference_states(metric, folder, FeatureCache(tmp_path / "cache"))
    with pytest.raises(ValueError, match="already holds samples"):
        metric.restore_side_states("real", fid(inception_state).side_states("real"))


def test_progress_reports_hashing_then_extraction(tmp_path, inception_state):
    folder = tmp_path / "real"
    save_images(folder, 11, n=3)
    reports = []
    add_image_files(fid(inception_state), list_images(folder), True, 2, CPU, cache=FeatureCache(tmp_path / "cache"),
                    root=folder, progress=lambda *report: reports.append(report), phase="real images")
    assert reports == [("hashing real images", 0, 3), ("hashing real images", 1, 3), ("hashing real images", 2, 3),
                       ("hashing real images", 3, 3), ("real images", 0, 3), ("real images", 2, 3),
                       ("real images", 3, 3)]
