"""``gpumetrics fid``, ``gpumetrics kid`` and ``gpumetrics clip-score``: FID / KID of two image folders (FID: or
statistics files), CLIP score of captions.

::

    gpumetrics fid PATH_A [PATH_B] [--weights FILE] [--dims 2048] [--resize pytorch-fid|clean] [--batch-size 50]
                   [--device cuda|cpu] [--speed-mode MODE] [--workers N] [--decode pil|nvjpeg]
                   [--save-stats [FILE]] [--download] [--json] [--cache-dir DIR | --no-cache] [--progress auto|on|off]
    gpumetrics kid PATH_A PATH_B [--subsets 100] [--subset-size 1000] [--degree 3] [the options of fid but --save-stats]
    gpumetrics clip-score --images DIR --captions FILE.jsonl [--backend hf|open_clip|ruclip] [--model NAME|DIR]
                          [--pretrained TAG|FILE|random] [--scale 100] [--no-clamp] [--templates ruclip]
                          [--batch-size 32] [--device cuda|cpu] [--speed-mode tf32|bf16|fp16] [--workers N]
                          [--decode pil|nvjpeg] [--download] [--json]

Images are decoded by ``--workers`` processes (default: the usable cores less one, at most 8; none on 2 cores
or fewer without a GPU) and prefetched while the network runs (:func:`gpumetrics.image.io.same_size_batches`): the
numbers do not depend on the count; ``--decode nvjpeg`` decodes JPEGs on the GPU (other formats by the workers; the
pixels differ slightly from PIL's, and the signature of the cache key says so). ``--speed-mode`` is opt-in and
recorded in the signature (:mod:`gpumetrics.image.precision`). ``--device`` defaults to ``cuda`` when torch sees a
GPU (pytorch-fid's convention), else ``cpu``.

``fid`` takes folders of images or pytorch-fid ``.npz`` statistics, like ``python -m pytorch_fid``;
``--save-stats FILE`` also writes the statistics of the folder PATH_A to FILE (only that, without PATH_B), and a bare
``--save-stats`` keeps pytorch-fid's form (PATH_A's statistics written to PATH_B). The FID states of a folder PATH_A
are cached (:mod:`gpumetrics.image.feature_cache`): a second run on the same reference images skips Inception for
them. ``clip-score`` reads
``{"image": "file name in DIR", "caption": "…"}`` records (JSON Lines). Heavy imports happen inside the handlers.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Optional

from gpumetrics.cli.options import non_negative_int, positive_int
from gpumetrics.cli.outputs import check_not_inputs, check_output
from gpumetrics.cli.progress import add_progress_argument, progress_bars


def _device(name: Optional[str]):
    """``--device``: the given one (checked), else ``cuda`` when torch sees a GPU (pytorch-fid's convention), else
    cpu."""
    import torch

    from gpumetrics.core import check_device

    if name is None:
        name = "cuda" if torch.cuda.is_available() else "cpu"
    return check_device(name, "--device")


def _pipeline_options(args: argparse.Namespace, device) -> dict:
    """``workers`` and ``decode`` of the image pipeline, checked before any file is read."""
    from gpumetrics.image.io import default_workers

    if args.decode == "nvjpeg" and device.type != "cuda":
        raise ValueError(f"--decode nvjpeg decodes JPEGs on a CUDA device; --device is {device}")
    return {"workers": default_workers(device=device) if args.workers is None else args.workers, "decode": args.decode}


def _speed_mode(value: Optional[str], clip: bool = False) -> Optional[str]:
    from gpumetrics.image.precision import PRECISIONS, parse_speed_mode

    if clip:
        return parse_speed_mode(value, "--speed-mode", PRECISIONS).name
    return parse_speed_mode(value, "--speed-mode").name


def _print(result: dict, as_json: bool) -> None:
    if as_json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        for key, value in result.items():
            print(f"{key}: {value}")


def _inception_metric(cls, args: argparse.Namespace, speed_mode: Optional[str], device, **options):
    """``cls`` (FID or KID) built from the shared Inception options on ``device``; a weights file that is not found
    is a ``ValueError`` (exit 2 with the message)."""
    try:
        return cls(feature=args.dims, weights=args.weights, resize=args.resize, download=args.download,
                   speed_mode=speed_mode, **options).to(device)
    except FileNotFoundError as err:
        raise ValueError(str(err)) from None


def _warning_notes(caught: list) -> dict:
    """The distinct ``UserWarning`` messages of a run, as the result's ``warnings`` entry (none: no entry)."""
    notes = sorted({str(w.message) for w in caught if issubclass(w.category, UserWarning)})
    return {"warnings": notes} if notes else {}


def _image_reader(paths: list, batch_size: int, device, pipeline: dict):
    """The files of the folders among ``paths`` (an ``.npz`` is none) and one started reader of them all: the
    decoding processes start once for the run, and before the network is built, which they overlap.

    The processes start under the filter the run records its warnings with (``"always"``, turned on later): a
    process keeps the filters it started with, and under Python's default ones PIL's ``DeprecationWarning`` (an IM
    file named ``.png``) was noted by ``--workers 0`` and not by ``--workers 2``.

    Returns:
        ``(reader, parts)``: the reader (close it) and, per path, its folder's list in it (None: not a folder).
    """
    import warnings

    from gpumetrics.image.io import ImageBatches, list_images

    folders = [path is not None and path.suffix != ".npz" for path in paths]
    lists = [list_images(path) for path, folder in zip(paths, folders) if folder]
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        reader = ImageBatches(lists, batch_size, device=device, **pipeline).start()
    parts = iter(range(len(lists)))
    return reader, [next(parts) if folder else None for folder in folders]


def _fid_stats(metric, path: Path, real: bool, batch_size: int, device, cache, progress, pipeline: dict,
               reader, part: Optional[int]) -> None:
    """One side of ``metric`` from a folder (list ``part`` of ``reader``; through ``cache`` when given) or an
    ``.npz``."""
    from gpumetrics.image.image_files import add_image_files

    if part is None:
        metric.load_stats(path, real=real)
        return
    add_image_files(metric, reader.lists[part], real, batch_size, device, cache=cache, root=path,
                    progress=progress, phase=f"{'real' if real else 'generated'} images ({path.name})",
                    reader=reader, part=part, **pipeline)


def run_fid(args: argparse.Namespace) -> int:
    """Handler of ``gpumetrics fid``."""
    import warnings

    from gpumetrics.image.feature_cache import FeatureCache
    from gpumetrics.image.fid import FrechetInceptionDistance

    device = _device(args.device)  # options first: a bad --device fails before any file is read
    speed_mode = _speed_mode(args.speed_mode)
    pipeline = _pipeline_options(args, device)
    first = Path(args.path_a)
    second = None if args.path_b is None else Path(args.path_b)
    if args.save_stats is True:  # pytorch-fid's form: `--save-stats FOLDER OUT.npz` writes FOLDER's statistics only
        if second is None:
            raise ValueError("--save-stats without a FILE writes the statistics of PATH_A to PATH_B: give PATH_B")
        save, second = second, None
    else:
        save = None if args.save_stats is None else Path(args.save_stats)
    if save is not None:
        check_output(str(save), "--save-stats")  # before any image is read
    if second is None and save is None:
        raise ValueError("PATH_B is required unless --save-stats FILE is given "
                         "(then PATH_A's statistics are only saved)")
    for path in (first,) if second is None else (first, second):
        if not path.exists():
            raise ValueError(f"path '{path}' does not exist (expected a folder of images or an .npz file)")
    if save is not None:  # statistics written over PATH_B before it is read would make FID(A, A)
        check_not_inputs([("--save-stats", str(save))], [("PATH_A", first), ("PATH_B", second)])
    if save is not None and (first.suffix == ".npz" or save.suffix != ".npz"):
        raise ValueError(
            f"--save-stats writes the statistics of the image folder PATH_A to an .npz file; got PATH_A '{first}' "
            f"and the output '{save}'"
        )
    if save is None and first.suffix == ".npz" and second.suffix == ".npz":
        return _fid_of_stats_files(first, second, args.json)
    reader, parts = _image_reader([first, second], args.batch_size, device, pipeline)
    with reader:
        metric = _inception_metric(FrechetInceptionDistance, args, speed_mode, device)
        cache = None if args.no_cache else FeatureCache(args.cache_dir)  # the reference side only: PATH_A
        with warnings.catch_warnings(record=True) as caught, progress_bars(args.progress) as progress:
            warnings.simplefilter("always")
            _fid_stats(metric, first, True, args.batch_size, device, cache, progress, pipeline, reader, parts[0])
            if save is not None:
                metric.save_stats(save, real=True)
            if second is not None:
                _fid_stats(metric, second, False, args.batch_size, device, None, progress, pipeline, reader, parts[1])
                reader.close()
                value = float(metric.compute())
    if second is None:
        _print({"saved": str(save), "signature": metric.signature()}, args.json)
        return 0
    result = {"fid": value, "signature": metric.signature(), **({"saved": str(save)} if save is not None else {}),
              **_warning_notes(caught)}
    _print(result, args.json)
    return 0


def _fid_of_stats_files(first: Path, second: Path, as_json: bool) -> int:
    from gpumetrics.core.signature import format_signature
    from gpumetrics.image.fid import frechet_distance, read_npz_stats

    stats = []
    for path in (first, second):
        if path.is_dir():
            raise ValueError(f"'{path}' is a directory, not an .npz statistics file")
        mu, sigma = read_npz_stats(path)
        if mu.ndim != 1 or sigma.shape != (mu.shape[0], mu.shape[0]):
            raise ValueError(f"'{path}' holds statistics of shapes {mu.shape}/{sigma.shape}, expected (d,)/(d, d)")
        stats += [mu, sigma]
    if stats[0].shape != stats[2].shape:
        raise ValueError(f"'{first}' and '{second}' hold statistics of different sizes: "
                         f"{stats[0].shape} and {stats[2].shape}")
    try:
        value = float(frechet_distance(*stats))
    except ValueError as err:  # NaN or infinite statistics: name the files
        raise ValueError(f"'{first}' / '{second}': {err}") from None
    _print({"fid": value, "signature": format_signature("fid", {"feature": stats[0].shape[0], "stats": "npz"})},
           as_json)
    return 0


def run_kid(args: argparse.Namespace) -> int:
    """Handler of ``gpumetrics kid``."""
    import warnings

    from gpumetrics.image.feature_cache import FeatureCache
    from gpumetrics.image.kid import KernelInceptionDistance

    device = _device(args.device)  # options first: a bad option fails before any file is read
    speed_mode = _speed_mode(args.speed_mode)
    pipeline = _pipeline_options(args, device)
    first, second = Path(args.path_a), Path(args.path_b)
    for path in (first, second):
        if not path.is_dir():
            raise ValueError(f"path '{path}' is not a folder of images (KID needs the features, not .npz statistics)")
    reader, parts = _image_reader([first, second], args.batch_size, device, pipeline)
    with reader:
        metric = _inception_metric(KernelInceptionDistance, args, speed_mode, device, subsets=args.subsets,
                                   subset_size=args.subset_size, degree=args.degree)
        cache = None if args.no_cache else FeatureCache(args.cache_dir)  # the reference side only: PATH_A
        with warnings.catch_warnings(record=True) as caught, progress_bars(args.progress) as progress:
            warnings.simplefilter("always")
            _fid_stats(metric, first, True, args.batch_size, device, cache, progress, pipeline, reader, parts[0])
            _fid_stats(metric, second, False, args.batch_size, device, None, progress, pipeline, reader, parts[1])
            reader.close()
            mean, std = metric.compute()
    _print({"kid_mean": float(mean), "kid_std": float(std), "signature": metric.signature(), **_warning_notes(caught)},
           args.json)
    return 0


def _read_caption_records(path: Path) -> list[tuple[str, str]]:
    from gpumetrics.harness.records import read_field_records

    return read_field_records(path, ("image", "caption"), '{"image": "<file>", "caption": "<text>"}')


def run_clip_score(args: argparse.Namespace) -> int:
    """Handler of ``gpumetrics clip-score``."""
    from gpumetrics.image.clip_score import CLIPScore
    from gpumetrics.image.io import ImageBatches

    device = _device(args.device)
    speed_mode = _speed_mode(args.speed_mode, clip=True)
    pipeline = _pipeline_options(args, device)
    folder = Path(args.images)
    if not folder.is_dir():
        raise ValueError(f"--images '{folder}' is not a folder")
    records = _read_caption_records(Path(args.captions))
    paths = [folder / name for name, _ in records]
    missing = [str(p) for p in paths if not os.path.isfile(p)]  # False for a name too long too (no OSError)
    if missing:
        raise ValueError(f"{len(missing)} image file(s) of {args.captions} are missing, e.g. '{missing[0]:.300}'")
    model, pretrained = args.model, args.pretrained
    if args.backend == "hf" and pretrained not in (None, "random"):
        # an hf model is a whole directory (save_pretrained): --pretrained DIR names the model, weights included
        if not Path(pretrained).is_dir():
            raise ValueError(f"--pretrained '{pretrained}': the hf backend takes a model directory written by "
                             "save_pretrained (weights, tokenizer, preprocessor_config.json)")
        model, pretrained = pretrained, None
    with ImageBatches([paths], args.batch_size, device=device, **pipeline) as reader:
        reader.start()  # decoding overlaps building the model
        metric = CLIPScore(args.backend, model, pretrained, scale=args.scale, download=args.download,
                           clamp=not args.no_clamp, templates=args.templates, speed_mode=speed_mode).to(device)
        for indices, images in reader.batches(0):
            metric.update(images, [records[i][1] for i in indices])
    _print({"clip_score": float(metric.compute()), "n": len(records), "signature": metric.signature()}, args.json)
    return 0


_DEVICE_HELP = ("cuda when torch sees a GPU (pytorch-fid's convention), else cpu; or cuda:N, mps … (must exist "
                "here)")


def _add_pipeline_arguments(parser: argparse.ArgumentParser, speed_modes: str) -> None:
    parser.add_argument("--device", default=None, help=f"default: {_DEVICE_HELP}")
    parser.add_argument("--speed-mode", metavar="MODE", help=speed_modes)
    parser.add_argument(
        "--workers", type=non_negative_int, metavar="N",
        help="image-decoding processes (default: the usable cores less one, at most 8, none on 2 cores or fewer "
             "without a GPU; 0: decode in this process); the numbers do not depend on it",
    )
    parser.add_argument(
        "--decode", default="pil", choices=("pil", "nvjpeg"),
        help="pil (default, pytorch-fid's pixels) or nvjpeg: JPEGs decoded on the CUDA device (faster; pixels differ "
             "slightly from PIL's); other formats still by the workers",
    )


_INCEPTION_SPEED_MODES = ("opt-in, recorded in the signature: tf32, bf16, fp16, channels_last, compile, a precision "
                          "joined with + to channels_last/compile (bf16+channels_last), or fastest; default: true "
                          "float32 on every device")


def _add_inception_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--weights", help="Inception weight file (default: the pinned pytorch-fid weights)")
    parser.add_argument("--dims", type=int, default=2048, choices=(64, 192, 768, 2048),
                        help="Inception feature size (default 2048, pytorch-fid's --dims)")
    parser.add_argument("--resize", default="pytorch-fid", choices=("pytorch-fid", "clean", "aij2022"),
                        help="resize mode: pytorch-fid (default), clean (clean-fid's PIL-bicubic) or aij2022 (the "
                             "AIJ-2022 organisers' PIL resize to 256x256 first)")
    parser.add_argument("--batch-size", type=positive_int, default=50, help="images per forward (default 50)")
    _add_pipeline_arguments(parser, _INCEPTION_SPEED_MODES)


def _add_inception_output_arguments(parser: argparse.ArgumentParser) -> None:
    """What ``fid`` and ``kid`` share after their own options: weights download, JSON output, the reference feature
    cache, progress bars."""
    parser.add_argument("--download", action="store_true", help="allow downloading the pinned weights if not found")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    _add_cache_arguments(parser)
    add_progress_argument(parser)


def _add_cache_arguments(parser: argparse.ArgumentParser) -> None:
    cache = parser.add_mutually_exclusive_group()
    cache.add_argument(
        "--cache-dir", metavar="DIR",
        help="cache of PATH_A's feature states, keyed by its files' contents and the extractor "
        "(default: $GPUMETRICS_HOME/features, else ~/.cache/gpumetrics/features)",
    )
    cache.add_argument("--no-cache", action="store_true", help="neither read nor write the feature cache")


def add_kid_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``kid`` to a ``gpumetrics`` argument parser."""
    parser = subparsers.add_parser(
        "kid", help="kernel inception distance between two image folders (torchmetrics' / clean-fid's KID)",
        description="KID of PATH_A (real) and PATH_B (generated), two folders of images: the mean and standard "
                    "deviation of the polynomial-kernel MMD over random subsets of the Inception features.",
    )
    parser.add_argument("path_a", metavar="PATH_A", help="folder of real images")
    parser.add_argument("path_b", metavar="PATH_B", help="folder of generated images")
    _add_inception_arguments(parser)
    parser.add_argument("--subsets", type=positive_int, default=100, help="random subsets (default 100)")
    parser.add_argument("--subset-size", type=positive_int, default=1000,
                        help="samples per subset (default 1000; at most the smaller folder's count)")
    parser.add_argument("--degree", type=positive_int, default=3, help="degree of the polynomial kernel (default 3)")
    _add_inception_output_arguments(parser)
    parser.set_defaults(handler=run_kid, result_on_stdout=True)
    return parser


def add_fid_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``fid`` to a ``gpumetrics`` argument parser."""
    parser = subparsers.add_parser(
        "fid", help="Fréchet inception distance between two image folders or .npz statistics (pytorch-fid's number)",
        description="FID of PATH_A (real) and PATH_B (generated): folders of images or pytorch-fid .npz statistics.",
    )
    parser.add_argument("path_a", metavar="PATH_A", help="folder of real images or .npz statistics")
    parser.add_argument("path_b", metavar="PATH_B", nargs="?", help="folder of generated images or .npz statistics")
    _add_inception_arguments(parser)
    parser.add_argument(
        "--save-stats", nargs="?", const=True, metavar="FILE",
        help="also write the statistics of folder PATH_A to FILE (.npz); without PATH_B only that is done. Without "
        "FILE (pytorch-fid's form, `PATH_A OUT.npz --save-stats`): write PATH_A's statistics to PATH_B",
    )
    _add_inception_output_arguments(parser)
    parser.set_defaults(handler=run_fid, result_on_stdout=True)
    return parser


def add_clip_score_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``clip-score`` to a ``gpumetrics`` argument parser."""
    parser = subparsers.add_parser(
        "clip-score", help="CLIP score of images and their captions",
        description='Mean max(scale·cos, 0) over the {"image", "caption"} records of --captions.',
    )
    parser.add_argument("--images", required=True, help="folder holding the image files the records name")
    parser.add_argument("--captions", required=True, help='JSON Lines of {"image": "<file>", "caption": "<text>"}')
    parser.add_argument("--backend", default="hf", choices=("hf", "open_clip", "ruclip"),
                        help="the CLIP implementation: hf (default, Hugging Face transformers), open_clip or ruclip")
    parser.add_argument("--model", default="openai/clip-vit-base-patch32",
                        help="hf id/dir (default openai/clip-vit-base-patch32), open_clip arch/config, or a ruCLIP "
                        "checkpoint folder / name")
    parser.add_argument(
        "--pretrained", default=None, metavar="PATH",
        help="hf: a local model directory (replaces --model); open_clip: a tag or checkpoint file; ruclip: a "
        "state_dict file (default: the folder's pytorch_model.bin); 'random' for tests",
    )
    parser.add_argument("--scale", type=float, default=100.0, help="100 (torchmetrics), 1 (raw cosine), 2.5 (paper)")
    parser.add_argument("--no-clamp", action="store_true", help="keep negative cosines (AIJ-2022's ruCLIP term)")
    parser.add_argument("--templates", default=None, choices=("ruclip",),
                        help="average the text features over ruclip Predictor's six prompts (AIJ-2022)")
    parser.add_argument("--download", action="store_true", help="allow downloading the model if not found locally")
    parser.add_argument("--batch-size", type=positive_int, default=32, help="images per forward (default 32)")
    _add_pipeline_arguments(parser, "opt-in, recorded in the signature: tf32, bf16 or fp16 for the CLIP encoders; "
                                    "default: true float32 on every device")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(handler=run_clip_score, result_on_stdout=True)
    return parser


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """The ``fid``, ``kid`` and ``clip-score`` subcommands."""
    add_fid_parser(subparsers)
    add_kid_parser(subparsers)
    add_clip_score_parser(subparsers)
