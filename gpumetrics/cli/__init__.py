"""The ``gpumetrics`` command line (``python -m gpumetrics`` or the ``gpumetrics`` script)::

    gpumetrics evaluate CONFIG.yaml [--output report.json|-] [--html report.html] [--device cpu|cuda] [--strict]
    gpumetrics score -m METRIC -r REFS.txt [-r REFS2.txt …] [HYPS.txt] [--opt key=value …] [--json]
    gpumetrics report REPORT.json --html report.html
    gpumetrics list [--json]
    gpumetrics fid PATH_A [PATH_B] [...]
    gpumetrics kid PATH_A PATH_B [...]
    gpumetrics clip-score --images DIR --captions FILE.jsonl [...]

``main`` (in :mod:`gpumetrics.cli.main`) builds the parser from the subcommand modules of this package:
:mod:`~gpumetrics.cli.evaluate` (evaluate, report, list), :mod:`~gpumetrics.cli.score` (score) and
:mod:`~gpumetrics.cli.image` (fid, kid, clip-score); :mod:`~gpumetrics.cli.outputs` checks output paths before any
work. Metrics never import the CLI; the CLI imports metrics inside its handlers, so that ``--help`` and ``list``
import neither torch nor torchmetrics.
"""

from gpumetrics.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
