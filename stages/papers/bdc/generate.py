"""Step `bdc-generate`: the fact world and the arithmetic set, their benchmark questions, every strategy's
rewrite of each benchmark per seed, and the utility questions; stored as validated tables.

`items.parquet`: one row per (benchmark, seed, version, question); version `vanilla` is the original benchmark,
`utility` the non-benchmark questions, every other version a strategy's rewrite. `world.parquet`: every fact.
"""

from __future__ import annotations

import polars as pl

from stages.core.context import StepContext
from stages.core.io import write_json, write_parquet
from stages.core.schema import ColumnSpec, TableSchema
from stages.core.seeding import derive_seed
from stages.core.validate import ensure_valid
from stages.methods.contamination.items import MCItem, to_rows
from stages.methods.contamination.strategies import apply_strategy, pools_of
from stages.papers.bdc import world as W
from stages.papers.bdc.params import BDCParams

ITEMS_SCHEMA = TableSchema(
    "bdc-items",
    (
        ColumnSpec("benchmark", "str", allowed=("facts", "arithmetic")),
        ColumnSpec("seed", "int", min=0),
        ColumnSpec("version", "str"),
        ColumnSpec("id", "str"),
        ColumnSpec("question", "str"),
        ColumnSpec("answer", "str"),
        ColumnSpec("n_choices", "int", min=2, max=26),
    ),
    description="multiple-choice questions per benchmark, seed and version (choices/labels checked per item)",
)
WORLD_SCHEMA = TableSchema(
    "bdc-world",
    (
        ColumnSpec("benchmark", "str", allowed=("facts", "arithmetic")),
        ColumnSpec("entity", "str"),
        ColumnSpec("role", "str", allowed=("benchmark", "drill", "utility")),
        ColumnSpec("attribute", "str"),
        ColumnSpec("value", "str"),
    ),
    description="the generated facts",
)


def benchmarks(params: BDCParams) -> tuple[W.World, dict[str, list[MCItem]], dict[str, list[MCItem]], dict]:
    """The world, each benchmark's questions, each benchmark's utility questions, the arithmetic roles."""
    spec = params.grid.world
    world = W.make_world(spec.benchmark_entities, spec.drill_entities, spec.utility_entities, spec.seed)
    arithmetic = W.arithmetic_sets(
        spec.arithmetic_top,
        spec.arithmetic_benchmark,
        spec.arithmetic_drill,
        spec.arithmetic_utility,
        derive_seed(spec.seed, "bdc", "arithmetic"),
    )
    items = {
        "facts": W.fact_benchmark(world, spec.facts_per_entity, derive_seed(spec.seed, "bdc", "facts")),
        "arithmetic": arithmetic["benchmark"],
    }
    utility = {
        "facts": W.role_questions(world, "utility", derive_seed(spec.seed, "bdc", "utility"), "utility"),
        "arithmetic": arithmetic["utility"],
    }
    return world, items, utility, arithmetic


def versions(items: list[MCItem], strategies: list[str], seed: int) -> dict[str, list[MCItem]]:
    """The original benchmark and every strategy's rewrite (distractor pools from the benchmark itself)."""
    pools = pools_of(items)
    return {"vanilla": items} | {
        name: apply_strategy(name, items, derive_seed(seed, "bdc", "strategy", name), pools)
        for name in strategies
    }


def run(ctx: StepContext) -> None:
    params: BDCParams = ctx.params
    world, items, utility, arithmetic = benchmarks(params)
    rows = []
    for benchmark in params.benchmarks:
        for seed in params.grid.seeds:
            for version, rewritten in versions(items[benchmark], params.strategies, seed).items():
                rows += [row | {"benchmark": benchmark, "seed": seed} for row in to_rows(rewritten, version)]
            rows += [
                row | {"benchmark": benchmark, "seed": seed} for row in to_rows(utility[benchmark], "utility")
            ]
    frame = pl.DataFrame(rows).with_columns(pl.col("choices").list.len().alias("n_choices"))
    frame = frame.select(
        "benchmark", "seed", "version", "id", "question", "choices", "labels", "answer", "group", "n_choices"
    )
    ensure_valid(frame.select(ITEMS_SCHEMA.column_names), ITEMS_SCHEMA, "bdc items")
    facts = pl.DataFrame(W.world_rows(world, arithmetic))
    ensure_valid(facts, WORLD_SCHEMA, "bdc world")
    write_parquet(frame, ctx.output("items"))
    write_parquet(facts, ctx.output("world"))
    counts = frame.group_by("benchmark", "version").agg(pl.len()).sort("benchmark", "version")
    first = versions(items[params.benchmarks[0]], params.strategies, params.grid.seeds[0])
    example = {version: to_rows(rewritten[:1], version)[0] for version, rewritten in first.items()}
    summary = {
        "questions": {b: len(items[b]) for b in params.benchmarks},
        "utility_questions": {b: len(utility[b]) for b in params.benchmarks},
        "rows": {f"{r['benchmark']}/{r['version']}": r["len"] for r in counts.iter_rows(named=True)},
        "facts": facts.height,
        "example_first_question": example,
    }
    write_json(summary, ctx.output("summary"))
    ctx.log(f"{frame.height} question rows, {facts.height} facts")
