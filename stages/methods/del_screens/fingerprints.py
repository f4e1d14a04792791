"""Morgan fingerprints with RDKit (the paper: r = 2 for the baselines, r = 3 with chirality for DEL-Compose).

`parse_smiles` turns SMILES into molecules and names the first row RDKit cannot parse; `morgan` featurises a
batch with the generator's batched `GetFingerprints` and unpacks the bit vectors' FPS hex text into a uint8
matrix; `morgan_loop` (one `GetFingerprintAsNumPy` call per molecule) is the reference the benchmark compares
it with.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from stages.core.errors import DataValidationError


def parse_smiles(smiles: Sequence[str], where: str = "table", column: str = "smiles") -> list:
    """RDKit molecules of `smiles`; a missing or unparsable SMILES is an error naming its row and column."""
    from rdkit import Chem, RDLogger

    RDLogger.DisableLog("rdApp.*")
    mols = []
    for row, text in enumerate(smiles):
        mol = Chem.MolFromSmiles(text) if isinstance(text, str) and text else None
        if mol is None:
            raise DataValidationError(
                f"{where}: row {row}, column {column!r}: RDKit cannot parse SMILES {text!r}"
            )
        mols.append(mol)
    return mols


def _generator(radius: int, n_bits: int, chirality: bool):
    from rdkit.Chem import rdFingerprintGenerator

    return rdFingerprintGenerator.GetMorganGenerator(radius=radius, fpSize=n_bits, includeChirality=chirality)


def morgan(mols: Sequence, radius: int = 2, n_bits: int = 2048, chirality: bool = False) -> np.ndarray:
    """Bit fingerprints (molecules × n_bits, uint8) from the generator's batched call."""
    from rdkit import DataStructs

    if not len(mols):
        return np.zeros((0, n_bits), dtype=np.uint8)
    fingerprints = _generator(radius, n_bits, chirality).GetFingerprints(list(mols), numThreads=1)
    packed = bytes.fromhex(
        "".join(DataStructs.BitVectToFPSText(fp) for fp in fingerprints)
    )  # bit i: byte i/8, LSB first
    bits = np.unpackbits(
        np.frombuffer(packed, dtype=np.uint8).reshape(len(mols), -1), axis=1, bitorder="little"
    )
    return bits[:, :n_bits]


def morgan_loop(mols: Sequence, radius: int = 2, n_bits: int = 2048, chirality: bool = False) -> np.ndarray:
    """The same matrix, one `GetFingerprintAsNumPy` call per molecule (the benchmark's reference)."""
    generator = _generator(radius, n_bits, chirality)
    return np.stack([generator.GetFingerprintAsNumPy(mol).astype(np.uint8) for mol in mols])


def morgan_smiles(
    smiles: Sequence[str], radius: int = 2, n_bits: int = 2048, chirality: bool = False, where: str = "table"
) -> np.ndarray:
    """Parse (naming a bad row) and featurise."""
    return morgan(parse_smiles(smiles, where), radius, n_bits, chirality)
