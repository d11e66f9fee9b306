"""``python -m gpumetrics`` runs the command-line interface (see ``gpumetrics.cli``)."""

import sys

from gpumetrics.cli import main

sys.exit(main())
