"""The `common:` section of params.yaml, shared by every pipeline."""

from __future__ import annotations

from pydantic import Field

from stages.core.params import StrictModel
from stages.datasets.sources import DatasetsParams


class CommonParams(StrictModel):
    """Settings shared by every paper: the base seed and where each raw dataset comes from."""

    seed: int = Field(0, ge=0, description="Base seed; each paper derives its own seeds from it.")
    datasets: DatasetsParams = DatasetsParams()
