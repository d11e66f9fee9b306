"""The ``gpumetrics`` command line (``python -m gpumetrics`` or the ``gpumetrics`` script)::

    gpumetrics evaluate CONFIG.yaml [--output report.json] [--html report.html] [--device cpu|cuda] [--batch-size N]
    gpumetrics report REPORT.json --html report.html
    gpumetrics list [--json]
    gpumetrics fid PATH_A [PATH_B] [...]
    gpumetrics clip-score --images DIR --captions FILE.jsonl [...]

``main`` (in :mod:`gpumetrics.cli.main`) builds the parser from the subcommand modules of this package:
:mod:`~gpumetrics.cli.evaluate` (evaluate, report, list) and :mod:`~gpumetrics.cli.image` (fid, clip-score).
Metrics never import the CLI; the CLI imports metrics inside its handlers.
"""

from gpumetrics.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
