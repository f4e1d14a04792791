"""Step `dd3d-data`: the synthetic shapes in three settings (one validated table) and the rotator's invariance.

Invariance: every aligned test cloud X and a fresh random rotation R; the Chamfer distance between the
rotator's canonical forms of R·X and X, beside X's relative eigengaps (the claim keeps clouds whose gaps all
exceed `claims.eigengap`).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from stages.core.context import StepContext
from stages.core.io import write_json, write_parquet
from stages.core.seeding import derive_seed
from stages.core.validate import ensure_valid
from stages.datasets.point_clouds import (
    SETTINGS,
    SHAPES,
    in_setting,
    point_cloud_schema,
    synthetic_shapes,
    to_table,
)
from stages.methods.distillation.rotator import canonical, chamfer, eigengaps, uniform_rotations
from stages.papers.dd3d.params import DD3DParams


def invariance_table(aligned: np.ndarray, labels: np.ndarray, w0: float, seed: int) -> pl.DataFrame:
    """Per cloud: its eigengaps and Chamfer(canonical(R·X), canonical(X)) for a fresh uniform rotation R."""
    rotations = uniform_rotations(len(aligned), np.random.default_rng(seed))
    rotated = np.einsum("bij,bnj->bni", rotations, aligned)
    first, second = canonical(aligned, w0), canonical(rotated, w0)
    gaps = np.stack([eigengaps(cloud) for cloud in aligned])
    return pl.DataFrame(
        {
            "item": np.arange(len(aligned), dtype=np.int64),
            "label": labels.astype(np.int64),
            "shape": [list(SHAPES)[label] for label in labels],
            "gap_12": gaps[:, 0],
            "gap_23": gaps[:, 1],
            "chamfer": [chamfer(a, b) for a, b in zip(first, second, strict=True)],
        }
    )


def run(ctx: StepContext) -> None:
    params: DD3DParams = ctx.params
    shapes = params.grid.shapes
    seed = derive_seed(ctx.common.seed, "dd3d", "shapes")
    aligned, labels, splits = synthetic_shapes(
        shapes.train_per_class, shapes.test_per_class, shapes.points, seed
    )
    tables = []
    for index, setting in enumerate(SETTINGS):
        clouds = in_setting(aligned, setting, derive_seed(shapes.rotation_seed, "dd3d", "rotations"))
        tables.append(to_table(clouds, labels, splits, setting, first_id=index * len(aligned)))
    table = pl.concat(tables)
    report = ensure_valid(table, point_cloud_schema(shapes.points, classes=len(SHAPES)), "dd3d shapes")
    test = splits == "test"
    invariance = invariance_table(
        aligned[test],
        labels[test],
        params.grid.distill.w0_sign,
        derive_seed(ctx.common.seed, "dd3d", "invariance"),
    )
    ctx.log(
        f"{table.height} clouds validated; median invariance Chamfer {invariance['chamfer'].median():.2e}"
    )
    write_parquet(table, ctx.output("clouds"))
    write_parquet(invariance, ctx.output("invariance"))
    write_json(
        {
            "classes": list(SHAPES),
            "settings": list(SETTINGS),
            "train_per_class": shapes.train_per_class,
            "test_per_class": shapes.test_per_class,
            "points": shapes.points,
            "validation": report.to_dict(),
        },
        ctx.output("data_summary"),
    )
