"""PPO with interchangeable actor-critics: gradient-boosted trees (GBRL) or a torch MLP.

- `gae`: generalised advantage estimation over a vectorised rollout;
- `losses`: the clipped PPO objective, the value loss and the entropy bonus;
- `encoders`: observation encoders (continuous arrays, categorical string features);
- `actor_critic`: the interface both actor-critics implement (act, evaluate, step, save/load);
- `gbrl_ac`: GBRL's actor-critic (shared tree or separate policy/value trees), one tree per minibatch;
- `mlp_ac`: an MLP actor-critic (shared tanh trunk), Adam;
- `rollout`: a seeded synchronous vector of gymnasium environments with episode bookkeeping;
- `ppo`: the training loop (`PPOConfig`, `train`), and `evaluate` for episodes under an input shift.

Nothing here knows about papers; environments come from `stages.datasets.environments`.
"""
