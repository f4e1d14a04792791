"""Building blocks from RDKit's shipped NCI set and the enumeration of a three-cycle library.

The library grows from one core, 3,5-diaminobenzoic acid (its acid the DNA-side attachment):

- cycle A, a primary aliphatic amine, couples to the core's acid (amide);
- cycle B, a carboxylic acid, acylates one of the core's two equivalent anilines (amide);
- cycle C, an aldehyde, reductively aminates the other aniline (secondary amine).

Building blocks come from `Data/NCI/first_5K.smi` (shipped with RDKit), kept when they carry exactly one
group of their class and none of the other classes' groups, only organic-subset atoms, no charge, one
fragment and 3–18 heavy atoms. Every product is sanitised; a building block that does not react as designed
is an error naming it.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

CORE = "Nc1cc(N)cc(C(=O)O)c1"
CLASSES = ("amine", "acid", "aldehyde")
GROUPS = {
    "amine": "[NX3;H2;!$(N-a);!$(N-[#6]=[O,S,N])][CX4]",
    "acid": "[CX3](=O)[OX2H1]",
    "aldehyde": "[CX3H1](=O)[#6]",
}
ANY_PRIMARY_AMINE = "[NX3;H2,H3+]"
REACTIONS = {
    "amine": "[c:1][C:2](=[O:3])[OX2H1].[NX3;H2:4][CX4:5]>>[c:1][C:2](=[O:3])[N:4][C:5]",
    "acid": "[c:4][NX3;H2:5].[#6:1][C:2](=[O:3])[OX2H1]>>[#6:1][C:2](=[O:3])[N:5][c:4]",
    "aldehyde": "[c:1][NX3;H2:2].[CX3H1:3](=O)[#6:4]>>[c:1][N:2][C:3][#6:4]",
}
LEAVING = {"amine": None, "acid": "[CX3](=O)[OX2H1]", "aldehyde": "[CX3H1](=O)[#6]"}
ALLOWED_ELEMENTS = frozenset({"C", "N", "O", "S", "F", "Cl", "Br"})


@dataclass(frozen=True)
class Compound:
    """One enumerated compound: canonical SMILES and its three building blocks (cycle A, B, C)."""

    smiles: str
    smiles_a: str
    smiles_b: str
    smiles_c: str


def nci_smiles() -> list[str]:
    """The SMILES of RDKit's shipped `Data/NCI/first_5K.smi` (first column)."""
    from rdkit import RDConfig

    path = os.path.join(RDConfig.RDDataDir, "NCI", "first_5K.smi")
    with open(path, encoding="utf-8") as handle:
        return [line.split()[0] for line in handle if line.strip()]


@functools.cache
def _patterns():
    from rdkit import Chem

    return {
        name: Chem.MolFromSmarts(smarts) for name, smarts in {**GROUPS, "primary": ANY_PRIMARY_AMINE}.items()
    }


def classify(smiles: str, min_heavy: int = 3, max_heavy: int = 18) -> str | None:
    """The building-block class of `smiles` (exactly one group of one class, none of the others), or None."""
    from rdkit import Chem

    if "." in smiles:
        return None
    mol = Chem.MolFromSmiles(smiles)
    if mol is None or not min_heavy <= mol.GetNumHeavyAtoms() <= max_heavy:
        return None
    if any(
        a.GetSymbol() not in ALLOWED_ELEMENTS or a.GetFormalCharge() or a.GetIsotope() for a in mol.GetAtoms()
    ):
        return None
    hits = {name: len(mol.GetSubstructMatches(pattern)) for name, pattern in _patterns().items()}
    primary = hits["primary"]
    for name in CLASSES:
        others = sum(hits[other] for other in CLASSES if other != name)
        extra_amines = primary - (1 if name == "amine" else 0)
        if hits[name] == 1 and others == 0 and extra_amines == 0:
            return name
    return None


def building_blocks(smiles: Sequence[str] | None = None) -> dict[str, list[str]]:
    """Canonical, de-duplicated building blocks per class, sorted (from the NCI set unless given)."""
    from rdkit import Chem, RDLogger

    RDLogger.DisableLog("rdApp.*")
    pools: dict[str, set[str]] = {name: set() for name in CLASSES}
    for raw in nci_smiles() if smiles is None else smiles:
        kind = classify(raw)
        if kind is not None:
            pools[kind].add(Chem.MolToSmiles(Chem.MolFromSmiles(raw)))
    return {name: sorted(pool) for name, pool in pools.items()}


def pick_blocks(pools: dict[str, list[str]], per_cycle: int, extra: int, seed: int) -> tuple[dict, dict]:
    """Draw `per_cycle` library and `extra` outside-the-library building blocks per class (seeded)."""
    rng = np.random.default_rng(seed)
    library, outside = {}, {}
    for name in CLASSES:
        pool = pools[name]
        if len(pool) < per_cycle + extra:
            raise ValueError(f"only {len(pool)} {name} building blocks; {per_cycle + extra} requested")
        chosen = [pool[i] for i in rng.choice(len(pool), size=per_cycle + extra, replace=False)]
        library[name], outside[name] = sorted(chosen[:per_cycle]), sorted(chosen[per_cycle:])
    return library, outside


def _react(reaction, core, block, kind: str, block_smiles: str):
    from rdkit import Chem

    products = {}
    for (product,) in reaction.RunReactants((core, block)):
        Chem.SanitizeMol(product)
        products[Chem.MolToSmiles(product)] = product
    if len(products) != 1:
        raise ValueError(
            f"{kind} building block {block_smiles!r} gives {len(products)} distinct products, not 1"
        )
    return next(iter(products.values()))


def enumerate_compounds(triples: Sequence[tuple[str, str, str]]) -> Iterator[Compound]:
    """The product of each (amine, acid, aldehyde) triple on the core, in order (intermediates cached)."""
    from rdkit import Chem
    from rdkit.Chem import AllChem

    reactions = {name: AllChem.ReactionFromSmarts(smarts) for name, smarts in REACTIONS.items()}
    core = Chem.MolFromSmiles(CORE)
    mols: dict[str, object] = {}
    stage_a: dict[str, object] = {}
    stage_b: dict[tuple[str, str], object] = {}
    for amine, acid, aldehyde in triples:
        for smiles in (amine, acid, aldehyde):
            if smiles not in mols:
                mols[smiles] = Chem.MolFromSmiles(smiles)
        if amine not in stage_a:
            stage_a[amine] = _react(reactions["amine"], core, mols[amine], "amine", amine)
        if (amine, acid) not in stage_b:
            stage_b[amine, acid] = _react(reactions["acid"], stage_a[amine], mols[acid], "acid", acid)
        product = _react(reactions["aldehyde"], stage_b[amine, acid], mols[aldehyde], "aldehyde", aldehyde)
        yield Compound(Chem.MolToSmiles(product), amine, acid, aldehyde)


def enumerate_library(
    amines: Sequence[str], acids: Sequence[str], aldehydes: Sequence[str]
) -> Iterator[Compound]:
    """Every A × B × C product on the core, in input order (A slowest)."""
    return enumerate_compounds(list(itertools.product(amines, acids, aldehydes)))


def combinations(amines, acids, aldehydes, pairs: int | None = None, seed: int = 0):
    """All (A, B, C) triples, or `pairs` of them drawn without replacement (seeded)."""
    triples = list(itertools.product(amines, acids, aldehydes))
    if pairs is None:
        return triples
    rng = np.random.default_rng(seed)
    return [
        triples[i] for i in sorted(rng.choice(len(triples), size=min(pairs, len(triples)), replace=False))
    ]


def molecule_hash(smiles: str) -> str:
    """A stable hash of a canonical SMILES (the `molecule_hash` column)."""
    return hashlib.sha256(smiles.encode()).hexdigest()[:16]


def synthon_query(block: str, kind: str):
    """The part of a building block that survives its reaction (the leaving atom removed), as a substructure
    query: every product made from the block contains it."""
    from rdkit import Chem

    mol = Chem.MolFromSmiles(block)
    if kind == "acid":
        match = mol.GetSubstructMatch(Chem.MolFromSmarts(LEAVING["acid"]))
        leaving = [match[2]]  # the hydroxyl oxygen
    elif kind == "aldehyde":
        match = mol.GetSubstructMatch(Chem.MolFromSmarts(LEAVING["aldehyde"]))
        leaving = [match[1]]  # the carbonyl oxygen
    else:
        leaving = []
    editable = Chem.RWMol(mol)
    for index in sorted(leaving, reverse=True):
        editable.RemoveAtom(index)
    query = editable.GetMol()
    query.UpdatePropertyCache(strict=False)
    return Chem.MolFromSmarts(Chem.MolToSmarts(query))
