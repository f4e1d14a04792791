"""`icml25 bench bronet`: forward + backward time and activation memory of BRO, Cayley and SOC convolutions at
equal widths (median of interleaved repeats, one thread), as ratios to BRO. The comparison with the official
BRONet layers on shared weights is run outside the repository (see the README's Benchmarks section)."""

from __future__ import annotations

import numpy as np
import torch

from stages.core.timing import interleaved_seconds
from stages.methods.lipschitz.layers import BROConv2d, CayleyConv2d, SOCConv2d
from stages.methods.lipschitz.train import saved_bytes
from stages.papers.bronet.timing import LAYERS, step_function


def run_benchmarks(
    widths: tuple[int, ...] = (16, 32, 64), size: int = 16, batch: int = 32, repeats: int = 5
) -> dict:
    """Per width: median seconds, saved bytes and their ratios to BRO for each layer type."""
    torch.set_num_threads(1)
    result = {}
    for width in widths:
        functions = {name: step_function(name, width, size, batch, width) for name in LAYERS}
        seconds = interleaved_seconds(functions, repeats=repeats, seed=width)
        x = torch.randn(batch, width, size, size)
        layers = {
            "bro": BROConv2d(width, width, 3, size, 1, 0.5),
            "cayley": CayleyConv2d(width, width, 3, 1),
            "soc": SOCConv2d(width, width, 3, 1, init_iters=1),
        }
        memory = {name: saved_bytes(layer, x.clone()) for name, layer in layers.items()}
        medians = {name: float(np.median(values)) for name, values in seconds.items()}
        result[str(width)] = {
            "median_seconds": medians,
            "saved_bytes": memory,
            "time_ratio_to_bro": {name: medians[name] / medians["bro"] for name in LAYERS},
            "memory_ratio_to_bro": {name: memory[name] / memory["bro"] for name in LAYERS},
        }
    return result
