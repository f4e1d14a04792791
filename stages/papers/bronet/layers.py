"""Step `bronet-layers`: the layer checks, on random (seeded) parameters rather than the identity start.

BRO dense (m × m, n = ⌊r·m⌋) and conv (c_in = c_out = c, per frequency of the padded FFT): max |WᴴW − I|, the
count of eigenvalues −1 (negative eigenvalues of the Hermitian W), the operator norm of the padded-and-cropped
conv by power iteration; the same orthogonality error for Cayley per frequency and SOC's operator norm; the
power-iteration Lipschitz constant of whole random LipConvNets (features after standardisation); the bytes each
layer type saves for backward at equal widths. Writes `layers.json`.
"""

from __future__ import annotations

import torch

from stages.core.context import StepContext
from stages.core.io import write_json
from stages.core.seeding import derive_seed, pin_threads
from stages.methods.lipschitz.certify import empirical_lipschitz, jacobian_norm
from stages.methods.lipschitz.layers import BROConv2d, CayleyConv2d, SOCConv2d, bro_matrix, bro_rank, cayley
from stages.methods.lipschitz.nets import CONVS, LipConvNet, LipConvNetConfig
from stages.methods.lipschitz.train import saved_bytes
from stages.papers.bronet.params import BRONetParams, LayerChecks


def orthogonality_error(w: torch.Tensor) -> float:
    """max |WᴴW − I| over a batch of square matrices."""
    eye = torch.eye(w.shape[-1], dtype=w.dtype)
    return float((w.detach().mT.conj() @ w.detach() - eye).abs().max())


def dense_checks(checks: LayerChecks, seed: int) -> list[dict]:
    rows = []
    for m in checks.dense_sizes:
        n = bro_rank(m, checks.rank)
        generator = torch.Generator().manual_seed(derive_seed(seed, "bronet", "dense", m))
        v = torch.randn(m, n, generator=generator)
        w = bro_matrix(v)
        eigenvalues = torch.linalg.eigvalsh(w.double())
        rows.append(
            {
                "layer": "bro_dense",
                "size": m,
                "rank": n,
                "orthogonality_error": orthogonality_error(w),
                "orthogonality_error_exact": orthogonality_error(bro_matrix(v, eps_ratio=0.0)),
                "symmetry_error": float((w - w.T).abs().max()),
                "negative_eigenvalues": int((eigenvalues < 0).sum()),
                "max_abs_eigenvalue_gap": float((eigenvalues.abs() - 1).abs().max()),
                "spectral_norm": float(torch.linalg.matrix_norm(w.double(), 2)),
            }
        )
    return rows


def operator_norm(layer: torch.nn.Module, channels: int, size: int, iterations: int) -> float:
    """‖layer − bias‖₂ on channels × size × size inputs, by power iteration on its Jacobian (the layer is linear)."""
    x = torch.zeros(1, channels, size, size)
    return jacobian_norm(layer, x, iterations)


def conv_checks(checks: LayerChecks, seed: int) -> list[dict]:
    rows = []
    size = checks.conv_size
    for c in checks.conv_channels:
        torch.manual_seed(derive_seed(seed, "bronet", "conv", c))
        bro = BROConv2d(c, c, 3, size, 1, checks.rank, id_init=False)
        n = bro.weight_v.shape[1]
        with torch.no_grad():
            w = bro.frequency_weights()
            v_hat = torch.fft.rfft2(bro.weight_v, (size + 2, size + 2), norm="ortho").permute(2, 3, 0, 1)
            exact = orthogonality_error(bro_matrix(v_hat, eps_ratio=0.0))
            eigenvalues = torch.linalg.eigvalsh(w.to(torch.complex128))
            negatives = (eigenvalues < 0).sum(dim=1)
            x = torch.randn(16, c, size, size)
            ratios = (bro(x) - bro.bias[:, None, None]).flatten(1).norm(dim=1) / x.flatten(1).norm(dim=1)
        rows.append(
            {
                "layer": "bro_conv",
                "size": c,
                "rank": n,
                "frequencies": len(w),
                "orthogonality_error": orthogonality_error(w),
                "orthogonality_error_exact": exact,
                "negative_eigenvalues_min": int(negatives.min()),
                "negative_eigenvalues_max": int(negatives.max()),
                "max_norm_ratio": float(ratios.max()),
                "mean_norm_ratio": float(ratios.mean()),
                "operator_norm": operator_norm(_unbiased(bro), c, size, checks.power_iterations),
            }
        )
        cay = CayleyConv2d(c, c, 3, 1)
        with torch.no_grad():
            n_pad = size + 2
            w_hat = torch.fft.rfft2(cay.weight, (n_pad, n_pad)).reshape(c, c, -1).permute(2, 0, 1).conj()
            q = cayley(cay.alpha * w_hat / w_hat.norm())
        rows.append(
            {
                "layer": "cayley_conv",
                "size": c,
                "orthogonality_error": orthogonality_error(q),
                "operator_norm": operator_norm(_unbiased(cay), c, size, checks.power_iterations),
            }
        )
        soc = SOCConv2d(c, c, 3, 1).eval()
        rows.append(
            {
                "layer": "soc_conv",
                "size": c,
                "operator_norm": operator_norm(_unbiased(soc), c, size, checks.power_iterations),
            }
        )
    return rows


class _Unbiased(torch.nn.Module):
    def __init__(self, layer: torch.nn.Module) -> None:
        super().__init__()
        self.layer = layer

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layer(x) - self.layer(torch.zeros_like(x))


def _unbiased(layer: torch.nn.Module) -> torch.nn.Module:
    return _Unbiased(layer.eval())


def net_checks(checks: LayerChecks, seed: int) -> list[dict]:
    rows = []
    for conv in CONVS:
        torch.manual_seed(derive_seed(seed, "bronet", "net", conv))
        model = LipConvNet(LipConvNetConfig(conv=conv, width=4, id_init=False)).eval()
        inputs = torch.rand(checks.lipschitz_points, 1, 32, 32)
        rows.append(
            {
                "layer": f"lipconvnet_{conv}",
                "empirical_lipschitz": empirical_lipschitz(model.embed, inputs, checks.power_iterations),
            }
        )
    return rows


def memory_rows(checks: LayerChecks, seed: int) -> list[dict]:
    """Bytes saved for backward by one forward of each conv type (c → c, 3 × 3, 16 × 16, stride 1)."""
    rows = []
    for width in checks.memory_widths:
        torch.manual_seed(derive_seed(seed, "bronet", "memory", width))
        x = torch.randn(checks.memory_batch, width, 16, 16)
        layers = {
            "bro": BROConv2d(width, width, 3, 16, 1, checks.rank),
            "cayley": CayleyConv2d(width, width, 3, 1),
            "soc": SOCConv2d(width, width, 3, 1, init_iters=1),
        }
        for name, layer in layers.items():
            rows.append({"conv": name, "width": width, "saved_bytes": saved_bytes(layer, x.clone())})
    return rows


def run(ctx: StepContext) -> None:
    params: BRONetParams = ctx.params
    pin_threads(params.threads)
    checks, seed = params.layers, ctx.common.seed
    result = {
        "dense": dense_checks(checks, seed),
        "conv": conv_checks(checks, seed),
        "nets": net_checks(checks, seed),
        "memory": memory_rows(checks, seed),
    }
    for row in result["dense"] + result["conv"][::3] + result["nets"]:
        ctx.log(str(row))
    write_json(result, ctx.output("layers"))
