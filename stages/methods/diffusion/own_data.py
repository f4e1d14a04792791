"""SFBD on your own arrays: noisy images y = x + σε (`.npy` or Parquet), σ, and a small clean set → a denoiser
(safetensors, one checkpoint per round), samples, the denoised noisy set, a distance report and figures.

Inputs are checked before any training, and every error names the file and what is wrong (exit 2 from the
CLI, nothing written). Outputs are written together at the end (a failed run leaves no partial folder).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import save_file

from stages.core.errors import DataValidationError
from stages.core.io import OutputTransaction, write_json, write_text
from stages.methods.diffusion.edm import Precond, TrainOptions, train_edm
from stages.methods.diffusion.figures import denoised_png, distance_by_round_png, sample_grids_png
from stages.methods.diffusion.metrics import frechet_distance, kid
from stages.methods.diffusion.nets import build_net
from stages.methods.diffusion.sampler import batched, sample
from stages.methods.diffusion.sfbd import Round, SFBDOptions, sfbd

SUFFIXES = (".npy", ".parquet")
NOISY_SPAN = 8.0
"""Noisy values beyond [−1 − 8σ, 1 + 8σ] are refused: the data is not in [−1, 1] units or σ is wrong."""


def read_array(path: str | Path, column: str | None = None) -> np.ndarray:
    """Rows of fixed-size arrays from `.npy` (N, ...) or Parquet (one list/array column: `column`, or the only
    column) as float32; errors name the file."""
    path = Path(path)
    if path.suffix.lower() not in SUFFIXES:
        raise DataValidationError(f"{path}: unsupported file type {path.suffix!r}; use .npy or .parquet")
    if not path.is_file():
        raise DataValidationError(f"{path}: file not found")
    if path.suffix.lower() == ".npy":
        try:
            array = np.load(path, allow_pickle=False)
        except ValueError as error:
            raise DataValidationError(f"{path}: not a numeric .npy array ({error})") from None
    else:
        array = _parquet_array(path, column)
    if not np.issubdtype(array.dtype, np.number) or array.dtype == np.bool_:
        raise DataValidationError(f"{path}: values must be numbers, got dtype {array.dtype}")
    if array.ndim < 2:
        raise DataValidationError(
            f"{path}: expected rows of arrays (N, D) or (N, H, W), got shape {array.shape}"
        )
    return array.astype(np.float32)


def _parquet_array(path: Path, column: str | None) -> np.ndarray:
    import polars as pl

    try:
        frame = pl.read_parquet(path)
    except Exception as error:  # polars raises several types for unreadable files
        raise DataValidationError(f"{path}: cannot read as Parquet ({type(error).__name__})") from None
    if column is None:
        if frame.width != 1:
            raise DataValidationError(
                f"{path}: {frame.width} columns ({', '.join(frame.columns)}); name the image column with --column"
            )
        column = frame.columns[0]
    if column not in frame.columns:
        raise DataValidationError(f"{path}: no column {column!r}; columns: {', '.join(frame.columns)}")
    series = frame[column]
    if series.null_count():
        raise DataValidationError(f"{path}: column {column!r} has {series.null_count()} missing rows")
    if not isinstance(series.dtype, pl.List | pl.Array):
        raise DataValidationError(
            f"{path}: column {column!r} must hold fixed-size arrays, got {series.dtype}"
        )
    try:
        return np.asarray(series.to_list(), dtype=np.float64)
    except ValueError:
        raise DataValidationError(f"{path}: column {column!r}: arrays of different sizes") from None


@dataclass(frozen=True)
class CheckedInputs:
    """Validated inputs: noisy and clean rows of one sample shape, σ."""

    noisy: np.ndarray
    clean: np.ndarray
    sigma: float

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.noisy.shape[1:])


def check_inputs(
    noisy: np.ndarray, clean: np.ndarray, sigma: float, noisy_name: str = "noisy", clean_name: str = "clean"
) -> CheckedInputs:
    """Refuse bad inputs with a message naming the input: σ > 0 and finite; a non-empty clean set (≥ 2 rows);
    ≥ 1 noisy row; one sample shape; finite values; clean in [−1, 1]; noisy inside [−1 − 8σ, 1 + 8σ]."""
    if not (isinstance(sigma, int | float) and math.isfinite(sigma) and sigma > 0):
        raise DataValidationError(f"--sigma must be a finite number > 0, got {sigma}")
    if len(clean) < 2:
        raise DataValidationError(f"{clean_name}: the clean set needs at least 2 images, got {len(clean)}")
    if len(noisy) < 1:
        raise DataValidationError(f"{noisy_name}: no noisy images")
    if noisy.shape[1:] != clean.shape[1:]:
        raise DataValidationError(
            f"{noisy_name} and {clean_name}: sample shapes differ ({noisy.shape[1:]} vs {clean.shape[1:]})"
        )
    for name, array in ((noisy_name, noisy), (clean_name, clean)):
        bad = int((~np.isfinite(array)).reshape(len(array), -1).any(axis=1).sum())
        if bad:
            raise DataValidationError(f"{name}: {bad} rows hold NaN or infinite values")
    if clean.min() < -1 - 1e-6 or clean.max() > 1 + 1e-6:
        raise DataValidationError(
            f"{clean_name}: clean values must lie in [−1, 1], found [{clean.min():.3g}, {clean.max():.3g}] "
            "(rescale: x / 127.5 − 1 for 0–255 pixels)"
        )
    limit = 1 + NOISY_SPAN * sigma
    if np.abs(noisy).max() > limit:
        raise DataValidationError(
            f"{noisy_name}: values reach {np.abs(noisy).max():.3g}, beyond ±(1 + 8σ) = ±{limit:.3g}: the noisy "
            "images are not clean images in [−1, 1] plus N(0, σ²) noise (check --sigma and the scaling)"
        )
    return CheckedInputs(noisy.astype(np.float32), clean.astype(np.float32), float(sigma))


@dataclass(frozen=True)
class DeconvolveOptions:
    """The run: denoiser kind and size, φ0's steps, K rounds of F steps, batch, learning rate, samples."""

    denoiser: str = "mlp"
    width: int = 128
    depth: int = 3
    pretrain_steps: int = 2000
    iterations: int = 4
    round_steps: int = 1000
    batch: int = 256
    lr: float = 1e-3
    samples: int = 256
    seed: int = 0


def deconvolve(
    inputs: CheckedInputs, options: DeconvolveOptions, transaction: OutputTransaction, output: Path
) -> dict:
    """φ0 on the clean set, K SFBD rounds; checkpoints, samples, E_K, report and figures staged in
    `transaction` under `output`. Returns the report's dictionary."""
    torch.manual_seed(options.seed)
    try:
        net = build_net(options.denoiser, inputs.shape, options.width, options.depth)
    except ValueError as error:
        raise DataValidationError(f"--denoiser {options.denoiser}: {error}") from None
    train = TrainOptions(steps=options.pretrain_steps, batch=options.batch, lr=options.lr)
    start = train_edm(Precond(net), inputs.clean, train, options.seed, "clean-only φ0")
    reference = inputs.clean
    history: list[dict] = []
    grids: dict[str, np.ndarray] = {}
    last: dict[str, np.ndarray] = {}

    def record(model: Precond, k: int) -> None:
        generator = torch.Generator().manual_seed(options.seed + 1000 + k)
        images = (
            sample(batched(model.eval(), 4096), options.samples, inputs.shape, generator).clamp(-1, 1).numpy()
        )
        history.append(
            {
                "k": k,
                "fd_pixel_vs_clean": frechet_distance(images, reference),
                "kid_pixel_vs_clean": kid(images, reference),
            }
        )
        save_file(_state(model), transaction.path(output / "checkpoints" / f"round_{k}.safetensors"))
        last["samples"] = images
        if k == 0:
            grids["start (k = 0)"] = images[:64]

    def on_round(result: Round) -> None:
        record(result.model, result.k)
        last["denoised"] = result.denoised

    record(start, 0)
    sfbd_options = SFBDOptions(iterations=options.iterations, round_steps=options.round_steps)
    final = sfbd(start, inputs.noisy, inputs.clean, inputs.sigma, sfbd_options, train, options.seed, on_round)
    grids[f"SFBD (k = {options.iterations})"] = last["samples"][:64]
    save_file(_state(final), transaction.path(output / "denoiser.safetensors"))
    np.save(transaction.path(output / "samples.npy"), last["samples"])
    np.save(transaction.path(output / "denoised.npy"), last["denoised"])
    _figures(inputs, last, grids, history, transaction, output)
    report = {
        "noisy_images": len(inputs.noisy),
        "clean_images": len(inputs.clean),
        "shape": list(inputs.shape),
        "sigma": inputs.sigma,
        "options": options.__dict__,
        "rounds": history,
        "note": "distances are against your clean set (the only clean data given), in pixels: a stand-in for "
        "FID, comparable between rounds of this run only",
    }
    write_json(report, transaction.path(output / "report.json"))
    write_text(_markdown(report), transaction.path(output / "report.md"))
    return report


def _state(model: Precond) -> dict[str, torch.Tensor]:
    return {
        key: value.detach().contiguous().clone() for key, value in copy.deepcopy(model).state_dict().items()
    }


def _figures(inputs, last, grids, history, transaction, output) -> None:
    if len(inputs.shape) == 2 or round(math.sqrt(math.prod(inputs.shape))) ** 2 == math.prod(inputs.shape):
        sample_grids_png(grids, transaction.path(output / "samples.png"))
        count = min(12, len(inputs.noisy))
        denoised_png(
            {"noisy y": inputs.noisy[:count], "E_K": last["denoised"][:count]},
            transaction.path(output / "denoised.png"),
        )
    distance_by_round_png(
        {"SFBD": ([row["k"] for row in history], [row["fd_pixel_vs_clean"] for row in history])},
        transaction.path(output / "distance_by_round.png"),
        "Fréchet distance (pixels) to your clean set",
        "SFBD rounds",
    )


def _markdown(report: dict) -> str:
    lines = [
        "# SFBD deconvolution report",
        "",
        f"{report['noisy_images']} noisy images (σ = {report['sigma']}), {report['clean_images']} clean images, "
        f"sample shape {tuple(report['shape'])}.",
        "",
        "| round k | Fréchet distance (pixels) | KID (pixels) |",
        "|---|---|---|",
    ]
    lines += [
        f"| {row['k']} | {row['fd_pixel_vs_clean']:.4f} | {row['kid_pixel_vs_clean']:.4g} |"
        for row in report["rounds"]
    ]
    lines += ["", report["note"], ""]
    return "\n".join(lines)


def deconvolve_files(
    noisy_path: str | Path,
    clean_path: str | Path,
    sigma: float,
    output: str | Path,
    options: DeconvolveOptions,
    column: str | None = None,
) -> dict:
    """Read, check and run; every output is written into `output` (a folder) together at the end."""
    inputs = check_inputs(
        read_array(noisy_path, column),
        read_array(clean_path, column),
        sigma,
        str(noisy_path),
        str(clean_path),
    )
    for name in ("pretrain_steps", "iterations", "round_steps", "batch", "samples", "width", "depth"):
        if getattr(options, name) < 1:
            raise DataValidationError(f"--{name.replace('_', '-')} must be ≥ 1, got {getattr(options, name)}")
    if options.samples < 2:
        raise DataValidationError("--samples must be ≥ 2 (distances need two samples)")
    output = Path(output).absolute()
    root = output.parent
    while not root.is_dir():
        root = root.parent
    with OutputTransaction(root, owner="icml25 deconvolve") as transaction:
        return deconvolve(inputs, options, transaction, output)
