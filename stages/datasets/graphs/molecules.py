"""B3DB blood–brain-barrier molecules (PyPI `qc-b3db`) as RDKit molecular graphs.

Nodes are heavy atoms with a 32-dimensional one-hot atom description (element, degree, formal charge,
attached hydrogens, hybridisation, aromaticity, ring membership); edges are bonds; the label is BBB+ (1) or
BBB− (0). SMILES RDKit cannot parse are dropped and counted, never replaced.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from stages.core.errors import DataValidationError, MissingSourceError
from stages.datasets.graphs.table import GraphTables, build_tables

ELEMENTS = ("C", "N", "O", "S", "F", "Cl", "Br", "I", "P", "B", "Si")
DEGREES = 6
CHARGES = (-1, 0, 1)
HYDROGENS = 5
HYBRIDISATIONS = ("SP", "SP2", "SP3")
ATOM_FEATURES = len(ELEMENTS) + 1 + DEGREES + len(CHARGES) + HYDROGENS + len(HYBRIDISATIONS) + 1 + 2
LABELS = {"BBB-": 0, "BBB+": 1}
SMILES_COLUMN, LABEL_COLUMN = "SMILES", "BBB+/BBB-"


def b3db_file() -> Path:
    """Path of `B3DB_classification.tsv` inside the installed `qc-b3db` package."""
    try:
        import B3DB
    except ImportError:
        raise MissingSourceError("B3DB is not installed: `pip install qc-b3db` (make setup does)") from None
    path = Path(B3DB.__file__).parent / "B3DB_classification.tsv"
    if not path.is_file():
        raise MissingSourceError(f"{path}: missing from the installed qc-b3db package")
    return path


@dataclass(frozen=True)
class MoleculeGraphs:
    """The molecule graphs and what was dropped on the way."""

    tables: GraphTables
    smiles: list[str]
    unparsable: int


def read_b3db(path: Path, max_molecules: int | None, seed: int) -> pl.DataFrame:
    """The SMILES and labels of B3DB, optionally a label-stratified sample of `max_molecules` rows."""
    table = pl.read_csv(path, separator="\t", columns=[SMILES_COLUMN, LABEL_COLUMN])
    unknown = table.filter(~pl.col(LABEL_COLUMN).is_in(list(LABELS)))
    if unknown.height:
        raise DataValidationError(
            f"{path}: column '{LABEL_COLUMN}' holds {unknown[LABEL_COLUMN][0]!r}; expected one of {list(LABELS)}"
        )
    if max_molecules is None or max_molecules >= table.height:
        return table
    from sklearn.model_selection import train_test_split

    keep, _ = train_test_split(
        np.arange(table.height),
        train_size=max_molecules,
        stratify=table[LABEL_COLUMN].to_numpy(),
        random_state=seed,
    )
    return table[np.sort(keep)]


def molecules_to_graphs(smiles: list[str], labels: list[int]) -> MoleculeGraphs:
    """RDKit graphs of the SMILES (heavy atoms, bonds); unparsable SMILES are dropped and counted."""
    from rdkit import Chem, RDLogger

    RDLogger.DisableLog("rdApp.*")
    features, edges, kept_labels, kept_smiles = [], [], [], []
    for text, label in zip(smiles, labels, strict=True):
        molecule = Chem.MolFromSmiles(text)
        if molecule is None or molecule.GetNumAtoms() == 0:
            continue
        features.append(np.stack([atom_features(atom) for atom in molecule.GetAtoms()]))
        bonds = [(bond.GetBeginAtomIdx(), bond.GetEndAtomIdx()) for bond in molecule.GetBonds()]
        edges.append(np.asarray(bonds, dtype=np.int64).reshape(-1, 2))
        kept_labels.append(label)
        kept_smiles.append(text)
    tables = build_tables(np.asarray(kept_labels, dtype=np.int64), features, edges)
    return MoleculeGraphs(tables, kept_smiles, unparsable=len(smiles) - len(kept_smiles))


def atom_features(atom) -> np.ndarray:
    """The one-hot description of one RDKit atom (length ATOM_FEATURES)."""
    symbol = atom.GetSymbol()
    element = [symbol == name for name in ELEMENTS] + [symbol not in ELEMENTS]
    degree = _one_hot(min(atom.GetDegree(), DEGREES - 1), DEGREES)
    charge = [min(max(atom.GetFormalCharge(), -1), 1) == value for value in CHARGES]
    hydrogens = _one_hot(min(atom.GetTotalNumHs(), HYDROGENS - 1), HYDROGENS)
    hybrid = str(atom.GetHybridization())
    hybridisation = [hybrid == name for name in HYBRIDISATIONS] + [hybrid not in HYBRIDISATIONS]
    flags = [atom.GetIsAromatic(), atom.IsInRing()]
    return np.asarray(element + degree + charge + hydrogens + hybridisation + flags, dtype=np.float32)


def _one_hot(index: int, size: int) -> list[bool]:
    return [index == position for position in range(size)]


def load_b3db(max_molecules: int | None, seed: int, path: Path | None = None) -> MoleculeGraphs:
    """B3DB classification molecules as graphs (label-stratified sample when `max_molecules` is set)."""
    table = read_b3db(path or b3db_file(), max_molecules, seed)
    labels = [LABELS[value] for value in table[LABEL_COLUMN].to_list()]
    return molecules_to_graphs(table[SMILES_COLUMN].to_list(), labels)
