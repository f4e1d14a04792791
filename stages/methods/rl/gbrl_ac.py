"""GBRL's actor-critic (gbrl 1.1.9): gradient-boosted trees whose outputs are [action logits, value].

Each `step` fits one tree to the per-sample functional gradient of the loss (the gradient of the loss with
respect to the model's outputs, times N so it is per sample, clipped per sample) and adds it with the output
slice's SGD learning rate: with a shared tree the leaves hold [logits, value] (one tree per minibatch), with
separate trees a policy tree and a value tree are fitted.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import numpy as np
import torch

from stages.methods.rl.actor_critic import ActorCritic
from stages.methods.rl.clipping import clip_per_sample
from stages.methods.rl.config import GBRLConfig


def _build(config: GBRLConfig, input_dim: int, n_actions: int):
    from gbrl.models import ActorCritic as GBRLModel

    shared = config.shared_tree
    return GBRLModel(
        tree_struct={
            "max_depth": config.max_depth,
            "grow_policy": config.grow_policy,
            "n_bins": config.n_bins,
            "min_data_in_leaf": 0,
            "par_th": 2,
        },
        input_dim=input_dim,
        output_dim=n_actions + 1,
        policy_optimizer={"algo": "SGD", "lr": config.policy_lr, "start_idx": 0, "stop_idx": n_actions},
        # a separate value ensemble has one output of its own: its slice is [0, 1)
        value_optimizer={
            "algo": "SGD",
            "lr": config.value_lr,
            "start_idx": n_actions if shared else 0,
            "stop_idx": n_actions + 1 if shared else 1,
        },
        shared_tree_struct=shared,
        params={"split_score_func": config.split_score_func, "generator_type": config.generator_type},
    )


# gbrl 1.1.9 writes its 24-byte serialisation header struct raw, alignment padding included: bytes 6–7 and
# 20–23 hold whatever was in memory (seen: fragments of stack and heap addresses), so the same model gave other
# bytes in another process. They are never read back; zeroing them makes a saved model's bytes a function of the
# model alone. (The metadata struct after it has no padding: its bool and three 1-byte enums fill 4 bytes.)
PADDING = ((6, 2), (20, 4))
VERSION = b"\x01\x00\x01\x00\x09\x00"  # 1.1.9


def zero_padding(path: Path) -> None:
    """Zero the alignment padding of one `.gbrl_model` file written by gbrl 1.1.9."""
    data = bytearray(path.read_bytes())
    if data[:6] != VERSION:
        raise ValueError(f"{path}: not a gbrl 1.1.9 model file (header {bytes(data[:6]).hex()})")
    for offset, length in PADDING:
        data[offset : offset + length] = bytes(length)
    path.write_bytes(bytes(data))


class GBRLActorCritic(ActorCritic):
    """PPO's actor-critic as a GBT ensemble; observations are float arrays or object arrays of strings."""

    name: ClassVar[str] = "gbrl"

    def __init__(self, config: GBRLConfig, input_dim: int, n_actions: int):
        self.config = config
        self.input_dim = input_dim
        self.n_actions = n_actions
        self.model = _build(config, input_dim, n_actions)
        self._outputs: tuple[torch.Tensor, torch.Tensor] | None = None

    def _check(self, observations: np.ndarray) -> np.ndarray:
        observations = np.asarray(observations)
        if observations.ndim != 2 or observations.shape[1] != self.input_dim:
            raise ValueError(
                f"GBRL expects observations of shape (N, {self.input_dim}), got {tuple(observations.shape)}"
            )
        return observations if observations.dtype == object else observations.astype(np.float32)

    def forward(self, observations: np.ndarray, requires_grad: bool) -> tuple[torch.Tensor, torch.Tensor]:
        inputs = self._check(observations)
        logits, values = self.model(inputs, requires_grad=requires_grad)
        if requires_grad:
            self._outputs = (logits, values)
            self._inputs = inputs
        return logits, values.reshape(-1)

    def step(self) -> None:
        if self._outputs is None or self._outputs[0].grad is None:
            raise RuntimeError("GBRL step before a backward pass through forward(requires_grad=True)")
        logits, values = self._outputs
        n = logits.shape[0]
        policy_grads = clip_per_sample(logits.grad.detach() * n, self.config.policy_grad_clip)
        value_grads = clip_per_sample(values.grad.detach() * n, self.config.value_grad_clip)
        self.model.step(self._inputs, policy_grads=policy_grads, value_grads=value_grads)
        self._outputs = None

    def save(self, path: str | Path) -> None:
        """gbrl's own binary format: `<path>.gbrl_model` (shared) or `<path>_policy/_value.gbrl_model` + meta."""
        self.model.save_learner(str(path))
        suffixes = (
            ("_policy.gbrl_model", "_value.gbrl_model") if not self.config.shared_tree else (".gbrl_model",)
        )
        for suffix in suffixes:
            zero_padding(Path(f"{path}{suffix}"))

    def load(self, path: str | Path) -> None:
        from gbrl.models import ActorCritic as GBRLModel

        loaded = GBRLModel.load_learner(str(path), "cpu")
        if loaded.shared_tree_struct != self.config.shared_tree:
            raise ValueError(
                f"{path}: the saved model's tree structure differs from this config's shared_tree"
            )
        self.model = loaded

    def size(self) -> dict[str, int]:
        trees = self.model.get_num_trees()
        total = int(sum(trees)) if isinstance(trees, tuple) else int(trees)
        return {"trees": total, "iterations": int(self.model.get_total_iterations())}
