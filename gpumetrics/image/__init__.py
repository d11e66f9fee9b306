"""image metrics."""
