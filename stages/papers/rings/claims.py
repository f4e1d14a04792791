"""Step `rings-claims`: the card's three claims, checked on the controls, complementarity and the ranking.

The separability claims rest on permutation tests that already carry p-values and a design floor (the smallest
adjusted p the seeds allow), so they map to verdicts directly (`stages.core.claims`): a pair expected to be
separable holds when both tests reject at α, fails when they do not although the design could have rejected,
and is inconclusive when the design cannot reject at α at all (its floor is not below α). A pair expected
not to be separable holds when the tests do not reject on a design that could have, fails when they reject.
Unit: the seed (the permutation tests run over seeds); the ranking claim's unit is the control dataset.

Complementarity compares means over graphs with a Welch t interval (unit: graph). With the default graph
metric (hop distance) it is inconclusive by design: the geometric features are a classical MDS of the same hop
distances, so they redraw D_G and their complementarity is low by construction; only another D_G
(`audit.graph_metric.metric`) lets the data decide it.
"""

from __future__ import annotations

import math

import polars as pl

from stages.core.claims import (
    DEFAULT_CONFIDENCE,
    Claim,
    Evidence,
    Verdict,
    half_width,
    interval_kind,
    judge,
    verdict_claim,
    welch_interval,
    write_claims,
)
from stages.core.context import StepContext
from stages.core.headline import write_headline
from stages.core.io import read_parquet
from stages.papers.rings.params import ClaimsParams

CONTROL_MODES = ("empty_graph", "empty_features")


def _gnn_against_original(separability: pl.DataFrame) -> pl.DataFrame:
    return separability.filter((pl.col("model") == "gnn") & (pl.col("mode_a") == "original"))


def pair_test(separability: pl.DataFrame, dataset: str, mode: str) -> dict:
    """Both tests of original vs `mode` on `dataset` (GNN scores): p-values, α, design floor, separable."""
    rows = _gnn_against_original(separability).filter(
        (pl.col("dataset") == dataset) & (pl.col("mode_b") == mode)
    )
    tests = {row["test"]: row for row in rows.iter_rows(named=True)}
    if set(tests) != {"ks", "wilcoxon"}:
        raise ValueError(
            f"separability has tests {sorted(tests)} for {dataset}: original vs {mode}; expected ks and wilcoxon"
        )
    alpha = float(tests["ks"]["alpha"])
    floor = max(float(row["smallest_possible_p_adjusted"]) for row in tests.values())
    return {
        "separable": all(row["significant"] for row in tests.values()),
        "p_ks": tests["ks"]["p_adjusted"],
        "p_wilcoxon": tests["wilcoxon"]["p_adjusted"],
        "alpha": alpha,
        "smallest_possible_p": floor,
        "decidable": floor < alpha,
        "identical": float(tests["ks"]["statistic"]) == 0.0,
        "original_mean": round(tests["ks"]["mean_a"], 4),
        "perturbed_mean": round(tests["ks"]["mean_b"], 4),
        "n_seeds": int(tests["ks"]["n_seeds"]),
    }


def separability_verdict(test: dict, expected: bool) -> Verdict:
    """Verdict of "this pair is (not) separable" from the tests and the design floor.

    Identical score distributions (KS statistic 0) settle "not separable" whatever the floor: no test could
    separate them (with all paired differences 0 the Wilcoxon floor is 1, which would otherwise read as a
    design that cannot decide).
    """
    if not expected and test["identical"]:
        return "holds"
    if not test["decidable"]:
        return "inconclusive"
    return "holds" if test["separable"] == expected else "fails"


def separability_evidence(dataset: str, mode: str, test: dict, expected: bool) -> Evidence:
    """One expected (non-)separable pair as evidence."""
    verdict = separability_verdict(test, expected)
    observed = "both tests reject" if test["separable"] else "not both tests reject"
    floor = f"smallest attainable adjusted p {test['smallest_possible_p']:.2g}"
    if not expected and test["identical"]:
        why = "the two modes give identical score distributions (KS statistic 0), as expected"
    elif not test["decidable"]:
        why = f"with {test['n_seeds']} seeds the {floor} is not below α = {test['alpha']}, so the design cannot decide"
    else:
        why = f"{observed} at α = {test['alpha']} ({floor}), {'as expected' if verdict == 'holds' else 'against'}"
    return Evidence(
        name=f"{dataset}: original vs {mode} {'separable' if expected else 'not separable'}",
        mean=test["original_mean"] - test["perturbed_mean"],
        interval_kind="KS and Wilcoxon permutation tests over seeds, Bonferroni; mean = original − perturbed score",
        verdict=verdict,
        note=f"p_KS {test['p_ks']:.3g}, p_Wilcoxon {test['p_wilcoxon']:.3g}: {why}",
    )


def controls_claim(separability: pl.DataFrame, names: ClaimsParams) -> Claim:
    """Structure control: empty graph separable, empty features not; the feature control the reverse."""
    expected = {
        names.structure_control: {"empty_graph": True, "empty_features": False},
        names.feature_control: {"empty_graph": False, "empty_features": True},
    }
    measured = {
        dataset: {mode: pair_test(separability, dataset, mode) for mode in CONTROL_MODES}
        for dataset in expected
    }
    evidence = [
        separability_evidence(dataset, mode, measured[dataset][mode], expected[dataset][mode])
        for dataset in expected
        for mode in CONTROL_MODES
    ]
    seeds = min(test["n_seeds"] for tests in measured.values() for test in tests.values())
    return verdict_claim(
        id="controls_separate_the_right_mode",
        statement=(
            "On the structure-only control, original vs empty-graph is separable and original vs empty-features is "
            "not; the feature-only control shows the reverse."
        ),
        measured=measured,
        criterion=(
            "separable = KS and Wilcoxon permutation tests both reject at α after Bonferroni (GNN scores); a pair "
            "whose smallest attainable adjusted p is not below α cannot be decided (inconclusive)"
        ),
        evidence=evidence,
        could_hold=f"Only the graph carries the label of the structure control and only the features that of "
        f"the feature control, so with {seeds} seeds (an adjusted-p floor the report checks against α) a GIN that "
        "learns the carrying mode separates the original from its emptied version and not from the other.",
        could_fail="A GIN that does not exploit the carrying mode within its epochs leaves the expected pair "
        "unseparated, and a systematic side effect of emptying the uninformative mode (as noise features had, "
        "see the README's Deviations) makes the other pair separable; the 'not separable' halves are nearly "
        "certain by construction, so the test's power lies in the separable halves.",
        unit="seed",
        n=seeds,
    )


def complementarity_evidence(dataset: str, rows: dict[str, dict], confidence: float) -> Evidence:
    """Welch t interval over graphs of mean complementarity geometric − random features (< 0 claimed)."""
    geometric, random = rows["geometric_features"], rows["random_features"]

    def sample_std(row: dict) -> float:  # the table stores the population std (ddof 0)
        n = int(row["graphs"])
        return float(row["std"]) * math.sqrt(n / (n - 1)) if n > 1 else 0.0

    interval = welch_interval(
        geometric["mean"],
        sample_std(geometric),
        int(geometric["graphs"]),
        random["mean"],
        sample_std(random),
        int(random["graphs"]),
        confidence,
    )
    verdict: Verdict = "inconclusive" if interval is None else judge(*interval, 0.0, "below")
    return Evidence(
        detectable=half_width(interval),
        name=f"{dataset}: complementarity geometric − random features",
        mean=float(geometric["mean"] - random["mean"]),
        interval=interval,
        interval_kind=f"Welch {interval_kind(confidence, 'graphs')}",
        threshold=0.0,
        direction="below",
        verdict=verdict,
        note="" if interval is not None else "too few graphs for an interval",
    )


def complementarity_design(metric: str, geometric_dim: int | None = None) -> tuple[str, str, str | None]:
    """How the complementarity claim could hold and fail with graph metric `metric`, and the reason it is
    inconclusive by design (None when the data can decide it)."""
    mds = f"a classical MDS of each graph's hop distances{f' ({geometric_dim} columns)' if geometric_dim else ''}"
    if metric == "shortest_path":
        return (
            f"With D_G the hop distance, the geometric features ({mds}) redraw D_G, so their complementarity is "
            "near 0 by construction while random features' is not: it holds whatever the data.",
            "It cannot fail through the data while D_G is the hop distance the features were derived from; only "
            "an embedding too narrow for the hop metric could lift it, and another graph metric is needed to test "
            "the claim.",
            "Inconclusive by design: the geometric features are a classical MDS of hop distances and D_G is the "
            "hop distance, so geometric features are less complementary than random ones by construction, "
            "whatever the data (the Welch intervals are recorded, not taken as evidence; set "
            "rings.audit.graph_metric.metric to another D_G to test it).",
        )
    return (
        f"The geometric features are {mds} while D_G is the {metric} distance; where {metric} orders node pairs "
        "as hop distance does, geometric features sit closer to D_G than random ones on every dataset.",
        f"{metric} distances saturate or rescale differently from hop counts (heat and diffusion beyond a few "
        "hops), so the MDS of hops can disagree with D_G more than random features do on some dataset.",
        None,
    )


def complementarity_claim(
    complementarity: pl.DataFrame,
    confidence: float = DEFAULT_CONFIDENCE,
    metric: str = "shortest_path",
    geometric_dim: int | None = None,
) -> Claim:
    """Geometry-derived features are less complementary to the graph than random features, on every dataset.

    With `metric` the hop distance (the default D_G) the claim is inconclusive by design (see
    :func:`complementarity_design`); the evidence is still computed and recorded.
    """
    wide = complementarity.pivot(on="mode", index="dataset", values="mean")
    measured = {
        row["dataset"]: {mode: round(row[mode], 4) for mode in wide.columns[1:]}
        for row in wide.iter_rows(named=True)
    }
    by_dataset: dict[str, dict[str, dict]] = {}
    for row in complementarity.iter_rows(named=True):
        by_dataset.setdefault(row["dataset"], {})[row["mode"]] = row
    evidence = [complementarity_evidence(name, rows, confidence) for name, rows in by_dataset.items()]
    lower = {
        name: values["geometric_features"] < values["random_features"] for name, values in measured.items()
    }
    could_hold, could_fail, by_design = complementarity_design(metric, geometric_dim)
    graphs = min(int(row["graphs"]) for rows in by_dataset.values() for row in rows.values())
    return verdict_claim(
        id="geometric_features_less_complementary",
        statement="Complementarity is lower when features are derived from graph geometry than when they are random.",
        measured={"mean_complementarity": measured, "geometric_lower": lower, "graph_metric": metric},
        criterion=(
            "on every dataset: the Welch t interval over graphs of mean complementarity(geometric_features) − "
            "mean complementarity(random_features) lies wholly below 0; with D_G the hop distance (the default) "
            "inconclusive by design"
        ),
        evidence=evidence,
        could_hold=could_hold,
        could_fail=could_fail,
        unit="graph",
        n=graphs,
        verdict="inconclusive" if by_design else None,
        reason=by_design,
    )


_EMPTIED = {"structure": "empty_graph", "features": "empty_features"}


def ranking_claim(verdicts: pl.DataFrame, separability: pl.DataFrame, names: ClaimsParams) -> Claim:
    """The report's verdicts put each control in the category its construction implies, and rank every dataset.

    A control in the wrong category fails the claim when its mode tests could decide, and leaves it
    inconclusive when their design floor is not below α.
    """
    categories = {row["dataset"]: row["category"] for row in verdicts.iter_rows(named=True)}
    expected = {names.structure_control: "structure", names.feature_control: "features"}
    evidence = []
    for dataset, category in expected.items():
        got = categories.get(dataset)
        tests = [pair_test(separability, dataset, mode) for mode in _EMPTIED.values()]
        decidable = all(test["decidable"] for test in tests)
        verdict: Verdict = "holds" if got == category else "fails" if decidable else "inconclusive"
        why = "" if decidable or got == category else "; its mode tests cannot reject at α with these seeds"
        evidence.append(
            Evidence(
                name=f"{dataset} category",
                interval_kind="category from the separability tests",
                verdict=verdict,
                note=f"ranked as '{got}', expected '{category}'{why}",
            )
        )
    return verdict_claim(
        id="report_ranks_datasets",
        statement=(
            "The report ranks the datasets as benchmarks by which mode each needs, as the paper's recommendations do; "
            "the controls land where their construction says."
        ),
        measured={
            "ranking": verdicts["dataset"].to_list(),
            "categories": categories,
            "expected_for_controls": expected,
            "gnn_gain_over_baseline": {
                row["dataset"]: round(row["gnn_gain_over_baseline"], 4)
                for row in verdicts.iter_rows(named=True)
            },
        },
        criterion=(
            "every dataset gets a category and rank; each control's category equals the expected one (a mismatch "
            "on tests that cannot reject at α is inconclusive)"
        ),
        evidence=evidence,
        could_hold="Each control's category comes from the same separability tests as the controls claim plus "
        "the sign of its score difference, so a control whose carrying mode the GIN exploits lands in the "
        "category its construction implies.",
        could_fail="A control whose carrying mode is not learnt, or whose uninformative mode's removal shifts the "
        "score consistently, gets another category; the real datasets' ranks have no ground truth and are "
        "reported, not judged.",
        unit="dataset",
        n=len(expected),
    )


def run(ctx: StepContext) -> None:
    """Evaluate the three claims and write claims.json."""
    names = ctx.params.claims
    separability = read_parquet(ctx.input("separability"))
    claims = [
        controls_claim(separability, names),
        complementarity_claim(
            read_parquet(ctx.input("complementarity")),
            names.confidence,
            ctx.params.audit.graph_metric.metric,
            ctx.params.audit.geometric_dim,
        ),
        ranking_claim(read_parquet(ctx.input("verdicts")), separability, names),
    ]
    for claim in claims:
        ctx.log(f"{claim.id}: {claim.verdict}: {claim.reason}")
    write_claims(claims, ctx.output("claims"))
    write_headline(claims, ctx.output("headline"))
