"""Per-question quantities pooled over seeds and the strategy × recipe × benchmark table.

Seeds are averaged per question (a question's fidelity share is the fraction of seeds where the clean model's
correctness on it is unchanged), so a bootstrap over questions resamples each question with all its seeds:
the question is the unit, paired across strategies and recipes."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from stages.methods.contamination.metrics import bootstrap_indices, percentile_interval
from stages.papers.bdc.params import ALTERING

RECIPES = ("intensive", "mild")


@dataclass(frozen=True)
class Vectors:
    """(seeds, questions) 0/1 correctness of one benchmark: clean and per recipe, per version."""

    ids: list[str]
    seeds: list[int]
    table: dict[tuple[str, str], np.ndarray]

    def get(self, model: str, version: str) -> np.ndarray:
        return self.table[(model, version)]


def vectors(correctness: pl.DataFrame, benchmark: str) -> Vectors:
    frame = correctness.filter((pl.col("benchmark") == benchmark) & (pl.col("version") != "utility"))
    seeds = sorted(frame["seed"].unique().to_list())
    ids = sorted(frame.filter(pl.col("version") == "vanilla")["id"].unique().to_list())
    position = {item: i for i, item in enumerate(ids)}
    table: dict[tuple[str, str], np.ndarray] = {}
    for (model, version), part in frame.group_by("model", "version", maintain_order=True):
        array = np.zeros((len(seeds), len(ids)))
        for row in part.iter_rows(named=True):
            array[seeds.index(row["seed"]), position[row["id"]]] = row["correct"]
        table[(model, version)] = array
    return Vectors(ids, seeds, table)


def per_question(vec: Vectors, strategy: str, recipe: str) -> dict[str, np.ndarray]:
    """Per question (mean over seeds): fidelity agreement, resistance agreement, vanilla resistance agreement,
    their difference, the clean model's accuracy change and the recipe's accuracy lift on the originals."""
    co, cu = vec.get("clean", "vanilla"), vec.get("clean", strategy)
    xo, xu = vec.get(recipe, "vanilla"), vec.get(recipe, strategy)
    keep, resist, base = (co == cu).mean(0), (cu == xu).mean(0), (co == xo).mean(0)
    return {
        "fidelity": keep,
        "resistance": resist,
        "vanilla_resistance": base,
        "resistance_gain": resist - base,
        "delta_accuracy": (cu - co).mean(0),
        "lift": (xo - co).mean(0),
        "accuracy_clean": cu.mean(0),
        "accuracy_contaminated": xu.mean(0),
    }


def category(strategy: str) -> str:
    return "vanilla" if strategy == "vanilla" else "altering" if strategy in ALTERING else "preserving"


def summary_table(
    correctness: pl.DataFrame, benchmarks: list[str], strategies: list[str], resamples: int, confidence: float
) -> pl.DataFrame:
    """One row per benchmark × recipe × strategy (vanilla first): accuracies, fidelity, resistance and the
    resistance gain over vanilla, each with a paired bootstrap interval over questions (seeds pooled)."""
    rows = []
    for benchmark in benchmarks:
        vec = vectors(correctness, benchmark)
        indices = bootstrap_indices(len(vec.ids), resamples, 0)
        for recipe in RECIPES:
            for strategy in ["vanilla", *strategies]:
                values = per_question(vec, strategy, recipe)
                row = {
                    "benchmark": benchmark,
                    "recipe": recipe,
                    "strategy": strategy,
                    "category": category(strategy),
                    "questions": len(vec.ids),
                    "seeds": len(vec.seeds),
                }
                for name, array in values.items():
                    low, high = percentile_interval(array[indices].mean(axis=1), confidence)
                    row |= {name: float(array.mean()), f"{name}_low": low, f"{name}_high": high}
                rows.append(row)
    return pl.DataFrame(rows)


def utility_table(correctness: pl.DataFrame) -> pl.DataFrame:
    """Accuracy on the utility (non-benchmark) questions per benchmark and model, mean over seeds."""
    return (
        correctness.filter(pl.col("version") == "utility")
        .group_by("benchmark", "model", "seed")
        .agg(pl.col("correct").mean().alias("accuracy"))
        .group_by("benchmark", "model")
        .agg(pl.col("accuracy").mean(), pl.col("accuracy").min().alias("min_over_seeds"))
        .sort("benchmark", "model")
    )
