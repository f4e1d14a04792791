"""Step `tabsds-claims`: the card's claims about the synthetic data, three-way verdicts over seeds (the claim
about time, `speed`, is judged by the benchmark step `tabsds-timing`).

- `competitive`: at the fixed n_c, TabSDS's detection AUROC below and TSTR utility above each deep peer's
  (paired t intervals over seeds); a dataset counts when all its comparisons hold; the claim holds when at least
  ⌈share × datasets⌉ count, fails when so many datasets fail that the share is out of reach. The deep peers
  train at a stated budget (default scale: 100 epochs of ≥ 4 batches, ≥ 400 gradient steps, more than the 300
  that SDV's defaults of 300 epochs at batch 500 take on these training halves of ≤ 400 rows). A peer trained
  for fewer gradient steps than SDV's defaults (the old 5 epochs: 5 steps) leaves the claim `inconclusive` by
  design (the per-dataset verdicts are still reported). ARF's means are reported beside them.
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
SDV_DEFAULT_BATCH = 500
"""SDV's default batch size: one gradient step per epoch on the training halves of ≤ 500 rows here."""


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


def _train_rows_bound(params: TabSDSParams) -> int | None:
    """The largest training half at this scale (None when `max_rows` leaves it unbounded)."""
    if params.grid.max_rows is None:
        return None
    return math.ceil(params.grid.max_rows * (1 - params.test_fraction))


def sdv_default_steps(params: TabSDSParams) -> int:
    """Gradient steps SDV's defaults (300 epochs, batch 500) take on the largest training half here."""
    rows = _train_rows_bound(params)
    return SDV_DEFAULT_EPOCHS * (max(rows // SDV_DEFAULT_BATCH, 1) if rows is not None else 1)


def peer_steps(params: TabSDSParams, label: str) -> int | None:
    """The fewest gradient steps a deep peer takes on any training half here (None: not known from params).
    With `steps_per_epoch` (batch ⌊rows / steps⌋) every table gets at least that many per epoch; with a fixed
    batch at least as large as every training half, one."""
    entry = params.synthesizers[label]
    options = SYNTHESIZERS.get(entry.synthesizer).Options(**entry.options)
    epochs = params.grid.deep_epochs
    if options.batch_size is None:
        return epochs * options.steps_per_epoch
    rows = _train_rows_bound(params)
    return epochs if rows is not None and rows <= options.batch_size else None


def handicapped_peers(params: TabSDSParams) -> list[str]:
    """The deep peers trained below SDV's default epochs *and* for fewer gradient steps than SDV's defaults
    take on these tables (the old 5 epochs × one batch: 5 steps); a peer at ≥ SDV's step count is not."""
    if params.grid.deep_epochs >= SDV_DEFAULT_EPOCHS:
        return []
    default = sdv_default_steps(params)
    handicapped = []
    for label in deep_nets(params):
        steps = peer_steps(params, label)
        if steps is None or steps < default:
            handicapped.append(label)
    return handicapped


def peer_budget(params: TabSDSParams) -> str:
    """How long the deep peers train at this scale, in words: epochs, batches per epoch, gradient steps, and
    what SDV's defaults take on the same tables."""
    grid, epochs = params.grid, params.grid.deep_epochs
    parts = []
    for label in deep_nets(params):
        entry = params.synthesizers[label]
        options = SYNTHESIZERS.get(entry.synthesizer).Options(**entry.options)
        steps = peer_steps(params, label)
        if options.batch_size is None:
            batch = f"batch ⌊rows / {options.steps_per_epoch}⌋, ≥ {options.steps_per_epoch} steps per epoch"
        else:
            batch = f"batch {options.batch_size}"
        parts.append(f"{label} {batch}" + (f", ≥ {steps} gradient steps" if steps is not None else ""))
    rows = _train_rows_bound(params)
    default = (
        f"SDV's defaults (300 epochs, batch 500) take {sdv_default_steps(params)} on training halves of ≤ {rows} rows"
        if rows is not None
        else f"SDV default {SDV_DEFAULT_EPOCHS} epochs"
    )
    if grid.max_rows is not None and params.grid.deep_epochs < SDV_DEFAULT_EPOCHS:
        for label in deep_nets(params):
            entry = params.synthesizers[label]
            options = SYNTHESIZERS.get(entry.synthesizer).Options(**entry.options)
            if options.batch_size is not None and rows is not None and rows <= options.batch_size:
                default += (
                    f"; one batch per epoch on training halves of ≤ {rows} rows, so {epochs} gradient steps"
                )
                break
    return f"{epochs} epoch{'s' if epochs != 1 else ''} ({'; '.join(parts)}; {default})"


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
            for label in (names.method, *names.deep, names.arf_label)
            if label in set(runs["label"].unique())
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
            "deep_budget": budget,
            "dataset_verdicts": verdicts,
        },
        criterion=f"per dataset, paired t intervals over seeds: {names.method} − peer detection wholly below 0 and "
        f"TSTR utility wholly above 0 for every deep peer; holds on ≥ {names.competitive_share:.0%} of datasets; "
        f"the deep peers train {budget}; inconclusive by design if they take fewer gradient steps than SDV's "
        "defaults on these tables",
        evidence=evidence,
        could_hold=f"TabSDS at the fixed plugin n_c = {n_levels} has lower detection AUROC and higher TSTR utility "
        f"than every deep peer, paired by seed, on ≥ {names.competitive_share:.0%} of the sets; the peers train "
        f"for {budget}"
        + (", so a `holds` would be their handicap, not the method's." if handicapped else "."),
        could_fail=f"On more than {1 - names.competitive_share:.0%} of the sets some deep peer has lower detection "
        "AUROC or higher TSTR utility than TabSDS beyond the seed noise"
        + (
            "; peers trained for fewer gradient steps than SDV's defaults can hardly do that, which is why "
            "the claim is inconclusive by design here (`tabsds.scale: full` trains them 300 epochs)."
            if handicapped
            else f" (the peers train {budget}, so they can)."
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
