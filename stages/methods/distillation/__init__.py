"""Point-cloud dataset distillation (DD3D, Bo & Wang, ICML 2025): the PCA rotator, the SIREN point generator,
layer-wise gradient matching against a fresh PointNet, the baselines and the evaluation protocol."""
