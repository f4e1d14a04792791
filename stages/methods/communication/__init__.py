"""Communication between two LMs (Ramesh & Li, ICML 2025): B's last prompt-token residual vector at layer j is
replaced, once, by f(a, b) with a = A's last-token vector at layer k (`graft`); f ∈ {sum, mean, replace}
(`combine`) or f(Wa, b) with a map W learned by MSE on sentence activations (`learned_map`); baselines silent,
skyline and natural-language messages (`baselines`); analytic FLOPs of each (`compute`, the paper's Eq. 1–2).
"""
