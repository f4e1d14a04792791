"""VI-Net on your own embeddings: a table (Parquet or CSV) of numeric embedding columns and a label column →
generators per class (degree, coefficients, vanishing on own class vs others), a VI-Net head and its accuracy on
held-out rows beside a linear probe with the same recipe, in a report.

Inputs are checked before any fitting; every error names the file, column or option (exit 2 from the CLI, nothing
written). Outputs are written together at the end (a failed run leaves no partial folder).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import polars as pl
import torch
from safetensors.numpy import save_file

from stages.core.errors import DataValidationError
from stages.core.io import OutputTransaction, write_json, write_text
from stages.core.metrics import new_figure, save_figure
from stages.core.user_tables import read_user_table
from stages.datasets.splits import stratified_split
from stages.datasets.user_table import read_wide_table
from stages.methods.ideals.avi import AVIOptions
from stages.methods.ideals.layer import generator_values
from stages.methods.ideals.vinet import (
    Head,
    HeadOptions,
    PCATanh,
    class_vanishing,
    fit_class_ideals,
    polynomial_layer,
    predict,
    train_head,
)


@dataclass(frozen=True)
class OwnDataOptions:
    """Columns, PCA size, ψ, degree cap, oracle, points per class, generators kept, head epochs, held-out share."""

    label: str
    columns: list[str] | None = None
    pca: int = 12
    psi: float = 0.002
    max_degree: int = 3
    oracle: str = "abm"
    max_points: int = 1000
    keep: int = 20
    epochs: int = 3
    test_fraction: float = 0.2
    seed: int = 0


def check_options(options: OwnDataOptions) -> None:
    """Refuse options out of range, naming the option."""
    for name, low in (("pca", 1), ("max_degree", 1), ("max_points", 2), ("keep", 1), ("epochs", 1)):
        if getattr(options, name) < low:
            raise DataValidationError(
                f"--{name.replace('_', '-')} must be ≥ {low}, got {getattr(options, name)}"
            )
    if not (math.isfinite(options.psi) and options.psi > 0):
        raise DataValidationError(f"--psi must be a finite number > 0, got {options.psi}")
    if not 0 < options.test_fraction < 1:
        raise DataValidationError(
            f"--test-fraction must lie strictly between 0 and 1, got {options.test_fraction}"
        )
    if options.oracle not in ("abm", "oavi"):
        raise DataValidationError(f"--oracle must be abm or oavi, got {options.oracle!r}")


@dataclass(frozen=True)
class CheckedTable:
    """Embeddings (float64), labels 0..K−1, their raw names, the columns, and a stratified train/test split."""

    features: np.ndarray
    labels: np.ndarray
    classes: list[str]
    columns: list[str]
    train: np.ndarray
    test: np.ndarray


def check_table(frame: pl.DataFrame, options: OwnDataOptions, source: str) -> CheckedTable:
    """Columns, finite numbers, ≥ 2 classes each with ≥ 2 training and ≥ 1 held-out row, PCA ≤ width."""
    table = read_wide_table(frame, options.label, options.columns, source=source)
    features = np.asarray(table.frame["features"].to_list(), dtype=np.float64)
    labels = table.frame["label"].to_numpy().astype(np.int64)
    classes = [str(value) for value in table.labels.raw]
    if len(classes) < 2:
        raise DataValidationError(
            f"{source}: column '{options.label}' has {len(classes)} class; VI-Net needs ≥ 2"
        )
    if options.pca > features.shape[1]:
        raise DataValidationError(
            f"--pca {options.pca}: exceeds the {features.shape[1]} embedding columns of {source}"
        )
    splits = stratified_split(labels, options.test_fraction, options.seed)
    train, test = np.flatnonzero(splits == "train"), np.flatnonzero(splits == "test")
    for label, name in enumerate(classes):
        n_train, n_test = int(np.sum(labels[train] == label)), int(np.sum(labels[test] == label))
        if n_train < 2 or n_test < 1:
            raise DataValidationError(
                f"{source}: class {name!r} of column '{options.label}' has {n_train} training and {n_test} held-out "
                "rows at this --test-fraction; each class needs ≥ 2 and ≥ 1"
            )
    if options.pca > len(train):
        raise DataValidationError(f"--pca {options.pca}: exceeds the {len(train)} training rows")
    return CheckedTable(features, labels, classes, list(table.columns.features), train, test)


def fit_and_report(table: CheckedTable, options: OwnDataOptions) -> tuple[dict, dict]:
    """PCA + tanh, generators per class, pruned layer, VI-Net head and a linear probe; the report and artefacts."""
    torch.manual_seed(options.seed)
    pca = PCATanh.fit(table.features[table.train], options.pca)
    latents = torch.from_numpy(table.features.astype(np.float32))
    with torch.no_grad():
        z = pca(latents)
    z_train, z_test = z[table.train], z[table.test]
    y_train, y_test = table.labels[table.train], table.labels[table.test]
    avi = AVIOptions(psi=options.psi, max_degree=options.max_degree, oracle=options.oracle)  # type: ignore[arg-type]
    fits, points = fit_class_ideals(
        z_train.numpy().astype(np.float64), y_train, avi, options.max_points, options.seed
    )
    try:
        layer, kept = polynomial_layer(fits, points, options.keep)
    except ValueError as error:
        raise DataValidationError(f"--psi {options.psi}: {error}") from None
    recipe = HeadOptions(epochs=options.epochs)
    k = len(table.classes)
    head = train_head(Head(layer, z_train, k), z_train, torch.from_numpy(y_train), recipe, options.seed)
    probe = train_head(
        Head(None, latents[table.train], k),
        latents[table.train],
        torch.from_numpy(y_train),
        recipe,
        options.seed,
    )
    accuracy = {
        "vinet": float(np.mean(predict(head, z_test) == y_test)),
        "linear_probe": float(np.mean(predict(probe, latents[table.test]) == y_test)),
    }
    z_test64 = z_test.numpy().astype(np.float64)
    generators = []
    for item in kept:
        values = np.abs(generator_values(item.generator, z_test64))
        own = float(values[y_test == item.label].mean())
        others = min(float(values[y_test == label].mean()) for label in range(k) if label != item.label)
        generators.append(
            {
                "class": table.classes[item.label],
                "degree": item.generator.degree,
                "leading_term": list(item.generator.leading_term),
                "terms": [list(term) for term in item.generator.terms],
                "coefficients": [float(c) for c in item.generator.coefficients],
                "train_mean_square": item.generator.loss,
                "score_s_p": item.score,
                "own_class_mean_abs_heldout": own,
                "other_classes_min_mean_abs_heldout": others,
            }
        )
    per_class = {
        table.classes[label]: {
            "points": len(points[label]),
            "order_ideal_terms": len(fit.order_ideal),
            "generators_found": len(fit.generators),
            "generators_kept": sum(1 for item in kept if item.label == label),
        }
        for label, fit in fits.items()
    }
    report = {
        "rows": len(table.labels),
        "train_rows": len(table.train),
        "heldout_rows": len(table.test),
        "classes": table.classes,
        "columns": table.columns,
        "options": asdict(options),
        "accuracy": accuracy,
        "per_class": per_class,
        "layer": {"monomials": len(layer.terms), "nonzero_coefficients": layer.nonzero_coefficients()},
        "parameters": {"pca": pca.parameter_count(), "vinet_head": head.parameter_count()},
        "generators": generators,
    }
    artefacts = {
        "vanishing": class_vanishing(kept, head.layer, z_test, y_test),
        "labels": np.array([item.label for item in kept]),
        "tensors": {
            "pca_mean": pca.mean.numpy(),
            "pca_components": pca.components.numpy(),
            "pca_scale": pca.scale.numpy(),
            "terms": np.asarray(layer.terms, dtype=np.int64),
            "coefficients": head.layer.coefficients.detach().numpy(),
            "mask": layer.mask.numpy(),
            "standardize_mean": head.standardize.mean.numpy(),
            "standardize_std": head.standardize.std.numpy(),
            "linear_weight": head.linear.weight.detach().numpy(),
            "linear_bias": head.linear.bias.detach().numpy(),
        },
    }
    return report, artefacts


def _markdown(report: dict) -> str:
    accuracy, options = report["accuracy"], report["options"]
    lines = [
        "# VI-Net on your embeddings",
        "",
        f"{report['rows']} rows ({report['train_rows']} to fit, {report['heldout_rows']} held out, stratified), "
        f"{len(report['columns'])} embedding columns, {len(report['classes'])} classes; PCA to "
        f"{options['pca']} then tanh; {options['oracle'].upper()} with ψ = {options['psi']}, "
        f"degree ≤ {options['max_degree']}.",
        "",
        f"Held-out accuracy: VI-Net {accuracy['vinet']:.4f}, linear probe on the embeddings "
        f"{accuracy['linear_probe']:.4f} (same head recipe).",
        "",
        "| class | points | O terms | generators found | kept |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {name} | {row['points']} | {row['order_ideal_terms']} | {row['generators_found']} | "
        f"{row['generators_kept']} |"
        for name, row in report["per_class"].items()
    ]
    lines += [
        "",
        "| class | degree | non-zero coefficients | s(p) (train) | own-class mean abs p (held out) | min other class |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {g['class']} | {g['degree']} | {sum(1 for c in g['coefficients'] if c != 0)} | {g['score_s_p']:.4g} | "
        f"{g['own_class_mean_abs_heldout']:.4g} | {g['other_classes_min_mean_abs_heldout']:.4g} |"
        for g in report["generators"]
    ]
    lines += ["", "Coefficients and terms (exponent vectors over the PCA directions): `generators.json`.", ""]
    return "\n".join(lines)


def _figure(artefacts: dict, classes: list[str], path: Path) -> None:
    figure, axis = new_figure(4.8, 5.0)
    image = axis.imshow(np.log10(np.maximum(artefacts["vanishing"], 1e-4)), aspect="auto", cmap="viridis")
    for boundary in np.flatnonzero(np.diff(artefacts["labels"])) + 0.5:
        axis.axhline(boundary, color="white", linewidth=0.5)
    axis.set_xticks(range(len(classes)), classes, rotation=90, fontsize=7)
    axis.set_xlabel("held-out class")
    axis.set_ylabel("kept generator (grouped by its class)")
    axis.set_title("log10 mean G(z) on held-out rows")
    figure.colorbar(image, ax=axis)
    save_figure(figure, path)


def vanishing_ideals_file(input_path: str | Path, output: str | Path, options: OwnDataOptions) -> dict:
    """Read, check, fit and write `report.md`, `report.json`, `generators.json`, `vinet_head.safetensors` and
    `generator_values.png` into the folder `output`, together at the end."""
    check_options(options)
    table = check_table(read_user_table(input_path), options, str(input_path))
    report, artefacts = fit_and_report(table, options)
    output = Path(output).absolute()
    root = output.parent
    while not root.is_dir():
        root = root.parent
    with OutputTransaction(root, owner="icml25 vanishing-ideals") as transaction:
        folder = transaction.path(output)
        folder.mkdir(parents=True, exist_ok=True)
        write_json(
            {key: value for key, value in report.items() if key != "generators"}, folder / "report.json"
        )
        write_json(report["generators"], folder / "generators.json")
        write_text(_markdown(report), folder / "report.md")
        save_file(
            {key: np.ascontiguousarray(value) for key, value in artefacts["tensors"].items()},
            folder / "vinet_head.safetensors",
        )
        _figure(artefacts, table.classes, folder / "generator_values.png")
    return report
