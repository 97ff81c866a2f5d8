"""io layer."""
