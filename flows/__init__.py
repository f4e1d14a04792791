"""Prefect orchestration of the DVC pipelines. Tasks run DVC stages; DVC stays the record of what ran."""
