"""classification metrics."""
