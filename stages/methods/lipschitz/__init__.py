"""Lipschitz (orthogonal) networks and their l2 certificates: BRO dense and conv layers (BRONet), Cayley and SOC
orthogonal convolutions, MaxMin, the LLN last layer, the logit-annealing (LA) loss and CE + CR, certified radii
and accuracy, and `icml25 certify`."""
