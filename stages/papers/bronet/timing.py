"""Step `bronet-timing`, a benchmark step: forward + backward seconds of one BRO, Cayley and SOC convolution
(c → c, 3 × 3, stride 1) at equal widths, in interleaved repeats (seeded order), and the speed claim. Wall-clock
seconds differ on every run, so this step writes only `timings/` files (per-repeat seconds, the claim, the
figure), which no data output reads."""

from __future__ import annotations

import numpy as np
import torch

from stages.core.claims import compare_ratio, verdict_claim, write_claims
from stages.core.context import StepContext
from stages.core.io import write_json
from stages.core.metrics import new_figure, save_figure
from stages.core.progress import progress
from stages.core.seeding import derive_seed, pin_threads
from stages.core.timing import interleaved_seconds
from stages.methods.lipschitz.layers import BROConv2d, CayleyConv2d, SOCConv2d
from stages.papers.bronet.params import BRONetParams

LAYERS = ("bro", "cayley", "soc")


def step_function(name: str, width: int, size: int, batch: int, seed: int):
    """One training step's forward + backward of a fresh layer on a fixed batch."""
    torch.manual_seed(seed)
    layer = {
        "bro": lambda: BROConv2d(width, width, 3, size, 1, 0.5),
        "cayley": lambda: CayleyConv2d(width, width, 3, 1),
        "soc": lambda: SOCConv2d(width, width, 3, 1, init_iters=5),
    }[name]().train()
    x = torch.randn(batch, width, size, size)

    def step() -> None:
        layer.zero_grad(set_to_none=True)
        layer(x).square().sum().backward()

    return step


def run(ctx: StepContext) -> None:
    params: BRONetParams = ctx.params
    pin_threads(params.threads)
    timing = params.timing
    rows = []
    for width in progress(timing.widths, "bronet timing"):
        functions = {
            name: step_function(
                name, width, timing.size, timing.batch, derive_seed(ctx.common.seed, "timing", width)
            )
            for name in LAYERS
        }
        seconds = interleaved_seconds(
            functions, repeats=timing.repeats, seed=derive_seed(ctx.common.seed, "bronet-timing", width)
        )
        for name, values in seconds.items():
            rows.append(
                {
                    "layer": name,
                    "width": width,
                    "repeats": [round(v, 6) for v in values],
                    "median": float(np.median(values)),
                }
            )
    write_json({"size": timing.size, "batch": timing.batch, "rows": rows}, ctx.output("repeats"))
    by = {(row["layer"], row["width"]): row["repeats"] for row in rows}
    units = [(width, i) for width in timing.widths for i in range(timing.repeats)]

    def ratios(other: str) -> dict[str, float]:
        return {f"{w}/{i}": by[("bro", w)][i] / by[(other, w)][i] for w, i in units}

    band, conf = params.claims.cayley_band, params.claims.confidence
    evidence = [
        compare_ratio("seconds BRO / SOC", ratios("soc"), 1.0, "below", conf, unit="(width, repeat) pairs"),
        compare_ratio(
            "seconds BRO / Cayley", ratios("cayley"), band, "below", conf, unit="(width, repeat) pairs"
        ),
    ]
    claim = verdict_claim(
        id="bro_speed",
        statement="BRO is faster than SOC; its runtime is similar to Cayley's (LipConvNet benchmark, Fig. 2).",
        measured={
            f"median_seconds_{layer}": {
                str(w): row["median"] for row in rows for w in [row["width"]] if row["layer"] == layer
            }
            for layer in LAYERS
        },
        criterion=f"forward + backward of one c → c 3 × 3 conv at {timing.size} × {timing.size}, batch {timing.batch}, "
        f"widths {timing.widths}, {timing.repeats} interleaved repeats: geometric-mean ratio BRO/SOC wholly below 1 "
        f"and BRO/Cayley wholly below {band} (t over the log-ratios of (width, repeat) pairs). One-sided: the paper "
        "finds BRO similar to Cayley and ahead at large widths, so BRO faster than Cayley is within the claim",
        evidence=evidence,
        could_hold="BRO needs one batched solve per frequency and no series; SOC runs 6 convolutions per pass.",
        could_fail="On CPU the per-frequency complex solves cost more than SOC's small convolutions or than "
        "Cayley's inverse.",
        unit="repeat",
    )
    ctx.log(f"{claim.id}: {claim.verdict}: {claim.reason}")
    write_claims([claim], ctx.output("claims"))
    figure, axis = new_figure()
    for layer in LAYERS:
        axis.plot(
            timing.widths,
            [by_median for by_median in (np.median(by[(layer, w)]) * 1000 for w in timing.widths)],
            marker="o",
            label=layer,
        )
    axis.set(
        xlabel="channels",
        ylabel="ms per forward + backward",
        title=f"batch {timing.batch}, {timing.size}×{timing.size}",
    )
    axis.legend()
    path = ctx.output("figure")
    path.parent.mkdir(parents=True, exist_ok=True)
    save_figure(figure, path)
