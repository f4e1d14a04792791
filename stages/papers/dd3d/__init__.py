"""DD3D (Bo & Wang, ICML 2025): point cloud dataset distillation with a PCA rotator and a resolution-free generator."""
