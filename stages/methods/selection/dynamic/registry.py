"""Imports every dynamic selection method so `SELECTION_METHODS` is complete; import it from here."""

from stages.methods.selection.dynamic import density_consistency, methods
from stages.methods.selection.dynamic.methods import SELECTION_METHODS, make_selection_method

__all__ = ["SELECTION_METHODS", "density_consistency", "make_selection_method", "methods"]
