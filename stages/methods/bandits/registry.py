"""The registered bandit algorithms (`ALGORITHMS.build(name, options, key)` validates options)."""

from __future__ import annotations

from stages.core.registry import Registry
from stages.methods.bandits.base import BanditAlgorithm
from stages.methods.bandits.blae import BLAE
from stages.methods.bandits.e4 import E4
from stages.methods.bandits.oful import LinUCB, RarelySwitchingOFUL
from stages.methods.bandits.phased_elimination import PhasedElimination

ALGORITHMS: Registry[type[BanditAlgorithm]] = Registry("bandit algorithm")
for _algorithm in (BLAE, PhasedElimination, E4, RarelySwitchingOFUL, LinUCB):
    ALGORITHMS.add(_algorithm.name, _algorithm)
