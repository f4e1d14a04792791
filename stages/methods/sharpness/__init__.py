"""Sharpness (the top eigenvalue of the training-loss Hessian) of any torch model and loss.

- :mod:`.hessian`: `top_hessian_eigenvalue(model, loss_fn, inputs, targets)` — exact (full Hessian +
  `eigvalsh`) for small parameter counts, Lanczos on Hessian-vector products (`torch.func`, ARPACK through
  `scipy.sparse.linalg.eigsh`) otherwise, with a stated tolerance and iteration cap; the same on a loss of a
  flat parameter vector (`top_eigenvalue(fn, theta)`).
- :mod:`.tracker`: `SharpnessTracker(every=k)`, a callback any training loop calls each step; it records the
  sharpness (and the loss, and 2/η when given) every `k` steps.
- :mod:`.theory`: the closed form of the minimalist model f(x) = (xᵀu)·∏v_i — dataset difficulty
  Q = ‖X⁺y‖², predicted sharpness Ŝ_D = σ₁²Q^{(D−1)/D}/N and the bounds on the sharpness at a balanced global
  minimum.
"""
