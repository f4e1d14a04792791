"""AC(W): a linear map W ∈ R^{d_B×d_A} from A's layer-k to B's layer-j activation space, learned by MSE on the
final-token activations of the same sentences (Xavier init, Adam, mini-batches), then used as f(Wa, b).

The paper trains 10 epochs; here training may also run until W reaches a stated error on held-out sentences
(`train_map_until`), so that an unconverged map is not mistaken for the method."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from stages.models.lm.hooks import last_token_residuals


@dataclass(frozen=True)
class MapTraining:
    """The paper's recipe: 10 epochs, batch 32, Adam at 1e-3 (`epochs` is the most run by `train_map_until`)."""

    epochs: int = 10
    batch_size: int = 32
    learning_rate: float = 1e-3
    seed: int = 0


@dataclass
class MapFit:
    """A trained W with its per-epoch training MSE and held-out relative error ‖Wa − b‖/‖b‖ (mean over rows)."""

    weight: Any
    train_mse: list[float] = field(default_factory=list)
    heldout_error: list[float] = field(default_factory=list)

    @property
    def epochs(self) -> int:
        return len(self.train_mse)


def final_token_activations(lm: Any, sentences: list[str], layer: int) -> Any:
    """(n, d) residual vectors after `layer` at each sentence's last token (plain text, no chat frame);
    sentences are run in order of length (less padding) and returned in the given order."""
    import torch

    ids = [lm.tokenizer.encode(text) for text in sentences]
    order = sorted(range(len(ids)), key=lambda index: len(ids[index]))
    rows = last_token_residuals(lm, [ids[index] for index in order], layer)
    out = torch.empty_like(rows)
    out[torch.tensor(order)] = rows
    return out


def relative_error(weight: Any, source: Any, target: Any) -> float:
    """Mean over rows of ‖W a − b‖ / ‖b‖."""
    residual = source @ weight.T - target
    return float((residual.norm(dim=1) / target.norm(dim=1).clamp_min(1e-12)).mean())


def train_map(source: Any, target: Any, training: MapTraining = MapTraining()) -> tuple[Any, list[float]]:
    """W (d_target × d_source) minimising mean ‖W a − b‖² over the rows for `training.epochs` epochs; returns W
    and the mean loss per epoch."""
    fit = train_map_until(source, target, None, None, training, target_error=None)
    return fit.weight, fit.train_mse


def train_map_until(
    source: Any,
    target: Any,
    heldout_source: Any,
    heldout_target: Any,
    training: MapTraining = MapTraining(),
    target_error: float | None = 0.05,
) -> MapFit:
    """Adam on mean ‖W a − b‖² from a Xavier init, epoch by epoch; stops after the first epoch whose held-out
    relative error is ≤ `target_error` (None: never early), or after `training.epochs` epochs."""
    import torch

    if source.shape[0] != target.shape[0] or source.shape[0] == 0:
        raise ValueError(f"need the same, non-zero number of rows: {source.shape[0]} vs {target.shape[0]}")
    generator = torch.Generator().manual_seed(training.seed)
    weight = torch.empty(target.shape[1], source.shape[1])
    torch.nn.init.xavier_uniform_(weight, generator=generator)
    weight.requires_grad_(True)
    optimiser = torch.optim.Adam([weight], lr=training.learning_rate)
    fit = MapFit(weight.detach())
    for _ in range(training.epochs):
        fit.train_mse.append(_epoch(weight, optimiser, source, target, training.batch_size, generator))
        if heldout_source is not None:
            fit.heldout_error.append(relative_error(weight.detach(), heldout_source, heldout_target))
            if target_error is not None and fit.heldout_error[-1] <= target_error:
                break
    fit.weight = weight.detach()
    return fit


def _epoch(weight: Any, optimiser: Any, source: Any, target: Any, batch_size: int, generator: Any) -> float:
    """One shuffled pass of mini-batch Adam steps; the mean loss over the rows."""
    import torch

    order = torch.randperm(source.shape[0], generator=generator)
    total = 0.0
    for start in range(0, len(order), batch_size):
        rows = order[start : start + batch_size]
        loss = torch.mean((source[rows] @ weight.T - target[rows]) ** 2)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        total += loss.item() * len(rows)
    return total / source.shape[0]
