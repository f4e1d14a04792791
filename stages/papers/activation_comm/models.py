"""The two agents of a run and the swept depths."""

from __future__ import annotations

from typing import Any

from stages.papers.activation_comm.params import ActivationCommParams


def load_agents(params: ActivationCommParams) -> tuple[Any, Any]:
    """(A, B): B is the same weights as A unless `receiver` names another model (the models are stateless,
    so one instance serves as both agents)."""
    from stages.models.lm.loading import load_lm

    sender = load_lm(params.sender)
    receiver = sender if params.receiver is None else load_lm(params.receiver)
    return sender, receiver


def swept_depths(fractions: list[float], n_layers: int) -> list[int]:
    """The distinct k = j layers of the sweep (fraction · L rounded, at least 1), ascending."""
    return sorted({max(1, min(n_layers, round(f * n_layers))) for f in fractions})
