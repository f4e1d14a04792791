"""LipConvNet (Singla & Feizi's network as the BRONet code builds it) with BRO, Cayley or SOC convolutions,
MaxMin activations and an LLN last layer; saving and loading it as safetensors + a JSON config (nothing
unpickled)."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

import torch
from safetensors.torch import load_file, save_file
from torch import nn

from stages.core.errors import DataValidationError
from stages.methods.lipschitz.layers import BROConv2d, BROLinear, CayleyConv2d, LLNLinear, MaxMin, SOCConv2d

Conv = Literal["bro", "cayley", "soc"]
CONVS: tuple[str, ...] = ("bro", "cayley", "soc")


@dataclass(frozen=True)
class LipConvNetConfig:
    """LipConvNet-(5·blocks)-width: 5 stages of `blocks` layers, each stage ending in a stride-2 layer (the
    last one 1×1); channels width·2^stage; `mean`/`std` standardise the input inside the net."""

    conv: Conv = "bro"
    width: int = 16
    blocks: int = 1
    in_channels: int = 1
    input_size: int = 32
    classes: int = 10
    rank: float = 0.125
    id_init: bool = True
    soc_train_terms: int = 6
    soc_eval_terms: int = 15
    mean: list[float] = field(default_factory=lambda: [0.0])
    std: list[float] = field(default_factory=lambda: [1.0])

    def __post_init__(self) -> None:
        if self.conv not in CONVS:
            raise ValueError(f"conv must be one of {CONVS}, got {self.conv!r}")
        if self.input_size != 32:
            raise ValueError(f"LipConvNet takes 32 × 32 inputs (5 stride-2 stages), got {self.input_size}")
        if len(self.mean) != self.in_channels or len(self.std) != self.in_channels or min(self.std) <= 0:
            raise ValueError("mean and std need one value per input channel, std > 0")

    @property
    def input_lipschitz(self) -> float:
        """Lipschitz constant of the standardisation (x − mean) / std."""
        return 1.0 / min(self.std)


def _conv(config: LipConvNetConfig, cin: int, cout: int, kernel: int, stride: int, size: int) -> nn.Module:
    if config.conv == "bro":
        return BROConv2d(cin, cout, kernel, size, stride, config.rank, config.id_init)
    if config.conv == "cayley":
        return CayleyConv2d(cin, cout, kernel, stride)
    return SOCConv2d(cin, cout, kernel, stride, config.soc_train_terms, config.soc_eval_terms)


class LipConvNet(nn.Module):
    """Standardise → 5 stages of (conv → MaxMin) → LLN. Every conv and MaxMin is 1-Lipschitz (SOC up to its
    Taylor error), so the logits are L-Lipschitz with L = 1/min(std) feeding the LLN."""

    def __init__(self, config: LipConvNetConfig) -> None:
        super().__init__()
        self.config = config
        self.register_buffer("mean", torch.tensor(config.mean).view(1, -1, 1, 1))
        self.register_buffer("std", torch.tensor(config.std).view(1, -1, 1, 1))
        layers: list[nn.Module] = []
        channels, size, planes = config.in_channels, config.input_size, config.width
        for stage in range(5):
            for block in range(config.blocks):
                last = block == config.blocks - 1
                stride = 2 if last else 1
                kernel = 1 if (stage == 4 and last) else 3
                out = planes * stride
                layers += [_conv(config, channels, out, kernel, stride, size), MaxMin()]
                channels, size = out, size // stride
            planes = channels
        self.features = nn.Sequential(*layers)
        self.last = LLNLinear(channels, config.classes)

    def embed(self, x: torch.Tensor) -> torch.Tensor:
        """The 1-Lipschitz part (after standardisation): features fed to the LLN layer."""
        return self.features(x).flatten(1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.last(self.embed((x - self.mean) / self.std))

    def lipschitz(self) -> float:
        """L of the features: 1/min(std) times, for SOC, each layer's Taylor-error bound (the official rule)."""
        bound = self.config.input_lipschitz
        size = self.config.input_size
        for layer in self.features:
            if isinstance(layer, SOCConv2d):
                bound *= layer.norm_bound(size)
            if getattr(layer, "stride", 1) == 2 or getattr(layer, "space_to_depth", False):
                size //= 2
        return bound


class BRODenseNet(nn.Module):
    """One BRO dense layer on flattened images (the MNIST single-layer experiment): logits = W x + b."""

    def __init__(self, in_features: int, classes: int, rank: float = 0.5) -> None:
        super().__init__()
        self.layer = BROLinear(in_features, classes, rank)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layer(x.flatten(1))


def save_lipconvnet(model: LipConvNet, folder: str | Path) -> None:
    """`model.safetensors` (the state dict) and `config.json` in `folder`."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    save_file(
        {k: v.detach().contiguous() for k, v in model.state_dict().items()}, folder / "model.safetensors"
    )
    (folder / "config.json").write_text(json.dumps(asdict(model.config), indent=2, sort_keys=True) + "\n")


def load_lipconvnet(folder: str | Path) -> LipConvNet:
    """A LipConvNet saved by :func:`save_lipconvnet`; errors name the file."""
    folder = Path(folder)
    config_path, weights_path = folder / "config.json", folder / "model.safetensors"
    for path in (config_path, weights_path):
        if not path.is_file():
            raise DataValidationError(
                f"{path}: not found (a model folder holds config.json and model.safetensors)"
            )
    try:
        config = LipConvNetConfig(**json.loads(config_path.read_text()))
    except (TypeError, ValueError) as error:
        raise DataValidationError(f"{config_path}: not a LipConvNet config ({error})") from None
    model = LipConvNet(config)
    try:
        model.load_state_dict(load_file(weights_path))
    except (RuntimeError, OSError) as error:
        raise DataValidationError(f"{weights_path}: weights do not fit {config_path} ({error})") from None
    return model.eval()


def parameter_count(model: nn.Module) -> int:
    return sum(math.prod(p.shape) for p in model.parameters())
