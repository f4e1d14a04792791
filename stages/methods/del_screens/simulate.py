"""A simulated DEL screen in the KinDEL schema, with its hidden truth.

The hidden off-DNA affinity (pKd) of compound (a, b, c) is `mean_pkd + e_a + e_b + e_c + p_ab`: one effect per
building block (partly a linear function of its standardised descriptors — logP, TPSA, aromatic rings, heavy
atoms — so blocks outside the library are partly predictable) and one A×B pair interaction. On DNA a linker
term `l_a` (a function of block A, the one nearest the DNA) adds to it; the DEL selection sees the on-DNA
affinity. Sequencing follows DEL-Compose's count model: with load L (pre-selection reads),
matrix reads of replicate r ~ ZIP(L·e^{log c + βᶜ_r}, πᶜ) and target reads ~ ZIP(L·e^{log c + log t + βᵗ_r}, πᵗ),
where log c (matrix binding) follows its blocks' logP and log t = slope·(on-DNA pKd − mean). Held-out
compounds (some from the library, a few with blocks outside it) get Kd = 10^(9 − pKd + noise) nM, on-DNA with
the linker term and off-DNA without. The in-library held-out compounds come from a few disynthon groups (at
most 4 compounds from each) and never train: the random split puts them in test, the disynthon split their
whole groups, so a held-out disynthon is never seen in training (`parameters` records both measurements:
`heldout_in_training`, the share of in-library held-out compounds that are training rows per split kind, and
`pair_variance_share`, the A×B pair term's share of the library's off-DNA affinity variance).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import polars as pl

from stages.core.seeding import derive_seed
from stages.methods.del_screens import counts, library, splits
from stages.methods.del_screens.config import SimulationOptions
from stages.methods.del_screens.schema import ENRICHMENT, KD, LOAD, MATRIX_COUNTS, N_REPLICATES, TARGET_COUNTS

DESCRIPTORS = ("MolLogP", "TPSA", "NumAromaticRings", "HeavyAtomCount")
HELDOUT_PER_GROUP = 4  # in-library held-out compounds drawn from one disynthon group at most


@dataclass
class SimulatedScreen:
    """A screen in the KinDEL schema plus what generated it."""

    library: pl.DataFrame
    splits: dict[str, pl.DataFrame]
    heldout: dict[str, pl.DataFrame]
    truth: pl.DataFrame
    parameters: dict = field(default_factory=dict)


def descriptors(smiles: list[str]) -> np.ndarray:
    """RDKit descriptors (:data:`DESCRIPTORS`) of each SMILES, standardised column-wise."""
    from rdkit import Chem
    from rdkit.Chem import Descriptors

    values = np.array(
        [[getattr(Descriptors, name)(Chem.MolFromSmiles(s)) for name in DESCRIPTORS] for s in smiles],
        dtype=float,
    )
    spread = values.std(axis=0)
    return (values - values.mean(axis=0)) / np.where(spread > 0, spread, 1.0)


def matrix_propensity(compounds: list[library.Compound], blocks: dict[str, list[str]]) -> np.ndarray:
    """Each compound's standardised matrix-binding propensity: the sum of its blocks' standardised logP."""
    logp = {}
    for kind in library.CLASSES:
        column = descriptors(blocks[kind])[:, DESCRIPTORS.index("MolLogP")]
        logp.update(zip(blocks[kind], column, strict=True))
    total = np.array([logp[c.smiles_a] + logp[c.smiles_b] + logp[c.smiles_c] for c in compounds])
    return (total - total.mean()) / max(total.std(), 1e-12)


def _unit_normal(seed: int, *keys: object) -> float:
    return float(np.random.default_rng(derive_seed(seed, *keys)).normal())


def block_effects(blocks: dict[str, list[str]], options: SimulationOptions) -> dict[str, dict[str, float]]:
    """Per class, each block's affinity effect: descriptor part + block-specific part, sd `synthon_sd`."""
    rng = np.random.default_rng(derive_seed(options.seed, "descriptor-weights"))
    effects = {}
    for kind in library.CLASSES:
        names = blocks[kind]
        weights = rng.normal(size=len(DESCRIPTORS))
        explained = descriptors(names) @ (weights / np.linalg.norm(weights))
        explained = explained / max(explained.std(), 1e-12)
        effects[kind] = {
            name: options.synthon_sd
            * (
                np.sqrt(options.descriptor_share) * explained[i]
                + np.sqrt(1 - options.descriptor_share) * _unit_normal(options.seed, "block", name)
            )
            for i, name in enumerate(names)
        }
    return effects


def affinities(compounds: list[library.Compound], effects: dict, options: SimulationOptions) -> pl.DataFrame:
    """Off-DNA pKd, the linker term and on-DNA pKd of each compound."""
    rows = []
    for compound in compounds:
        pair = options.pair_sd * _unit_normal(options.seed, "pair", compound.smiles_a, compound.smiles_b)
        off = (
            options.mean_pkd
            + effects["amine"][compound.smiles_a]
            + effects["acid"][compound.smiles_b]
            + effects["aldehyde"][compound.smiles_c]
            + pair
        )
        linker = options.linker_sd * _unit_normal(options.seed, "linker", compound.smiles_a)
        rows.append(
            {
                "smiles": compound.smiles,
                "affinity": off,
                "linker": linker,
                "affinity_ondna": off + linker,
                "pair": pair,
            }
        )
    return pl.DataFrame(rows)


def sequencing(
    truth: pl.DataFrame, logp: np.ndarray, options: SimulationOptions, rng: np.random.Generator
) -> tuple[pl.DataFrame, dict]:
    """Load, matrix and target counts of every compound, the rates behind them and the replicate offsets."""
    n = truth.height
    log_c = np.log(options.depth) + options.matrix_sd * logp
    log_t = options.target_slope * (truth["affinity_ondna"].to_numpy() - options.mean_pkd)
    beta_c = rng.normal(0, options.replicate_sd, N_REPLICATES)
    beta_t = rng.normal(0, options.replicate_sd, N_REPLICATES)
    load = rng.poisson(options.load_mean * np.exp(rng.normal(0, options.load_sd, n))) + 1
    matrix = np.stack(
        [counts.sample_zip(rng, load * np.exp(log_c + b), options.zero_prob_matrix) for b in beta_c], axis=1
    )
    target = np.stack(
        [counts.sample_zip(rng, load * np.exp(log_c + log_t + b), options.zero_prob_target) for b in beta_t],
        axis=1,
    )
    frame = pl.DataFrame(
        {
            **{name: target[:, r].astype(float) for r, name in enumerate(TARGET_COUNTS)},
            **{name: matrix[:, r].astype(float) for r, name in enumerate(MATRIX_COUNTS)},
            LOAD: load.astype(float),
            ENRICHMENT: counts.enrichment(target, matrix),
        }
    )
    rates = truth.select("smiles").with_columns(pl.Series("log_c", log_c), pl.Series("log_t", log_t))
    return frame.hstack(rates.drop("smiles")), {
        "beta_matrix": beta_c.tolist(),
        "beta_target": beta_t.tolist(),
    }


def _library_table(compounds: list[library.Compound], reads: pl.DataFrame) -> pl.DataFrame:
    base = pl.DataFrame(
        {
            "smiles": [c.smiles for c in compounds],
            "molecule_hash": [library.molecule_hash(c.smiles) for c in compounds],
            "smiles_a": [c.smiles_a for c in compounds],
            "smiles_b": [c.smiles_b for c in compounds],
            "smiles_c": [c.smiles_c for c in compounds],
        }
    )
    return base.hstack(reads.select(*TARGET_COUNTS, *MATRIX_COUNTS, LOAD, ENRICHMENT))


def external_compounds(
    blocks: dict[str, list[str]], outside: dict[str, list[str]], n: int, seed: int
) -> list[library.Compound]:
    """`n` compounds with at least one building block outside the library (seeded draw)."""
    pools = [blocks[k] + outside[k] for k in library.CLASSES]
    triples = [
        t
        for t in library.combinations(*pools)
        if any(member in outside[k] for member, k in zip(t, library.CLASSES, strict=True))
    ]
    rng = np.random.default_rng(derive_seed(seed, "external"))
    chosen = [triples[i] for i in sorted(rng.choice(len(triples), size=min(n, len(triples)), replace=False))]
    return list(library.enumerate_compounds(chosen))


def heldout_rows(table: pl.DataFrame, options: SimulationOptions) -> np.ndarray:
    """The library rows with a measured Kd: `heldout` rows drawn (seeded) from as few disynthon groups (key
    `disynthon_key`) as hold them at up to :data:`HELDOUT_PER_GROUP` each, so the disynthon split can keep
    their groups out of training within its test share."""
    rng = np.random.default_rng(derive_seed(options.seed, "heldout"))
    groups = splits.disynthon_groups(table, options.disynthon_key)
    n_groups = int(groups.max()) + 1
    wanted = min(options.heldout, table.height)
    per_group = max(1, min(HELDOUT_PER_GROUP, int(np.bincount(groups).min())))
    chosen = rng.choice(n_groups, size=min(n_groups, -(-wanted // per_group)), replace=False)
    pool = np.flatnonzero(np.isin(groups, chosen))
    return np.sort(rng.choice(pool, size=min(wanted, len(pool)), replace=False))


def pair_variance_share(truth: pl.DataFrame) -> float:
    """The A×B pair term's share of the library's off-DNA affinity variance."""
    total = float(truth["affinity"].var())
    return float(truth["pair"].var()) / total if total > 0 else 0.0


def heldout_tables(
    table: pl.DataFrame,
    truth: pl.DataFrame,
    external: list[library.Compound],
    external_truth: pl.DataFrame,
    options: SimulationOptions,
    rows: np.ndarray,
) -> dict[str, pl.DataFrame]:
    """On- and off-DNA tables: the library `rows` (with their counts) and the external compounds."""
    inside = table[rows]
    outside = pl.DataFrame(
        {
            "smiles": [c.smiles for c in external],
            "smiles_a": [c.smiles_a for c in external],
            "smiles_b": [c.smiles_b for c in external],
            "smiles_c": [c.smiles_c for c in external],
        }
    )
    both = pl.concat([inside, outside], how="diagonal_relaxed").with_columns(
        pl.col("molecule_hash").cast(pl.String)
    )
    pkd = {
        "offdna": np.concatenate([truth["affinity"].to_numpy()[rows], external_truth["affinity"].to_numpy()]),
        "ondna": np.concatenate(
            [truth["affinity_ondna"].to_numpy()[rows], external_truth["affinity_ondna"].to_numpy()]
        ),
    }
    tables = {}
    for kind, values in pkd.items():
        noise = np.random.default_rng(derive_seed(options.seed, "kd", kind)).normal(
            0, options.kd_noise_sd, len(values)
        )
        tables[kind] = both.with_columns(pl.Series(KD, 10 ** (9 - (values + noise))))
    return tables


def simulate(options: SimulationOptions, pools: dict[str, list[str]] | None = None) -> SimulatedScreen:
    """Enumerate the library and simulate its screen (deterministic given the options)."""
    pools = library.building_blocks() if pools is None else pools
    blocks, outside = library.pick_blocks(pools, options.per_cycle, options.outside_blocks, options.seed)
    every = {k: blocks[k] + outside[k] for k in library.CLASSES}
    effects = block_effects(every, options)
    compounds = list(library.enumerate_library(blocks["amine"], blocks["acid"], blocks["aldehyde"]))
    truth = affinities(compounds, effects, options)
    logp = matrix_propensity(compounds, every)
    rng = np.random.default_rng(derive_seed(options.seed, "sequencing"))
    reads, offsets = sequencing(truth, logp, options, rng)
    table = _library_table(compounds, reads)
    truth = truth.hstack(reads.select("log_c", "log_t")).insert_column(1, table["molecule_hash"])
    external = external_compounds(blocks, outside, options.external, options.seed)
    rows = heldout_rows(table, options)
    heldout = heldout_tables(table, truth, external, affinities(external, effects, options), options, rows)
    split_tables = {
        "random": splits.random_splits(table.height, options.valid, options.test, options.seed, rows),
        "disynthon": splits.disynthon_splits(
            table, options.valid, options.test, options.seed, options.disynthon_key, rows
        ),
    }
    measured = {
        "heldout_in_training": {k: splits.training_overlap(t, rows) for k, t in split_tables.items()},
        "pair_variance_share": pair_variance_share(truth),
    }
    return SimulatedScreen(
        library=table,
        splits=split_tables,
        heldout=heldout,
        truth=truth,
        parameters={**offsets, **measured, "blocks": blocks, "outside_blocks": outside},
    )
