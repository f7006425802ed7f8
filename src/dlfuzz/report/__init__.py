"""Reports read only the store."""
