"""Step `info_coevolution-claims`: check the paper's three claims on the measured curves."""

from __future__ import annotations

import polars as pl

from stages.core.claims import Claim, write_claims
from stages.core.io import read_parquet
from stages.core.steps import StepContext
from stages.papers.info_coevolution.params import InfoCoevolutionParams


def needed(summary: pl.DataFrame, strategy: str) -> dict[int, int | None]:
    """Annotations each seed needed to reach full-label accuracy (None: not within its run)."""
    rows = summary.filter(pl.col("strategy") == strategy).sort("seed")
    return dict(zip(rows["seed"].to_list(), rows["annotations_to_full"].to_list(), strict=True))


def mean_needed(counts: dict[int, int | None]) -> float | None:
    """Mean over seeds, or None when some seed never reached full-label accuracy."""
    values = list(counts.values())
    return None if any(value is None for value in values) else sum(values) / len(values)


def fewer_annotations_claim(summary: pl.DataFrame, params: InfoCoevolutionParams, pool_size: int) -> Claim:
    """Info-Coevolution reaches full-label accuracy with ≥ min_saving fewer annotations, and before baselines."""
    names = params.claims
    ours = mean_needed(needed(summary, names.info_coevolution))
    baselines = {name: mean_needed(needed(summary, name)) for name in names.baselines}
    saving = None if ours is None else 1 - ours / pool_size
    beats = ours is not None and all(other is None or ours < other for other in baselines.values())
    return Claim(
        id="fewer_annotations",
        statement=(
            "Info-Coevolution reaches the full-label accuracy (within the tolerance) with at least "
            f"{names.min_saving:.0%} fewer annotations, and needs fewer annotations than "
            f"{' and '.join(names.baselines)} to reach it."
        ),
        measured={
            "pool_size": pool_size,
            "tolerance": names.tolerance,
            "annotations_to_full_per_seed": {
                name: {str(seed): count for seed, count in needed(summary, name).items()}
                for name in [names.info_coevolution, *names.baselines]
            },
            "mean_annotations_to_full": {names.info_coevolution: ours, **baselines},
            "saving": None if saving is None else round(saving, 4),
        },
        criterion=(
            f"every seed reaches acc ≥ full − {names.tolerance}; 1 − mean(annotations)/pool ≥ "
            f"{names.min_saving}; mean(annotations) < each baseline's (a baseline that never reaches counts as more)"
        ),
        holds=saving is not None and saving >= names.min_saving and beats,
    )


def stop_rule_claim(summary: pl.DataFrame, params: InfoCoevolutionParams, pool_size: int) -> Claim:
    """The stop rule fires before the pool is exhausted, at an accuracy within the tolerance of full labels."""
    names = params.claims
    rows = summary.filter(pl.col("strategy") == names.info_coevolution).sort("seed")
    per_seed = {
        str(row["seed"]): {
            "stopped_at": row["stopped_at"],
            "accuracy_at_stop": row["accuracy_at_stop"],
            "full_accuracy": round(row["full_accuracy"], 4),
            "gap": None
            if row["accuracy_at_stop"] is None
            else round(row["full_accuracy"] - row["accuracy_at_stop"], 4),
        }
        for row in rows.iter_rows(named=True)
    }
    fired = all(
        entry["stopped_at"] is not None and entry["stopped_at"] < pool_size for entry in per_seed.values()
    )
    close = fired and all(entry["gap"] <= names.tolerance for entry in per_seed.values())
    return Claim(
        id="automatic_stop",
        statement=(
            "The stop rule (remaining gain ≤ 1) fires by itself before the pool is exhausted, and the accuracy "
            "at the stop point is within the tolerance of full-label accuracy."
        ),
        measured={
            "pool_size": pool_size,
            "budget_cap": params.schedule(pool_size).budget,
            "per_seed": per_seed,
        },
        criterion=(
            "every seed: the stop rule (not the budget cap) ended the run before the pool end; "
            f"full − acc_at_stop ≤ {names.tolerance}"
        ),
        holds=close,
    )


def semi_supervised_claim(summary: pl.DataFrame, params: InfoCoevolutionParams) -> Claim:
    """The semi-supervised variant reaches full-label accuracy with fewer annotations than the supervised one."""
    names = params.claims
    supervised = mean_needed(needed(summary, names.info_coevolution))
    semi = mean_needed(needed(summary, names.semi_supervised))
    holds = semi is not None and (supervised is None or semi < supervised)
    return Claim(
        id="semi_supervised_saves_more",
        statement="The semi-supervised variant saves more annotations than the supervised one at equal accuracy.",
        measured={
            "annotations_to_full_per_seed": {
                name: {str(seed): count for seed, count in needed(summary, name).items()}
                for name in (names.info_coevolution, names.semi_supervised)
            },
            "mean_annotations_to_full": {names.info_coevolution: supervised, names.semi_supervised: semi},
        },
        criterion="equal accuracy = full-label within the tolerance; semi's mean annotations < supervised's",
        holds=holds,
    )


def run(ctx: StepContext) -> None:
    """Evaluate the three claims and write claims.json."""
    summary = read_parquet(ctx.input("summary"))
    pool_size = int(summary["pool_size"][0])
    claims = [
        fewer_annotations_claim(summary, ctx.params, pool_size),
        stop_rule_claim(summary, ctx.params, pool_size),
        semi_supervised_claim(summary, ctx.params),
    ]
    for claim in claims:
        ctx.log(f"{claim.id}: {'holds' if claim.holds else 'does NOT hold'}")
    write_claims(claims, ctx.output("claims"))
