"""Seeding: one base seed, derived seeds per (purpose, method, budget, ...) so runs are reproducible."""

from __future__ import annotations

import hashlib
import random
import sys
from collections.abc import Callable
from importlib.abc import MetaPathFinder
from importlib.machinery import ModuleSpec, PathFinder
from types import ModuleType

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


def seed_and_pin(seed: int, threads: int) -> None:
    """What every stage needs before its first random draw: Python and NumPy seeded now; torch seeded, made
    deterministic and pinned to `threads` when it is imported (at once if it already is). A stage that never
    imports torch never pays for it (about 1.5 s per process)."""
    random.seed(seed)
    np.random.seed(seed % (2**32))

    def prepare(torch: ModuleType) -> None:
        torch.manual_seed(seed)
        _use_deterministic_algorithms(torch)
        torch.set_num_threads(threads)

    when_imported("torch", prepare)


def when_imported(name: str, callback: Callable[[ModuleType], None]) -> None:
    """Call `callback(module)` once top-level module `name` is imported: now, or right after its import runs."""
    if name in sys.modules:
        callback(sys.modules[name])
        return
    sys.meta_path.insert(0, _AfterImport(name, callback))


class _AfterImport(MetaPathFinder):
    """A one-shot finder: it wraps the real loader of one module so a callback runs after the module body."""

    def __init__(self, name: str, callback: Callable[[ModuleType], None]) -> None:
        self.name, self.callback = name, callback

    def find_spec(self, fullname: str, path=None, target=None) -> ModuleSpec | None:
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = PathFinder.find_spec(fullname, path)
        if spec is not None and spec.loader is not None:
            run_module, callback = spec.loader.exec_module, self.callback

            def exec_module(module: ModuleType) -> None:
                run_module(module)
                callback(module)

            spec.loader.exec_module = exec_module  # this spec's loader instance only
        return spec
