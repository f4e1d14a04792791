"""Approximate vanishing ideals of labelled latents and VI-Net (Pelleriti, Zimmer, Wirth & Pokutta, ICML 2025).

- `terms`: monomials as exponent vectors, deglex order, the border of an order ideal, batched evaluation;
- `avi`: OAVI (Frank–Wolfe over the L1 ball) and ABM (smallest singular vector), degree by degree;
- `layer`: the pruning score s(p), top-k selection, the polynomial layer G(z) = |p(z)|, random monomials;
- `resnet`: a CIFAR-style ResNet that can be cut after any 3×3 convolution, and its training loop;
- `vinet`: PCA + tanh, the head recipe, per-class fitting, VI-Net and the linear probe with parameter counts;
- `own_data`: a user's embeddings table checked and run end to end (`icml25 vanishing-ideals`).

Nothing here knows about papers.
"""
