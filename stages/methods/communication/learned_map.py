"""AC(W): a linear map W ∈ R^{d_B×d_A} from A's layer-k to B's layer-j activation space, learned by MSE on the
final-token activations of the same sentences (Xavier init, Adam, mini-batches), then used as f(Wa, b)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stages.models.lm.hooks import last_token_residuals


@dataclass(frozen=True)
class MapTraining:
    """The paper's recipe: 10 epochs, batch 32, Adam at 1e-3."""

    epochs: int = 10
    batch_size: int = 32
    learning_rate: float = 1e-3
    seed: int = 0


def final_token_activations(lm: Any, sentences: list[str], layer: int) -> Any:
    """(n, d) residual vectors after `layer` at each sentence's last token (plain text, no chat frame)."""
    return last_token_residuals(lm, [lm.tokenizer.encode(text) for text in sentences], layer)


def train_map(source: Any, target: Any, training: MapTraining = MapTraining()) -> tuple[Any, list[float]]:
    """W (d_target × d_source) minimising mean ‖W a − b‖² over the rows; returns W and the mean loss per epoch."""
    import torch

    if source.shape[0] != target.shape[0] or source.shape[0] == 0:
        raise ValueError(f"need the same, non-zero number of rows: {source.shape[0]} vs {target.shape[0]}")
    generator = torch.Generator().manual_seed(training.seed)
    weight = torch.empty(target.shape[1], source.shape[1])
    torch.nn.init.xavier_uniform_(weight, generator=generator)
    weight.requires_grad_(True)
    optimiser = torch.optim.Adam([weight], lr=training.learning_rate)
    losses = []
    for _ in range(training.epochs):
        order = torch.randperm(source.shape[0], generator=generator)
        total = 0.0
        for start in range(0, len(order), training.batch_size):
            rows = order[start : start + training.batch_size]
            loss = torch.mean((source[rows] @ weight.T - target[rows]) ** 2)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            total += loss.item() * len(rows)
        losses.append(total / source.shape[0])
    return weight.detach(), losses
