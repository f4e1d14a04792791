"""Loss choices as plain data (no torch): the names of the f's and the check of a (name, α) pair.

Params models import this, not the implementation, so a config file is validated without loading torch.
"""

from __future__ import annotations

import math

from pydantic import model_validator

from stages.core.params import StrictModel

NAMES: tuple[str, ...] = ("kl", "reverse_kl", "alpha", "chi2", "js", "hellinger")
REFERENCES: tuple[str, ...] = ("unit", "uniform")


def check_divergence(name: str, alpha: float | None, key: str = "divergence") -> None:
    """Raise a ValueError naming the key for an unknown f, or an α missing, ≤ 0 or given to another f."""
    if name not in NAMES:
        raise ValueError(f"{key}: unknown f {name!r}; known: {', '.join(NAMES)}")
    if name == "alpha":
        if alpha is None or isinstance(alpha, bool) or not isinstance(alpha, int | float):
            raise ValueError(f"alpha: the α-divergence needs a number alpha > 0, got {alpha!r}")
        if not math.isfinite(alpha) or alpha <= 0:
            raise ValueError(f"alpha: the α-divergence needs a finite alpha > 0, got {alpha!r}")
    elif alpha is not None:
        raise ValueError(f"alpha: only the 'alpha' divergence takes alpha (got divergence {name!r})")


class LossSpec(StrictModel):
    """One loss: the f (`divergence`) and, for `alpha`, its α."""

    divergence: str
    alpha: float | None = None

    @model_validator(mode="after")
    def _known(self) -> LossSpec:
        check_divergence(self.divergence, self.alpha)
        return self

    @property
    def label(self) -> str:
        """`kl`, `alpha=1.5`, ..."""
        return f"alpha={self.alpha:g}" if self.divergence == "alpha" else self.divergence
