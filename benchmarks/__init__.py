"""Benchmark harness: `python -m benchmarks`."""
