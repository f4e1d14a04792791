"""The shared dataset stages `data-<name>`, one per registered source, generated from the source registry."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stages.core.steps import Pipeline, Step
from stages.datasets.registry import get_source, source_module, source_names


def source_step(name: str) -> Step:
    """The `data-<name>` step of one source: its modality's step function bound to the source."""
    source = get_source(name)
    return Step(
        name=name,
        run=source.modality.run,
        args={"source": name},
        modules=(source_module(name),),
        deps=source.deps,
        dynamic_deps=source.dynamic_deps,
        outs=source.outputs(),
        params=(f"common.datasets.{name}",),
        description=source.description,
    )


def configured(name: str, raw_params: Mapping[str, Any]) -> bool:
    """An optional source has a stage only when params.yaml sets `common.datasets.<name>`."""
    datasets = (raw_params.get("common") or {}).get("datasets") or {}
    return not get_source(name).optional or name in datasets


def data_pipeline(raw_params: Mapping[str, Any]) -> Pipeline:
    """The `data-*` stages for the sources in use: every non-optional source and the configured optional ones."""
    steps = tuple(source_step(name) for name in source_names() if configured(name, raw_params))
    return Pipeline(
        id="data",
        package="stages.datasets",
        params_section="common",
        params_model="stages.common:CommonParams",
        steps=steps,
    )
