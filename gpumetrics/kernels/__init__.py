"""Batched tensor kernels shared by metrics. Nothing here imports a metric."""
