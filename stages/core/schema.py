"""Declarative table schemas: the columns, types, ranges and keys a dataset must have.

A schema is data; `stages.core.validate` turns it into a Great Expectations suite.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

ColumnKind = Literal["int", "float", "str", "bool", "array"]


@dataclass(frozen=True)
class ColumnSpec:
    """One column. For `array` columns, `min`/`max` bound the elements and `length` fixes the size."""

    name: str
    kind: ColumnKind
    nullable: bool = False
    unique: bool = False
    min: float | None = None
    max: float | None = None
    allowed: tuple[object, ...] | None = None
    length: int | None = None


@dataclass(frozen=True)
class TableSchema:
    """The expectations for one kind of table."""

    name: str
    columns: tuple[ColumnSpec, ...]
    min_rows: int = 1
    description: str = field(default="", compare=False)

    def column(self, name: str) -> ColumnSpec:
        """The spec of column `name`."""
        for spec in self.columns:
            if spec.name == name:
                return spec
        raise KeyError(name)

    @property
    def column_names(self) -> list[str]:
        """Column names in schema order."""
        return [spec.name for spec in self.columns]
