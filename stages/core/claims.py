"""The claims file format: each paper's `claims` stage checks the paper's own claims at this scale."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from stages.core.io import read_json, write_json


class Claim(BaseModel):
    """One checked claim: what the paper says, what was measured, the criterion and whether it holds."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9_]+$")
    statement: str = Field(min_length=1)
    measured: dict[str, Any]
    criterion: str = Field(min_length=1)
    holds: bool


_CLAIMS = TypeAdapter(list[Claim])


def write_claims(claims: list[Claim], path: str | Path) -> None:
    """Write `claims.json` (a list of claims, validated, ids unique)."""
    ids = [claim.id for claim in claims]
    if len(ids) != len(set(ids)):
        raise ValueError(f"duplicate claim ids: {ids}")
    write_json([claim.model_dump() for claim in claims], path)


def read_claims(path: str | Path) -> list[Claim]:
    """Read and validate a `claims.json` file."""
    return _CLAIMS.validate_python(read_json(path))
