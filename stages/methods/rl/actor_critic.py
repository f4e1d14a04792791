"""The interface every actor-critic implements, so the PPO loop is the same for trees and networks."""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import ClassVar

import numpy as np
import torch


class ActorCritic(ABC):
    """A discrete-action policy π(a|s) and a value V(s) over encoded observations.

    The PPO loop calls `forward` with gradients on for a minibatch, builds the loss, calls `backward` on it,
    then `step` (one optimiser step: one Adam step for a network, one new tree for GBRL).
    """

    name: ClassVar[str]

    @abstractmethod
    def forward(self, observations: np.ndarray, requires_grad: bool) -> tuple[torch.Tensor, torch.Tensor]:
        """Action logits (N, n_actions) and values (N,)."""

    @abstractmethod
    def step(self) -> None:
        """Apply the gradients of the last backward pass (and clear them)."""

    def set_progress(self, remaining: float) -> None:  # noqa: B027 (an optional hook)
        """Before an update: the fraction of the run left, for a learning-rate schedule (none by default)."""

    @abstractmethod
    def save(self, path: str | Path) -> None:
        """Write the model in a format that loads without unpickling (gbrl's own, or safetensors)."""

    @abstractmethod
    def load(self, path: str | Path) -> None:
        """Load what `save` wrote into this (identically configured) model."""

    @abstractmethod
    def size(self) -> dict[str, int]:
        """Model size: trees for GBRL, parameters for a network."""

    def act(
        self, observations: np.ndarray, generator: torch.Generator, deterministic: bool = False
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Actions, their log-probabilities and the values, without gradients."""
        with torch.no_grad():
            logits, values = self.forward(observations, requires_grad=False)
            distribution = torch.distributions.Categorical(logits=logits)
            if deterministic:
                actions = torch.argmax(logits, dim=1)
            else:
                actions = torch.multinomial(distribution.probs, 1, generator=generator).squeeze(1)
            log_probs = distribution.log_prob(actions)
        return actions.numpy(), log_probs.numpy().astype(np.float64), values.numpy().astype(np.float64)

    def values(self, observations: np.ndarray) -> np.ndarray:
        """V(s) without gradients."""
        with torch.no_grad():
            return self.forward(observations, requires_grad=False)[1].numpy().astype(np.float64)

    def evaluate(
        self, observations: np.ndarray, actions: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """log π(a|s), entropy and V(s) with gradients, for the loss."""
        logits, values = self.forward(observations, requires_grad=True)
        distribution = torch.distributions.Categorical(logits=logits)
        return distribution.log_prob(actions), distribution.entropy(), values
