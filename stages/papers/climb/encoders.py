"""Reading the encoders `climb-train` saved (safetensors, keys `<regime>/<seed>/<parameter>`)."""

from __future__ import annotations

from pathlib import Path

import torch
from safetensors.torch import load_file


def encoder_state(path: Path, regime: str, seed: int) -> dict[str, torch.Tensor]:
    """The encoder state dict of one trained model (regime: a site or `multitask`)."""
    prefix = f"{regime}/{seed}/"
    tensors = load_file(str(path))
    state = {key[len(prefix) :]: value for key, value in tensors.items() if key.startswith(prefix)}
    if not state:
        raise KeyError(f"{path}: no encoder {regime!r} for seed {seed}")
    return state
