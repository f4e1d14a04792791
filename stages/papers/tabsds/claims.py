"""Step `tabsds-claims`: the card's claims about the synthetic data, three-way verdicts over seeds (the claim
about time, `speed`, is judged by the benchmark step `tabsds-timing`).

- `competitive`: at the fixed n_c, TabSDS's detection AUROC below and TSTR utility above each deep peer's
  (paired t intervals over seeds); a dataset counts when all its comparisons hold; the claim holds when at least
  ⌈share × datasets⌉ count, fails when so many datasets fail that the share is out of reach. When the deep
  peers train for fewer than SDV's default 300 epochs (the default scale: 5 epochs, one batch of 500 rows each
  on these training halves, i.e. 5 gradient steps) the handicap decides the comparison, so the claim is
  `inconclusive` by design (the per-dataset verdicts are still reported).
- `nc_tradeoff`: along the n_c sweep, Spearman(n_c, detection AUROC) < 0 and Spearman(n_c, median DCR) < 0 on
  every dataset (per-seed correlations, t interval over seeds clipped to a correlation's range [−1, 1], wholly
  below 0).
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
from scipy import stats

from stages.core.claims import (
    Claim,
    Direction,
    Evidence,
    combine,
    compare,
    compare_paired,
    verdict_claim,
    write_claims,
)
from stages.core.context import StepContext
from stages.core.headline import write_headline
from stages.core.io import read_parquet
from stages.methods.tabular.registry import SYNTHESIZERS
from stages.papers.tabsds.params import TabSDSParams

SDV_DEFAULT_EPOCHS = 300
"""SDV's default training epochs for CTGAN and TVAE: the peers' own defaults (shared/CLAIMS.md §3)."""


def per_seed(frame: pl.DataFrame, dataset: str, label: str, column: str) -> dict[str, float]:
    rows = frame.filter((pl.col("dataset") == dataset) & (pl.col("label") == label)).sort("seed")
    return {str(seed): float(value) for seed, value in zip(rows["seed"], rows[column], strict=True)}


def undecided(
    name: str, values: dict[str, float], threshold: float, direction: Direction, note: str
) -> Evidence:
    """A compared quantity that cannot be judged (a peer that did not run, a correlation undefined on some
    seed): its values as measured, no interval, verdict `inconclusive`, and why in the note."""
    return Evidence(
        name=name,
        per_seed=values,
        mean=float(np.mean(list(values.values()))) if values else None,
        threshold=threshold,
        direction=direction,
        verdict="inconclusive",
        note=note,
    )


def deep_nets(params: TabSDSParams) -> list[str]:
    """The compared deep peers that train by epochs (their `epochs` option is the grid's `deep_epochs`)."""
    return [
        label
        for label in params.claims.deep
        if "epochs" in SYNTHESIZERS.get(params.synthesizers[label].synthesizer).Options.model_fields
    ]


def handicapped_peers(params: TabSDSParams) -> list[str]:
    """The deep peers trained below SDV's default epochs at this scale."""
    return deep_nets(params) if params.grid.deep_epochs < SDV_DEFAULT_EPOCHS else []


def peer_budget(params: TabSDSParams) -> str:
    """How long the deep peers train at this scale, in words (epochs, and gradient steps where each training
    half fits in one batch)."""
    grid, epochs = params.grid, params.grid.deep_epochs
    detail = f"SDV default {SDV_DEFAULT_EPOCHS}"
    batches = [params.synthesizers[label].options.get("batch_size", 500) for label in deep_nets(params)]
    if grid.max_rows is not None and batches:
        train_rows = math.ceil(grid.max_rows * (1 - params.test_fraction))
        if train_rows <= min(batches):
            detail += (
                f"; one batch per epoch on training halves of ≤ {train_rows} rows, so {epochs} gradient steps"
            )
    return f"{epochs} epoch{'s' if epochs != 1 else ''} ({detail})"


def competitive_verdict(dataset_verdicts: dict[str, str], share: float) -> tuple[str, str]:
    """Holds if ≥ ⌈share·n⌉ datasets hold; fails if more than n − ⌈share·n⌉ fail; else inconclusive."""
    n = len(dataset_verdicts)
    needed = math.ceil(round(share * n, 2))  # 0.6667 × 3 = 2.0001 must ask for 2 sets, not 3
    held = sum(v == "holds" for v in dataset_verdicts.values())
    failed = sum(v == "fails" for v in dataset_verdicts.values())
    summary = ", ".join(f"{name}: {verdict}" for name, verdict in dataset_verdicts.items())
    if held >= needed:
        return "holds", f"It holds on {held} of {n} datasets (≥ {needed} needed): {summary}."
    if failed > n - needed:
        return "fails", f"It fails on {failed} of {n} datasets, so {needed} cannot hold: {summary}."
    return "inconclusive", f"{held} of {n} datasets hold, {failed} fail ({needed} needed): {summary}."


PAIRED_METRICS = (  # (column, name, TabSDS − peer must lie wholly ...)
    ("detection_auroc", "detection AUROC", "below"),
    ("utility_synthetic", "TSTR utility", "above"),
)


def competitive_claim(runs: pl.DataFrame, params: TabSDSParams) -> Claim:
    names = params.claims
    evidence, verdicts, means = [], {}, {}
    for dataset in params.grid.datasets:
        parts = [
            compare_paired(
                f"{names.method} − {label} {what} on {dataset}",
                per_seed(runs, dataset, names.method, column),
                per_seed(runs, dataset, label, column),
                0.0,
                direction,
                names.confidence,
            )
            for label in names.deep
            for column, what, direction in PAIRED_METRICS
        ]
        verdicts[dataset] = combine([part.verdict for part in parts])
        evidence += parts
        means[dataset] = {
            label: {
                metric: round(float(np.mean(list(per_seed(runs, dataset, label, metric).values()))), 4)
                for metric in ("detection_auroc", "utility_synthetic")
            }
            for label in (names.method, *names.deep)
        }
    verdict, reason = competitive_verdict(verdicts, names.competitive_share)
    n_levels = params.synthesizers[names.method].options.get("n_levels", 30)
    epochs = params.grid.deep_epochs
    handicapped = handicapped_peers(params)
    budget = peer_budget(params)
    if handicapped:
        reason = (
            f"Inconclusive by design: {', '.join(handicapped)} train for {budget}, which leaves them near their "
            f"initialisation, so a TabSDS win measures the peers' handicap, not the method. As measured: {reason}"
        )
    return verdict_claim(
        id="competitive",
        statement="TabSDS is very competitive with deep generators: detection AUROC no higher and TSTR utility no "
        "lower than CTGAN's and TVAE's.",
        measured={
            "means": means,
            "n_levels": n_levels,
            "deep_epochs": epochs,
            "dataset_verdicts": verdicts,
        },
        criterion=f"per dataset, paired t intervals over seeds: {names.method} − peer detection wholly below 0 and "
        f"TSTR utility wholly above 0 for every deep peer; holds on ≥ {names.competitive_share:.0%} of datasets; "
        f"inconclusive by design while the deep peers train below SDV's default {SDV_DEFAULT_EPOCHS} epochs",
        evidence=evidence,
        could_hold=f"TabSDS at the fixed plugin n_c = {n_levels} has lower detection AUROC and higher TSTR utility "
        f"than every deep peer, paired by seed, on ≥ {names.competitive_share:.0%} of the sets; the peers train "
        f"for {budget}"
        + (", so a `holds` would be their handicap, not the method's." if handicapped else "."),
        could_fail=f"On more than {1 - names.competitive_share:.0%} of the sets some deep peer has lower detection "
        "AUROC or higher TSTR utility than TabSDS beyond the seed noise"
        + (
            f"; peers this far below SDV's default {SDV_DEFAULT_EPOCHS} epochs can hardly do that, which is why "
            "the claim is inconclusive by design here (`tabsds.scale: full` trains them 300 epochs)."
            if handicapped
            else "."
        ),
        unit="seed",
        verdict="inconclusive" if handicapped else verdict,
        reason=reason,
    )


def sweep_correlations(runs: pl.DataFrame, dataset: str, column: str) -> tuple[dict[str, float], list[str]]:
    """Per seed, Spearman(n_c, column) along the sweep; seeds where it is undefined (a constant) are listed."""
    sweep = runs.filter((pl.col("group") == "sweep") & (pl.col("dataset") == dataset))
    values, undefined = {}, []
    for seed in sorted(sweep["seed"].unique()):
        rows = sweep.filter(pl.col("seed") == seed).sort("n_levels")
        rho = stats.spearmanr(rows["n_levels"], rows[column]).statistic
        if np.isnan(rho):
            undefined.append(str(seed))
        else:
            values[str(seed)] = float(rho)
    return values, undefined


def tradeoff_claim(runs: pl.DataFrame, params: TabSDSParams) -> Claim:
    evidence: list[Evidence] = []
    confidence = params.claims.confidence
    for dataset in params.grid.datasets:
        for column, name in (("detection_auroc", "detection AUROC"), ("dcr_median", "median DCR")):
            values, undefined = sweep_correlations(runs, dataset, column)
            label = f"Spearman(n_c, {name}) on {dataset}"
            if undefined:
                note = f"undefined (constant {name}) for seeds {', '.join(undefined)}"
                evidence.append(undecided(label, values, 0.0, "below", note))
            else:
                evidence.append(compare(label, values, 0.0, "below", confidence, bounds=(-1.0, 1.0)))
    levels = params.grid.n_levels
    return verdict_claim(
        id="nc_tradeoff",
        statement="n_c trades privacy for fidelity: more levels give lower detection AUROC and lower DCR.",
        measured={"n_levels": levels},
        criterion="per dataset, t interval over seeds of Spearman(n_c, detection AUROC) and of Spearman(n_c, "
        "median DCR) along the sweep, clipped to a correlation's range [−1, 1], wholly below 0 (a seed with a "
        "constant metric leaves it undecided)",
        evidence=evidence,
        could_hold=f"On every set, detection AUROC and median DCR both fall as n_c rises through {levels}, so the "
        "per-seed Spearman correlations are negative beyond the seed noise.",
        could_fail="On some set the mean correlation of detection AUROC or of median DCR with n_c is positive beyond "
        "the seed noise (more bins leave the synthetic rows easier to detect, or farther from the training rows); "
        "a set whose median DCR is 0 at every n_c (exact copies of discrete rows) can neither hold nor fail.",
        unit="seed",
    )


def run(ctx: StepContext) -> None:
    params: TabSDSParams = ctx.params
    runs = read_parquet(ctx.input("runs"))
    claims = [competitive_claim(runs, params), tradeoff_claim(runs, params)]
    for claim in claims:
        ctx.log(f"{claim.id}: {claim.verdict}: {claim.reason}")
    write_claims(claims, ctx.output("claims"))
    write_headline(claims, ctx.output("headline"))
