"""Fusion heads over frozen encoders (CLIMB RQ3): late fusion (mean of per-modality outputs), concatenation +
MLP, and 8-head cross-attention whose queries are the EHR tokens and whose keys/values are the ECG tokens.

Inputs per patient: ECG tokens [time × width] (the frozen encoder's last feature map; pooled mean‖max for late and
concat) and standardised EHR features [features]. Tasks: `binary` (BCE on a logit; AUROC) and `regression` (MSE
on standardised log length of stay; MAE reported in days by the caller).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

HEADS = ("late", "concat", "cross_attention")


def _pool(tokens: torch.Tensor) -> torch.Tensor:
    return torch.cat([tokens.mean(dim=1), tokens.amax(dim=1)], dim=1)


class LateFusion(nn.Module):
    """One MLP per modality; the output is the mean of their outputs."""

    def __init__(self, ecg_width: int, ehr_features: int, hidden: int = 64) -> None:
        super().__init__()
        self.ecg = nn.Sequential(nn.Linear(2 * ecg_width, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        self.ehr = nn.Sequential(nn.Linear(ehr_features, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, tokens: torch.Tensor, ehr: torch.Tensor) -> torch.Tensor:
        return ((self.ecg(_pool(tokens)) + self.ehr(ehr)) / 2).squeeze(1)


class ConcatFusion(nn.Module):
    """[pooled ECG ‖ EHR] → MLP."""

    def __init__(self, ecg_width: int, ehr_features: int, hidden: int = 64) -> None:
        super().__init__()
        self.mlp = nn.Sequential(
            nn.Linear(2 * ecg_width + ehr_features, hidden), nn.ReLU(), nn.Linear(hidden, 1)
        )

    def forward(self, tokens: torch.Tensor, ehr: torch.Tensor) -> torch.Tensor:
        return self.mlp(torch.cat([_pool(tokens), ehr], dim=1)).squeeze(1)


class CrossAttentionFusion(nn.Module):
    """EHR features as tokens (value × learned embedding + feature embedding) query the ECG tokens with
    multi-head attention; [attended ‖ EHR token] averaged over queries → MLP."""

    def __init__(self, ecg_width: int, ehr_features: int, hidden: int = 64, heads: int = 8) -> None:
        super().__init__()
        self.value = nn.Parameter(torch.randn(ehr_features, hidden) * 0.1)
        self.feature = nn.Parameter(torch.randn(ehr_features, hidden) * 0.1)
        self.keys = nn.Linear(ecg_width, hidden)
        self.attention = nn.MultiheadAttention(hidden, heads, batch_first=True)
        self.norm = nn.LayerNorm(hidden)
        self.mlp = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, tokens: torch.Tensor, ehr: torch.Tensor) -> torch.Tensor:
        queries = ehr.unsqueeze(2) * self.value + self.feature  # [batch × features × hidden]
        memory = self.keys(tokens)
        attended, _ = self.attention(queries, memory, memory, need_weights=False)
        joined = torch.cat([self.norm(attended + queries), queries], dim=2).mean(dim=1)
        return self.mlp(joined).squeeze(1)


def make_head(name: str, ecg_width: int, ehr_features: int, hidden: int = 64, heads: int = 8) -> nn.Module:
    """A fusion head by name (`late`, `concat`, `cross_attention`)."""
    if name == "late":
        return LateFusion(ecg_width, ehr_features, hidden)
    if name == "concat":
        return ConcatFusion(ecg_width, ehr_features, hidden)
    if name == "cross_attention":
        return CrossAttentionFusion(ecg_width, ehr_features, hidden, heads)
    raise ValueError(f"unknown fusion head {name!r}; valid: {', '.join(HEADS)}")


@dataclass(frozen=True)
class FusionOptions:
    """Steps, batch, Adam learning rate and weight decay, hidden width, attention heads."""

    steps: int = 300
    batch: int = 32
    lr: float = 1e-3
    weight_decay: float = 1e-4
    hidden: int = 64
    heads: int = 8


def train_head(
    name: str,
    tokens: np.ndarray,
    ehr: np.ndarray,
    target: np.ndarray,
    task: str,
    options: FusionOptions,
    seed: int,
    sample_weights: np.ndarray | None = None,
) -> nn.Module:
    """Train one fusion head on frozen tokens; `sample_weights` (e.g. class-balanced oversampling) set how
    batches are drawn."""
    torch.manual_seed(seed)
    head = make_head(name, tokens.shape[2], ehr.shape[1], options.hidden, options.heads)
    rng = np.random.default_rng(seed)
    optimiser = torch.optim.Adam(head.parameters(), lr=options.lr, weight_decay=options.weight_decay)
    loss_fn = nn.BCEWithLogitsLoss() if task == "binary" else nn.MSELoss()
    t_tokens, t_ehr, t_target = (torch.from_numpy(a.astype(np.float32)) for a in (tokens, ehr, target))
    p = None if sample_weights is None else sample_weights / sample_weights.sum()
    batch = min(options.batch, len(target)) if p is None else options.batch
    for _ in range(options.steps):
        head.train()
        index = torch.from_numpy(rng.choice(len(target), size=batch, replace=p is not None, p=p))
        loss = loss_fn(head(t_tokens[index], t_ehr[index]), t_target[index])
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    head.eval()
    return head


def predict_head(head: nn.Module, tokens: np.ndarray, ehr: np.ndarray) -> np.ndarray:
    """The head's raw outputs (logits or standardised log values)."""
    with torch.no_grad():
        return head(
            torch.from_numpy(tokens.astype(np.float32)), torch.from_numpy(ehr.astype(np.float32))
        ).numpy()
