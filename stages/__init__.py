"""icml25-pipelines library: datasets, reusable methods, models and per-paper steps (never imports prefect)."""
