"""Step `activation_comm-claims`: the card's six claims at this scale, three-way verdicts from intervals over items
(the unit of replication; paired: every method answers the same items). Greedy decoding makes a run
deterministic, so there is one run per game and the intervals are over its items, not over seeds; each
compared quantity keeps its per-item values (`per_seed` holds them, keyed by item).

1. `beats_silent`: replace − silent accuracy > 0 on at least one game (paired bootstrap over test items); the
   gap closed is reported. Inconclusive by design: at 135M parameters the answer accuracy (0/1 per item) does
   not move with what B is told.
2. `replace_best_f`: replace ≥ mean and ≥ sum on both games (non-inferiority: bootstrap interval above −margin).
3. `ac_vs_nl`: replace − natural language > 0 on both games (the paper: AC ahead in all 4 cells; reported).
   Inconclusive by design: accuracy cannot move at 135M parameters, and the natural-language baseline is broken
   (below chance on Tip Sheets).
4. `best_depth`: a "best setting" test (:func:`compare_best`, paired bootstrap over dev items of both games on
   the gold log-probability): the grid must hold every depth the claim names (the band [lo·L, hi·L] and every
   depth ≤ shallow·L); it holds when the best depth lies in the band and beats every swept depth outside it,
   fails when it lies outside and beats every band depth. A grid without them (the default six depths skip the
   band's 15–19) leaves the argmax untested: inconclusive by design.
5. `flops`: per item, FLOPs(replace) / FLOPs(natural language) < 1 on both games, on the log scale (t interval
   of the mean log-ratio over items, reported as the geometric mean); the paper's < 1/4 reported.
6. `last_token_vs_all`: last-token replace ≥ sum over all aligned tokens on both games (non-inferiority).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from stages.core.claims import (
    Claim,
    DesignError,
    Evidence,
    compare_best,
    compare_ratio,
    evidence_reason,
    half_width,
    judge,
    verdict_claim,
    write_claims,
)
from stages.core.claims import bootstrap_interval as engine_bootstrap
from stages.core.context import StepContext
from stages.core.headline import write_headline
from stages.core.io import read_json, read_parquet
from stages.core.seeding import derive_seed
from stages.papers.activation_comm.params import ActivationCommParams

SMALL_MODEL = (
    "at 135M parameters B's answer accuracy (a 0/1 score per item) does not move with what it is told: the "
    "grafts change which answers B gives but not how many are right, and even the skyline, which reads x_A, is "
    "not clearly above the silent baseline"
)


def bootstrap_interval(
    values: np.ndarray, resamples: int, confidence: float, seed: int
) -> tuple[float, float]:
    """Percentile interval of the mean of `values` over `resamples` resamples (with replacement)."""
    return engine_bootstrap(np.asarray(values, dtype=np.float64), confidence, resamples, seed)


def bootstrap_evidence(
    name: str,
    values: np.ndarray,
    threshold: float,
    direction: str,
    params: ActivationCommParams,
    note: str = "",
    items: list[str] | None = None,
) -> Evidence:
    """The mean of per-item values judged through its bootstrap interval over the items (`per_seed` holds the
    per-item values, keyed by item)."""
    claims = params.claims
    interval = bootstrap_interval(values, claims.resamples, claims.confidence, derive_seed(0, name))
    keys = items if items is not None else [str(index) for index in range(len(values))]
    return Evidence(
        name=name,
        per_seed={key: float(value) for key, value in zip(keys, values, strict=True)},
        mean=float(values.mean()),
        interval=interval,
        interval_kind=f"bootstrap {claims.confidence:.0%} over {len(values)} items ({claims.resamples} resamples)",
        threshold=threshold,
        direction=direction,
        verdict=judge(*interval, threshold, direction),
        note=note,
        detectable=half_width(interval),
    )


def per_item(results: pl.DataFrame, game: str, method: str, column: str = "correct") -> np.ndarray:
    rows = results.filter((pl.col("game") == game) & (pl.col("method") == method)).sort("item")
    return rows[column].cast(pl.Float64).to_numpy()


def item_ids(results: pl.DataFrame, game: str, method: str) -> list[str]:
    """The item ids of `per_item`'s values, in its order."""
    rows = results.filter((pl.col("game") == game) & (pl.col("method") == method)).sort("item")
    return [str(item) for item in rows["item"]]


def accuracy(results: pl.DataFrame, game: str, method: str) -> float:
    return float(per_item(results, game, method).mean())


def games_of(results: pl.DataFrame) -> list[str]:
    return results["game"].unique(maintain_order=True).to_list()


def difference(results, game, first, second, threshold, params, note="") -> Evidence:
    values = per_item(results, game, first) - per_item(results, game, second)
    return bootstrap_evidence(
        f"{first} − {second} accuracy on {game}",
        values,
        threshold,
        "above",
        params,
        note,
        items=item_ids(results, game, first),
    )


def beats_silent(results: pl.DataFrame, params: ActivationCommParams) -> Claim:
    evidence, gap = [], {}
    for game in games_of(results):
        evidence.append(difference(results, game, "replace", "silent", 0.0, params))
        ac, silent, sky = (accuracy(results, game, m) for m in ("replace", "silent", "skyline"))
        gap[game] = round((ac - silent) / (sky - silent), 4) + 0.0 if sky != silent else None  # no -0.0
    return verdict_claim(
        id="beats_silent",
        statement="Activation communication (f = replace) beats the silent baseline (Table 2).",
        measured={
            "gap_closed": gap,
            "paper_gap_closed": "0.84–0.96",
            "accuracy": {
                g: {m: accuracy(results, g, m) for m in ("silent", "replace", "skyline")}
                for g in games_of(results)
            },
        },
        criterion="on at least one game the bootstrap interval over test items of replace − silent accuracy "
        "lies wholly above 0 (fails when it lies wholly below 0 on every game); gap closed = (AC − silent)/"
        f"(skyline − silent); declared inconclusive by design ({SMALL_MODEL})",
        evidence=evidence,
        could_hold=f"It cannot hold at this model size: {SMALL_MODEL}, so replace − silent stays inside the "
        "item noise whatever A's activation carries.",
        could_fail="It cannot fail for the same reason: a graft that barely changes how many answers are right "
        "cannot fall below silent beyond the noise on both games; only a larger receiver (the paper's 3B/8B) "
        "can decide it.",
        unit="item",
        verdict="inconclusive",
        reason=f"Inconclusive by design: {SMALL_MODEL}; the accuracy difference cannot separate from 0.",
    )


def replace_best_f(results: pl.DataFrame, params: ActivationCommParams) -> Claim:
    margin = params.claims.noninferiority_margin
    evidence = [
        difference(results, game, "replace", other, -margin, params, note=f"non-inferiority margin {margin}")
        for game in games_of(results)
        for other in ("mean", "sum")
    ]
    return verdict_claim(
        id="replace_best_f",
        statement="f = replace does at least as well as f = mean and f = sum (Table 2).",
        measured={
            g: {m: accuracy(results, g, m) for m in ("replace", "mean", "sum")} for g in games_of(results)
        },
        criterion=f"on both games, bootstrap intervals over test items of replace − mean and replace − sum "
        f"wholly above −{margin}",
        evidence=evidence,
        could_hold=f"Replace answers about as many items right as mean and sum on both games, with intervals "
        f"over the items wholly above −{margin}; where the grafts barely change accuracy (135M parameters) it "
        "holds because no f moves B, not because replace is the best f.",
        could_fail=f"Mean or sum answers enough more items right than replace on a game that the interval of "
        f"replace − it lies wholly below −{margin}.",
        unit="item",
    )


def ac_vs_nl(results: pl.DataFrame, params: ActivationCommParams) -> Claim:
    evidence = [difference(results, g, "replace", "natural_language", 0.0, params) for g in games_of(results)]
    broken = (
        "the natural-language baseline is broken here: A's ≤ 16-token message derails B, which then scores below "
        "chance on Tip Sheets (a three-way choice), so replace − natural language measures that failure, not "
        "what activations carry beyond text"
    )
    return verdict_claim(
        id="ac_vs_nl",
        statement="Activation communication is ahead of natural-language communication (Table 2, all 4 cells; the "
        "card asks only for a report).",
        measured={
            g: {m: accuracy(results, g, m) for m in ("replace", "natural_language")}
            for g in games_of(results)
        },
        criterion="on both games, the bootstrap interval over test items of replace − natural-language accuracy "
        f"wholly above 0; declared inconclusive by design ({SMALL_MODEL}; {broken})",
        evidence=evidence,
        could_hold=f"It cannot hold as a finding: {SMALL_MODEL}, and where replace is ahead it is because {broken}.",
        could_fail="It could fail only where the natural-language message helps B (it does on Countries, "
        "where B alone is near chance), but with the activation graft unable to move accuracy that says nothing "
        "about communicating activations.",
        unit="item",
        verdict="inconclusive",
        reason=f"Inconclusive by design: {SMALL_MODEL}; and {broken}.",
    )


def sweep_by_depth(sweep: pl.DataFrame) -> dict[int, dict[str, float]]:
    """Per swept depth, the dev items' gold log-probabilities keyed `game:item` (ascending depths)."""
    out: dict[int, dict[str, float]] = {}
    for depth in sorted(int(d) for d in sweep["depth"].unique()):
        rows = sweep.filter(pl.col("depth") == depth).sort("game", "item")
        out[depth] = {
            f"{game}:{item}": float(value)
            for game, item, value in zip(rows["game"], rows["item"], rows["logprob"], strict=True)
        }
    return out


def best_depth_claim(sweep: pl.DataFrame, params: ActivationCommParams) -> Claim:
    claims = params.claims
    layers = int(sweep["layers"][0])
    low, high = claims.best_depth_band
    per_depth = sweep_by_depth(sweep)
    grid = list(per_depth)
    band = [d for d in range(1, layers + 1) if low * layers <= d <= high * layers]
    shallow = [d for d in range(1, layers + 1) if d <= claims.shallow_fraction * layers]
    named = sorted(set(band) | set(shallow) | set(grid))
    label = "dev log p(gold)"
    band_text = f"[{low * layers:g}, {high * layers:g}]"
    missing_band = [d for d in band if d not in per_depth]
    try:
        best_key, evidence = compare_best(
            label, per_depth, named, "above", claims.confidence, method="bootstrap", unit="dev items"
        )
        missing = []
    except DesignError:  # the grid lacks a named depth: record the swept ones, decide nothing
        missing = [d for d in named if d not in per_depth]
        best_key, evidence = compare_best(
            label, per_depth, grid, "above", claims.confidence, method="bootstrap", unit="dev items"
        )
    best = int(best_key)
    others = [d for d in (grid if missing else named) if d != best]
    vs = dict(zip(others, evidence, strict=True))
    in_band = low * layers <= best <= high * layers
    if missing:
        verdict = "inconclusive"
        reason = (
            f"Inconclusive by design: the swept depths {grid} lack {_depth_list(missing)} of the depths the "
            f"claim names (the band {band_text} and every depth ≤ {claims.shallow_fraction:g}·L); they skip "
            f"{_depth_list(missing_band)} of the band, so the best swept depth {best} is an untested argmax (a "
            "depth off the grid may beat it); a grid with every named depth (`scale: full` sweeps 1 to L) can "
            "decide it."
        )
    elif in_band:
        deciding = [vs[d] for d in others if not low * layers <= d <= high * layers]
        if deciding and all(item.verdict == "holds" for item in deciding):
            verdict = "holds"
            reason = (
                f"The best k = j = {best} of {layers} lies in {band_text} and beats every depth outside it; the "
                f"closest: {evidence_reason(min(deciding, key=lambda item: item.interval[0]))}."
            )
        else:
            verdict = "inconclusive"
            undecided = next((item for item in deciding if item.verdict != "holds"), None)
            reason = (
                f"The best k = j = {best} of {layers} lies in {band_text} but is not separated from every depth "
                f"outside it: {evidence_reason(undecided) if undecided else 'no swept depth lies outside'}."
            )
    else:
        deciding = [vs[d] for d in others if low * layers <= d <= high * layers]
        if deciding and all(item.verdict == "holds" for item in deciding):
            verdict = "fails"
            reason = (
                f"The best k = j = {best} of {layers} lies outside {band_text} and beats every depth inside it; "
                f"the closest: {evidence_reason(min(deciding, key=lambda item: item.interval[0]))}."
            )
        else:
            verdict = "inconclusive"
            undecided = next((item for item in deciding if item.verdict != "holds"), None)
            reason = (
                f"The best k = j = {best} of {layers} lies outside {band_text} but does not beat every depth "
                f"inside it: {evidence_reason(undecided) if undecided else 'no swept depth lies inside'}."
            )
    means = (
        sweep.group_by("depth")
        .agg(pl.col("logprob").mean(), pl.col("correct").cast(pl.Float64).mean())
        .sort("depth")
    )
    by_depth = {
        str(row["depth"]): {"logprob": round(row["logprob"], 4), "accuracy": round(row["correct"], 4)}
        for row in means.iter_rows(named=True)
    }
    if missing:
        could_hold = (
            f"It cannot on this grid: the swept depths {grid} leave out {_depth_list(missing_band)} of the band "
            f"{band_text}, so no best depth is tested against them; with every depth from 1 to L swept it holds "
            "when the best depth lies in the band and its dev log p(gold) beats every depth outside it beyond "
            "the bootstrap noise over dev items."
        )
        could_fail = (
            "It cannot on this grid either (an unswept band depth may be the best); with every depth swept it "
            "fails when the best depth lies outside the band and beats every band depth beyond the noise."
        )
    else:
        could_hold = (
            f"The best depth lies in {band_text} and its dev log p(gold) beats every swept depth outside the band "
            "beyond the bootstrap noise over dev items (the same items the best was picked on, which favours it)."
        )
        could_fail = (
            f"The best depth lies outside {band_text} and beats every band depth beyond the noise; a best that "
            "neighbouring depths match is inconclusive."
        )
    return verdict_claim(
        id="best_depth",
        statement="Grafting works best at a late-middle layer (Fig. 2: k = j = 26 of 28–32 layers), well above "
        "shallow layers.",
        measured={
            "best": best,
            "layers": layers,
            "by_depth": by_depth,
            "grid": grid,
            "missing_named_depths": missing,
        },
        criterion=f"best setting test (paired bootstrap over dev items of both games, dev log p(gold)) on a grid "
        f"that must hold every depth in [{low}·L, {high}·L] and every depth ≤ {claims.shallow_fraction}·L: "
        "holds when the best depth lies in the band and beats every swept depth outside it, fails when it lies "
        "outside and beats every band depth; a grid without them is inconclusive by design",
        evidence=evidence,
        could_hold=could_hold,
        could_fail=could_fail,
        unit="item",
        verdict=verdict,
        reason=reason,
    )


def _depth_list(depths: list[int]) -> str:
    """`15–19, 21–25 and 27`: runs of consecutive depths."""
    runs: list[list[int]] = []
    for depth in depths:
        if runs and depth == runs[-1][-1] + 1:
            runs[-1].append(depth)
        else:
            runs.append([depth])
    texts = [str(run[0]) if len(run) == 1 else f"{run[0]}–{run[-1]}" for run in runs]
    if not texts:
        return "none"
    return texts[0] if len(texts) == 1 else ", ".join(texts[:-1]) + f" and {texts[-1]}"


def flops_claim(results: pl.DataFrame, params: ActivationCommParams) -> Claim:
    evidence, ratios = [], {}
    for game in games_of(results):
        ratio = per_item(results, game, "replace", "flops") / per_item(
            results, game, "natural_language", "flops"
        )
        items = item_ids(results, game, "replace")
        item = compare_ratio(
            f"FLOPs(replace) / FLOPs(natural language) on {game}",
            dict(zip(items, ratio.tolist(), strict=True)),
            params.claims.flops_ratio,
            "below",
            params.claims.confidence,
            unit="items",
        )
        item.note = f"the paper's '< 1/4': geometric mean ratio {item.mean:.3f}"
        ratios[game] = {
            "mean": round(float(ratio.mean()), 4),
            "geometric_mean": round(float(item.mean), 4),
            "below_quarter": bool(item.mean < params.claims.flops_report),
        }
        evidence.append(item)
    return verdict_claim(
        id="flops",
        statement="Activation communication needs less compute than natural language (Eq. 1–2; the paper: < 1/4).",
        measured={"ratio": ratios, "paper": "< 0.25"},
        criterion=f"on both games, the t interval over test items of the mean log FLOPs ratio AC / NL (reported as "
        f"the geometric mean) wholly below {params.claims.flops_ratio} at the measured P, M, T",
        evidence=evidence,
        could_hold="A's one pass to layer k plus B's T answer passes over its own prompt cost less than A's M "
        "message passes plus B's T passes over prompt and message (Eq. 1–2 at each item's P, M, T): the case "
        "whenever A writes a message and B's answers are of similar length.",
        could_fail="It fails only if B's answers under the graft are so much longer (T, up to the 8-token cap) "
        "than under natural language that they outweigh the message's M sender passes; the FLOPs are analytic "
        "from token counts, so this checks Eq. 1–2 at the measured lengths, not measured compute.",
        unit="item",
    )


def last_token_claim(results: pl.DataFrame, params: ActivationCommParams) -> Claim:
    margin = params.claims.noninferiority_margin
    evidence = [
        difference(
            results, g, "replace", "all_tokens_sum", -margin, params, note=f"non-inferiority margin {margin}"
        )
        for g in games_of(results)
    ]
    return verdict_claim(
        id="last_token_vs_all",
        statement="Replacing the last token only does at least as well as summing over all tokens (Table 5; the "
        "paper's reasoning sets, here the two games).",
        measured={
            g: {m: accuracy(results, g, m) for m in ("replace", "all_tokens_sum")} for g in games_of(results)
        },
        criterion=f"on both games, the bootstrap interval over test items of replace − all-token sum accuracy "
        f"wholly above −{margin}",
        evidence=evidence,
        could_hold=f"The last-token replace answers about as many items right as the all-token sum, or more, "
        f"with the interval wholly above −{margin} on both games; a hold says adding A's vector at every "
        "position hurts B, not that the last-token graft helps (its accuracy need not exceed silent's).",
        could_fail=f"The all-token sum answers enough more items right than the last-token replace on a game "
        f"that the interval of the difference lies wholly below −{margin}.",
        unit="item",
    )


def run(ctx: StepContext) -> None:
    params: ActivationCommParams = ctx.params
    results, sweep = read_parquet(ctx.input("results")), read_parquet(ctx.input("sweep"))
    setup = read_json(ctx.input("setup"))
    claims = [
        beats_silent(results, params),
        replace_best_f(results, params),
        ac_vs_nl(results, params),
        best_depth_claim(sweep, params),
        flops_claim(results, params),
        last_token_claim(results, params),
    ]
    claims[3].measured["evaluated_at"] = setup["depth"]
    for claim in claims:
        ctx.log(f"{claim.id}: {claim.verdict}: {claim.reason}")
    write_claims(claims, ctx.output("claims"))
    write_headline(claims, ctx.output("headline"))
