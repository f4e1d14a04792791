"""Dynamic (per-epoch) data selection: a torch sampler that re-selects, augments and suppresses every epoch.

`registry.SELECTION_METHODS` names the methods; :class:`sampler.DynamicSampler` runs one inside any torch
training loop; `consistency` computes the offline semantic-consistency scores the paper's method reads.
"""
