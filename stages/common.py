"""The `common:` section of params.yaml, shared by every pipeline: the base seed and the data sources."""

from __future__ import annotations

from typing import Any

from pydantic import Field, create_model

from stages.core.params import StrictModel
from stages.datasets.registry import get_source, source_names


def datasets_model() -> type[StrictModel]:
    """`common.datasets`: one field per registered source, typed by that source's params model.

    A source left out gets its defaults, except optional ones (a user's path), which stay unset (None).
    """
    fields: dict[str, Any] = {}
    for name in source_names():
        source = get_source(name)
        fields[name] = (
            (source.params_model | None, None)
            if source.optional
            else (source.params_model, source.params_model())
        )
    return create_model("DatasetsParams", __base__=StrictModel, **fields)


DatasetsParams = datasets_model()


class CommonParams(StrictModel):
    """Settings shared by every paper: the base seed and where each raw dataset comes from."""

    seed: int = Field(
        0,
        ge=0,
        lt=2**32,
        description="Base seed (< 2³², what NumPy and torch accept); each paper derives its own.",
    )
    threads: int = Field(
        2,
        ge=1,
        description="torch threads of every stage; trained outputs are byte-identical at the same count",
    )
    datasets: DatasetsParams = DatasetsParams()  # type: ignore[valid-type]
