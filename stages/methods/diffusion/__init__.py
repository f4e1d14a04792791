"""Diffusion models in EDM form (Karras et al., 2022) and SFBD, the deconvolution loop that trains them from
Gaussian-noisy samples and a small clean set (Lu, Wu & Yu, ICML 2025).

- `edm`: the preconditioning (c_skip, c_out, c_in, c_noise), the EDM loss (ln σ ~ N(P_mean, P_std²), weight
  (σ² + σ_d²)/(σ σ_d)²), EDM's EMA rule and `train_edm` (Adam steps on an array of samples);
- `nets`: the denoiser networks (an MLP for flat vectors: 8×8 images, 2-D points; a small U-Net for images);
- `sampler`: the ρ-grid, its cut at a noise level σ, and the deterministic Heun sampler (S_churn = 0, the last
  step Euler), full from σ_max or partial from any σ;
- `sfbd`: Algorithm 1 (pretrain on the clean set, then K rounds of backward sampling of the noisy set and
  fine-tuning on E_k ∪ clean), a checkpoint per round;
- `metrics`: Fréchet distance, KID, the evaluation CNN whose features they use, W2 and MMD for point clouds;
- `own_data`: a user's arrays checked (named errors) and run end to end (`icml25 deconvolve`).

Nothing here knows about papers.
"""
