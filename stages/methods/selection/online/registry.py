"""Imports every online-annotation strategy so `STRATEGIES` is complete; import `STRATEGIES` from here."""

from stages.methods.selection.online import baselines, info_coevolution
from stages.methods.selection.online.strategy import STRATEGIES, make_strategy

__all__ = ["STRATEGIES", "baselines", "info_coevolution", "make_strategy"]
