"""The image-file pipeline (gpumetrics.image.io.same_size_batches): worker processes give the serial path's batches
and FID bits, undecodable files are named, the nvJPEG decoder is opt-in and CUDA-only."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PIL import Image

from gpumetrics.image.fid import FrechetInceptionDistance
from gpumetrics.image.image_files import add_image_files
from gpumetrics.image.io import (
    UndecodableImage, _decode_jpegs_on, _jpeg_views, _Pieces, check_workers, default_workers, list_images, read_image,
    same_size_batches,
)
from tests.helpers.image_files import save_random_images


@pytest.fixture
def mixed_folder(tmp_path):
    """7 images: sizes (24, 30) × 4 and (17, 11) × 3, interleaved by name so a chunk holds both sizes."""
    folder = tmp_path / "mixed"
    save_random_images(folder, seed=1, n=4, size=(24, 30))
    generator = torch.Generator().manual_seed(2)
    for i in range(3):
        pixels = torch.randint(0, 256, (17, 11, 3), dtype=torch.uint8, generator=generator).numpy()
        Image.fromarray(pixels).save(folder / f"{i}b.png")
    return list_images(folder)


def _batches(paths, size=3, **options):
    return [(indices, images) for indices, images in same_size_batches(paths, size, **options)]


@pytest.mark.parametrize("workers", [1, 2])
def test_workers_give_the_serial_batches_bit_for_bit(mixed_folder, workers):
    serial = _batches(mixed_folder, workers=0)
    parallel = _batches(mixed_folder, workers=workers)
    assert [indices for indices, _ in parallel] == [indices for indices, _ in serial]
    assert all(torch.equal(a, b) for (_, a), (_, b) in zip(serial, parallel))
    assert sorted(i for indices, _ in serial for i in indices) == list(range(len(mixed_folder)))
    for indices, images in serial:  # each batch holds the files it names, decoded as read_image does
        assert all(torch.equal(images[k], read_image(mixed_folder[i])) for k, i in enumerate(indices))


def test_fid_from_files_is_the_same_with_workers(tmp_path, inception_state):
    real = save_random_images(tmp_path / "real", seed=3, n=7)
    values = []
    for workers in (0, 2):
        metric = FrechetInceptionDistance(feature=64, weights=inception_state)
        add_image_files(metric, list_images(tmp_path / "real"), True, 2, "cpu", workers=workers)
        metric.update(real.flip(-1), real=False)
        values.append(metric.compute())
    assert torch.equal(values[0], values[1])


def test_an_undecodable_file_is_named_also_from_a_worker(tmp_path):
    folder = tmp_path / "bad"
    save_random_images(folder, seed=4, n=4)
    (folder / "2.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"not really a png")
    for workers in (0, 2):
        with pytest.raises(ValueError, match=r"2\.png' cannot be decoded"):
            _batches(list_images(folder), workers=workers)


def _corrupt_files(folder):
    """Files that exist and cannot be decoded, each its own way (named by the way)."""
    good = folder / "0.png"
    jpeg = folder / "0.jpg"
    Image.open(good).save(jpeg, quality=90)
    corrupt = {
        "truncated.jpg": jpeg.read_bytes()[: len(jpeg.read_bytes()) // 2],
        "garbage.png": b"\x89PNG\r\n\x1a\n" + b"not really a png",
        "empty.png": b"",
        "text.png": "a text file named .png\n".encode(),
    }
    for name, data in corrupt.items():
        (folder / name).write_bytes(data)
    jpeg.unlink()
    return sorted(corrupt)


@pytest.mark.parametrize("workers", [0, 2])
def test_undecodable_files_travel_back_per_file_when_asked(tmp_path, workers):
    """With an ``undecodable`` list every file that cannot be decoded is named there with the decoder's reason and
    left out; the other files give the batches they give alone, bit for bit (also from a worker process, which
    must not stop at the first bad file of its chunk)."""
    folder = tmp_path / "mixed"
    save_random_images(folder, seed=7, n=5)
    bad_names = _corrupt_files(folder)
    paths = list_images(folder)
    bad = [i for i, p in enumerate(paths) if p.name in bad_names]
    good = [i for i in range(len(paths)) if i not in bad]
    undecodable = []
    batches = list(same_size_batches(paths, 3, workers=workers, undecodable=undecodable))
    assert [i for i, _ in undecodable] == bad
    assert all(isinstance(err, UndecodableImage) and err.path == str(paths[i]) and err.reason
               for i, err in undecodable)
    assert sorted(i for indices, _ in batches for i in indices) == good
    for indices, images in batches:
        assert all(torch.equal(images[k], read_image(paths[i])) for k, i in enumerate(indices))
    with pytest.raises(UndecodableImage, match=f"'{paths[bad[0]]}' cannot be decoded"):
        list(same_size_batches(paths, 3, workers=workers))


@pytest.mark.parametrize("workers", [0, 2])
def test_pil_warnings_come_back_as_one_warning_naming_the_files(tmp_path, monkeypatch, workers):
    """PIL's Python warnings (here its DecompressionBombWarning) printed on a worker's stderr, past the caller's
    filters and records (``gpumetrics fid`` lists the run's warnings in its result); now each process notes them
    per file, and one warning names how many files and the first three, whichever process decoded them."""
    import warnings

    from PIL import Image as PILImage

    folder = tmp_path / "images"
    save_random_images(folder, seed=10, n=5)
    paths = list_images(folder)
    serial = _batches(paths, workers=0)
    monkeypatch.setattr(PILImage, "MAX_IMAGE_PIXELS", 500)  # 24×30 = 720: over the limit, under twice it
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        batches = _batches(paths, workers=workers)
    assert all(torch.equal(a, b) for (_, a), (_, b) in zip(serial, batches)) and len(batches) == len(serial)
    (message,) = [str(w.message) for w in caught]
    assert message.startswith(f"PIL warned while decoding 5 image file(s) ('{paths[0]}': DecompressionBombWarning: "
                              "Image size (720 pixels) exceeds limit of 500 pixels")
    assert f"'{paths[2]}'" in message and f"'{paths[3]}'" not in message and message.endswith(", …)")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("ignore")
        _batches(paths, workers=workers)
    assert caught == []  # the caller's filters still apply


def test_a_decompression_bomb_and_a_file_gone_are_failures_of_their_own_file(tmp_path, monkeypatch):
    from PIL import Image as PILImage

    folder = tmp_path / "images"
    save_random_images(folder, seed=8, n=3)
    paths = list_images(folder) + [folder / "gone.png"]
    monkeypatch.setattr(PILImage, "MAX_IMAGE_PIXELS", 300)  # 24×30 = 720 > 2 × 300: PIL refuses it
    undecodable = []
    assert list(same_size_batches(paths, 2, undecodable=undecodable)) == []
    assert [i for i, _ in undecodable] == [0, 1, 2, 3]
    assert all("exceeds limit" in err.reason for _, err in undecodable[:3])
    assert isinstance(undecodable[3][1], FileNotFoundError)


def test_the_device_decoders_fallback_names_each_jpeg_it_cannot_decode(tmp_path):
    """``decode="nvjpeg"``'s decoding, run on the CPU: a batch the decoder refuses is decoded file by file, so the
    good JPEGs keep their pixels and each bad one is named (the batch call named three files and ended the run)."""
    folder = tmp_path / "jpegs"
    save_random_images(folder, seed=9, n=4, size=(33, 40), suffix="jpg")
    (folder / "1.jpg").write_bytes((folder / "1.jpg").read_bytes()[:200])
    (folder / "3.jpg").write_bytes(b"")
    paths = list_images(folder)
    groups, jpegs, failed, _ = _Pieces([paths], 10, 1, raw_jpegs=True)[0][1]
    raw = _jpeg_views(jpegs)
    assert [i for i, _ in failed] == [3] and failed[0][1].reason == "cannot identify image file"  # PIL's, as "pil"
    decoded, failed = _decode_jpegs_on(torch.device("cpu"), paths, raw)
    assert [i for i, _ in failed] == [1] and "'" + str(paths[1]) + "' cannot be decoded: decode='nvjpeg'" in str(
        failed[0][1])
    assert [indices for indices, _ in decoded] == [[0, 2]]
    alone, _ = _decode_jpegs_on(torch.device("cpu"), paths, [raw[0], raw[2]])
    assert torch.equal(decoded[0][1], alone[0][1])


def test_the_device_decoder_gets_jpeg_bytes_only_whatever_the_name(tmp_path):
    """``decode="nvjpeg"`` sends a file to the JPEG decoder by its bytes, not its name: a PNG (or a GIF) named .jpg
    is decoded by PIL, to PIL's pixels (the nvJPEG route named it undecodable while ``decode="pil"`` read it)."""
    folder = tmp_path / "named"
    folder.mkdir()
    Image.new("RGB", (5, 6), (1, 2, 3)).save(folder / "0.jpg", format="JPEG")
    Image.new("RGB", (5, 6), (4, 5, 6)).save(folder / "1.jpg", format="PNG")
    Image.new("P", (7, 3), 9).save(folder / "2.JPEG", format="GIF")
    paths = list_images(folder)
    groups, jpegs, failed, _ = _Pieces([paths], 10, 1, raw_jpegs=True)[0][1]
    raw = _jpeg_views(jpegs)
    assert [i for i, _ in raw] == [0] and failed == [] and [indices for indices, _ in groups] == [[1], [2]]
    for indices, images in groups:
        assert torch.equal(images[0], read_image(paths[indices[0]]))


def test_a_dangling_symlink_is_listed_and_named_not_silently_skipped(tmp_path):
    """pytorch-fid's glob lists a symbolic link to nothing and stops on it; ``list_images`` left it out, so FID was
    computed on fewer images without a word. A sub-folder named like an image is still not an image."""
    folder = tmp_path / "links"
    save_random_images(folder, seed=8, n=2)
    (folder / "2.png").symlink_to(tmp_path / "gone.png")
    (folder / "3.png").mkdir()
    paths = list_images(folder)
    assert [p.name for p in paths] == ["0.png", "1.png", "2.png"]
    with pytest.raises(FileNotFoundError, match="2.png"):
        list(same_size_batches(paths, 2))


def test_a_decoding_process_killed_by_the_os_is_one_os_error(tmp_path, monkeypatch):
    # torch's RuntimeError "DataLoader worker (pid …) is killed by signal: Killed." ended commands with a traceback
    import os
    import signal

    folder = tmp_path / "images"
    save_random_images(folder, seed=4, n=4)
    decode = _Pieces._decode

    def killed_in_a_worker(self, piece):
        if torch.utils.data.get_worker_info() is not None:  # a forked worker: the OS's out-of-memory kill
            os.kill(os.getpid(), signal.SIGKILL)
        return decode(self, piece)

    monkeypatch.setattr(_Pieces, "_decode", killed_in_a_worker)
    with pytest.raises(OSError, match=r"an image-decoding process ended unexpectedly \(DataLoader worker .*out of "
                                      r"memory\? Fewer `workers`"):
        same_size_batches(list_images(folder), 2, workers=2).__next__()
    assert len(_batches(list_images(folder), workers=0)) == 2


def test_options_are_checked():
    assert 0 <= default_workers() <= 8
    assert [default_workers(cores) for cores in (1, 2, 3, 9, 16)] == [0, 0, 2, 8, 8]
    # beside a GPU the main process waits for the device: one worker on two cores overlaps decoding with it
    assert [default_workers(cores, torch.device("cuda")) for cores in (1, 2, 3, 9)] == [0, 1, 2, 8]
    assert default_workers(2, "cpu") == 0
    assert check_workers(None) is None and check_workers(3) == 3
    for bad, error in ((-1, ValueError), (1.5, TypeError), (True, TypeError), ("2", TypeError)):
        with pytest.raises(error, match="`workers` must be a non-negative integer"):
            check_workers(bad)
    with pytest.raises(ValueError, match="decode"):
        list(same_size_batches([], 2, decode="turbo"))
    with pytest.raises(ValueError, match="`decode` 'nvjpeg' decodes on a CUDA device"):
        list(same_size_batches([], 2, decode="nvjpeg", device="cpu"))


def test_device_decoder_reads_jpegs_close_to_pil(tmp_path):
    """The decoder behind ``decode="nvjpeg"`` run on the CPU (libjpeg): same shapes, pixels within a few grey levels
    of PIL's. Other formats in the same chunk are decoded by PIL."""
    folder = tmp_path / "jpegs"
    save_random_images(folder, seed=5, n=3, size=(33, 40), suffix="jpg")
    Image.new("L", (9, 7), 128).save(folder / "gray.jpg")
    Image.new("RGB", (5, 6), (1, 2, 3)).save(folder / "x.png")
    paths = list_images(folder)
    groups, jpegs, failed, _ = _Pieces([paths], 10, 1, raw_jpegs=True)[0][1]
    raw = _jpeg_views(jpegs)
    assert [i for i, _ in raw] == [0, 1, 2, 3] and [indices for indices, _ in groups] == [[4]] and failed == []
    decoded, failed = _decode_jpegs_on(torch.device("cpu"), paths, raw)
    groups += decoded
    assert failed == []
    assert sorted(i for indices, _ in groups for i in indices) == list(range(5))
    for indices, images in groups:
        for image, index in zip(images, indices):
            pil = read_image(paths[index])
            assert image.shape == pil.shape and image.dtype == torch.uint8
            assert float((image.float() - pil.float()).abs().mean()) <= 4.0


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA (nvJPEG)")
def test_nvjpeg_decodes_on_the_gpu(tmp_path):
    """Smooth images (upsampled noise), as photos are: nvJPEG's chroma upsampling differs from libjpeg's most on
    noise, which says nothing about real images."""
    folder = tmp_path / "jpegs"
    folder.mkdir()
    rng = np.random.default_rng(6)
    for i in range(5):
        small = Image.fromarray(rng.integers(0, 256, (9, 10, 3), dtype=np.uint8))
        small.resize((40, 33), Image.BILINEAR).save(folder / f"{i}.jpg", quality=90)
    paths = list_images(folder)
    batches = _batches(paths, decode="nvjpeg", device="cuda", workers=2)
    assert all(images.device.type == "cuda" for _, images in batches)
    pil = torch.stack([read_image(p) for p in paths]).float()
    decoded = torch.cat([images for _, images in batches]).cpu().float()
    # measured on the first GPU run (H200, CUDA 13.0, torchvision 0.26): mean |nvJPEG − PIL| = 7.97 on these 40×33
    # images, whose 4:2:0 chroma is mostly block edges at this size (docs/gpu.md); 4.0 was a guess before any GPU
    assert float((decoded - pil).abs().mean()) <= 10.0


@pytest.fixture
def interleaved_sizes(tmp_path):
    """40 PNGs of two sizes interleaved (every third is 17 × 11), so that each size's group of a 32-file chunk spans
    the pieces two processes decode."""
    folder = tmp_path / "interleaved"
    folder.mkdir()
    generator = torch.Generator().manual_seed(12)
    for i in range(40):
        size = (17, 11) if i % 3 == 0 else (24, 30)
        pixels = torch.randint(0, 256, (*size, 3), dtype=torch.uint8, generator=generator).numpy()
        Image.fromarray(pixels).save(folder / f"{i:02d}.png")
    return list_images(folder)


def _decoding_pids(monkeypatch, log):
    """Record the id of the process that decodes each file, as ``pid path`` lines in ``log`` (forked workers
    inherit the patch)."""
    import os

    from gpumetrics.image import io

    read = io._read_rgb

    def recorded(path):
        with open(log, "a") as handle:
            handle.write(f"{os.getpid()} {path}\n")
        return read(path)

    monkeypatch.setattr(io, "_read_rgb", recorded)
    return lambda: {path: int(pid) for pid, path in (line.split(" ", 1) for line in log.read_text().splitlines())}


def test_the_processes_decode_a_chunk_together(interleaved_sizes, tmp_path, monkeypatch):
    """A chunk is split into pieces the workers decode together, so its batch is ready after a piece's decoding:
    one process decoded each whole chunk (8 workers, batch 256: the first batch waited for 256 files decoded by one
    process while the network idled). The joined batches are the serial ones, bit for bit, sizes mixed."""
    serial = _batches(interleaved_sizes, workers=0, size=32)
    decoded_by = _decoding_pids(monkeypatch, tmp_path / "pids.log")
    parallel = _batches(interleaved_sizes, workers=2, size=32)
    pids = decoded_by()
    assert len({pids[str(path)] for path in interleaved_sizes[:32]}) == 2
    assert [indices for indices, _ in parallel] == [indices for indices, _ in serial]
    assert [indices for indices, _ in serial][:2] == [[i for i in range(32) if i % 3 == 0],
                                                      [i for i in range(32) if i % 3 != 0]]
    assert all(torch.equal(a, b) for (_, a), (_, b) in zip(serial, parallel))


def test_pieces_split_chunks_only_with_enough_files_per_process():
    from gpumetrics.image.reading_plan import MIN_PIECE, pieces_per_chunk

    assert [pieces_per_chunk(256, workers) for workers in (0, 1, 2, 8, 64)] == [1, 1, 2, 8, 256 // MIN_PIECE]
    assert pieces_per_chunk(MIN_PIECE - 1, 8) == 1
    table = _Pieces([list(range(5)), [], list(range(7))], 3, 2, raw_jpegs=False).table
    # (list, chunk, first, end): a piece spans neither two chunks nor two lists
    assert table == [(0, 0, 0, 2), (0, 0, 2, 3), (0, 1, 3, 5), (2, 0, 0, 2), (2, 0, 2, 3), (2, 1, 3, 5),
                     (2, 1, 5, 6), (2, 2, 6, 7)]


@pytest.mark.parametrize("workers", [0, 2])
def test_one_reader_reads_several_lists_in_order(interleaved_sizes, workers, tmp_path, monkeypatch):
    """:class:`ImageBatches` reads the lists of a run with one set of processes: each list's batches are those of
    ``same_size_batches`` on it alone; a skipped list (a feature-cache hit) is not decoded past what was handed out
    already."""
    from gpumetrics.image.io import ImageBatches

    first, second = interleaved_sizes[:20], interleaved_sizes[20:]
    alone = _batches(second, workers=0, size=4)
    decoded_by = _decoding_pids(monkeypatch, tmp_path / "pids.log")
    with ImageBatches([first, second], 4, workers=workers) as reader:
        with pytest.raises(ValueError, match="the lists are read in order: list 0 is next, not 1"):
            list(reader.batches(1))
        reader.skip(0)
        together = list(reader.batches(1))
    assert [indices for indices, _ in together] == [indices for indices, _ in alone]
    assert all(torch.equal(a, b) for (_, a), (_, b) in zip(alone, together))
    skipped = [path for path in first if str(path) in decoded_by()]
    # no workers: nothing of the skipped list; workers: at most what they were handed at the start (2 chunks each)
    assert len(skipped) <= 2 * workers * 4 < len(first)


def test_a_piece_hands_its_jpeg_bytes_over_in_one_tensor(tmp_path):
    """``decode="nvjpeg"``: a worker handed each JPEG file's bytes back as a tensor of its own — one shared-memory
    hand-over per file, ~0.3 ms each in the main process (70 ms a 256-file chunk on the 2-core CPU), which also
    decodes on the GPU. A piece holds them end to end in one tensor; the main process takes views of it."""
    from gpumetrics.image.io import _joined

    folder = tmp_path / "jpegs"
    save_random_images(folder, seed=13, n=5, size=(9, 12), suffix="jpg")
    Image.new("RGB", (5, 6), (1, 2, 3)).save(folder / "5.jpg", format="PNG")  # PIL's, not in the JPEG bytes
    paths = list_images(folder)
    pieces = _Pieces([paths], 6, 2, raw_jpegs=True)
    first = pieces[0][1]
    data, spans = first[1]
    assert isinstance(data, torch.Tensor) and data.dtype == torch.uint8 and [i for i, *_ in spans] == [0, 1, 2]
    groups, raw, failed, _ = _joined([first, pieces[1][1]], None)
    assert [i for i, _ in raw] == [0, 1, 2, 3, 4] and [indices for indices, _ in groups] == [[5]] and failed == []
    assert all(bytes(view.numpy()) == paths[i].read_bytes() for i, view in raw)
    assert raw[0][1].data_ptr() == data.data_ptr()  # a view, not a copy
    assert _Pieces([paths[5:]], 6, 1, raw_jpegs=True)[0][1][1] is None  # no JPEG: no tensor (nothing to pin)


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_pieces_joined_on_the_gpu_are_the_serial_batches(interleaved_sizes, tmp_path):
    """Pieces pinned, copied and joined on the device (PIL's pixels), and JPEG bytes handed over one tensor a piece
    (nvJPEG's): the batches of the serial path, bit for bit."""
    serial = _batches(interleaved_sizes, size=32, workers=0)
    on_gpu = _batches(interleaved_sizes, size=32, workers=2, device="cuda")
    assert [indices for indices, _ in on_gpu] == [indices for indices, _ in serial]
    assert all(b.device.type == "cuda" and torch.equal(a, b.cpu()) for (_, a), (_, b) in zip(serial, on_gpu))
    folder = tmp_path / "jpegs"
    save_random_images(folder, seed=14, n=40, size=(24, 30), suffix="jpg")
    paths = list_images(folder)
    alone = _batches(paths, size=32, workers=0, decode="nvjpeg", device="cuda")
    pieces = _batches(paths, size=32, workers=2, decode="nvjpeg", device="cuda")
    expected = [list(range(32)), list(range(32, 40))]
    assert [indices for indices, _ in pieces] == [indices for indices, _ in alone] == expected
    assert all(torch.equal(a, b) for (_, a), (_, b) in zip(alone, pieces))


def test_the_processes_end_once_the_last_piece_is_in(interleaved_sizes, monkeypatch):
    """The decoding processes are ended when the last piece arrives, before its batches are yielded — while a GPU
    still runs the previous batch — not after the last batch (joining 8 processes took 0.05–0.15 s at the end of
    every ``gpumetrics fid`` run)."""
    import multiprocessing.process

    started = []
    start = multiprocessing.process.BaseProcess.start
    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start",
                        lambda self: (started.append(self), start(self))[1])
    alive_at_each_batch = [[p.is_alive() for p in started] for _ in same_size_batches(interleaved_sizes, 8, workers=2)]
    assert len(started) == 2 and alive_at_each_batch[0] == [True, True] and alive_at_each_batch[-1] == [False, False]
