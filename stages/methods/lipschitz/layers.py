"""Orthogonal layers: BRO (block reflector, Lai et al. 2025), Cayley (Trockman & Kolter 2021), SOC (Singla &
Feizi 2021), MaxMin, the LLN last layer, and torch's parametrised orthogonal dense layer.

BRO: W = I − 2 V (VᴴV + εI)⁻¹ Vᴴ with ε = 1e-5 · mean diag(VᴴV); V ∈ C^{m×n} (n < m) gives a symmetric
(Hermitian) orthogonal matrix with n eigenvalues −1 and m − n of +1. The conv layer applies it per frequency of
the zero-padded input's rfft2 (orthonormal FFT), truncates it to [c_out, c_in], inverts the FFT and crops.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

EPS_RATIO = 1e-5
"""ε of BRO relative to mean diag(VᴴV) (the official code's `perturb_ratio`)."""


def bro_rank(channels: int, ratio: float) -> int:
    """Columns n of V for a square BRO layer: ⌊ratio · channels⌋, kept in [1, channels − 1]."""
    if not 0 < ratio < 1:
        raise ValueError(f"BRO rank ratio must lie in (0, 1), got {ratio}")
    return min(max(1, int(ratio * channels)), channels - 1) if channels > 1 else 1


def bro_matrix(
    v: torch.Tensor, eps_ratio: float = EPS_RATIO, rows: int | None = None, cols: int | None = None
) -> torch.Tensor:
    """W = I − 2V(VᴴV + εI)⁻¹Vᴴ for V of shape (..., m, n), real or complex; returns its top-left
    (..., rows, cols) block (default the whole m × m), solving only for the smaller side."""
    m, n = v.shape[-2:]
    rows, cols = rows or m, cols or m
    gram = v.mT.conj() @ v
    eps = gram.diagonal(dim1=-2, dim2=-1).mean(-1).real * eps_ratio
    gram = gram + eps[..., None, None] * torch.eye(n, dtype=v.dtype, device=v.device)
    eye = torch.eye(m, dtype=v.dtype, device=v.device)[:rows, :cols]
    if rows <= cols:
        left = torch.linalg.solve(gram, v[..., :rows, :].mT.conj()).mT.conj()
        return eye - 2 * left @ v[..., :cols, :].mT.conj()
    return eye - 2 * v[..., :rows, :] @ torch.linalg.solve(gram, v[..., :cols, :].mT.conj())


class BROLinear(nn.Module):
    """Dense BRO: y = W[:out, :in] x + b with W = BRO(V), V ∈ R^{m×n}, m = max(in, out), n = ⌊rank · m⌋."""

    def __init__(self, in_features: int, out_features: int, rank: float = 0.5, id_init: bool = True) -> None:
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        m = max(in_features, out_features)
        n = bro_rank(m, rank)
        v = torch.zeros(m, n)
        if id_init:
            v[:n, :n] = torch.eye(n)
        else:
            nn.init.orthogonal_(v)
        self.weight_v = nn.Parameter(v)
        self.bias = nn.Parameter(torch.zeros(out_features))

    def weight(self) -> torch.Tensor:
        """The [out, in] block of the orthogonal m × m matrix."""
        return bro_matrix(self.weight_v, rows=self.out_features, cols=self.in_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x.flatten(1), self.weight(), self.bias)


class BROConv2d(nn.Module):
    """Convolutional BRO on `input_size` × `input_size` inputs (after the stride's space-to-depth).

    V ∈ R^{c×n×k×k}: c = n_channels and n = ⌊rank · c⌋ when c_in = c_out, else V is c_max × c_min. Stride 2
    rearranges 2 × 2 blocks into channels first (c_in → 4 c_in)."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int = 3,
        input_size: int = 32,
        stride: int = 1,
        rank: float = 0.125,
        id_init: bool = True,
        bias: bool = True,
    ) -> None:
        super().__init__()
        if stride not in (1, 2) or input_size % stride:
            raise ValueError(f"stride must be 1 or 2 and divide input_size, got {stride}, {input_size}")
        self.stride, self.kernel_size = stride, kernel_size
        self.in_channels, self.out_channels = in_channels * stride**2, out_channels
        self.pad = kernel_size // 2
        self.size = input_size // stride + 2 * self.pad
        big = max(self.in_channels, self.out_channels)
        square = self.in_channels == self.out_channels
        small = bro_rank(big, rank) if square else min(self.in_channels, self.out_channels)
        v = torch.zeros(big, small, kernel_size, kernel_size)
        if id_init:
            v[np.arange(small), np.arange(small), kernel_size // 2, kernel_size // 2] = 1.0
        else:
            nn.init.kaiming_uniform_(v, a=math.sqrt(5))
        self.weight_v = nn.Parameter(v)
        self.bias = nn.Parameter(torch.empty(out_channels)) if bias else None
        if self.bias is not None:
            bound = 1 / math.sqrt(small * kernel_size**2)
            nn.init.uniform_(self.bias, -bound, bound)

    def frequency_weights(self) -> torch.Tensor:
        """(n·(n//2+1), c_out, c_in) complex: BRO of V's orthonormal rfft2 per frequency, truncated."""
        n = self.size
        v_hat = torch.fft.rfft2(self.weight_v, (n, n), norm="ortho").permute(2, 3, 0, 1)
        w_hat = bro_matrix(v_hat, rows=self.out_channels, cols=self.in_channels)
        return w_hat.reshape(n * (n // 2 + 1), self.out_channels, self.in_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.stride > 1:
            x = F.pixel_unshuffle(x, self.stride)
        if self.pad:
            x = F.pad(x, (self.pad,) * 4)
        batch, _, n, _ = x.shape
        if n != self.size:
            raise ValueError(f"BROConv2d built for padded size {self.size}, got {n}")
        x_hat = torch.fft.rfft2(x, norm="ortho").permute(2, 3, 1, 0).reshape(-1, self.in_channels, batch)
        z_hat = (self.frequency_weights() @ x_hat).reshape(n, n // 2 + 1, self.out_channels, batch)
        z = torch.fft.irfft2(z_hat.permute(3, 2, 0, 1), s=(n, n), norm="ortho")
        if self.pad:
            z = z[:, :, self.pad : -self.pad, self.pad : -self.pad]
        return z if self.bias is None else z + self.bias[:, None, None]


def cayley(w: torch.Tensor) -> torch.Tensor:
    """The Cayley transform of (..., c_out, c_in) as the official code computes it: with U the top c_in rows
    and V the rest, A = U − Uᴴ + VᴴV, Q = [(I + A)⁻¹(I − A); −2V(I + A)⁻¹] (transposed when c_in > c_out)."""
    cout, cin = w.shape[-2:]
    if cin > cout:
        return cayley(w.mT).mT
    u, v = w[..., :cin, :], w[..., cin:, :]
    eye = torch.eye(cin, dtype=w.dtype, device=w.device)
    a = u - u.mT.conj() + v.mT.conj() @ v
    inverse = torch.linalg.inv(eye + a)
    return torch.cat((inverse @ (eye - a), -2 * v @ inverse), dim=-2)


class CayleyConv2d(nn.Conv2d):
    """Cayley orthogonal convolution (FFT, circular on the zero-padded input), as in the BRONet code: stride 2
    is space-to-depth and halves the kernel (3 → 1); learnable scale α (init 1) of W/‖W‖."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int = 3, stride: int = 1) -> None:
        if stride == 2:
            in_channels, kernel_size = 4 * in_channels, max(1, kernel_size // 2)
        super().__init__(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.space_to_depth = stride == 2
        self.alpha = nn.Parameter(torch.ones(1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.space_to_depth:
            x = F.pixel_unshuffle(x, 2)
        cout, cin, k, _ = self.weight.shape
        pad = k // 2
        if pad:
            x = F.pad(x, (pad,) * 4)
        batch, _, n, _ = x.shape
        x_hat = torch.fft.rfft2(x).permute(2, 3, 1, 0).reshape(n * (n // 2 + 1), cin, batch)
        shift = _shift(n, -((k - 1) // 2)).to(x.device)
        w_hat = torch.fft.rfft2(self.weight, (n, n)).reshape(cout, cin, -1).permute(2, 0, 1).conj() * shift
        y_hat = (cayley(self.alpha * w_hat / w_hat.norm()) @ x_hat).reshape(n, n // 2 + 1, cout, batch)
        y = torch.fft.irfft2(y_hat.permute(3, 2, 0, 1), s=(n, n))
        if pad:
            y = y[:, :, pad:-pad, pad:-pad]
        return y + self.bias[:, None, None]


def _shift(n: int, s: int) -> torch.Tensor:
    """Per rfft2 frequency, the phase that centres a kernel shifted by s (the official `fft_shift_matrix`)."""
    index = torch.arange(n).repeat(n, 1)
    phase = torch.exp(1j * 2 * np.pi * s * (index + index.T) / n)
    return phase[:, : n // 2 + 1].reshape(-1, 1, 1).to(torch.complex64)


def _unit(tensor: torch.Tensor) -> torch.Tensor:
    return F.normalize(tensor.flatten(), dim=0).view_as(tensor)


def transpose_filter(weight: torch.Tensor) -> torch.Tensor:
    """The filter of the adjoint convolution: channels swapped, kernel flipped."""
    return torch.flip(weight.transpose(0, 1), [2, 3])


class SOCConv2d(nn.Module):
    """Skew orthogonal convolution: exp(S) x by its Taylor series (`train_terms` / `eval_terms` terms), S the
    skew-symmetric filter scaled by the smallest of four power-iteration bounds on its spectral norm. Stride 2 is
    space-to-depth; channels are zero-padded or cropped to c_out (the official SOC's constants)."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int = 3,
        stride: int = 1,
        train_terms: int = 6,
        eval_terms: int = 15,
        init_iters: int = 50,
        update_iters: int = 1,
    ) -> None:
        super().__init__()
        self.stride, self.kernel_size = stride, kernel_size
        self.in_channels, self.out_channels = in_channels * stride**2, out_channels
        self.train_terms, self.eval_terms = train_terms, eval_terms
        self.init_iters, self.update_iters = init_iters, update_iters
        c = max(self.in_channels, self.out_channels)
        self.weight = nn.Parameter(torch.randn(c, c, kernel_size, kernel_size) / math.sqrt(c))
        self.bias = nn.Parameter(torch.empty(out_channels).uniform_(-1 / math.sqrt(c), 1 / math.sqrt(c)))
        shapes = {
            "u1": (1, c, 1, kernel_size),
            "v1": (c, 1, kernel_size, 1),
            "u2": (1, c, kernel_size, 1),
            "v2": (c, 1, 1, kernel_size),
            "u3": (1, c, kernel_size, kernel_size),
            "v3": (c, 1, 1, 1),
            "u4": (c, 1, kernel_size, kernel_size),
            "v4": (1, c, 1, 1),
        }
        for name, shape in shapes.items():
            self.register_buffer(f"_{name}", _unit(torch.randn(shape)))
        self.power_iterations(init_iters)

    def skew(self) -> torch.Tensor:
        return 0.5 * (self.weight - transpose_filter(self.weight))

    @torch.no_grad()
    def power_iterations(self, iterations: int) -> None:
        """Update the four pairs of singular-vector estimates of the skew filter."""
        s = self.skew()
        for _ in range(iterations):
            self._v1 = _unit((s * self._u1).sum((1, 3), keepdim=True))
            self._u1 = _unit((s * self._v1).sum((0, 2), keepdim=True))
            self._v2 = _unit((s * self._u2).sum((1, 2), keepdim=True))
            self._u2 = _unit((s * self._v2).sum((0, 3), keepdim=True))
            self._v3 = _unit((s * self._u3).sum((1, 2, 3), keepdim=True))
            self._u3 = _unit((s * self._v3).sum(0, keepdim=True))
            self._v4 = _unit((s * self._u4).sum((0, 2, 3), keepdim=True))
            self._u4 = _unit((s * self._v4).sum(1, keepdim=True))

    def scaled_skew(self) -> torch.Tensor:
        s = self.skew()
        bounds = [(s * getattr(self, f"_u{i}") * getattr(self, f"_v{i}")).sum() for i in range(1, 5)]
        sigma = torch.minimum(torch.minimum(bounds[0], bounds[1]), torch.minimum(bounds[2], bounds[3]))
        return s / sigma

    def exp_conv(self, x: torch.Tensor, skew: torch.Tensor, terms: int) -> torch.Tensor:
        z = x
        for i in range(terms - 1, 0, -1):
            z = x + F.conv2d(z, skew, padding=self.kernel_size // 2) / i
        return z

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.training:
            self.power_iterations(self.update_iters)
        skew = self.scaled_skew()
        if self.stride > 1:
            x = F.pixel_unshuffle(x, self.stride)
        if self.out_channels > self.in_channels:
            x = F.pad(x, (0, 0, 0, 0, 0, self.out_channels - self.in_channels))
        z = self.exp_conv(x, skew, self.train_terms if self.training else self.eval_terms)
        return z[:, : self.out_channels] + self.bias.view(1, -1, 1, 1)

    @torch.no_grad()
    def norm_bound(self, input_size: int, iterations: int | None = None) -> float:
        """1 + ‖S‖^terms / terms!: the bound on ‖exp(S) truncated‖ the official code multiplies into L."""
        c = max(self.in_channels, self.out_channels)
        side = input_size // self.stride if self.kernel_size > 1 else 1
        generator = torch.Generator().manual_seed(0)
        u = _unit(torch.randn(1, c, side, side, generator=generator))
        skew = self.scaled_skew()
        pad = self.kernel_size // 2
        for _ in range(iterations or self.init_iters):
            v = _unit(F.conv2d(u, skew, padding=pad))
            u = _unit(F.conv2d(v, -skew, padding=pad))
        sigma = F.conv2d(u, skew, padding=pad).norm().item()
        return 1.0 + sigma**self.eval_terms / math.factorial(self.eval_terms)


class MaxMin(nn.Module):
    """Sort pairs of channels (first half against second half): a 1-Lipschitz, gradient-norm-preserving
    activation."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a, b = x.split(x.shape[1] // 2, dim=1)
        return torch.cat([torch.maximum(a, b), torch.minimum(a, b)], dim=1)


class LLNLinear(nn.Linear):
    """Last-layer normalisation: logits z_j = ⟨w_j/‖w_j‖, x⟩ + b_j (each row unit norm)."""

    def normalized_weight(self) -> torch.Tensor:
        return self.weight / self.weight.norm(dim=1, keepdim=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x.flatten(1), self.normalized_weight(), self.bias)


def orthogonal_linear(in_features: int, out_features: int) -> nn.Linear:
    """A dense layer kept (semi-)orthogonal by torch's `parametrizations.orthogonal` (the dense baseline)."""
    return nn.utils.parametrizations.orthogonal(nn.Linear(in_features, out_features))
