"""Imports every core-set selector so `SELECTORS` is complete; import `SELECTORS` from here."""

from stages.methods.selection import el2n, forgetting, herding, kcenter, mrmc, random_subset
from stages.methods.selection.coreset import SELECTORS, make_selector

__all__ = ["SELECTORS", "el2n", "forgetting", "herding", "kcenter", "make_selector", "mrmc", "random_subset"]
