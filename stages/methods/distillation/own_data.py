"""DD3D on your own point clouds: a Parquet table (one row per cloud: a label column and a points column of
n × 3 coordinates, flat or nested) or a ModelNet-format folder → a distilled set (Parquet), the generator
(safetensors), a Markdown report and figures.

Inputs are checked before any work; every error names the file, column or key (exit 2 from the CLI, nothing
written). Clouds of unequal sizes are resampled to the smallest size (with a note in the report). With a
`split` column holding "train"/"test" (or a ModelNet folder), the report adds the test OA of a fresh PointNet
trained on the distilled set beside one trained on a random real subset of the same size.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from stages.core.errors import DataValidationError
from stages.core.io import OutputTransaction, write_parquet, write_text
from stages.datasets.modelnet import load_modelnet
from stages.datasets.point_clouds import normalise

OWNER = "distill-points"


@dataclass
class UserClouds:
    """Validated clouds (N × n × 3, float32, unit sphere), integer labels, split names, class names, notes."""

    clouds: np.ndarray
    labels: np.ndarray
    splits: np.ndarray
    classes: list[str]
    notes: list[str] = field(default_factory=list)


def _cloud_array(value: object, row: int, path: Path, column: str) -> np.ndarray:
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise DataValidationError(f"{path}: column {column!r}, row {row}: not numeric coordinates") from None
    if array.ndim == 1:
        if array.size % 3:
            raise DataValidationError(
                f"{path}: column {column!r}, row {row}: {array.size} values, not a multiple of 3"
            )
        array = array.reshape(-1, 3)
    if array.ndim != 2 or array.shape[1] != 3:
        raise DataValidationError(
            f"{path}: column {column!r}, row {row}: expected n × 3 coordinates, got {array.shape}"
        )
    if len(array) < 4:
        raise DataValidationError(f"{path}: column {column!r}, row {row}: {len(array)} points (need ≥ 4)")
    if not np.isfinite(array).all():
        raise DataValidationError(f"{path}: column {column!r}, row {row}: non-finite coordinates")
    return array


def read_cloud_table(
    path: str | Path, label_column: str = "label", points_column: str = "points", seed: int = 0
) -> UserClouds:
    """Read and validate a point-cloud Parquet table (see the module docstring)."""
    path = Path(path)
    if not path.is_file():
        raise DataValidationError(f"{path}: file not found")
    try:
        frame = pl.read_parquet(path)
    except Exception as error:  # polars raises several types for unreadable files
        raise DataValidationError(f"{path}: cannot read as Parquet ({type(error).__name__})") from None
    for column in (label_column, points_column):
        if column not in frame.columns:
            raise DataValidationError(f"{path}: no column {column!r}; columns: {', '.join(frame.columns)}")
    for column in (label_column, points_column):
        if frame[column].null_count():
            raise DataValidationError(
                f"{path}: column {column!r} has {frame[column].null_count()} missing rows"
            )
    clouds = [
        _cloud_array(value, i, path, points_column) for i, value in enumerate(frame[points_column].to_list())
    ]
    names = sorted({str(value) for value in frame[label_column].to_list()})
    if len(names) < 2:
        raise DataValidationError(f"{path}: column {label_column!r} has {len(names)} class(es); need ≥ 2")
    index = {name: i for i, name in enumerate(names)}
    labels = np.array([index[str(value)] for value in frame[label_column].to_list()], dtype=np.int64)
    splits = np.array(frame["split"].to_list()) if "split" in frame.columns else np.full(len(labels), "train")
    bad = sorted(set(splits.tolist()) - {"train", "test"})
    if bad:
        raise DataValidationError(f"{path}: column 'split' may hold only 'train' and 'test', found {bad}")
    return _finish(clouds, labels, splits, names, seed, str(path))


def _finish(
    clouds: list[np.ndarray], labels: np.ndarray, splits: np.ndarray, names: list[str], seed: int, where: str
) -> UserClouds:
    notes = []
    sizes = {len(cloud) for cloud in clouds}
    smallest = min(sizes)
    if len(sizes) > 1:
        rng = np.random.default_rng(seed)
        clouds = [cloud[np.sort(rng.permutation(len(cloud))[:smallest])] for cloud in clouds]
        notes.append(
            f"{where}: clouds had {min(sizes)}–{max(sizes)} points; each was resampled to {smallest}"
        )
    train = splits == "train"
    missing = [names[c] for c in range(len(names)) if not (labels[train] == c).any()]
    if missing:
        raise DataValidationError(f"{where}: classes without training clouds: {', '.join(missing)}")
    stacked = normalise(np.stack(clouds)).astype(np.float32)
    return UserClouds(stacked, labels, splits, names, notes)


def read_clouds(
    path: str | Path, label_column: str, points_column: str, points: int, seed: int
) -> UserClouds:
    """A Parquet table or a ModelNet folder (`.off` tree or `ply_data_*.h5`), validated."""
    path = Path(path)
    if path.is_dir():
        clouds, labels, splits, names = load_modelnet(path, points, seed)
        if len(names) < 2:
            raise DataValidationError(f"{path}: {len(names)} class(es); need ≥ 2")
        return _finish(list(clouds), labels, splits, names, seed, str(path))
    return read_cloud_table(path, label_column, points_column, seed)


@dataclass(frozen=True)
class DistillRequest:
    """What `icml25 distill-points` was asked for."""

    cpc: int = 1
    points: int = 256
    output_points: int | None = None
    iterations: int = 40
    outer_loop: int = 5
    inner_loop: int = 5
    batch_real: int = 16
    rotator: bool = True
    eval_epochs: int = 100
    seed: int = 0

    def check(self) -> None:
        """Refuse bad settings, naming the option."""
        for name in ("cpc", "points", "iterations", "outer_loop", "batch_real", "eval_epochs"):
            if getattr(self, name) < 1:
                raise DataValidationError(
                    f"--{name.replace('_', '-')}: must be ≥ 1, got {getattr(self, name)}"
                )
        if self.inner_loop < 0:
            raise DataValidationError(f"--inner-loop: must be ≥ 0, got {self.inner_loop}")
        if self.output_points is not None and self.output_points < 4:
            raise DataValidationError(f"--output-points: must be ≥ 4, got {self.output_points}")


def distill_files(
    source: str | Path,
    output: str | Path,
    request: DistillRequest,
    label_column: str = "label",
    points_column: str = "points",
) -> dict:
    """Validate, distil, evaluate when a test split exists, and write the output folder in one transaction."""
    from safetensors.torch import save_file

    from stages.datasets.rotations import pca_align_all
    from stages.methods.distillation.distill import DistillOptions, distill, random_subset
    from stages.methods.distillation.evaluate import EvalOptions, train_and_test
    from stages.methods.distillation.figures import line_png, scatter_grid_png

    request.check()
    data = read_clouds(
        source, label_column, points_column, max(request.points, request.output_points or 0), request.seed
    )
    n_points = data.clouds.shape[1]
    if request.points > n_points:
        raise DataValidationError(
            f"--points: {request.points} exceeds the {n_points} points of the input clouds"
        )
    clouds = (
        pca_align_all(data.clouds.astype(np.float64)).astype(np.float32) if request.rotator else data.clouds
    )
    train = data.splits == "train"
    options = DistillOptions(
        cpc=request.cpc,
        iterations=request.iterations,
        outer_loop=request.outer_loop,
        inner_loop=request.inner_loop,
        batch_real=request.batch_real,
        points=request.points,
        widths=(64, 128, 256),
        flip_w0=1.0 if request.rotator else None,
    )
    result = distill(clouds[train], data.labels[train], options, request.seed)
    out_points = request.output_points or n_points
    synthetic = result.clouds(out_points, request.seed)
    evaluation = None
    if (~train).any():
        eval_options = EvalOptions(epochs=request.eval_epochs, widths=options.widths, flip_w0=options.flip_w0)
        test = clouds[~train][:, : min(out_points, n_points)]
        ours = train_and_test(
            synthetic, result.labels, test, data.labels[~train], len(data.classes), eval_options, request.seed
        )
        rows = (
            random_subset(data.labels[train], request.cpc, request.seed)
            if all((data.labels[train] == c).sum() >= request.cpc for c in range(len(data.classes)))
            else None
        )
        random = (
            None
            if rows is None
            else train_and_test(
                clouds[train][rows],
                data.labels[train][rows],
                test,
                data.labels[~train],
                len(data.classes),
                eval_options,
                request.seed,
            )
        )
        evaluation = {
            "distilled_oa": round(100 * ours.final_accuracy, 2),
            "random_subset_oa": None if random is None else round(100 * random.final_accuracy, 2),
        }
    output = Path(output)
    frame = pl.DataFrame(
        {"cloud": np.arange(len(result.labels)), "label": [data.classes[c] for c in result.labels]}
    ).with_columns(
        pl.Series("points", synthetic.reshape(len(synthetic), -1), dtype=pl.Array(pl.Float32, out_points * 3))
    )
    summary = {
        "clouds_in": int(train.sum()),
        "classes": len(data.classes),
        "distilled_clouds": len(result.labels),
        "points_out": out_points,
        "loss_first": round(result.losses[0], 4),
        "loss_last": round(result.losses[-1], 4),
        "evaluation": evaluation,
        "notes": data.notes,
    }
    with OutputTransaction(owner=OWNER) as transaction:
        folder = transaction.path(output)
        (folder / "figures").mkdir(parents=True)
        write_parquet(frame, folder / "distilled.parquet")
        assert result.generator is not None
        save_file(
            {k: v.contiguous() for k, v in result.generator.state_dict().items()},
            str(folder / "generator.safetensors"),
        )
        firsts = [synthetic[np.flatnonzero(result.labels == c)[0]] for c in range(len(data.classes))]
        reals = [clouds[train][np.flatnonzero(data.labels[train] == c)[0]] for c in range(len(data.classes))]
        scatter_grid_png(
            {"distilled": firsts, "real": reals}, data.classes, folder / "figures" / "clouds.png"
        )
        line_png(
            list(range(1, len(result.losses) + 1)),
            result.losses,
            folder / "figures" / "matching_loss.png",
            "Gradient-matching loss per iteration",
            "iteration",
            "mean loss per class and outer step",
        )
        write_text(_report(summary, data, request), folder / "report.md")
    return summary


def _report(summary: dict, data: UserClouds, request: DistillRequest) -> str:
    counts = np.bincount(data.labels[data.splits == "train"], minlength=len(data.classes))
    lines = [
        "# DD3D distillation report",
        "",
        f"- input: {summary['clouds_in']} training clouds, {summary['classes']} classes, "
        f"{data.clouds.shape[1]} points each",
        f"- distilled: {summary['distilled_clouds']} clouds ({request.cpc} per class) at {summary['points_out']} "
        f"points, distilled at {request.points} points, rotator {'on' if request.rotator else 'off'}",
        f"- matching loss: {summary['loss_first']} (first iteration) → {summary['loss_last']} (last)",
        "",
        "| class | training clouds |",
        "|---|---|",
        *[f"| {name} | {count} |" for name, count in zip(data.classes, counts, strict=True)],
        "",
    ]
    if summary["evaluation"]:
        e = summary["evaluation"]
        lines += [
            "## Test accuracy (fresh PointNet, final epoch)",
            "",
            f"- trained on the distilled set: {e['distilled_oa']} %",
            f"- trained on a random real subset of the same size: {e['random_subset_oa']} %",
            "",
        ]
    if data.notes:
        lines += ["## Notes", "", *[f"- {note}" for note in data.notes], ""]
    lines += [
        "Figures: `figures/clouds.png` (distilled beside real, one per class), `figures/matching_loss.png`.",
        "",
    ]
    return "\n".join(lines)
