"""KinDEL benchmarks (`icml25 bench kindel`), one run, ratios against a named reference:

- fingerprint featurisation, molecules/s: RDKit's batched `GetFingerprints` vs a per-molecule
  `GetFingerprintAsNumPy` loop (the reference), Morgan r = 2 and r = 3 with chirality;
- DEL-Compose training step (forward + backward + Adam, batch 64), ms: factorized vs full (the reference);
- library enumeration, molecules/s (RDKit reactions on the core, per-cycle intermediates cached).

One torch thread; the contenders of each comparison run interleaved in a seeded random order, warm-up
excluded; medians of `repeats`. Writes reports/benchmarks/kindel.json.
"""

from __future__ import annotations

import statistics
from pathlib import Path

from stages.core.io import write_json
from stages.core.timing import interleaved_seconds, median_seconds

RESULTS_DIR = Path("reports/benchmarks")


def featurisation(mols: list, repeats: int) -> dict:
    from stages.methods.del_screens.fingerprints import morgan, morgan_loop

    out = {}
    for name, fp in {"r2": {"radius": 2}, "r3_chiral": {"radius": 3, "chirality": True}}.items():
        seconds = interleaved_seconds(
            {"batched": lambda fp=fp: morgan(mols, **fp), "loop": lambda fp=fp: morgan_loop(mols, **fp)},
            repeats=repeats,
        )
        medians = {k: statistics.median(v) for k, v in seconds.items()}
        out[name] = {
            "molecules_per_second": {k: round(len(mols) / v, 1) for k, v in medians.items()},
            "speedup_batched_over_loop": round(medians["loop"] / medians["batched"], 3),
        }
    return out


def compose_steps(library, repeats: int, steps: int = 20) -> dict:
    import numpy as np
    import torch

    from stages.core.seeding import pin_threads
    from stages.methods.del_screens import compose
    from stages.methods.del_screens.config import ComposeOptions

    pin_threads(1)
    calls = {}
    for variant in ("full", "factorized"):
        options = ComposeOptions(variant=variant)
        data = compose.featurise(library.head(64 * steps), options)
        network = compose.build_network(options)
        optimiser = torch.optim.Adam(network.parameters(), lr=options.learning_rate)
        batches = [compose._tensors(data, np.arange(i * 64, (i + 1) * 64)) for i in range(steps)]

        def train(network=network, optimiser=optimiser, batches=batches) -> None:
            for batch in batches:
                optimiser.zero_grad()
                network.nll(batch).backward()
                optimiser.step()

        calls[variant] = train
    seconds = interleaved_seconds(calls, repeats=repeats)
    ms = {k: round(statistics.median(v) / steps * 1000, 3) for k, v in seconds.items()}
    return {
        "ms_per_step": ms,
        "ratio_factorized_over_full": round(ms["factorized"] / ms["full"], 3),
        "batch": 64,
    }


def enumeration(per_cycle: int, repeats: int) -> dict:
    from stages.methods.del_screens import library

    blocks, _ = library.pick_blocks(library.building_blocks(), per_cycle, 0 + 1, 0)
    seconds, compounds = median_seconds(
        lambda: list(library.enumerate_library(blocks["amine"], blocks["acid"], blocks["aldehyde"])), repeats
    )
    return {
        "compounds": len(compounds),
        "seconds": round(seconds, 3),
        "molecules_per_second": round(len(compounds) / seconds, 1),
    }


def run_benchmarks(repeats: int = 3) -> dict:
    """Featurisation, Compose step time and enumeration rate on a simulated 12³ library."""
    from stages.methods.del_screens.config import SimulationOptions
    from stages.methods.del_screens.fingerprints import parse_smiles
    from stages.methods.del_screens.simulate import simulate

    screen = simulate(SimulationOptions())
    mols = parse_smiles(screen.library["smiles"].to_list())
    result = {
        "featurisation": featurisation(mols, repeats),
        "compose_training_step": compose_steps(screen.library, repeats),
        "enumeration": enumeration(12, repeats),
        "threads": 1,
        "repeats": repeats,
    }
    write_json(result, RESULTS_DIR / "kindel.json")
    return result
