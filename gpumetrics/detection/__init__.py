"""detection metrics."""
