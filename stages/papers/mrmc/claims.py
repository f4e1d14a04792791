"""Step `mrmc-claims`: check the paper's claims and our ablations on the measured runs, with intervals over seeds.

Every accuracy comparison is paired by seed (each seed's models share their initialisation) and judged through a
t interval of the mean paired gap over seeds (`stages.core.claims`): holds, fails, or inconclusive when the
interval contains the threshold. A t interval needs at least three seeds: fewer raise `DesignError` naming the
claim. The max/min class-count ratio of the class-quota ablation is a ratio, judged on the log scale
(`compare_ratio`: the geometric mean and its interval). Every claim states how it could hold and how it could
fail under this design, and its unit (the seed). The paper's claims are judged at its budgets
(`claims.paper_budgets`, 30/50/70 %); other budgets (10 %) are an extension, judged separately. Nothing here
reads a wall-clock time, so `claims.json` is byte-identical on rerun; the paper's cost claim is judged by the
benchmark step `mrmc-timing` (`timings/claims.json`).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from stages.core.claims import Claim, compare_paired, compare_ratio, verdict_claim, write_claims
from stages.core.context import StepContext
from stages.core.headline import write_headline
from stages.core.io import read_parquet
from stages.papers.mrmc.params import MRMCParams

ACCURACY_GAP_BOUNDS = (-1.0, 1.0)
"""A difference of two accuracies cannot leave [−1, 1]; its t interval is clipped to it."""


def accuracy_per_seed(results: pl.DataFrame, method: str, budget: float) -> dict[str, float]:
    """Test accuracy per seed of one (method, budget)."""
    rows = results.filter((pl.col("method") == method) & (pl.col("budget") == budget)).sort("seed")
    if rows.height == 0:
        raise ValueError(f"results have no rows for method {method!r} at budget {budget}")
    return {str(seed): float(value) for seed, value in zip(rows["seed"], rows["test_accuracy"], strict=True)}


def _mean(values: dict[str, float]) -> float:
    return float(np.mean(list(values.values())))


def _pct(budget: float) -> str:
    return f"{budget:.0%}"


def _wins(
    results: pl.DataFrame, method: str, others: list[str], budgets: list[float], confidence: float
) -> tuple[list, dict]:
    """Evidence that `method` beats each of `others` at each budget (paired gaps above 0) and the mean gaps."""
    evidence, gaps = [], {}
    for other in others:
        for budget in budgets:
            item = compare_paired(
                f"{method} − {other} accuracy at {_pct(budget)}",
                accuracy_per_seed(results, method, budget),
                accuracy_per_seed(results, other, budget),
                0.0,
                "above",
                confidence,
                bounds=ACCURACY_GAP_BOUNDS,
            )
            evidence.append(item)
            gaps.setdefault(other, {})[f"{budget:.2f}"] = round(item.mean, 4)
    return evidence, gaps


def accuracy_claim(results: pl.DataFrame, params: MRMCParams) -> Claim:
    """MRMC(-R) ≥ random at each of the paper's budgets (paired over seeds)."""
    names = params.claims
    budgets = params.judged_budgets
    evidence, gaps = _wins(results, names.mrmc_method, [names.random_method], budgets, names.confidence)
    return verdict_claim(
        id="accuracy_vs_random",
        statement="MRMC-R's accuracy is above random's at each of the paper's budgets ("
        + "/".join(_pct(b) for b in budgets)
        + ").",
        measured={
            "mrmc_accuracy": {
                f"{b:.2f}": round(_mean(accuracy_per_seed(results, names.mrmc_method, b)), 4) for b in budgets
            },
            "random_accuracy": {
                f"{b:.2f}": round(_mean(accuracy_per_seed(results, names.random_method, b)), 4)
                for b in budgets
            },
            "gap": gaps[names.random_method],
            "seeds": len(evidence[0].per_seed),
        },
        criterion="per paper budget b, the t interval over seeds of the paired gap acc_mrmc(b) − acc_random(b) "
        "lies above 0",
        evidence=evidence,
        could_hold="MRMC-R's core-sets train a fresh CNN (same initialisation per seed) to a higher test accuracy "
        "than random's at every paper budget, by more than the seed noise of the paired gaps.",
        could_fail="Random's core-sets reach a higher accuracy at some paper budget beyond the seed noise, as "
        f"difficulty-first picks can with core-set models trained {params.train.epochs} epochs instead of the "
        "paper's 200.",
        unit="seed",
    )


def baselines_claim(results: pl.DataFrame, params: MRMCParams) -> Claim:
    """MRMC(-R) ≥ every other core-set baseline at each of the paper's budgets."""
    names = params.claims
    evidence, gaps = _wins(
        results, names.mrmc_method, names.baselines, params.judged_budgets, names.confidence
    )
    return verdict_claim(
        id="accuracy_vs_baselines",
        statement="MRMC-R's accuracy is above each core-set baseline's ("
        + ", ".join(names.baselines)
        + ") at each of the paper's budgets.",
        measured={"gap": gaps},
        criterion="per baseline and paper budget, the t interval over seeds of the paired accuracy gap lies above 0",
        evidence=evidence,
        could_hold="MRMC-R's core-sets beat every baseline's (herding, k-center on the same embeddings; EL2N, "
        "forgetting on the same trace) at every paper budget beyond the seed noise.",
        could_fail="Some baseline's core-set trains to a higher accuracy at some paper budget beyond the seed "
        "noise; every method gets the same balance setting, trace and training recipe.",
        unit="seed",
    )


def extension_claim(results: pl.DataFrame, params: MRMCParams) -> Claim | None:
    """Our extension: MRMC(-R) ≥ random at the budgets the paper does not use (10 %); None without any."""
    names = params.claims
    budgets = [b for b in params.budgets if b not in params.judged_budgets]
    if not budgets:
        return None
    evidence, gaps = _wins(results, names.mrmc_method, [names.random_method], budgets, names.confidence)
    return verdict_claim(
        id="accuracy_vs_random_small_budgets",
        statement="Extension (not a paper claim): MRMC-R's accuracy is above random's at "
        + "/".join(_pct(b) for b in budgets)
        + ".",
        measured={"gap": gaps[names.random_method]},
        criterion="per budget outside the paper's, the t interval over seeds of the paired gap lies above 0",
        evidence=evidence,
        could_hold="At the small budget MRMC-R's core-set trains to a higher accuracy than random's, beyond the "
        "seed noise of the paired gap.",
        could_fail="At the small budget MRMC-R's high-loss picks leave classes or easy prototypes out and random "
        "wins beyond the seed noise.",
        unit="seed",
    )


def regulariser_claim(results: pl.DataFrame, params: MRMCParams) -> Claim:
    """The regulariser helps: MRMC-R ≥ pure MRMC (top |C| by φ) at each of the paper's budgets."""
    names = params.claims
    evidence, gaps = _wins(
        results, names.mrmc_method, [names.pure_method], params.judged_budgets, names.confidence
    )
    return verdict_claim(
        id="regulariser_vs_pure_mrmc",
        statement="The balance regulariser helps: MRMC-R's accuracy is above pure MRMC's (top |C| by φ) at each "
        "of the paper's budgets.",
        measured={"gap": gaps[names.pure_method]},
        criterion="per paper budget, the t interval over seeds of acc(MRMC-R) − acc(pure MRMC) lies above 0",
        evidence=evidence,
        could_hold="The regulariser's swaps (samples the linear classifier on C′ gets wrong in place of the next "
        "ones by φ) raise accuracy at every paper budget beyond the seed noise.",
        could_fail="Pure MRMC (top |C| by φ, same trace and scores) trains to a higher accuracy at some paper "
        "budget beyond the seed noise.",
        unit="seed",
    )


def class_count_ratios(
    selections: pl.DataFrame, pool_labels: pl.DataFrame, method: str, budget: float
) -> dict[str, float]:
    """Per seed: largest class count / smallest class count (floored at 1) in the core-set."""
    labelled = selections.filter((pl.col("method") == method) & (pl.col("budget") == budget)).join(
        pool_labels, on="sample_id"
    )
    n_classes = pool_labels["label"].n_unique()
    ratios = {}
    for (seed,), rows in sorted(labelled.group_by(["seed"]), key=lambda item: item[0]):
        counts = rows["label"].value_counts()["count"].to_numpy()
        smallest = counts.min() if len(counts) == n_classes else 0
        ratios[str(seed)] = float(counts.max() / max(smallest, 1))
    return ratios


def class_count_ratio(
    selections: pl.DataFrame, pool_labels: pl.DataFrame, method: str, budget: float
) -> float:
    """Mean over seeds of :func:`class_count_ratios`."""
    return _mean(class_count_ratios(selections, pool_labels, method, budget))


def quota_claim(
    results: pl.DataFrame, selections: pl.DataFrame, pool: pl.DataFrame, params: MRMCParams
) -> Claim:
    """Our ablation (was `balance_matters`): pure MRMC's core-set is class-uneven at the smallest budget, and
    class quotas raise its accuracy there."""
    names, confidence = params.claims, params.claims.confidence
    budget = min(params.budgets)
    labels = pool.select("sample_id", "label")
    pure_ratio = class_count_ratios(selections, labels, names.pure_method, budget)
    quota_ratio = class_count_ratios(selections, labels, names.quota_method, budget)
    mrmc_ratio = class_count_ratios(selections, labels, names.mrmc_method, budget)
    quota = accuracy_per_seed(results, names.quota_method, budget)
    pure = accuracy_per_seed(results, names.pure_method, budget)
    evidence = [
        compare_ratio(
            f"max/min class count of pure MRMC at {_pct(budget)}",
            pure_ratio,
            names.uneven_ratio,
            "above",
            confidence,
            note="a class missing from the core-set counts as 1",
            unit="seeds",
        ),
        compare_paired(
            f"class-quota − pure MRMC accuracy at {_pct(budget)}",
            quota,
            pure,
            0.0,
            "above",
            confidence,
            bounds=ACCURACY_GAP_BOUNDS,
        ),
    ]
    return verdict_claim(
        id="class_quotas_lift_pure_mrmc",
        statement="Ablation (not a paper claim): pure MRMC picks a class-uneven core-set at the smallest budget, "
        "and even class quotas raise its accuracy there.",
        measured={
            "budget": budget,
            "class_count_ratio_pure": round(_mean(pure_ratio), 3),
            "class_count_ratio_quota": round(_mean(quota_ratio), 3),
            "class_count_ratio_mrmc_r": round(_mean(mrmc_ratio), 3),
            "accuracy_quota": round(_mean(quota), 4),
            "accuracy_pure": round(_mean(pure), 4),
            "accuracy_gain": round(_mean(quota) - _mean(pure), 4),
        },
        criterion=f"at the smallest budget: pure MRMC's max/min class count, judged on the log scale (t interval "
        f"over seeds of the mean log-ratio, reported as the geometric mean) wholly above {names.uneven_ratio}, "
        "and the t interval over seeds of the paired acc(class quotas) − acc(pure) wholly above 0",
        evidence=evidence,
        could_hold=f"Pure MRMC's top-φ core-set is class-uneven (max/min count above {names.uneven_ratio} on the "
        "log scale) and the per-class top-φ core-set of the same size trains to a higher accuracy.",
        could_fail=f"Pure MRMC's core-set is near even (max/min below {names.uneven_ratio}), or quotas lower "
        "accuracy beyond the seed noise by forcing low-φ samples of easy classes in.",
        unit="seed",
    )


def all_claims(
    params: MRMCParams, results: pl.DataFrame, selections: pl.DataFrame, pool: pl.DataFrame
) -> list[Claim]:
    """Every claim, the paper's first, then the extension and the ablations."""
    claims = [
        accuracy_claim(results, params),
        baselines_claim(results, params),
        regulariser_claim(results, params),
        extension_claim(results, params),
        quota_claim(results, selections, pool, params),
    ]
    return [claim for claim in claims if claim is not None]


def run(ctx: StepContext) -> None:
    """Compute the claims and write `claims.json`."""
    claims = all_claims(
        ctx.params,
        read_parquet(ctx.input("results")),
        read_parquet(ctx.input("selections")),
        read_parquet(ctx.input("pool")),
    )
    for claim in claims:
        ctx.log(f"{claim.id}: {claim.verdict}: {claim.reason}")
    write_claims(claims, ctx.output("claims"))
    write_headline(claims, ctx.output("headline"))
