"""Benchmark cases; every module here is imported by the runner and registers its cases."""
