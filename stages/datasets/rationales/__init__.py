"""Datasets with rationale annotations: generated reviews with planted spans, BA graphs with a house or cycle
motif, and a reader of the beer/hotel review annotation format."""
