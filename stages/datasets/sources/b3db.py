"""`b3db`: B3DB blood–brain-barrier molecules (PyPI `qc-b3db`) as RDKit heavy-atom graphs."""

from __future__ import annotations

from pydantic import Field

from stages.core.io import file_md5
from stages.core.params import StrictModel
from stages.datasets.source import GRAPHS, Source


class B3dbParams(StrictModel):
    """How many molecules, drawn label-stratified with which seed."""

    max_molecules: int | None = Field(1500, ge=20, description="label-stratified sample (None: all 7,807)")
    sample_seed: int = Field(0, ge=0, description="seed of the stratified sample")


def load(params: B3dbParams):
    """The molecule graphs and their provenance (file md5, SMILES RDKit could not parse)."""
    from stages.datasets.graphs.molecules import b3db_file, load_b3db

    path = b3db_file()
    molecules = load_b3db(params.max_molecules, params.sample_seed, path)
    source = {"file": path.name, "md5": file_md5(path), "unparsable_smiles_dropped": molecules.unparsable}
    return molecules.tables, source


SOURCE = Source(
    "b3db",
    GRAPHS,
    B3dbParams,
    load,
    "B3DB blood–brain-barrier molecules (PyPI qc-b3db) as RDKit graphs, 32 one-hot atom features",
)
