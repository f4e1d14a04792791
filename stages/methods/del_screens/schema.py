"""The KinDEL file schema (insitro/kindel README, `utils/data.py`): column names and table schemas.

A library table `{target}_1M.parquet` has one row per compound: its SMILES and hash, the three building-block
SMILES, three target-replicate and three matrix-replicate sequencing counts, the pre-selection load count and
`target_enrichment` (the regression label). Split tables `splits/{target}_{random|disynthon}.parquet` are
row-aligned with it (`split1..5` ∈ train / valid / test). Held-out tables `heldout/{target}_{ondna|offdna}.csv`
have the same columns plus `kd`; a compound outside the library has no hash (and no counts).
"""

from __future__ import annotations

from stages.core.schema import ColumnSpec, TableSchema

N_REPLICATES = 3
TARGET_COUNTS = tuple(f"seq_target_{r}" for r in range(1, N_REPLICATES + 1))
MATRIX_COUNTS = tuple(f"seq_matrix_{r}" for r in range(1, N_REPLICATES + 1))
LOAD = "seq_load"
ENRICHMENT = "target_enrichment"
SYNTHONS = ("smiles_a", "smiles_b", "smiles_c")
COUNT_COLUMNS = (*TARGET_COUNTS, *MATRIX_COUNTS, LOAD)
LIBRARY_COLUMNS = ("smiles", "molecule_hash", *SYNTHONS, *COUNT_COLUMNS, ENRICHMENT)
KD = "kd"
SPLIT_KINDS = ("random", "disynthon")
SPLIT_VALUES = ("train", "valid", "test")
N_SPLIT_COLUMNS = 5
SPLIT_COLUMNS = tuple(f"split{i}" for i in range(1, N_SPLIT_COLUMNS + 1))
HELDOUT_KINDS = ("ondna", "offdna")


def library_path(target: str) -> str:
    """The library table's path inside a KinDEL folder."""
    return f"{target}_1M.parquet"


def split_path(target: str, kind: str) -> str:
    """A split table's path inside a KinDEL folder."""
    return f"splits/{target}_{kind}.parquet"


def heldout_path(target: str, kind: str) -> str:
    """A held-out Kd table's path inside a KinDEL folder."""
    return f"heldout/{target}_{kind}.csv"


def _counts(nullable: bool) -> tuple[ColumnSpec, ...]:
    return tuple(ColumnSpec(name, "float", nullable=nullable, min=0) for name in COUNT_COLUMNS)


LIBRARY_SCHEMA = TableSchema(
    "kindel_library",
    (
        ColumnSpec("smiles", "str", unique=True),
        ColumnSpec("molecule_hash", "str", unique=True),
        *(ColumnSpec(name, "str") for name in SYNTHONS),
        *_counts(nullable=False),
        ColumnSpec(ENRICHMENT, "float", min=0),
    ),
    min_rows=2,
    description="one row per library compound: SMILES, hash, building blocks, counts, enrichment",
)

SPLIT_SCHEMA = TableSchema(
    "kindel_splits",
    tuple(ColumnSpec(name, "str", allowed=SPLIT_VALUES) for name in SPLIT_COLUMNS),
    min_rows=2,
    description="row-aligned with the library: split1..5 each train / valid / test",
)

HELDOUT_SCHEMA = TableSchema(
    "kindel_heldout",
    (
        ColumnSpec("smiles", "str"),
        ColumnSpec("molecule_hash", "str", nullable=True),
        *(ColumnSpec(name, "str", nullable=True) for name in SYNTHONS),
        *_counts(nullable=True),
        ColumnSpec(ENRICHMENT, "float", nullable=True, min=0),
        ColumnSpec(KD, "float", min=0),
    ),
    min_rows=2,
    description="held-out compounds with measured Kd (no hash: a compound outside the library)",
)
