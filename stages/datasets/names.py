"""Params fields that name a registered data source: checked when params load, a choice in the run form."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import AfterValidator

from stages.datasets.registry import names_of


@dataclass(frozen=True)
class SourceOf:
    """Field metadata: the value names a registered source of `modality` (`stages/datasets/sources/`). The
    run form (`flows.form_schema`) turns such a field, or a list of them, into a choice of those names."""

    modality: str

    def choices(self) -> list[str]:
        """The registered sources of this modality."""
        return names_of(self.modality)

    def check(self, name: str) -> str:
        """`name` if it is one of `choices()`, else a ValueError listing them."""
        valid = self.choices()
        if name not in valid:
            raise ValueError(f"unknown dataset '{name}'; {self.modality} sources: {', '.join(valid)}")
        return name


def source_name(modality: str) -> Any:
    """The type of a field naming a registered source of `modality`."""
    marker = SourceOf(modality)
    return Annotated[str, AfterValidator(marker.check), marker]


GraphSourceName = source_name("graphs")
"""A registered graph source (TU-format folders, the controls, B3DB)."""
