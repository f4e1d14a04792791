"""Step `fdiv_losses-operator` (a): Algorithm 1 against closed forms and the `entmax` library, in float64.

On random scores (several batch shapes and scales) plus adversarial rows (ties, a dominant score, masked
entries): the largest |bisection − closed form| for softmax (KL), sparsemax (α = 2), entmax-1.5 and
entmax_bisect (α = 1.3); the losses against cross-entropy (unit and uniform q), the sparsemax loss and the
entmax-1.5 loss; |Σp − 1| and whether exact zeros occur, for every configured f; the card's unit vs
uniform q relation. Also draws the operator on a 2-D slice of 3-class scores.
"""

from __future__ import annotations

import entmax
import numpy as np
import torch

from stages.core.context import StepContext
from stages.core.io import write_json
from stages.core.metrics import new_figure, save_figure
from stages.methods.losses import divergence, f_softargmax, fenchel_young_loss
from stages.papers.fdiv_losses.params import FdivParams
from stages.papers.fdiv_losses.threads import use_one_thread

SHAPES = ((64, 10), (16, 97), (4, 1000))
SCALES = (0.5, 3.0, 30.0)


def check_scores(seed: int) -> list[torch.Tensor]:
    """Random float64 score batches at several shapes and scales, and adversarial rows."""
    generator = torch.Generator().manual_seed(seed)
    batches = [
        torch.randn(*shape, generator=generator, dtype=torch.float64) * scale
        for shape in SHAPES
        for scale in SCALES
    ]
    ties = torch.zeros(3, 10, dtype=torch.float64)
    dominant = torch.zeros(3, 10, dtype=torch.float64)
    dominant[:, 0] = 1e4
    return [*batches, ties, dominant]


def largest(values) -> float:
    """Largest absolute value over a list of tensors."""
    return float(max(value.abs().max() for value in values))


def closed_form_errors(batches, iterations: int) -> dict[str, float]:
    """|bisection − reference| for the operators and the losses."""
    kl, a2, a15, a13 = (
        divergence("kl"),
        divergence("alpha", 2.0),
        divergence("alpha", 1.5),
        divergence("alpha", 1.3),
    )
    errors = {
        "softmax": largest(
            f_softargmax(t, kl, iterations=iterations) - torch.softmax(t, -1) for t in batches
        ),
        "sparsemax": largest(
            f_softargmax(t, a2, iterations=iterations) - entmax.sparsemax(t, -1) for t in batches
        ),
        "entmax15": largest(
            f_softargmax(t, a15, iterations=iterations) - entmax.entmax15(t, -1) for t in batches
        ),
        "entmax_bisect_1.3": largest(
            f_softargmax(t, a13, iterations=iterations) - entmax.entmax_bisect(t, 1.3, n_iter=100)
            for t in batches
        ),
    }
    labelled = [(t, torch.arange(len(t)) % t.shape[-1]) for t in batches]
    one_hot = [(t, y, torch.nn.functional.one_hot(y, t.shape[-1]).double()) for t, y in labelled]
    errors["loss_kl_vs_ce_unit"] = largest(
        fenchel_young_loss(t, y1, kl, iterations=iterations)
        - torch.nn.functional.cross_entropy(t, y, reduction="none")
        for t, y, y1 in one_hot
    )
    errors["loss_kl_vs_ce_uniform"] = largest(
        fenchel_young_loss(
            t, y1, kl, q=torch.full((t.shape[-1],), 1 / t.shape[-1], dtype=t.dtype), iterations=iterations
        )
        - torch.nn.functional.cross_entropy(t, y, reduction="none")
        for t, y, y1 in one_hot
    )
    errors["loss_alpha2_vs_sparsemax_loss"] = largest(
        fenchel_young_loss(t, y1, a2, iterations=iterations) - entmax.SparsemaxLoss(reduction="none")(t, y)
        for t, y, y1 in one_hot
    )
    errors["loss_alpha15_vs_entmax15_loss"] = largest(
        fenchel_young_loss(t, y1, a15, iterations=iterations) - entmax.Entmax15Loss(reduction="none")(t, y)
        for t, y, y1 in one_hot
    )
    return errors


def per_f_checks(params: FdivParams, batches, iterations: int) -> dict[str, dict]:
    """For each configured loss: largest |Σp − 1|, whether any exact zero occurred, and whether f′(0) is finite."""
    masked = batches[0].masked_fill(torch.arange(batches[0].shape[-1]) % 4 == 0, -torch.inf)
    checks = {}
    for label, spec in params.losses.items():
        div = divergence(spec.divergence, spec.alpha)
        outputs = [f_softargmax(t, div, iterations=iterations) for t in batches[:-2]]
        checks[label] = {
            "f": spec.label,
            "simplex_error": largest(p.sum(-1) - 1 for p in outputs),
            "has_zeros": bool(any((p == 0).any() for p in outputs)),
            "sparse_f": div.sparse,
            "masked_entries_zero": bool(
                (f_softargmax(masked, div, iterations=iterations)[:, ::4] == 0).all()
            ),
            "adversarial_finite": bool(
                all(torch.isfinite(f_softargmax(t, div, iterations=iterations)).all() for t in batches[-2:])
            ),
        }
    return checks


def reference_relation(batches, iterations: int) -> float:
    """max |p(θ; q = 1/k) − p(θ·k^{1−α}; unit)| over α ∈ {1.5, 2} (the card's q = c·1 relation)."""
    errors = []
    for alpha in (1.5, 2.0):
        div = divergence("alpha", alpha)
        for t in batches[:-2]:
            k = t.shape[-1]
            uniform = f_softargmax(t, div, q=torch.full((k,), 1 / k, dtype=t.dtype), iterations=iterations)
            errors.append(uniform - f_softargmax(t * (1 / k) ** (alpha - 1), div, iterations=iterations))
    return largest(errors)


def plot_slice(params: FdivParams, path) -> None:
    """p₁ of the f-softargmax on θ = (x, y, 0), one panel per configured loss (white: p₁ = 0 exactly)."""
    grid = np.linspace(-3, 3, 121)
    x, y = np.meshgrid(grid, grid)
    theta = torch.from_numpy(np.stack([x, y, np.zeros_like(x)], axis=-1))
    labels = list(params.losses)
    columns = min(4, len(labels))
    rows = -(-len(labels) // columns)
    figure, axes = new_figure(3.0 * columns, 2.8 * rows, ncols=columns, nrows=rows)
    for axis, label in zip(np.ravel(axes), labels, strict=False):
        spec = params.losses[label]
        p = f_softargmax(theta, divergence(spec.divergence, spec.alpha), iterations=params.iterations)[
            ..., 0
        ].numpy()
        image = np.ma.masked_where(p == 0, p)
        axis.imshow(image, origin="lower", extent=(-3, 3, -3, 3), vmin=0, vmax=1, cmap="viridis")
        axis.set_title(f"{label} ({spec.label})", fontsize=9)
        axis.set_xlabel("θ₁")
        axis.set_ylabel("θ₂")
    for axis in np.ravel(axes)[len(labels) :]:
        axis.axis("off")
    save_figure(figure, path)


def run(ctx: StepContext) -> None:
    """Run the checks, write them and the slice figure."""
    params: FdivParams = ctx.params
    use_one_thread()
    batches = check_scores(ctx.common.seed)
    errors = closed_form_errors(batches, params.iterations)
    payload = {
        "iterations": params.iterations,
        "dtype": "float64",
        "closed_form_errors": errors,
        "per_f": per_f_checks(params, batches, params.iterations),
        "unit_vs_uniform_q_error": reference_relation(batches, params.iterations),
        "inputs": {
            "shapes": [list(s) for s in SHAPES],
            "scales": list(SCALES),
            "adversarial": ["ties", "1e4 gap"],
        },
    }
    for name, value in errors.items():
        ctx.log(f"{name}: {value:.2e}")
    write_json(payload, ctx.output("operator_checks"))
    plot_slice(params, ctx.output("slice_figure"))
