"""One module per data source, each defining `SOURCE` (registered in `stages.datasets.registry`)."""
