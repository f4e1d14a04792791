"""One trainer for every modality: RNP (generator + predictor, attacked for inspection), A2I (attacked and
instructed), and the full-input classifier (the predictor on every unit).

`train_rationalizer(encoder, train, dev, config, objective, seed)` returns the fitted `Rationalizer` and its
per-epoch history on dev (accuracy, sparsity, attack success); `Rationalizer.predict(data)` gives each row's
0/1 selection, the prediction from it, and the attacker's selection and the prediction it provokes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from stages.methods.rationale import metrics
from stages.methods.rationale.base import Batch, Encoder, hard_gumbel_mask
from stages.methods.rationale.config import Objective, RationaleConfig
from stages.methods.rationale.objectives import attack_loss, instruction_loss, sparsity_loss

EVAL_BATCH = 256


@dataclass
class Prediction:
    """Per row: the 0/1 selection (real units), predicted class, and the attacker's selection and the class it
    provokes (None for the full-input classifier)."""

    selected: list[np.ndarray]
    predicted: np.ndarray
    labels: np.ndarray
    attacked: list[np.ndarray] | None = None
    attacked_predicted: np.ndarray | None = None
    gold: list[np.ndarray] | None = None

    def summary(self) -> dict[str, float]:
        """Accuracy, sparsity, attack success (pooled and per class: `attack_success_0`, `attack_success_1`) and
        (with annotations) rationale precision/recall/F1."""
        out = {
            "accuracy": metrics.accuracy(self.predicted, self.labels),
            "sparsity": metrics.sparsity(self.selected),
        }
        if self.attacked_predicted is not None:
            out["attack_success"] = metrics.attack_success(self.attacked_predicted, self.labels)
            by_class = metrics.attack_success_by_class(self.attacked_predicted, self.labels)
            out.update({f"attack_success_{label}": value for label, value in by_class.items()})
        if self.gold is not None:
            out.update(metrics.rationale_prf(self.selected, self.gold))
        return out


@dataclass
class Rationalizer:
    """A fitted generator, predictor and attacker (generator/attacker None for the full-input classifier)."""

    encoder: Encoder
    config: RationaleConfig
    objective: Objective
    target: float
    predictor: nn.Module
    generator: nn.Module | None = None
    attacker: nn.Module | None = None
    history: list[dict[str, float]] = field(default_factory=list)

    def select(self, selector: nn.Module | None, batch: Batch) -> torch.Tensor:
        """The 0/1 rationale of `selector` (every real unit when there is none)."""
        if selector is None:
            return batch.mask
        return hard_gumbel_mask(selector(batch), batch.mask, self.config.tau)

    def nets(self) -> list[nn.Module]:
        return [net for net in (self.generator, self.predictor, self.attacker) if net is not None]

    @torch.no_grad()
    def predict(self, data: Any, seed: int = 0) -> Prediction:
        """Selections and predictions for every row of `data`, in row order (Gumbel samples drawn from `seed`,
        so the same model, data and seed give the same selections)."""
        for net in self.nets():
            net.eval()
        state = torch.random.get_rng_state()
        torch.manual_seed(seed)
        try:
            return self._predict(data)
        finally:
            torch.random.set_rng_state(state)

    def _predict(self, data: Any) -> Prediction:
        selected, attacked, gold, predicted, attacked_predicted, labels = [], [], [], [], [], []
        for batch in batches(self.encoder, data, np.arange(self.encoder.size(data)), EVAL_BATCH):
            z = self.select(self.generator, batch)
            predicted.append(self.predictor(batch, z).argmax(-1))
            labels.append(batch.labels)
            selected += split_rows(self.encoder, z, batch)
            if batch.gold is not None:
                gold += split_rows(self.encoder, batch.gold, batch)
            if self.attacker is not None:
                z_attack = self.select(self.attacker, batch)
                attacked_predicted.append(self.predictor(batch, z_attack).argmax(-1))
                attacked += split_rows(self.encoder, z_attack, batch)
        return Prediction(
            selected=selected,
            predicted=torch.cat(predicted).numpy(),
            labels=torch.cat(labels).numpy(),
            attacked=attacked or None,
            attacked_predicted=torch.cat(attacked_predicted).numpy() if attacked_predicted else None,
            gold=gold or None,
        )


def split_rows(encoder: Encoder, values: torch.Tensor, batch: Batch) -> list[np.ndarray]:
    """A per-unit tensor of a batch as one array per row (real units only)."""
    array = values.detach().numpy()
    if encoder.ordered:
        lengths = batch.mask.sum(dim=1).long().tolist()
        return [array[row, :length].copy() for row, length in enumerate(lengths)]
    rows = encoder.unit_rows(batch).numpy()
    return [array[rows == row].copy() for row in range(batch.size)]


def batches(encoder: Encoder, data: Any, order: np.ndarray, size: int) -> Iterator[Batch]:
    """Consecutive batches of `size` rows in `order`."""
    for start in range(0, len(order), size):
        yield encoder.batch(data, order[start : start + size].tolist())


def planted_fraction(encoder: Encoder, data: Any) -> float:
    """Share of annotated units among real units (the default sparsity target)."""
    batch = encoder.batch(data, list(range(encoder.size(data))))
    if batch.gold is None:
        raise ValueError("no annotations: set the config's `sparsity` target explicitly")
    return float(batch.gold.sum() / batch.mask.sum())


def build(
    encoder: Encoder, data: Any, config: RationaleConfig, objective: Objective, target: float
) -> Rationalizer:
    """New nets for `objective` (the full-input classifier has a predictor only)."""
    selectors = objective != "full"
    return Rationalizer(
        encoder=encoder,
        config=config,
        objective=objective,
        target=target,
        predictor=encoder.predictor(data, config),
        generator=encoder.selector(data, config) if selectors else None,
        attacker=encoder.selector(data, config) if selectors else None,
    )


def cooperative_loss(model: Rationalizer, batch: Batch, attacking: bool) -> torch.Tensor:
    """Step 1: the RNP loss of generator + predictor, plus A2I's instruction once the attacker is on."""
    config = model.config
    z = model.select(model.generator, batch)
    loss = config.cls_weight * F.cross_entropy(model.predictor(batch, z), batch.labels)
    if model.generator is not None:
        loss = loss + config.sparsity_weight * sparsity_loss(z, batch.mask, model.target)
        loss = loss + config.continuity_weight * model.encoder.continuity(z, batch)
    if model.objective == "a2i" and attacking:
        loss = loss + instruction_term(model, batch)
    return loss


def instruction_term(model: Rationalizer, batch: Batch) -> torch.Tensor:
    """A2I's instruction, weighted: the attacker is frozen (Z_A a constant), so it reaches the predictor only."""
    with torch.no_grad():
        z_attack = model.select(model.attacker, batch)
    attacked = model.predictor(batch, z_attack)
    weight = model.config.cls_weight * model.config.instruction_weight
    return weight * instruction_loss(attacked, batch.labels)


def attacker_loss(model: Rationalizer, batch: Batch) -> torch.Tensor:
    """Step 2: the attacker's loss (flip the predictor) with the same sparsity and continuity terms."""
    config = model.config
    z_attack = model.select(model.attacker, batch)
    loss = config.cls_weight * attack_loss(model.predictor(batch, z_attack), batch.labels)
    loss = loss + config.sparsity_weight * sparsity_loss(z_attack, batch.mask, model.target)
    return loss + config.continuity_weight * model.encoder.continuity(z_attack, batch)


def train_epoch(
    model: Rationalizer, data: Any, order: np.ndarray, cooperative, attack, attacking: bool
) -> int:
    """One pass over `data` in `order`; returns the number of rows seen."""
    for net in model.nets():
        net.train()
    seen = 0
    for batch in batches(model.encoder, data, order, model.config.batch_size):
        cooperative.zero_grad()
        cooperative_loss(model, batch, attacking).backward()
        cooperative.step()
        if attacking:
            attack.zero_grad()
            attacker_loss(model, batch).backward()
            attack.step()  # only the attacker's parameters move; the predictor's stray gradients are cleared
        seen += batch.size
    return seen


def train_rationalizer(
    encoder: Encoder,
    train: Any,
    dev: Any | None,
    config: RationaleConfig,
    objective: Objective,
    seed: int,
    on_epoch: Callable[[dict[str, float]], None] | None = None,
) -> Rationalizer:
    """Fit `objective` (`rnp`, `a2i` or `full`) on `train`, recording dev metrics after every epoch."""
    if objective not in ("rnp", "a2i", "full"):
        raise ValueError(f"unknown objective {objective!r}; valid: rnp, a2i, full")
    torch.manual_seed(seed)
    target = config.sparsity if config.sparsity is not None else planted_fraction(encoder, train)
    model = build(encoder, train, config, objective, target)
    trainable = [p for net in (model.generator, model.predictor) if net is not None for p in net.parameters()]
    cooperative = torch.optim.Adam([p for p in trainable if p.requires_grad], lr=config.lr)
    attack = None
    if model.attacker is not None:
        attack = torch.optim.Adam([p for p in model.attacker.parameters() if p.requires_grad], lr=config.lr)
    rng = np.random.default_rng(seed)
    for epoch in range(config.epochs):
        attacking = attack is not None and epoch >= config.attack_from_epoch
        train_epoch(model, train, rng.permutation(encoder.size(train)), cooperative, attack, attacking)
        if dev is not None:
            record = {"epoch": epoch + 1, **model.predict(dev).summary()}
            model.history.append(record)
            if on_epoch is not None:
                on_epoch(record)
    return model
