"""f-divergence losses (Roulet et al., ICML 2025): the f-softargmax by bisection and its Fenchel–Young loss.

    from stages.methods.losses import FenchelYoungLoss, divergence, f_softargmax
    loss = FenchelYoungLoss("alpha", alpha=1.5)(logits, labels)      # entmax-1.5 loss for unit q
    # logits (N, C) or (N, C, d1, ...) as torch.nn.CrossEntropyLoss; labels (N) / (N, d1, ...)
    p = f_softargmax(logits, divergence("chi2"))                      # sparse probabilities

Modules: `divergences` (the table of f), `softargmax` (Algorithm 1 and its Jacobian), `fenchel_young`
(the loss Function and the nn.Module).
"""

from stages.methods.losses.config import NAMES, LossSpec
from stages.methods.losses.divergences import FDivergence, divergence
from stages.methods.losses.fenchel_young import (
    TARGET_TOLERANCE,
    FenchelYoungLoss,
    fenchel_young_index_loss,
    fenchel_young_loss,
)
from stages.methods.losses.softargmax import DEFAULT_ITERATIONS, DEFAULT_TOLERANCE, f_softargmax, solve

__all__ = [
    "DEFAULT_ITERATIONS",
    "DEFAULT_TOLERANCE",
    "NAMES",
    "TARGET_TOLERANCE",
    "FDivergence",
    "FenchelYoungLoss",
    "LossSpec",
    "divergence",
    "f_softargmax",
    "fenchel_young_index_loss",
    "fenchel_young_loss",
    "solve",
]
