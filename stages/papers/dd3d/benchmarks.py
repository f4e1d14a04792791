"""DD3D benchmarks (`icml25 bench dd3d`): one thread, interleaved repeats, medians.

- Resolution: wall time and autograd-saved bytes of one outer iteration (8 classes, cpc 1, the gradient
  matching of every class and the generator's Adam step) distilling at 256 vs 1,024 points (PointNet-IN
  64-128-1024, SIREN width 256: the paper's network), and peak RSS growth as a coarse cross-check.
- Matching loss against the official code's (`bdy9527/DD3D`, utils.py `match_loss(..., 'ours')` with its
  `distance_wb`): the reference is re-typed here from the repository (it cannot be imported: its module imports
  accelerate, torchmetrics and CUDA-only code) — set `DD3D_REFERENCE` to a checkout's `utils.py` to run the file
  itself instead. Same gradient tensors on both sides; |difference| and the time ratio (ours / official).

Writes reports/benchmarks/dd3d.json.
"""

from __future__ import annotations

import os
import statistics
from functools import cache
from pathlib import Path

import torch

from stages.core.io import write_json
from stages.core.timing import interleaved_seconds
from stages.methods.distillation.distill import SavedBytes
from stages.methods.distillation.generator import PointGenerator
from stages.methods.distillation.matching import class_gradients, gradient_match, match_loss
from stages.methods.distillation.pointnet import PointNet

RESULTS_DIR = Path("reports/benchmarks")


def outer_iteration(points: int, classes: int = 8, batch_real: int = 16) -> tuple:
    """A closure running one outer iteration at `points` points, and its saved bytes."""
    torch.manual_seed(0)
    net = PointNet(classes, (64, 128, 1024), 1.0)
    generator = PointGenerator(classes, 256)
    optimizer = torch.optim.Adam(generator.parameters(), lr=1e-3)
    real = torch.randn(classes, batch_real, points, 3) * torch.tensor([1.0, 0.6, 0.3])

    def step() -> int:
        counter = SavedBytes()
        with counter.hooks():
            loss = sum(
                gradient_match(net, real[c], generator.draw(torch.tensor([c]), points), c)
                for c in range(classes)
            )
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return counter.total

    return step, step()


def resolution_benchmark(repeats: int) -> dict:
    steps, saved = {}, {}
    for points in (256, 1024):
        steps[str(points)], saved[str(points)] = outer_iteration(points)
    seconds = interleaved_seconds(steps, repeats=repeats)
    med = {key: statistics.median(value) for key, value in seconds.items()}
    return {
        "median_seconds": {key: round(value, 4) for key, value in med.items()},
        "saved_mib": {key: round(value / 2**20, 2) for key, value in saved.items()},
        "time_ratio_256_over_1024": round(med["256"] / med["1024"], 3),
        "memory_ratio_256_over_1024": round(saved["256"] / saved["1024"], 3),
    }


def official_distance_wb(gwr: torch.Tensor, gws: torch.Tensor) -> torch.Tensor:
    """bdy9527/DD3D utils.py `distance_wb` (commit a500ab4), re-typed (4-D/3-D reshaped to rows, 2-D as is,
    1-D → 0, Σ_rows 1 − cos with 1e-6 in the denominator)."""
    shape = gwr.shape
    if len(shape) == 4:
        gwr, gws = gwr.reshape(shape[0], -1), gws.reshape(shape[0], -1)
    elif len(shape) == 3:
        gwr, gws = gwr.reshape(shape[0], shape[1] * shape[2]), gws.reshape(shape[0], shape[1] * shape[2])
    elif len(shape) == 1:
        return torch.tensor(0, dtype=torch.float)
    return torch.sum(
        1 - torch.sum(gwr * gws, dim=-1) / (torch.norm(gwr, dim=-1) * torch.norm(gws, dim=-1) + 1e-6)
    )


@cache
def _official_module(reference: str):
    """The official utils.py loaded from `reference`, its heavy imports (accelerate, torchmetrics, the CUDA
    networks) stubbed: only `match_loss` and `distance_wb` are used."""
    import importlib.util
    import sys
    import types

    stubs = (
        "accelerate",
        "provider",
        "CINR",
        "networks",
        "tqdm",
        "torchmetrics",
        "torchmetrics.functional",
        "torchmetrics.functional.classification",
    )
    for name in stubs:
        module = sys.modules.setdefault(name, types.ModuleType(name))
        for attr in (
            "InvariantWrapper",
            "PointNet",
            "DGCNN",
            "PointCNN",
            "PointNetSeg",
            "multiclass_accuracy",
        ):
            if not hasattr(module, attr):
                setattr(module, attr, None)
    spec = importlib.util.spec_from_file_location("dd3d_official_utils", reference)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def official_match_loss(gw_syn, gw_real) -> torch.Tensor:
    """bdy9527/DD3D utils.py `match_loss(gw_syn, gw_real, 'ours')`: the file itself when `DD3D_REFERENCE`
    names it, else the re-typed `distance_wb` summed over layers."""
    reference = os.environ.get("DD3D_REFERENCE")
    if reference:
        return _official_module(reference).match_loss(gw_syn, gw_real, "ours")
    dis = 0.0
    for ig in range(len(gw_real)):
        dis += official_distance_wb(gw_real[ig], gw_syn[ig])
    return dis


def matching_benchmark(repeats: int) -> dict:
    torch.manual_seed(1)
    net = PointNet(8, (64, 128, 1024), 1.0)
    real, synthetic = torch.randn(16, 256, 3), torch.randn(1, 256, 3)
    labels = torch.full((16,), 2, dtype=torch.long)
    g_real = class_gradients(net, real, labels, create_graph=False)
    g_syn = class_gradients(net, synthetic, labels[:1], create_graph=False)
    # the official network is Conv1d: its 2-D weights carry a trailing unit axis
    g_real_conv = [g[..., None] if g.dim() == 2 and i < 6 else g for i, g in enumerate(g_real)]
    g_syn_conv = [g[..., None] if g.dim() == 2 and i < 6 else g for i, g in enumerate(g_syn)]
    ours, theirs = float(match_loss(g_real, g_syn)), float(official_match_loss(g_syn_conv, g_real_conv))
    seconds = interleaved_seconds(
        {
            "ours": lambda: match_loss(g_real, g_syn),
            "official": lambda: official_match_loss(g_syn_conv, g_real_conv),
        },
        repeats=repeats,
    )
    med = {key: statistics.median(value) for key, value in seconds.items()}
    return {
        "ours": ours,
        "official": theirs,
        "abs_difference": abs(ours - theirs),
        "same_to_1e-5": abs(ours - theirs) <= 1e-5 * max(1.0, abs(theirs)),
        "official_source": os.environ.get("DD3D_REFERENCE") or "re-typed from bdy9527/DD3D@a500ab4 utils.py",
        "median_seconds": {key: round(value, 6) for key, value in med.items()},
        "time_ratio_ours_over_official": round(med["ours"] / med["official"], 3),
    }


def run_benchmarks(repeats: int = 5) -> dict:
    """Outer-iteration time and memory at 256 vs 1,024 points; our matching loss against the official one."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        result = {
            "threads": 1,
            "repeats": repeats,
            "resolution": resolution_benchmark(repeats),
            "matching_vs_official": matching_benchmark(max(repeats, 20)),
        }
    finally:
        torch.set_num_threads(threads)
    write_json(result, RESULTS_DIR / "dd3d.json")
    return result
