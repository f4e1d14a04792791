"""A CIFAR-style ResNet (He et al., 2016: a 3×3 stem, stages of basic blocks, global pooling, one linear layer)
that can be cut after any of its 3×3 convolutions.

Convolutions are numbered 1 (the stem) to 1 + 2·(blocks): a cut after an even-numbered block convolution ends a
block (after its residual sum and ReLU); a cut after an odd one ends inside a block (after the block's first
convolution, batch norm and ReLU, before the residual sum). The 1×1 shortcut projections are not counted (as in
the ResNet-18 layer counts).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn
from torch.nn import functional as F


class BasicBlock(nn.Module):
    """conv3×3 → BN → ReLU → conv3×3 → BN, plus the (projected when the shape changes) input, → ReLU."""

    def __init__(self, in_channels: int, out_channels: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.shortcut: nn.Module = nn.Identity()
        if stride != 1 or in_channels != out_channels:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_channels, out_channels, 1, stride, bias=False), nn.BatchNorm2d(out_channels)
            )

    def first_half(self, x: torch.Tensor) -> torch.Tensor:
        """The activation after the first convolution (a mid-block cut)."""
        return F.relu(self.bn1(self.conv1(x)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.bn2(self.conv2(self.first_half(x))) + self.shortcut(x))


class ResNet(nn.Module):
    """Stem (3×3, `widths[0]`), one stage per width of `blocks` basic blocks (stride 2 from the second stage),
    global average pooling and a linear classifier."""

    def __init__(
        self,
        in_channels: int = 1,
        widths: Sequence[int] = (16, 32, 64),
        blocks: int = 2,
        n_classes: int = 10,
    ) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(in_channels, widths[0], 3, 1, 1, bias=False), nn.BatchNorm2d(widths[0])
        )
        layers: list[BasicBlock] = []
        previous = widths[0]
        for stage, width in enumerate(widths):
            for block in range(blocks):
                layers.append(BasicBlock(previous, width, 2 if stage > 0 and block == 0 else 1))
                previous = width
        self.blocks = nn.ModuleList(layers)
        self.fc = nn.Linear(previous, n_classes)

    @property
    def n_convs(self) -> int:
        """3×3 convolutions: the stem and two per block."""
        return 1 + 2 * len(self.blocks)

    def features(self, x: torch.Tensor, cut: int | None = None) -> torch.Tensor:
        """The feature map after convolution `cut` (1 ≤ cut ≤ n_convs; None: the last block's output)."""
        cut = self.n_convs if cut is None else cut
        if not 1 <= cut <= self.n_convs:
            raise ValueError(f"cut {cut}: the network has convolutions 1..{self.n_convs}")
        x = F.relu(self.stem(x))
        for index, block in enumerate(self.blocks):
            first, second = 2 + 2 * index, 3 + 2 * index
            if cut == first:
                return block.first_half(x)
            x = block(x)
            if cut == second:
                break
        return x

    def multi_features(self, x: torch.Tensor, cuts: Sequence[int]) -> dict[int, torch.Tensor]:
        """Globally pooled features at several cuts in one pass: {cut: (B, channels)}."""
        wanted = set(cuts)
        result: dict[int, torch.Tensor] = {}
        x = F.relu(self.stem(x))
        if 1 in wanted:
            result[1] = x.mean(dim=(2, 3))
        for index, block in enumerate(self.blocks):
            first, second = 2 + 2 * index, 3 + 2 * index
            if first in wanted:
                result[first] = block.first_half(x).mean(dim=(2, 3))
            x = block(x)
            if second in wanted:
                result[second] = x.mean(dim=(2, 3))
            if len(result) == len(wanted):
                break
        return result

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.features(x).mean(dim=(2, 3)))


class TruncatedResNet(nn.Module):
    """The network up to convolution `cut`, then global average pooling: (B, C, H, W) → (B, channels)."""

    def __init__(self, net: ResNet, cut: int) -> None:
        super().__init__()
        if not 1 <= cut <= net.n_convs:
            raise ValueError(f"cut {cut}: the network has convolutions 1..{net.n_convs}")
        self.cut = cut
        self.stem = net.stem
        whole = (cut - 1) // 2  # blocks run in full
        self.blocks = nn.ModuleList(net.blocks[:whole])
        self.partial = net.blocks[whole] if (cut - 1) % 2 == 1 else None
        self.out_channels = (self.partial.bn1 if self.partial is not None else _last_bn(self)).num_features

    def parameter_count(self) -> int:
        """Parameters the truncated network uses (a half block: its first convolution and batch norm only)."""
        used = count_parameters(self.stem) + sum(count_parameters(block) for block in self.blocks)
        if self.partial is not None:
            used += count_parameters(self.partial.conv1) + count_parameters(self.partial.bn1)
        return used

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.stem(x))
        for block in self.blocks:
            x = block(x)
        if self.partial is not None:
            x = self.partial.first_half(x)
        return x.mean(dim=(2, 3))


def _last_bn(truncated: TruncatedResNet) -> nn.BatchNorm2d:
    if len(truncated.blocks):
        return truncated.blocks[-1].bn2
    return truncated.stem[1]


def count_parameters(module: nn.Module) -> int:
    """Trainable parameters (weights and biases; batch-norm running statistics are buffers, not counted)."""
    return sum(parameter.numel() for parameter in module.parameters())


def train_resnet(
    net: ResNet,
    images: torch.Tensor,
    labels: torch.Tensor,
    epochs: int,
    batch_size: int,
    lr: float,
    seed: int,
    show: bool = True,
) -> ResNet:
    """SGD (momentum 0.9, weight decay 5e-4, cosine learning rate to 0) on shuffled mini-batches, seeded order."""
    from stages.core.progress import progress

    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.SGD(net.parameters(), lr=lr, momentum=0.9, weight_decay=5e-4)
    steps = epochs * ((len(images) + batch_size - 1) // batch_size)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, steps)
    net.train()
    for _ in progress(range(epochs), "base net epochs") if show else range(epochs):
        order = torch.randperm(len(images), generator=generator)
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            optimizer.zero_grad()
            F.cross_entropy(net(images[rows]), labels[rows]).backward()
            optimizer.step()
            scheduler.step()
    return net.eval()
