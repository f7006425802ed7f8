"""The campaign store: one SQLite file (WAL) plus content-addressed blobs and bug folders."""
