"""An MLP actor-critic as SB3 builds PPO's `MlpPolicy` (separate policy and value networks), trained with Adam."""

from __future__ import annotations

import math
from pathlib import Path
from typing import ClassVar

import numpy as np
import torch
from safetensors.torch import load_file, save_file
from torch import nn

from stages.methods.rl.actor_critic import ActorCritic


def _trunk(input_dim: int, hidden: tuple[int, ...]) -> nn.Sequential:
    layers: list[nn.Module] = []
    width = input_dim
    for size in hidden:
        layers += [nn.Linear(width, size), nn.Tanh()]
        width = size
    return nn.Sequential(*layers)


def _orthogonal(layer: nn.Linear, gain: float) -> None:
    nn.init.orthogonal_(layer.weight, gain=gain)
    nn.init.zeros_(layer.bias)


class MLPActorCritic(ActorCritic):
    """SB3's PPO `MlpPolicy`: a policy network and a value network of `hidden` tanh units each (or one shared
    trunk), orthogonal initialisation (gain √2 on hidden layers, 0.01 on the policy head, 1 on the value head,
    zero biases), Adam (eps 1e-5); gradients clipped to a global norm before each Adam step."""

    name: ClassVar[str] = "mlp"

    def __init__(
        self,
        input_dim: int,
        n_actions: int,
        hidden: tuple[int, ...] = (64, 64),
        lr: float = 2.5e-4,
        max_grad_norm: float = 0.5,
        seed: int = 0,
        shared_trunk: bool = False,
        ortho_init: bool = True,
        lr_schedule: str = "constant",
    ):
        torch.manual_seed(seed)
        self.shared_trunk = shared_trunk
        self.policy_trunk = _trunk(input_dim, hidden)
        self.value_trunk = self.policy_trunk if shared_trunk else _trunk(input_dim, hidden)
        width = hidden[-1]
        self.policy_head = nn.Linear(width, n_actions)
        self.value_head = nn.Linear(width, 1)
        modules = {"policy_trunk": self.policy_trunk, "policy": self.policy_head, "value": self.value_head}
        if not shared_trunk:
            modules["value_trunk"] = self.value_trunk
        self.module = nn.ModuleDict(modules)
        if ortho_init:
            for trunk in {id(t): t for t in (self.policy_trunk, self.value_trunk)}.values():
                for layer in trunk:
                    if isinstance(layer, nn.Linear):
                        _orthogonal(layer, math.sqrt(2))
            _orthogonal(self.policy_head, 0.01)
            _orthogonal(self.value_head, 1.0)
        else:
            nn.init.orthogonal_(self.policy_head.weight, gain=0.01)
            nn.init.zeros_(self.policy_head.bias)
        self.lr, self.lr_schedule = lr, lr_schedule
        self.optimizer = torch.optim.Adam(self.module.parameters(), lr=lr, eps=1e-5)
        self.max_grad_norm = max_grad_norm
        self.input_dim = input_dim

    def set_progress(self, remaining: float) -> None:
        """Adam's rate for the next update: lr (constant) or lr × the fraction of the run left (linear)."""
        rate = self.lr * max(remaining, 0.0) if self.lr_schedule == "linear" else self.lr
        for group in self.optimizer.param_groups:
            group["lr"] = rate

    def forward(self, observations: np.ndarray, requires_grad: bool) -> tuple[torch.Tensor, torch.Tensor]:
        inputs = torch.as_tensor(np.asarray(observations, dtype=np.float32))
        if inputs.ndim != 2 or inputs.shape[1] != self.input_dim:
            raise ValueError(
                f"MLP expects observations of shape (N, {self.input_dim}), got {tuple(inputs.shape)}"
            )
        with torch.set_grad_enabled(requires_grad):
            logits = self.policy_head(self.policy_trunk(inputs))
            return logits, self.value_head(self.value_trunk(inputs)).squeeze(1)

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
