"""Step `vanishing_ideals-timing`, a benchmark step: throughput (images per second) of the full network and of the
first seed's VI-Net at every cut, on batches of `timing.batch_size` test images, every model timed in each of
`timing.repeats` interleaved rounds (seeded random order, warm-up excluded, threads fixed); the throughput claims.
`timing`, the cuts and `headline_cut` are read from the chosen scale's grid (`scale: default | full`).

- `small_cut_faster` (the headline's speed part): at the grid's `headline_cut`, full-net seconds / VI-Net seconds per
  round, t interval of the mean log-ratio over rounds wholly above 1;
- `throughput_falls_with_depth`: VI-Net seconds at the deepest cut / at the shallowest, per round, wholly above 1
  (adjacent cuts and each cut's speed-up over the full net are recorded; no speed-up is claimed at the deepest).

Wall-clock seconds differ on every run: this step writes only under `timings/` and no data output reads them.
"""

from __future__ import annotations

import itertools

import numpy as np
import torch
from safetensors.numpy import load_file

from stages.core.claims import Claim, compare_ratio, verdict_claim, write_claims
from stages.core.context import StepContext
from stages.core.io import write_json
from stages.core.metrics import new_figure, save_figure
from stages.core.seeding import derive_seed, pin_threads
from stages.core.timing import interleaved_seconds
from stages.methods.ideals.resnet import TruncatedResNet
from stages.methods.ideals.vinet import VINet, head_from_tensors, pca_from_tensors
from stages.papers.vanishing_ideals.data import load_net, load_prepared
from stages.papers.vanishing_ideals.params import VanishingIdealsParams


def rounds_ratio(numerator: list[float], denominator: list[float]) -> dict[str, float]:
    """Per interleaved round r: numerator[r] / denominator[r] (both measured in the same round)."""
    return {str(r): a / b for r, (a, b) in enumerate(zip(numerator, denominator, strict=True))}


def speed_claims(params: VanishingIdealsParams, seconds: dict[str, list[float]], images: int) -> list[Claim]:
    """The two throughput claims from per-round seconds of every model."""
    cuts, confidence = params.grid.fit.cuts, params.claims.confidence
    headline = params.grid.headline_cut
    speedups = {cut: rounds_ratio(seconds["full_net"], seconds[f"vinet@{cut}"]) for cut in cuts}
    median_ips = {name: images / float(np.median(values)) for name, values in seconds.items()}
    faster = compare_ratio(
        f"full-net seconds / VI-Net seconds at cut {headline} (batch {params.grid.timing.batch_size})",
        speedups[headline],
        1.0,
        "above",
        confidence,
        unit="interleaved rounds",
    )
    small = verdict_claim(
        id="small_cut_faster",
        statement="VI-Net at the Small cut has a higher throughput than the full network (CIFAR-10: 79,307 vs "
        "66,533 img/s, batch 256).",
        measured={
            "images_per_second_median": {name: round(value, 1) for name, value in median_ips.items()},
            "speedup_geomean_by_cut": {
                str(cut): round(float(np.exp(np.mean(np.log(list(values.values()))))), 4)
                for cut, values in speedups.items()
            },
            "rounds": params.grid.timing.repeats,
            "images_per_call": images,
        },
        criterion=f"per interleaved round, full-net seconds / VI-Net seconds at cut {headline}: t interval over "
        "rounds of the mean log-ratio wholly above 1 (geometric mean)",
        evidence=[faster],
        could_hold="The convolutions after the cut cost more than PCA + the monomials + G + the head, beyond the "
        "spread of the interleaved rounds.",
        could_fail="The polynomial layer (hundreds of monomials per image) costs more than the removed "
        "convolutions on this CPU, so VI-Net is slower in every round.",
        unit="repeat",
    )
    shallow, deep = cuts[0], cuts[-1]
    falls = compare_ratio(
        f"VI-Net seconds at cut {deep} / at cut {shallow}",
        rounds_ratio(seconds[f"vinet@{deep}"], seconds[f"vinet@{shallow}"]),
        1.0,
        "above",
        confidence,
        unit="interleaved rounds",
    )
    depth = verdict_claim(
        id="throughput_falls_with_depth",
        statement="Throughput falls with the cut's depth (Tiny-18 fastest at 100,798 img/s; Large-18 62,086, "
        "slower than ResNet-18).",
        measured={
            "adjacent_time_ratio_geomean": {
                f"{a}->{b}": round(
                    float(
                        np.exp(
                            np.mean(np.log(np.array(seconds[f"vinet@{b}"]) / np.array(seconds[f"vinet@{a}"])))
                        )
                    ),
                    4,
                )
                for a, b in itertools.pairwise(cuts)
            },
            "deepest_cut_speedup_geomean": round(
                float(np.exp(np.mean(np.log(list(speedups[deep].values()))))), 4
            ),
        },
        criterion=f"per round, VI-Net seconds at cut {deep} / at cut {shallow}: t interval over rounds of the mean "
        "log-ratio wholly above 1 (no speed-up over the full net is claimed at the deepest cut: recorded only)",
        evidence=[falls],
        could_hold="Each deeper cut runs more convolutions, and the timing spread is smaller than their cost.",
        could_fail="The deeper VI-Net is as fast or faster (e.g. its polynomial layer is smaller by more than the "
        "added convolutions cost), beyond the spread of the rounds.",
        unit="repeat",
    )
    return [small, depth]


def throughput_png(params: VanishingIdealsParams, seconds: dict[str, list[float]], images: int, path) -> None:
    cuts = params.grid.fit.cuts
    figure, axis = new_figure(5.0, 3.4)
    axis.plot(cuts, [images / np.median(seconds[f"vinet@{cut}"]) for cut in cuts], "o-", label="VI-Net")
    axis.axhline(images / np.median(seconds["full_net"]), color="black", linestyle="--", label="full net")
    axis.set_xlabel("cut (3×3 convolutions kept)")
    axis.set_ylabel("images / s (median)")
    axis.set_title(f"Throughput, batch {params.grid.timing.batch_size}")
    axis.legend(fontsize=8)
    save_figure(figure, path)


def run(ctx: StepContext) -> None:
    params: VanishingIdealsParams = ctx.params
    pin_threads(ctx.common.threads)
    prepared = load_prepared(ctx.input("datasets"), params)
    net = load_net(ctx.input("base"), params)
    tensors = load_file(str(ctx.input("models")))
    timing = params.grid.timing
    images = prepared.images["test"][: timing.batch_size * timing.batches]
    batches = [images[i : i + timing.batch_size] for i in range(0, len(images), timing.batch_size)]
    models: dict[str, torch.nn.Module] = {"full_net": net}
    for cut in params.grid.fit.cuts:
        prefix = f"{cut}/"
        models[f"vinet@{cut}"] = VINet(
            TruncatedResNet(net, cut), pca_from_tensors(tensors, prefix), head_from_tensors(tensors, prefix)
        ).eval()

    def call(model: torch.nn.Module):
        def forward() -> None:
            with torch.no_grad():
                for batch in batches:
                    model(batch)

        return forward

    seconds = interleaved_seconds(
        {name: call(model) for name, model in models.items()},
        repeats=timing.repeats,
        seed=derive_seed(ctx.common.seed, "vanishing_ideals", "timing"),
    )
    claims = speed_claims(params, seconds, len(images))
    for claim in claims:
        ctx.log(f"{claim.id}: {claim.verdict}: {claim.reason}")
    write_json(
        {
            "threads": ctx.common.threads,
            "batch_size": timing.batch_size,
            "images_per_call": len(images),
            "seconds": seconds,
            "images_per_second_median": {
                name: len(images) / float(np.median(v)) for name, v in seconds.items()
            },
        },
        ctx.output("throughput"),
    )
    throughput_png(params, seconds, len(images), ctx.output("figure"))
    write_claims(claims, ctx.output("claims"))
