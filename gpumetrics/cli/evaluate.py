"""``gpumetrics evaluate CONFIG.yaml``, ``gpumetrics report REPORT.json`` and ``gpumetrics list``: configs →
registry → metrics → report (a table, JSON, HTML)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Optional

from gpumetrics.cli.options import console, positive_int
from gpumetrics.cli.outputs import (
    STDOUT,
    check_evaluate_outputs,
    check_not_inputs,
    check_output,
    default_checkpoint_dir,
)
from gpumetrics.cli.progress import add_progress_argument, progress_bars

def _distributed(device: Optional[str]) -> tuple[Optional[str], bool]:
    """Join the process group when started by ``torchrun`` (``TORCHELASTIC_RUN_ID`` set, one process too) or with
    ``WORLD_SIZE`` > 1: gloo on CPU, NCCL on CUDA, each process on ``cuda:LOCAL_RANK``. Returns the device to use and
    whether this call initialised the group."""
    import torch.distributed as dist

    launched = "TORCHELASTIC_RUN_ID" in os.environ and "MASTER_ADDR" in os.environ
    if (int(os.environ.get("WORLD_SIZE", "1")) <= 1 and not launched) or dist.is_initialized():
        return device, False
    if device is not None and device.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():  # the device check names the problem (no CUDA here)
            return device, False
        device = f"cuda:{int(os.environ.get('LOCAL_RANK', '0'))}" if device == "cuda" else device
        torch.cuda.set_device(device)  # NCCL's object collectives and barrier use the current device
        dist.init_process_group("nccl")
    else:
        dist.init_process_group("gloo")
    return device, True


#: exit status of ``evaluate --strict`` when a prediction is missing (2 is a user error, 130 an interrupt)
EXIT_MISSING = 3


def _holds_no_record(path: str) -> bool:
    """Whether a predictions file is empty: 0 bytes, only whitespace, or an empty JSON array / object."""
    try:
        if os.path.getsize(path) > 1 << 16:
            return False
        text = Path(path).read_text(encoding="utf-8-sig", errors="replace")
    except OSError:
        return False
    return "".join(text.split()) in ("", "[]", "{}")


#: the samples a task scored without a usable image, by the prefix of its counts (``<prefix>_failed``,
#: ``<prefix>_undecodable``): what they are (``{kinds}``: how many of them are which kind) and what was done with them
_FAILED_IMAGES = {
    "images": ("generated images are missing or cannot be decoded{kinds}",
               "left out of the generated set (missing_image: zero)"),
    "clip": ("images are missing or cannot be decoded{kinds}", "CLIP 0 for each (missing_image: zero)"),
}
#: the metrics whose prediction is an image file: their records without prediction are among the failed samples
_IMAGE_PREDICTIONS = ("fid", "kid", "clip_score", "s_image_generation")
#: the AIJ-2022 image tasks' ``clip`` counts: the organisers' try/except scores these 0, silently
_AIJ_FAILED_IMAGES = ("samples have no image to score (none named, no such file, a file that cannot be decoded, or a "
                      "caption that is not the first element{kinds})", "CLIP 0 for each, as the organisers' script")


def _failed_images_line(task) -> Optional[str]:
    """The WARNING line of a task that scored samples without a usable image, or None. Under ``missing_image: zero``
    a record without prediction is one of them where the prediction is the image (it names none)."""
    details = task.details if isinstance(task.details, dict) else {}
    for prefix, (what, outcome) in _FAILED_IMAGES.items():
        failed = details.get(f"{prefix}_failed")
        if failed:
            break
    else:
        return None
    if prefix == "clip" and task.metric != "clip_score":
        what, outcome = _AIJ_FAILED_IMAGES
    undecodable = details.get(f"{prefix}_undecodable")
    kinds = ([f"{int(undecodable)} of them a file that cannot be decoded"] if undecodable else []) + (
        [f"{task.missing} of them a record without prediction"] if task.missing and task.metric in _IMAGE_PREDICTIONS
        else [])
    what = what.format(kinds="".join(f", {kind}" for kind in kinds))
    return f"WARNING: task {task.name!r}: {int(failed)} of {task.n} {what}: {outcome}"


def _missing_warnings(report) -> list[str]:
    """Loud lines for tasks whose every prediction is missing (an empty predictions file scores the documented
    empty answer for every sample: a number, but not the model's)."""
    lines = []
    for task in report.tasks:
        if task.n and task.missing == task.n and task.predictions:
            if _holds_no_record(task.predictions):
                lines.append(f"WARNING: predictions file {task.predictions} holds no record: task {task.name!r} scored "
                             f"all {task.n} samples as missing predictions")
            else:
                lines.append(f"WARNING: task {task.name!r}: none of the {task.n} references has a prediction in "
                             f"{task.predictions} (ids from another set?); all were scored as missing")
        failed_images = _failed_images_line(task)
        if failed_images:
            lines.append(failed_images)
    return lines


def _strict_failure(report) -> Optional[str]:
    missing = [(task.name, task.missing) for task in report.tasks if task.missing]
    if not missing:
        return None
    total = sum(count for _, count in missing)
    listed = ", ".join(f"{name}: {count}" for name, count in missing)
    return f"--strict: {total} prediction(s) missing ({listed})"


def _inputs(config) -> list[tuple[str, Optional[Path]]]:
    """The files a run reads, named for an error: the config, each task's data files and the files its options name
    (``synonyms``, ``embeddings``, ``weights``, a suite's ``inputs`` … — resolved against the config's folder when
    it loads); an output may be none of them."""
    inputs: list[tuple[str, Optional[Path]]] = [("the config", config.path)]
    for task in config.tasks:
        inputs += [(f"the predictions of task {task.name!r}", task.predictions),
                   (f"the references of task {task.name!r}", task.references)]
        inputs += [(f"option `{key}` of task {task.name!r}", path) for key, path in task.option_files()]
    return inputs


def _check(args: argparse.Namespace) -> int:
    """``--check``: the config loaded (options, model files), every task's files read, joined and checked; nothing
    scored, nothing written."""
    from gpumetrics.harness.config import load_config
    from gpumetrics.harness.report import data_check_table
    from gpumetrics.harness.runner import check_data

    given = [flag for flag, value in (("--output", args.output), ("--html", args.html), ("--resume", args.resume),
                                      ("--checkpoint-dir", args.checkpoint_dir)) if value]
    if given:
        raise ValueError(f"--check scores nothing and writes nothing: leave out {', '.join(given)}")
    config = load_config(args.config)
    with progress_bars(args.progress) as progress:
        checks = check_data(config, progress)
    console().print(data_check_table(config.name, checks))
    missing = sum(check.missing for check in checks)
    if args.strict and missing:
        listed = ", ".join(f"{check.name}: {check.missing}" for check in checks if check.missing)
        print(f"gpumetrics evaluate: error: --strict: {missing} prediction(s) missing ({listed})", file=sys.stderr)
        return EXIT_MISSING
    return 0


def _evaluate(args: argparse.Namespace) -> int:
    import torch.distributed as dist

    if args.check:
        return _check(args)

    from gpumetrics.harness.config import load_config
    from gpumetrics.harness.report import results_table, write_json_report
    from gpumetrics.harness.runner import evaluate

    to_stdout = args.output == STDOUT
    check_evaluate_outputs(args.output, args.html, args.checkpoint_dir, args.no_checkpoint)  # before any data is read
    out = console(stderr=to_stdout)  # `-o -`: stdout carries the JSON report alone; the table goes to stderr
    config = load_config(args.config)
    check_not_inputs([("--output", args.output), ("--html", args.html)], _inputs(config))
    # `--device ''` is checked (and refused) as the flag, not taken for "not given"
    device, owns_group = _distributed(args.device if args.device is not None else config.device)
    try:
        rank = dist.get_rank() if dist.is_initialized() else 0
        checkpoint_dir = args.checkpoint_dir
        if checkpoint_dir is None and not args.no_checkpoint:
            checkpoint_dir = default_checkpoint_dir(args.output)
        with progress_bars(args.progress if rank == 0 else "off") as progress:
            report = evaluate(
                # the config's own `device:` goes in as the config's (its errors name the config, not --device)
                config, device=device if args.device is not None or device != config.device else None,
                batch_size=args.batch_size, progress=progress,
                checkpoint_dir=None if args.no_checkpoint else checkpoint_dir, checkpoint_every=args.checkpoint_every,
                resume=args.resume, samples=bool(args.html),
                argv=[a for a in args.argv if a != "--resume"],
            )
        if rank == 0:
            for line in _missing_warnings(report):
                print(line, file=sys.stderr, flush=True)
            out.print(results_table(report))
            if to_stdout:
                print(json.dumps(report.to_dict(), ensure_ascii=False, indent=2), flush=True)
            elif args.output:
                path = write_json_report(report, args.output)
                out.print(f"report written to {path}")
            if args.html:
                from gpumetrics.harness.html import write_html_report

                path = write_html_report(report.to_dict(), args.html)
                out.print(f"HTML report written to {path}")
        if dist.is_initialized():
            dist.barrier()  # the report is written: every process may drop its checkpoint
        if report.checkpoint is not None:
            report.checkpoint.remove()
    finally:
        if owns_group:
            dist.destroy_process_group()
    failure = _strict_failure(report) if args.strict else None
    if failure is not None:  # the report is written all the same
        if rank == 0:
            print(f"gpumetrics evaluate: error: {failure}", file=sys.stderr)
        return EXIT_MISSING
    return 0


def _report(args: argparse.Namespace) -> int:
    from gpumetrics.harness.html import render_html, write_html_report

    check_output(args.html, "--html")
    check_not_inputs([("--html", args.html)], [("the JSON report read", Path(args.report))])
    if Path(args.report).is_dir():
        raise ValueError(f"{args.report} is a directory, not a JSON report")
    from gpumetrics.core.files import open_input

    with open_input(args.report) as handle:  # /dev/zero is refused, not read into memory
        data = handle.read()
    try:
        report = json.loads(data.decode("utf-8-sig"))  # a report saved again by a Windows editor starts with a BOM
    except UnicodeDecodeError as err:
        raise ValueError(f"{args.report}: not a JSON report (not UTF-8 text: {err.reason} at byte "
                         f"{err.start})") from None
    except json.JSONDecodeError as err:
        raise ValueError(f"{args.report}: not a JSON file ({err})") from None
    if not isinstance(report, dict) or not isinstance(report.get("tasks"), list):
        raise ValueError(f"{args.report}: not a gpumetrics JSON report (expected an object with a 'tasks' list)")
    try:
        page = render_html(report)
    except ValueError as err:  # a field the page cannot show (a histogram without its bins)
        raise ValueError(f"{args.report}: not a gpumetrics JSON report ({err})") from None
    path = write_html_report(report, args.html, page)
    console().print(f"HTML report written to {path}")
    return 0


def _list(args: argparse.Namespace) -> int:
    from gpumetrics.harness.report import registry_listing, registry_tables

    if args.json:
        print(json.dumps(registry_listing(), ensure_ascii=False, indent=2))
        return 0
    out = console()
    for table in registry_tables():
        out.print(table)
    return 0


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """The ``evaluate``, ``report`` and ``list`` subcommands."""
    evaluate = subparsers.add_parser(
        "evaluate",
        help="score prediction files against reference files as described by a YAML config",
        description="Join predictions and references by id for every task of CONFIG, score them, print a table.",
    )
    evaluate.add_argument("config", help="YAML config naming tasks, metrics, options and data files")
    evaluate.add_argument(
        "--output", "-o",
        help="write the JSON report (scores, signatures, counts, timing) here; `-` writes it to stdout (the table then "
             "goes to stderr); checked before anything is scored",
    )
    evaluate.add_argument(
        "--device", help="cpu (default), cuda, cuda:N, mps … (must exist here); overrides the config's `device`"
    )
    evaluate.add_argument("--batch-size", type=positive_int, help="samples per metric update (default: config or 1024)")
    add_progress_argument(evaluate)
    evaluate.add_argument(
        "--checkpoint-dir",
        help="save resumable checkpoints here (default: beside --output, REPORT.checkpoint/; none with `-o -`); "
             "removed when the run ends",
    )
    evaluate.add_argument("--no-checkpoint", action="store_true", help="write no checkpoints")
    evaluate.add_argument(
        "--checkpoint-every", type=positive_int, default=100, metavar="N",
        help="batches between two checkpoints (default 100; one is also written after every task)",
    )
    evaluate.add_argument(
        "--resume", action="store_true",
        help="continue from the checkpoint of an interrupted run with the same config, files and options",
    )
    evaluate.add_argument(
        "--strict", action="store_true",
        help=f"exit with status {EXIT_MISSING} when any prediction is missing (the report and table are still "
             "written); without it a missing prediction is scored as the metric's empty answer and counted",
    )
    evaluate.add_argument("--html", help="write a self-contained HTML page of the report here (checked before scoring)")
    evaluate.add_argument(
        "--check", action="store_true",
        help="check the config (options, model files) and read, join and check every task's files; score nothing, "
             "write nothing; print each task's samples and missing predictions (with --strict: exit 3 when one is "
             "missing)",
    )
    evaluate.set_defaults(handler=_evaluate)

    report = subparsers.add_parser(
        "report", help="render a saved JSON report as HTML",
        description="Render the JSON report of `gpumetrics evaluate --output` as one self-contained HTML page.",
    )
    report.add_argument("report", help="a JSON report written by `gpumetrics evaluate --output`")
    report.add_argument("--html", required=True, help="the HTML page to write")
    report.set_defaults(handler=_report)

    listing = subparsers.add_parser("list", help="list the task metrics and suites configs can name")
    listing.add_argument("--json", action="store_true", help="print machine-readable JSON")
    listing.set_defaults(handler=_list, result_on_stdout=True)
