"""Pinned CPU kernel paths: a model's outputs are the same bytes on any x86-64 machine with AVX2.

The numeric libraries pick their float kernels at run time from the CPU they find (AVX-512 on one machine,
AVX2 on another), and another kernel adds in another order: the trained weights, the traces and the embeddings
then differ in their last bits, and so do their md5s. Pinning each library to its AVX2 path makes that choice
the project's, not the machine's. The settings are read when the libraries load, so `pin_kernels()` runs
before torch or NumPy is imported: first thing in `python -m stages` (every dvc.yaml stage) and in `icml25`.

Guaranteed: same params, seed, `common.threads` and locked package versions (requirements.lock) give the same
bytes on any x86-64 machine with AVX2, whatever its own fastest kernels are. Not guaranteed: another thread
count (a tracked param: DVC reruns the stages), another torch/NumPy release, another architecture (on aarch64,
or an x86 CPU without AVX2, nothing is pinned and the record says so). `ICML25_NATIVE_KERNELS=1` lets each
library pick its fastest kernels again (the record says that too). Standard library only.
"""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import MutableMapping
from pathlib import Path

PINNED_KERNELS = {
    "MKL_CBWR": "AVX2,STRICT",  # MKL (torch's BLAS): its AVX2 code path, in strict reproducible mode
    "ATEN_CPU_CAPABILITY": "avx2",  # torch's own vectorised kernels
    "ONEDNN_MAX_CPU_ISA": "AVX2",  # oneDNN (torch's convolutions and some linear layers)
    "OPENBLAS_CORETYPE": "Haswell",  # OpenBLAS (NumPy, SciPy, scikit-learn): its AVX2 kernels
    "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",  # NumPy's own loops: nothing past AVX2
}
NATIVE_SWITCH = "ICML25_NATIVE_KERNELS"
LOADED_TOO_EARLY = ("torch", "numpy")


def cpu_has_avx2(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether this is an x86-64 CPU with AVX2 (read from /proc/cpuinfo; False where it cannot be read)."""
    if platform.machine().lower() not in {"x86_64", "amd64"}:
        return False
    try:
        flags = next(line for line in cpuinfo.read_text().splitlines() if line.startswith("flags"))
    except (OSError, StopIteration):
        return False
    return "avx2" in flags.split()


def kernels_loaded() -> list[str]:
    """The numeric libraries this process has already loaded (too late to pin their kernels)."""
    return [module for module in LOADED_TOO_EARLY if module in sys.modules]


def pin_kernels(environ: MutableMapping[str, str] = os.environ) -> str:
    """Pin every library to its AVX2 kernels (overriding the environment) and return `kernel_record()`."""
    if kernels_loaded():
        raise RuntimeError(f"pin_kernels() must run before any of {', '.join(kernels_loaded())} is imported")
    if environ.get(NATIVE_SWITCH) != "1" and cpu_has_avx2():
        environ.update(PINNED_KERNELS)
    return kernel_record(environ)


def kernel_record(environ: MutableMapping[str, str] = os.environ) -> str:
    """One line saying which kernels this process runs: the pinned settings, or why none are pinned."""
    if all(environ.get(name) == value for name, value in PINNED_KERNELS.items()):
        return "pinned " + " ".join(f"{name}={value}" for name, value in PINNED_KERNELS.items())
    if environ.get(NATIVE_SWITCH) == "1":
        return f"native: {NATIVE_SWITCH}=1 (bytes may differ across machines)"
    return "native: no AVX2 x86-64 CPU found (bytes may differ across machines)"
