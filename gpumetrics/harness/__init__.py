"""The evaluation harness, which knows no metric: configs (:mod:`~gpumetrics.harness.config`), the runner
(:mod:`~gpumetrics.harness.runner`: resumable, streaming, torchrun-aware), checkpoints, per-sample summaries, the
JSON/HTML reports, the one record reader/joiner (:mod:`~gpumetrics.harness.records`) and the registries
(:mod:`~gpumetrics.harness.registry`) that :mod:`gpumetrics.catalog` and :mod:`gpumetrics.suites` fill.

Submodules are imported on use; this package imports nothing.
"""
