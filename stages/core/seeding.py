"""Seeding: one base seed, derived seeds per (purpose, method, budget, ...) so runs are reproducible."""

from __future__ import annotations

import hashlib
import random

import numpy as np


def derive_seed(base_seed: int, *keys: object) -> int:
    """A stable 32-bit seed from a base seed and any labels (independent of PYTHONHASHSEED)."""
    text = "/".join([str(base_seed), *(str(key) for key in keys)])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")


def pin_threads(threads: int) -> None:
    """Fix torch's intra-op threads: float reductions (matmuls) are byte-identical only at the same count, and
    the inherited default follows the environment (a Dask nanny sets OMP_NUM_THREADS=1 in its parent)."""
    import torch

    torch.set_num_threads(threads)


def seed_everything(seed: int) -> np.random.Generator:
    """Seed Python, NumPy and torch (if imported) and return a NumPy generator for explicit use."""
    random.seed(seed)
    np.random.seed(seed % (2**32))
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a hard dependency, kept optional for light tools
        pass
    else:
        torch.manual_seed(seed)
        _use_deterministic_algorithms(torch)
    return np.random.default_rng(seed)


def _use_deterministic_algorithms(torch) -> None:
    """`torch.use_deterministic_algorithms(True, warn_only=True)` without its import of `torch._inductor`
    (about 2 s in every stage process): that import only sets inductor's flag, and no step uses torch.compile."""
    torch._C._set_deterministic_algorithms(True, warn_only=True)
