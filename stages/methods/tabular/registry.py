"""The registered synthesizers (`SYNTHESIZERS.build(name, options, key)` validates options)."""

from __future__ import annotations

from stages.core.registry import Registry
from stages.methods.tabular.arf_peer import ARF
from stages.methods.tabular.base import Synthesizer
from stages.methods.tabular.sdv_peers import CTGAN, TVAE, GaussianCopula
from stages.methods.tabular.synthesizers import AdditiveNoise, SMOTEInterpolation, TabSDS, TabSJPPDS

SYNTHESIZERS: Registry[type[Synthesizer]] = Registry("synthesizer")
for _synthesizer in (TabSDS, TabSJPPDS, SMOTEInterpolation, AdditiveNoise, GaussianCopula, CTGAN, TVAE, ARF):
    SYNTHESIZERS.add(_synthesizer.name, _synthesizer)

UNAVAILABLE = {
    "tabddpm": "no TabDDPM package runs beside this stack: synthcity 0.2.12 (its only packaged TabDDPM) pins "
    "numpy < 2 and torch < 2.3, and the authors' tab-ddpm code is not a package",
}
"""Peers the paper used that cannot run here, and why (reported, not silently skipped)."""
