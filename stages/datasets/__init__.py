"""Dataset loaders and generators; each returns a Polars table that passes its schema."""
