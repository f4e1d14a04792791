"""ModelNet40's two public formats, read into clouds (N × n × 3) and labels.

- `.off` meshes (ModelNet40 as released by Princeton): `<root>/<class>/<split>/<name>.off`; each mesh is
  surface-sampled (area-weighted, triangulating polygons) and normalised to the unit sphere. The header may be
  glued to the counts (`OFF490 518 0`), as in some of the released files.
- `ply_data_{train,test}*.h5` (the PointNet HDF5 release): datasets `data` (N × 2048 × 3) and `label` (N × 1),
  class names from `shape_names.txt` when present.

Every error names the file and what is wrong.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from stages.core.errors import DataValidationError
from stages.datasets.point_clouds import normalise


def read_off(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """Vertices (v × 3, float64) and triangles (t × 3, int64; polygons fanned) of an `.off` file."""
    path = Path(path)
    tokens = path.read_text().split("\n")
    lines = [line.split("#")[0].strip() for line in tokens]
    lines = [line for line in lines if line]
    if not lines or not lines[0].upper().startswith("OFF"):
        raise DataValidationError(f"{path}: not an OFF file (first line {lines[0][:20] if lines else ''!r})")
    header = lines[0][3:].strip()
    rest = lines[1:]
    if not header:
        if not rest:
            raise DataValidationError(f"{path}: missing the vertex/face counts line")
        header, rest = rest[0], rest[1:]
    try:
        n_vertices, n_faces = (int(value) for value in header.split()[:2])
    except ValueError:
        raise DataValidationError(f"{path}: bad counts line {header!r}") from None
    if len(rest) < n_vertices + n_faces:
        raise DataValidationError(
            f"{path}: declares {n_vertices} vertices and {n_faces} faces, has {len(rest)} lines"
        )
    try:
        vertices = np.array(
            [[float(v) for v in line.split()[:3]] for line in rest[:n_vertices]], dtype=np.float64
        )
        triangles = []
        for line in rest[n_vertices : n_vertices + n_faces]:
            values = [int(v) for v in line.split()]
            corners = values[1 : 1 + values[0]]
            triangles.extend([corners[0], corners[i], corners[i + 1]] for i in range(1, len(corners) - 1))
    except (ValueError, IndexError):
        raise DataValidationError(f"{path}: non-numeric or short vertex/face line") from None
    faces = np.array(triangles, dtype=np.int64).reshape(-1, 3)
    if vertices.shape != (n_vertices, 3) or not np.isfinite(vertices).all():
        raise DataValidationError(f"{path}: vertices must be {n_vertices} finite x y z rows")
    if len(faces) == 0 or faces.min() < 0 or faces.max() >= n_vertices:
        raise DataValidationError(f"{path}: faces missing or indexing beyond the {n_vertices} vertices")
    return vertices, faces


def sample_mesh(vertices: np.ndarray, faces: np.ndarray, points: int, rng: np.random.Generator) -> np.ndarray:
    """`points` area-weighted uniform surface samples of a triangle mesh, normalised to the unit sphere."""
    corners = vertices[faces]
    areas = 0.5 * np.linalg.norm(
        np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0]), axis=1
    )
    if areas.sum() <= 0:
        raise ValueError("the mesh has zero surface area")
    chosen = rng.choice(len(faces), points, p=areas / areas.sum())
    u, v = rng.random((2, points))
    flip = u + v > 1
    u[flip], v[flip] = 1 - u[flip], 1 - v[flip]
    a, b, c = corners[chosen, 0], corners[chosen, 1], corners[chosen, 2]
    return normalise(a + u[:, None] * (b - a) + v[:, None] * (c - a))


def load_off_folder(
    root: str | Path, points: int, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """Clouds, labels, split names and class names of a ModelNet `.off` tree `<root>/<class>/<split>/*.off`
    (classes sorted by name; split folders `train` and `test`)."""
    root = Path(root)
    classes = sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
    if not classes:
        raise DataValidationError(f"{root}: no class folders (expected <class>/<train|test>/*.off)")
    rng = np.random.default_rng(seed)
    clouds, labels, splits = [], [], []
    for label, name in enumerate(classes):
        for split in ("train", "test"):
            for file in sorted((root / name / split).glob("*.off")):
                vertices, faces = read_off(file)
                try:
                    clouds.append(sample_mesh(vertices, faces, points, rng))
                except ValueError as error:
                    raise DataValidationError(f"{file}: {error}") from None
                labels.append(label)
                splits.append(split)
    if not clouds:
        raise DataValidationError(f"{root}: no .off files under <class>/train or <class>/test")
    return np.stack(clouds).astype(np.float32), np.array(labels, dtype=np.int64), np.array(splits), classes


def read_h5(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """Clouds (N × n × 3, float32) and labels (N) of one `ply_data_*.h5` file."""
    import h5py

    path = Path(path)
    try:
        with h5py.File(path, "r") as file:
            missing = [key for key in ("data", "label") if key not in file]
            if missing:
                raise DataValidationError(
                    f"{path}: missing dataset(s) {', '.join(missing)} (has {', '.join(file)})"
                )
            data, label = np.asarray(file["data"], dtype=np.float32), np.asarray(file["label"]).reshape(-1)
    except OSError as error:
        raise DataValidationError(f"{path}: cannot read as HDF5 ({error})") from None
    if data.ndim != 3 or data.shape[2] < 3:
        raise DataValidationError(f"{path}: 'data' must be N × points × 3, got {data.shape}")
    if len(label) != len(data):
        raise DataValidationError(f"{path}: {len(data)} clouds but {len(label)} labels")
    return data[:, :, :3], label.astype(np.int64)


def load_h5_folder(root: str | Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """Clouds, labels, split names and class names of a folder of `ply_data_{train,test}*.h5` files."""
    root = Path(root)
    files = sorted(root.glob("ply_data_*.h5"))
    if not files:
        raise DataValidationError(f"{root}: no ply_data_*.h5 files")
    clouds, labels, splits = [], [], []
    for file in files:
        split = "train" if "train" in file.name else "test" if "test" in file.name else None
        if split is None:
            raise DataValidationError(f"{file}: name must contain 'train' or 'test'")
        data, label = read_h5(file)
        clouds.append(data)
        labels.append(label)
        splits.extend([split] * len(label))
    all_labels = np.concatenate(labels)
    names_file = root / "shape_names.txt"
    names = (
        names_file.read_text().split()
        if names_file.is_file()
        else [str(c) for c in range(int(all_labels.max()) + 1)]
    )
    if all_labels.min() < 0 or all_labels.max() >= len(names):
        raise DataValidationError(
            f"{root}: labels span {all_labels.min()}..{all_labels.max()} but {len(names)} class names"
        )
    return np.concatenate(clouds), all_labels, np.array(splits), names


def load_modelnet(
    root: str | Path, points: int, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """A ModelNet-format folder, either kind: HDF5 files when present, else the `.off` tree (clouds of the HDF5
    release are subsampled to `points` with a seeded draw)."""
    root = Path(root)
    if not root.is_dir():
        raise DataValidationError(f"{root}: not a folder")
    if any(root.glob("ply_data_*.h5")):
        clouds, labels, splits, names = load_h5_folder(root)
        if clouds.shape[1] < points:
            raise DataValidationError(f"{root}: clouds have {clouds.shape[1]} points, fewer than {points}")
        rng = np.random.default_rng(seed)
        keep = np.sort(rng.permutation(clouds.shape[1])[:points])
        return normalise(clouds[:, keep].astype(np.float64)).astype(np.float32), labels, splits, names
    return load_off_folder(root, points, seed)
