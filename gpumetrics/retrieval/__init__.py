"""retrieval metrics."""
