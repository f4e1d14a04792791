"""An MLP actor-critic: a shared tanh trunk, a policy head and a value head, trained with Adam."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import numpy as np
import torch
from safetensors.torch import load_file, save_file
from torch import nn

from stages.methods.rl.actor_critic import ActorCritic


class MLPActorCritic(ActorCritic):
    """MLP (hidden sizes, tanh) with shared trunk; gradients clipped to a global norm before each Adam step."""

    name: ClassVar[str] = "mlp"

    def __init__(
        self,
        input_dim: int,
        n_actions: int,
        hidden: tuple[int, ...] = (64, 64),
        lr: float = 2.5e-4,
        max_grad_norm: float = 0.5,
        seed: int = 0,
    ):
        torch.manual_seed(seed)
        layers: list[nn.Module] = []
        width = input_dim
        for size in hidden:
            layers += [nn.Linear(width, size), nn.Tanh()]
            width = size
        self.trunk = nn.Sequential(*layers)
        self.policy_head = nn.Linear(width, n_actions)
        self.value_head = nn.Linear(width, 1)
        nn.init.orthogonal_(self.policy_head.weight, gain=0.01)
        nn.init.zeros_(self.policy_head.bias)
        self.module = nn.ModuleDict(
            {"trunk": self.trunk, "policy": self.policy_head, "value": self.value_head}
        )
        self.optimizer = torch.optim.Adam(self.module.parameters(), lr=lr, eps=1e-5)
        self.max_grad_norm = max_grad_norm
        self.input_dim = input_dim

    def forward(self, observations: np.ndarray, requires_grad: bool) -> tuple[torch.Tensor, torch.Tensor]:
        inputs = torch.as_tensor(np.asarray(observations, dtype=np.float32))
        if inputs.ndim != 2 or inputs.shape[1] != self.input_dim:
            raise ValueError(
                f"MLP expects observations of shape (N, {self.input_dim}), got {tuple(inputs.shape)}"
            )
        with torch.set_grad_enabled(requires_grad):
            hidden = self.trunk(inputs)
            return self.policy_head(hidden), self.value_head(hidden).squeeze(1)

    def step(self) -> None:
        nn.utils.clip_grad_norm_(self.module.parameters(), self.max_grad_norm)
        self.optimizer.step()
        self.optimizer.zero_grad()

    def save(self, path: str | Path) -> None:
        save_file({name: tensor.contiguous() for name, tensor in self.module.state_dict().items()}, str(path))

    def load(self, path: str | Path) -> None:
        self.module.load_state_dict(load_file(str(path)))

    def size(self) -> dict[str, int]:
        return {"parameters": sum(p.numel() for p in self.module.parameters())}
