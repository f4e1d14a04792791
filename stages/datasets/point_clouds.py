"""Point-cloud classification data: synthetic trimesh shapes in three settings, and the point-cloud table.

Eight classes with distinct principal variances (no cube or icosahedron: an isotropic covariance leaves the PCA
axes undefined): boxes a > b > c, ellipsoids, cylinders, cones, capsules, tori, tables, chairs, each instance
with its own random sizes, surface-sampled (area-weighted) and normalised to the unit sphere. Settings:
`aligned` (as built), `so3` (a uniform random rotation per cloud), `so3_rotator` (the rotated cloud PCA-aligned
offline; the network adds the sign flip).

The table: `sample_id`, `split` ("train" | "test"), `label`, `setting` and `points`, a fixed-size array of
n × 3 coordinates (row-major: x0 y0 z0 x1 …).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import polars as pl

from stages.core.schema import ColumnSpec, TableSchema
from stages.core.seeding import derive_seed

SETTINGS = ("aligned", "so3", "so3_rotator")
SPLITS = ("train", "test")


def _uniform(rng: np.random.Generator, centre: float, spread: float = 0.15) -> float:
    return float(centre * rng.uniform(1 - spread, 1 + spread))


def _box(rng):
    import trimesh

    return trimesh.creation.box(extents=(_uniform(rng, 2.0), _uniform(rng, 1.2), _uniform(rng, 0.5)))


def _ellipsoid(rng):
    import trimesh

    mesh = trimesh.creation.icosphere(subdivisions=3)
    mesh.apply_scale((_uniform(rng, 1.0), _uniform(rng, 0.6), _uniform(rng, 0.35)))
    return mesh


def _cylinder(rng):
    import trimesh

    return trimesh.creation.cylinder(radius=_uniform(rng, 0.35), height=_uniform(rng, 2.0), sections=32)


def _cone(rng):
    import trimesh

    return trimesh.creation.cone(radius=_uniform(rng, 0.6), height=_uniform(rng, 1.6), sections=32)


def _capsule(rng):
    import trimesh

    return trimesh.creation.capsule(height=_uniform(rng, 1.6), radius=_uniform(rng, 0.3), count=(16, 16))


def _torus(rng):
    import trimesh

    return trimesh.creation.torus(
        _uniform(rng, 1.0), _uniform(rng, 0.25), major_sections=32, minor_sections=16
    )


def _legs(rng, width: float, depth: float, height: float, thickness: float) -> list:
    import trimesh

    legs = []
    for sx in (-1, 1):
        for sy in (-1, 1):
            leg = trimesh.creation.box(extents=(thickness, thickness, height))
            leg.apply_translation((sx * (width - thickness) / 2, sy * (depth - thickness) / 2, height / 2))
            legs.append(leg)
    return legs


def _table(rng):
    import trimesh

    width, depth, height = _uniform(rng, 2.0), _uniform(rng, 1.1), _uniform(rng, 0.9)
    top = trimesh.creation.box(extents=(width, depth, 0.08))
    top.apply_translation((0, 0, height + 0.04))
    return trimesh.util.concatenate([top, *_legs(rng, width, depth, height, 0.1)])


def _chair(rng):
    import trimesh

    width, depth, height = _uniform(rng, 0.9), _uniform(rng, 0.8), _uniform(rng, 0.8)
    seat = trimesh.creation.box(extents=(width, depth, 0.08))
    seat.apply_translation((0, 0, height + 0.04))
    back_height = _uniform(rng, 1.1)
    back = trimesh.creation.box(extents=(width, 0.08, back_height))
    back.apply_translation((0, (depth - 0.08) / 2, height + 0.08 + back_height / 2))
    return trimesh.util.concatenate([seat, back, *_legs(rng, width, depth, height, 0.08)])


SHAPES: dict[str, Callable[[np.random.Generator], object]] = {
    "box": _box,
    "ellipsoid": _ellipsoid,
    "cylinder": _cylinder,
    "cone": _cone,
    "capsule": _capsule,
    "torus": _torus,
    "table": _table,
    "chair": _chair,
}
"""Class name → builder of one random instance (label = position)."""


def normalise(points: np.ndarray) -> np.ndarray:
    """Clouds (…, n, 3) centred, the farthest point on the unit sphere."""
    x = points - points.mean(axis=-2, keepdims=True)
    return x / np.linalg.norm(x, axis=-1).max(axis=-1)[..., None, None]


def sample_shape(name: str, points: int, seed: int) -> np.ndarray:
    """One random instance of shape `name`, `points` surface points (area-weighted), unit sphere (float64)."""
    import trimesh

    rng = np.random.default_rng(seed)
    mesh = SHAPES[name](rng)
    sampled, _ = trimesh.sample.sample_surface(mesh, points, seed=rng)
    return normalise(np.asarray(sampled, dtype=np.float64))


def synthetic_shapes(
    train_per_class: int, test_per_class: int, points: int, seed: int, classes: Sequence[str] = tuple(SHAPES)
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Aligned clouds (N × points × 3), labels and split names: per class `train_per_class` then
    `test_per_class` instances, each from its own derived seed."""
    clouds, labels, splits = [], [], []
    for label, name in enumerate(classes):
        for index in range(train_per_class + test_per_class):
            clouds.append(sample_shape(name, points, derive_seed(seed, "shape", name, index)))
            labels.append(label)
            splits.append("train" if index < train_per_class else "test")
    return np.stack(clouds), np.array(labels, dtype=np.int64), np.array(splits)


def in_setting(aligned: np.ndarray, setting: str, seed: int) -> np.ndarray:
    """Clouds in one setting: `aligned` as given, `so3` each uniformly rotated (one rotation per cloud, drawn
    from `seed`), `so3_rotator` the rotated clouds PCA-aligned."""
    from stages.datasets.rotations import pca_align_all, uniform_rotations

    if setting == "aligned":
        return aligned
    if setting not in SETTINGS:
        raise ValueError(f"unknown setting {setting!r}; valid: {', '.join(SETTINGS)}")
    rotations = uniform_rotations(len(aligned), np.random.default_rng(seed))
    rotated = np.einsum("bij,bnj->bni", rotations, aligned)
    return rotated if setting == "so3" else pca_align_all(rotated)


def point_cloud_schema(
    points: int, settings: Sequence[str] = SETTINGS, classes: int | None = None
) -> TableSchema:
    """Schema of the point-cloud table (coordinates of unit-sphere clouds: |x| ≤ 1 + 1e-4)."""
    return TableSchema(
        name="point_clouds",
        columns=(
            ColumnSpec("sample_id", "int", unique=True, min=0),
            ColumnSpec("split", "str", allowed=SPLITS),
            ColumnSpec("label", "int", min=0, max=None if classes is None else classes - 1),
            ColumnSpec("setting", "str", allowed=tuple(settings)),
            ColumnSpec("points", "array", min=-1.0001, max=1.0001, length=points * 3),
        ),
    )


def to_table(
    clouds: np.ndarray, labels: np.ndarray, splits: Sequence[str], setting: str, first_id: int = 0
) -> pl.DataFrame:
    """Clouds (N × n × 3) as rows of the point-cloud table (float32 coordinates)."""
    n, points, _ = clouds.shape
    flat = clouds.reshape(n, points * 3).astype(np.float32)
    return pl.DataFrame(
        {
            "sample_id": np.arange(first_id, first_id + n, dtype=np.int64),
            "split": pl.Series(list(splits), dtype=pl.Utf8),
            "label": np.asarray(labels, dtype=np.int64),
            "setting": pl.Series([setting] * n, dtype=pl.Utf8),
        }
    ).with_columns(pl.Series("points", flat, dtype=pl.Array(pl.Float32, points * 3)))


def from_table(frame: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Clouds (N × n × 3, float32) and labels of point-cloud table rows."""
    flat = np.asarray(frame["points"].to_numpy(), dtype=np.float32)
    return flat.reshape(len(frame), -1, 3).copy(), frame["label"].to_numpy().astype(np.int64)
