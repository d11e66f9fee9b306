"""The image reader's bound on decoded pixels in flight (gpumetrics.image.reading_plan.plan_reading, ImageBatches'
``max_bytes_in_flight``): the depth of the decoding queue follows the files' decoded size, estimated from headers
before the processes start; the batches do not depend on it. 8 processes at batch 256 held 4,096 decoded files in
flight whatever their size: 800 MB of 256×256 images, ~147 GB of 12-megapixel photos."""

from __future__ import annotations

import math
import os
import struct
import warnings
import zlib

import numpy as np
import pytest
import torch
from PIL import Image

from gpumetrics.image import io, reading_plan
from gpumetrics.image.io import ImageBatches, decoded_bytes_per_file, list_images, same_size_batches
from gpumetrics.image.reading_plan import ReadingPlan, default_max_bytes_in_flight, pieces_per_chunk, plan_reading
from tests.helpers.image_files import save_random_images

PHOTO = 3 * 4000 * 3000  # a 12-megapixel photo decoded: 36 MB


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _png_header(path, width: int, height: int) -> None:
    """A PNG file of ``width`` × ``height`` RGB that holds its header only (no pixels: it cannot be decoded)."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", b""))


def _big_pngs(folder, n: int, size=(2000, 3000)) -> list:
    """``n`` PNGs of ``size`` (height, width) — 18 MB each decoded, ~90 kB on disk — each with its own pixels."""
    folder.mkdir()
    for i in range(n):
        pixels = np.full((*size, 3), (10 * i, 20, 30), dtype=np.uint8)
        pixels[i:i + 4, 7:11] = 200
        Image.fromarray(pixels).save(folder / f"{i}.png", compress_level=1)
    return list_images(folder)


@pytest.fixture
def loader_settings(monkeypatch):
    """The ``num_workers`` and ``prefetch_factor`` each DataLoader the reader builds is given."""
    seen = []

    class Recorded(torch.utils.data.DataLoader):
        def __init__(self, *args, **kwargs):
            seen.append({key: kwargs[key] for key in ("num_workers", "prefetch_factor")})
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(torch.utils.data, "DataLoader", Recorded)
    return seen


def _in_flight_bytes(plan: ReadingPlan, batch_size: int, bytes_per_file: int) -> int:
    """The pieces handed out to the processes and the chunk being joined."""
    step = math.ceil(batch_size / plan.pieces_per_chunk)
    return (plan.workers * plan.prefetch * step + batch_size) * bytes_per_file


@pytest.mark.parametrize("batch_size", [16, 32, 50, 256])
@pytest.mark.parametrize("workers", [1, 2, 8])
def test_small_images_keep_the_unbounded_plan(batch_size, workers):
    per_chunk = pieces_per_chunk(batch_size, workers)
    unbounded = ReadingPlan(workers, per_chunk, 2 * per_chunk, 3 * 256 * 256)
    assert plan_reading(batch_size, workers, 3 * 256 * 256, 2 << 30) == unbounded
    assert plan_reading(batch_size, workers, None, 1) == unbounded._replace(bytes_per_file=None)  # not estimated
    assert plan_reading(batch_size, 0, PHOTO, 1) == ReadingPlan(0, 1, 2, PHOTO)  # in this process: nothing ahead


@pytest.mark.parametrize("batch_size", [16, 50, 256])
@pytest.mark.parametrize("workers", [1, 2, 8])
@pytest.mark.parametrize("budget", [256 << 20, 2 << 30, 16 << 30, 256 << 30])
def test_photos_are_bounded_by_bytes(batch_size, workers, budget):
    plan = plan_reading(batch_size, workers, PHOTO, budget)
    unbounded = plan_reading(batch_size, workers, PHOTO, 1 << 60)
    assert plan.prefetch >= 1 and 1 <= plan.workers <= workers and plan.bytes_per_file == PHOTO
    assert plan.files_in_flight(batch_size) <= unbounded.files_in_flight(batch_size)
    if batch_size * PHOTO > budget:  # the chunk alone is over: the least, one file ahead
        assert plan == ReadingPlan(1, batch_size, 1, PHOTO)
        return
    assert _in_flight_bytes(plan, batch_size, PHOTO) <= budget
    if _in_flight_bytes(unbounded, batch_size, PHOTO) <= budget:
        assert plan == unbounded
    if budget - batch_size * PHOTO >= workers * PHOTO:  # room for a file per process: all of them decode
        assert plan.workers == workers


def test_the_plan_deepens_the_queue_before_it_splits_pieces_or_drops_processes():
    # 8 processes, batch 256 (pieces of 32): 4,096 photos in flight (147 GB) unbounded
    assert plan_reading(256, 8, PHOTO, 1 << 60).files_in_flight(256) == 4096
    # 32 GiB: 25 GB beside the chunk, 2 pieces of 32 per process
    assert plan_reading(256, 8, PHOTO, 32 << 30) == ReadingPlan(8, 8, 2, PHOTO)
    # 16 GiB: 221 photos beside the chunk, not a piece of 32 per process: pieces of 13, two per process
    assert plan_reading(256, 8, PHOTO, 16 << 30) == ReadingPlan(8, 20, 2, PHOTO)
    # the CLI's batch 50 at 2 GiB: 1.8 GB for the chunk, room for 9 photos: one per process
    assert plan_reading(50, 8, PHOTO, 2 << 30) == ReadingPlan(8, 50, 1, PHOTO)
    # room for 3 photos: 3 processes
    assert plan_reading(50, 8, PHOTO, 53 * PHOTO) == ReadingPlan(3, 50, 1, PHOTO)


def test_the_default_bound_is_an_eighth_of_the_memory_at_most_2_gib():
    assert default_max_bytes_in_flight(64 << 30) == 2 << 30
    assert default_max_bytes_in_flight(8 << 30) == 1 << 30
    assert 0 < default_max_bytes_in_flight() <= 2 << 30
    if os.path.exists("/proc/meminfo"):
        assert reading_plan._memory_bytes() > 0


def test_the_estimate_reads_headers_and_passes_over_what_it_cannot_read(tmp_path):
    folder = tmp_path / "photos"
    folder.mkdir()
    for i in range(3):
        _png_header(folder / f"{i}.png", 4000, 3000)
    _png_header(folder / "3.png", 3000, 2000)
    (folder / "4.png").write_bytes(b"not an image")
    (folder / "5.png").write_bytes(b"")
    (folder / "6.png").symlink_to(tmp_path / "gone.png")
    _png_header(folder / "7.png", 10, 10)
    (folder / "8.png").write_bytes(b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", b"\x00" * 5))  # a header cut short
    paths = list_images(folder)
    assert len(paths) == 9
    assert decoded_bytes_per_file([paths]) == PHOTO
    assert decoded_bytes_per_file([paths[3:]]) == 3 * 3000 * 2000  # the most over the list, whatever its order
    assert decoded_bytes_per_file([paths[4:7], paths[8:]]) is None  # nothing readable: not estimated
    assert decoded_bytes_per_file([paths[4:7], paths[7:8]]) == 300  # over the lists


def test_the_largest_files_on_disk_are_sampled_besides_evenly_spaced_ones(tmp_path, monkeypatch):
    folder = tmp_path / "mixed"
    save_random_images(folder, seed=1, n=9, size=(4, 4))
    Image.fromarray(np.random.default_rng(0).integers(0, 256, (300, 400, 3), dtype=np.uint8)).save(folder / "4.png")
    paths = list_images(folder)
    monkeypatch.setattr(io, "HEADER_SAMPLE", 2)  # the first and the last file
    assert decoded_bytes_per_file([paths]) == 3 * 400 * 300
    monkeypatch.setattr(io, "LARGEST_SAMPLED", 0)
    assert decoded_bytes_per_file([paths]) == 3 * 4 * 4


def test_a_jpeg_decoded_on_the_device_counts_its_bytes_on_disk(tmp_path):
    folder = tmp_path / "jpegs"
    save_random_images(folder, seed=2, n=2, size=(40, 60), suffix="jpg")
    paths = list_images(folder)
    assert decoded_bytes_per_file([paths]) == 3 * 40 * 60
    assert decoded_bytes_per_file([paths], raw_jpegs=True) == max(path.stat().st_size for path in paths)


def test_big_images_under_a_small_bound_give_the_serial_batches_bit_for_bit(tmp_path, loader_settings):
    paths = _big_pngs(tmp_path / "big", 6)  # 18 MB each decoded
    serial = list(same_size_batches(paths, 2, workers=0))
    assert loader_settings == []
    with ImageBatches([paths], 2, workers=2, max_bytes_in_flight=3 * 18_000_000) as reader:
        # the chunk being joined (2 files) and one more: one process, one file ahead
        assert reader.plan == ReadingPlan(1, 2, 1, 18_000_000) and reader.workers == 1
        bounded = list(reader.batches(0))
    assert loader_settings == [{"num_workers": 1, "prefetch_factor": 1}]
    assert [indices for indices, _ in bounded] == [indices for indices, _ in serial] == [[0, 1], [2, 3], [4, 5]]
    assert all(torch.equal(a, b) for (_, a), (_, b) in zip(serial, bounded))


def test_small_images_are_read_as_before(tmp_path, loader_settings):
    save_random_images(tmp_path / "small", seed=3, n=40)
    paths = list_images(tmp_path / "small")
    list(same_size_batches(paths, 16, workers=2))
    # unbounded: two pieces a chunk (16 files a piece at least), two chunks per process ahead
    assert loader_settings == [{"num_workers": 2, "prefetch_factor": 2}]
    list(same_size_batches(paths, 32, workers=2))
    assert loader_settings[1] == {"num_workers": 2, "prefetch_factor": 4}


def test_a_batch_over_the_bound_is_said_once_and_read_the_same(tmp_path):
    folder = tmp_path / "photos"
    folder.mkdir()
    for i in range(8):
        _png_header(folder / f"{i}.png", 4000, 3000)  # headers only: every file is undecodable
    paths = list_images(folder)
    with pytest.warns(UserWarning) as caught:
        reader = ImageBatches([paths], 4, workers=2, max_bytes_in_flight=100_000_000)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1 and "a batch of 4 images holds about 144 MB decoded" in messages[0]
    assert "36 MB" in messages[0] and "the 100 MB the reader may hold" in messages[0] and "--batch-size" in messages[0]
    assert reader.plan == ReadingPlan(1, 4, 1, PHOTO)
    with reader:
        undecodable: list = []
        assert list(reader.batches(0, undecodable)) == []
    assert [index for index, _ in undecodable] == list(range(8))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ImageBatches([paths], 4, workers=2, max_bytes_in_flight=145_000_000).close()  # fits: no word
        ImageBatches([paths], 4, workers=0, max_bytes_in_flight=1).close()  # nothing ahead: nothing estimated


def test_broken_files_in_the_sample_are_decoded_and_named_as_without_a_bound(tmp_path, loader_settings):
    folder = tmp_path / "mixed"
    save_random_images(folder, seed=4, n=6, size=(30, 20))
    (folder / "1.png").write_bytes(b"garbage")
    (folder / "3.png").write_bytes(b"")
    (folder / "4.png").unlink()
    (folder / "4.png").symlink_to(tmp_path / "gone.png")
    _png_header(folder / "5.png", 4000, 3000)
    paths = list_images(folder)
    results = []
    for workers, bound in ((0, None), (2, 100)):
        undecodable: list = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            batches = list(same_size_batches(paths, 2, workers=workers, undecodable=undecodable,
                                             max_bytes_in_flight=bound))
        results.append((batches, [(index, type(error), str(error)) for index, error in undecodable]))
    assert [str(w.message)[:45] for w in caught] == ["a batch of 2 images holds about 72 MB decoded"]
    (serial, serial_bad), (bounded, bounded_bad) = results
    assert [indices for indices, _ in bounded] == [indices for indices, _ in serial] == [[0], [2]]
    assert all(torch.equal(a, b) for (_, a), (_, b) in zip(serial, bounded))
    assert bounded_bad == serial_bad and [index for index, *_ in serial_bad] == [1, 3, 4, 5]
    assert loader_settings == [{"num_workers": 1, "prefetch_factor": 1}]  # 5.png's header: a photo


def test_the_bound_is_checked():
    for bad, error in ((0, ValueError), (-5, ValueError), (1.5, TypeError), (True, TypeError)):
        with pytest.raises(error, match="`max_bytes_in_flight` must be"):
            ImageBatches([[]], 2, max_bytes_in_flight=bad)


def test_photos_by_default_stay_within_2_gib_in_flight(tmp_path, loader_settings):
    """The unbounded reader handed 2 processes 200 12-megapixel files ahead at batch 50 (7.2 GB; 8 processes: 816,
    29 GB): by default the pieces handed out and the chunk being joined stay within 2 GiB."""
    folder = tmp_path / "photos"
    folder.mkdir()
    for i in range(100):
        _png_header(folder / f"{i:03}.png", 4000, 3000)  # headers only: every file is undecodable
    undecodable: list = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # under 14 GiB of memory the default bound is below a chunk: said, and bound
        reader = ImageBatches([list_images(folder)], 50, workers=2)
    with reader:
        assert list(reader.batches(0, undecodable)) == [] and len(undecodable) == 100
        piece = max(stop - start for *_, start, stop in reader._pieces.table)
    assert len(loader_settings) == 1
    workers, prefetch = loader_settings[0]["num_workers"], loader_settings[0]["prefetch_factor"]
    assert workers >= 1 and (workers * prefetch * piece + 50) * PHOTO <= 2 << 30
