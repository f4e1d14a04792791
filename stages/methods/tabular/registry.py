"""The registered synthesizers (`SYNTHESIZERS.build(name, options, key)` validates options)."""

from __future__ import annotations

from stages.core.registry import Registry
from stages.methods.tabular.base import Synthesizer
from stages.methods.tabular.sdv_peers import CTGAN, TVAE, GaussianCopula
from stages.methods.tabular.synthesizers import AdditiveNoise, SMOTEInterpolation, TabSDS, TabSJPPDS

SYNTHESIZERS: Registry[type[Synthesizer]] = Registry("synthesizer")
for _synthesizer in (TabSDS, TabSJPPDS, SMOTEInterpolation, AdditiveNoise, GaussianCopula, CTGAN, TVAE):
    SYNTHESIZERS.add(_synthesizer.name, _synthesizer)

UNAVAILABLE = {
    "arf": "arfpy 0.1.1 (the only release) calls numpy.in1d, removed in NumPy 2.4, and indexes a pandas Series "
    "by position, which pandas 3 refuses; it cannot run beside this stack",
}
"""Peers the paper used that cannot run here, and why (reported, not silently skipped)."""
