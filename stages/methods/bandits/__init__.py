"""Linear bandits with batched policies: an environment, optimal designs and batched algorithms.

- `environment`: a K-armed linear bandit (arms X ∈ R^{K×d}, parameter θ, Gaussian noise), validated;
- `design`: G-/D-optimal experimental design by Frank–Wolfe with away steps (optionally ridge-regularised);
- `trace`: what every algorithm returns (per-pull arm, reward, pseudo-regret, batch index);
- `algorithms` (registry `ALGORITHMS` in `registry`): BLAE, PhaElimD, E4 (E3TC), rs-OFUL, LinUCB.

Nothing here knows about papers; `icml25 bandit` runs any registered algorithm on a user's arm matrix.
"""
