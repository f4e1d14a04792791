"""`icml25 certify` on your own images: a LipConvNet saved by this project (safetensors + config.json) and a
Parquet table of images in [0, 1] with integer labels → per-image prediction and certified l2 radius, certified
accuracy at your ε list, ACR, a Markdown report and a figure.

Inputs are checked before any work and every error names the file, column or option (exit 2 from the CLI,
nothing written); the output folder is written at once at the end (`OutputTransaction(owner="certify")`).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl
import torch

from stages.core.errors import DataValidationError
from stages.core.io import OutputTransaction, write_json, write_text
from stages.core.metrics import new_figure, save_figure
from stages.methods.lipschitz.certify import average_certified_radius, certified_accuracy
from stages.methods.lipschitz.nets import LipConvNet, load_lipconvnet
from stages.methods.lipschitz.train import evaluate


def check_epsilons(epsilons: list[float]) -> list[float]:
    """ε values must be finite and > 0 (l2, [0, 1] pixel units)."""
    if not epsilons:
        raise DataValidationError("--epsilons: give at least one radius")
    bad = [eps for eps in epsilons if not (math.isfinite(eps) and eps > 0)]
    if bad:
        raise DataValidationError(f"--epsilons: every radius must be a finite number > 0, got {bad}")
    return sorted(set(epsilons))


def read_images(
    path: str | Path, model: LipConvNet, column: str, label_column: str
) -> tuple[torch.Tensor, torch.Tensor]:
    """Images (N, C, 32, 32) and labels from a Parquet table; 28 × 28 single-channel images are zero-padded to
    32 × 32 as in `bronet-prepare`. Errors name the file and column."""
    path = Path(path)
    if path.suffix.lower() != ".parquet" or not path.is_file():
        raise DataValidationError(f"{path}: expected an existing .parquet file")
    try:
        frame = pl.read_parquet(path)
    except Exception as error:  # polars raises several types for unreadable files
        raise DataValidationError(f"{path}: cannot read as Parquet ({type(error).__name__})") from None
    for name in (column, label_column):
        if name not in frame.columns:
            raise DataValidationError(f"{path}: no column {name!r}; columns: {', '.join(frame.columns)}")
    if frame.height == 0:
        raise DataValidationError(f"{path}: the table has no rows")
    if frame[column].null_count() or frame[label_column].null_count():
        raise DataValidationError(f"{path}: columns {column!r} / {label_column!r} have missing values")
    if not isinstance(frame[column].dtype, pl.List | pl.Array):
        raise DataValidationError(
            f"{path}: column {column!r} must hold arrays of pixels, got {frame[column].dtype}"
        )
    try:
        images = np.asarray(frame[column].to_list(), dtype=np.float32)
    except ValueError:
        raise DataValidationError(f"{path}: column {column!r}: images of different sizes") from None
    config = model.config
    images = images.reshape(len(images), -1)
    side = config.input_size
    channels = config.in_channels
    if images.shape[1] == channels * 28 * 28:
        images = np.pad(images.reshape(-1, channels, 28, 28), ((0, 0), (0, 0), (2, 2), (2, 2)))
    elif images.shape[1] == channels * side * side:
        images = images.reshape(-1, channels, side, side)
    else:
        raise DataValidationError(
            f"{path}: column {column!r} holds {images.shape[1]} values per image; the model takes "
            f"{channels}×{side}×{side} = {channels * side * side} (or {channels}×28×28, padded)"
        )
    if not np.isfinite(images).all() or images.min() < 0 or images.max() > 1:
        raise DataValidationError(
            f"{path}: column {column!r}: pixels must be finite and in [0, 1], found [{np.nanmin(images):.3g}, "
            f"{np.nanmax(images):.3g}] (divide 0–255 pixels by 255)"
        )
    labels = frame[label_column]
    if not labels.dtype.is_integer():
        raise DataValidationError(f"{path}: column {label_column!r} must hold integers, got {labels.dtype}")
    labels_np = labels.to_numpy().astype(np.int64)
    if labels_np.min() < 0 or labels_np.max() >= config.classes:
        raise DataValidationError(
            f"{path}: column {label_column!r}: labels must lie in 0..{config.classes - 1} (the model's classes), "
            f"found {labels_np.min()}..{labels_np.max()}"
        )
    return torch.from_numpy(np.ascontiguousarray(images)), torch.from_numpy(labels_np)


def report_text(summary: dict, epsilons: list[float], model_path: str, images_path: str) -> str:
    lines = [
        "# Certified l2 robustness",
        "",
        f"Model `{model_path}`, images `{images_path}` ({summary['images']} images). A point is certified at ε when "
        "it is classified correctly and its radius (LLN margin / (‖w_y − w_j‖ · L), L the Lipschitz bound of the "
        f"features, here {summary['lipschitz']:.4g}) exceeds ε.",
        "",
        "| ε | ε × 255 | certified accuracy |",
        "|---|---|---|",
        *[
            f"| {eps:.4f} | {eps * 255:.1f} | {acc:.4f} |"
            for eps, acc in zip(epsilons, summary["certified_accuracy"], strict=True)
        ],
        "",
        f"Clean accuracy {summary['clean_accuracy']:.4f}; ACR (radii clipped to [0, 1], 0 when wrong) "
        f"{summary['acr']:.4f}. Per-image radii: `radii.parquet`; figure: `certified_accuracy.png`.",
        "",
    ]
    return "\n".join(lines)


def certify_files(
    model_path: str | Path,
    images_path: str | Path,
    output: str | Path,
    epsilons: list[float],
    column: str = "image",
    label_column: str = "label",
) -> dict:
    """Check inputs, certify every image, write the output folder; returns the report dictionary."""
    epsilons = check_epsilons(list(epsilons))
    model = load_lipconvnet(model_path)
    images, labels = read_images(images_path, model, column, label_column)
    result = evaluate(model, images, labels)
    summary = {
        "images": len(labels),
        "clean_accuracy": float(result.correct.mean()),
        "certified_accuracy": certified_accuracy(result.correct, result.radii, epsilons),
        "epsilons": epsilons,
        "acr": average_certified_radius(result.correct, result.radii),
        "lipschitz": result.lipschitz,
    }
    radii = pl.DataFrame(
        {
            "row": np.arange(len(labels)),
            "label": labels.numpy(),
            "prediction": result.predictions,
            "correct": result.correct,
            "radius": result.radii,
        }
    )
    output = Path(output)
    if not output.parent.is_dir():
        raise DataValidationError(f"--output {output}: its parent folder {output.parent} does not exist")
    with OutputTransaction(output.parent, owner="certify") as out:
        folder = out.path(output)
        folder.mkdir(parents=True)
        radii.write_parquet(folder / "radii.parquet")
        write_json(summary, folder / "summary.json")
        write_text(report_text(summary, epsilons, str(model_path), str(images_path)), folder / "report.md")
        figure, axis = new_figure()
        grid = np.linspace(0, max(epsilons) * 1.5, 60)
        axis.plot(
            grid * 255, certified_accuracy(result.correct, result.radii, grid), label="certified accuracy"
        )
        axis.scatter(
            np.array(epsilons) * 255, summary["certified_accuracy"], color="k", zorder=3, label="your ε"
        )
        axis.set(xlabel="ε × 255 (l2)", ylabel="certified accuracy")
        axis.legend()
        save_figure(figure, folder / "certified_accuracy.png")
    return {"summary": summary}
