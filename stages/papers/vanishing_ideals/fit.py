"""Step `vanishing_ideals-fit`: VI-Net and its baselines at every cut of the base network.

Every size below is the chosen scale's grid (`scale: default | full`; `fit.*` is `<scale>.fit.*`).
Per cut: pooled latents of every split (one pass of the frozen base), PCA to k on the training latents, tanh.
ψ is chosen from `fit.psi_grid` by the validation accuracy of the first seed's VI-Net; then per seed: OAVI/ABM
per class on ≤ `max_points` random training latents, the `keep` best generators per class by s(p), G(z), and a
linear head trained with G's coefficients (`head_epochs` of Adam). Baselines with the same head recipe: a linear
probe on the pooled latent, and as many random monomials of z as VI-Net has generators (as many draws as the ψ
grid has values, the best on validation: the same selection budget). The full network is the base itself.

Writes `results.parquet` (per cut × method × seed: accuracies, parameters, features, ψ), `psi_grid.parquet`,
`predictions.safetensors` (per test image: correct or not, per cut × method × seed), `generators.parquet` (the
first seed's kept generators: class, degree, non-zero coefficients, s(p) on training points, own-class mean |p| and
s(p) on the test latents), `vanishing.safetensors` (the first seed's class × generator mean G on test, as
fitted: before fine-tuning) and `models.safetensors` (the first seed's VI-Net per cut, for the throughput step).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import polars as pl
import torch
from safetensors.numpy import save_file

from stages.core.context import StepContext
from stages.core.io import write_parquet
from stages.core.progress import progress
from stages.core.seeding import derive_seed, pin_threads
from stages.methods.ideals.avi import AVIOptions
from stages.methods.ideals.layer import (
    KeptGenerator,
    PolynomialLayer,
    coefficient_matrix,
    generators_matrix,
    random_monomial_layer,
)
from stages.methods.ideals.resnet import ResNet, TruncatedResNet, count_parameters
from stages.methods.ideals.terms import evaluate_numpy
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
from stages.papers.vanishing_ideals.data import SPLITS, Prepared, load_net, load_prepared
from stages.papers.vanishing_ideals.params import VanishingIdealsParams

METHODS = ("vinet", "linear_probe", "random_monomials", "latent_mlp", "full_net")
CEILING_HIDDEN, CEILING_EPOCHS, CEILING_LR = 256, 20, 1e-3
"""`latent_mlp`, the design check of the headline claim: a one-hidden-layer MLP on the pooled latent, with the
heads' batch size and learning rate but trained to convergence (20 epochs, not 3). It estimates what any small
head can read from the cut; when it cannot come within the margin of the full net, the cut (pooling of the
base's features) decides the claim, not VI-Net. A check, not a peer: no claim compares VI-Net with it."""


@torch.no_grad()
def pooled_latents(
    net: ResNet, images: torch.Tensor, cuts: list[int], batch: int = 500
) -> dict[int, np.ndarray]:
    """Globally pooled features at every cut, one pass of the network."""
    parts: dict[int, list[np.ndarray]] = {cut: [] for cut in cuts}
    for start in range(0, len(images), batch):
        for cut, value in net.multi_features(images[start : start + batch], cuts).items():
            parts[cut].append(value.numpy())
    return {cut: np.concatenate(values).astype(np.float64) for cut, values in parts.items()}


@dataclass
class CutData:
    """One cut's latents (pooled) and z = tanh(PCA) per split, with labels."""

    cut: int
    latents: dict[str, torch.Tensor]
    z: dict[str, torch.Tensor]
    labels: dict[str, np.ndarray]
    pca: PCATanh


def accuracy(predicted: np.ndarray, labels: np.ndarray) -> float:
    return float(np.mean(predicted == labels))


def head_options(params: VanishingIdealsParams) -> HeadOptions:
    fit = params.grid.fit
    return HeadOptions(epochs=fit.head_epochs, batch_size=fit.head_batch, lr=fit.head_lr)


def fit_vinet(
    data: CutData, params: VanishingIdealsParams, psi: float, seed: int
) -> tuple[Head, list[KeptGenerator]]:
    """Generators per class at ψ, pruned, then the head trained with the coefficients."""
    fit = params.grid.fit
    options = AVIOptions(psi=psi, max_degree=fit.max_degree, oracle=fit.oracle)
    fits, points = fit_class_ideals(
        data.z["train"].numpy().astype(np.float64), data.labels["train"], options, fit.max_points, seed
    )
    layer, kept = polynomial_layer(fits, points, fit.keep)
    head = Head(layer, data.z["train"], 10)
    train_head(head, data.z["train"], torch.from_numpy(data.labels["train"]), head_options(params), seed)
    return head, kept


def evaluate(
    head: Head, inputs: dict[str, torch.Tensor], labels: dict[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """Per split, a 0/1 array: the head's prediction is right."""
    return {
        split: (predict(head, inputs[split]) == labels[split]).astype(np.uint8)
        for split in ("validation", "test")
    }


def choose_psi(
    data: CutData, params: VanishingIdealsParams, seed: int
) -> tuple[float, list[dict], tuple[Head, list[KeptGenerator]]]:
    """ψ with the best validation accuracy (first seed; ties: the smaller ψ); ψ values with no generator are
    skipped. Returns ψ, the grid's rows and the chosen ψ's fitted head and generators."""
    rows, fitted = [], {}
    for psi in params.grid.fit.psi_grid:
        try:
            fitted[psi] = fit_vinet(data, params, psi, seed)
        except ValueError:
            rows.append({"cut": data.cut, "psi": psi, "generators": 0, "validation_accuracy": None})
            continue
        head, kept = fitted[psi]
        rows.append(
            {
                "cut": data.cut,
                "psi": psi,
                "generators": len(kept),
                "validation_accuracy": float(evaluate(head, data.z, data.labels)["validation"].mean()),
            }
        )
    scored = [row for row in rows if row["validation_accuracy"] is not None]
    if not scored:
        raise ValueError(
            f"cut {data.cut}: no ψ in {params.grid.fit.psi_grid} gives a generator; raise {params.scale}.fit.psi_grid"
        )
    best = max(scored, key=lambda row: (row["validation_accuracy"], -row["psi"]))
    return float(best["psi"]), rows, fitted[best["psi"]]


def generator_rows(data: CutData, kept: list[KeptGenerator]) -> list[dict]:
    """Per kept generator: class, degree, non-zero coefficients, s(p) (training points), and on the test latents
    its own-class mean |p| and min over other classes of mean |p|."""
    z = data.z["test"].numpy().astype(np.float64)
    labels = data.labels["test"]
    terms, matrix = generators_matrix([item.generator for item in kept])
    values = np.abs(evaluate_numpy(terms, z) @ matrix)
    classes = np.unique(labels)
    means = np.stack([values[labels == label].mean(axis=0) for label in classes])  # (classes, generators)
    rows = []
    for index, item in enumerate(kept):
        own = classes == item.label
        rows.append(
            {
                "cut": data.cut,
                "index": index,
                "label": item.label,
                "degree": item.generator.degree,
                "nonzero": item.generator.nonzero(),
                "train_loss": item.generator.loss,
                "score_train": item.score,
                "own_mean_test": float(means[own, index][0]),
                "score_test": float(means[~own, index].min()),
            }
        )
    return rows


def run_cut(
    data: CutData, params: VanishingIdealsParams, base_seed: int, truncated: TruncatedResNet
) -> tuple[list[dict], dict[str, np.ndarray], dict]:
    """Every method and seed at one cut: result rows, test correctness arrays, and first-seed artefacts."""
    fit = params.grid.fit
    seed0 = derive_seed(base_seed, "vanishing_ideals", "fit", data.cut, fit.seeds[0])
    psi, grid_rows, first = choose_psi(data, params, seed0)
    base_parameters = truncated.parameter_count()
    rows: list[dict] = []
    correct: dict[str, np.ndarray] = {}
    artefacts: dict = {"grid": grid_rows}
    train_labels = torch.from_numpy(data.labels["train"])
    for seed in fit.seeds:
        run_seed = derive_seed(base_seed, "vanishing_ideals", "fit", data.cut, seed)
        head, kept = first if seed == fit.seeds[0] else fit_vinet(data, params, psi, run_seed)
        outcome = {
            "vinet": (
                evaluate(head, data.z, data.labels),
                base_parameters + data.pca.parameter_count() + head.parameter_count(),
                len(kept),
            )
        }
        probe = Head(None, data.latents["train"], 10)
        train_head(probe, data.latents["train"], train_labels, head_options(params), run_seed)
        outcome["linear_probe"] = (
            evaluate(probe, data.latents, data.labels),
            base_parameters + probe.parameter_count(),
            data.latents["train"].shape[1],
        )
        width = data.latents["train"].shape[1]
        with torch.random.fork_rng():  # its own initialisation: the other heads' draws stay as they were
            torch.manual_seed(derive_seed(run_seed, "latent_mlp"))
            ceiling = Head(
                torch.nn.Sequential(torch.nn.Linear(width, CEILING_HIDDEN), torch.nn.ReLU()),
                data.latents["train"],
                10,
            )
        recipe = replace(head_options(params), epochs=CEILING_EPOCHS, lr=CEILING_LR)
        train_head(ceiling, data.latents["train"], train_labels, recipe, run_seed)
        outcome["latent_mlp"] = (
            evaluate(ceiling, data.latents, data.labels),
            base_parameters + ceiling.parameter_count(),
            CEILING_HIDDEN,
        )
        best = None
        for draw in range(len(fit.psi_grid)):
            layer = random_monomial_layer(
                data.pca.k, len(kept), fit.max_degree, derive_seed(run_seed, "random", draw)
            )
            random_head = Head(layer, data.z["train"], 10)
            train_head(random_head, data.z["train"], train_labels, head_options(params), run_seed)
            scores = evaluate(random_head, data.z, data.labels)
            if best is None or scores["validation"].mean() > best[0]["validation"].mean():
                best = (
                    scores,
                    base_parameters + data.pca.parameter_count() + random_head.parameter_count(),
                    len(kept),
                )
        outcome["random_monomials"] = best
        for method, (scores, parameters, features) in outcome.items():
            rows.append(
                {
                    "cut": data.cut,
                    "method": method,
                    "seed": seed,
                    "psi": psi if method != "linear_probe" else None,
                    "validation_accuracy": float(scores["validation"].mean()),
                    "test_accuracy": float(scores["test"].mean()),
                    "parameters": int(parameters),
                    "features": int(features),
                }
            )
            correct[f"{data.cut}/{method}/{seed}"] = scores["test"]
        if seed == fit.seeds[0]:
            artefacts["generators"] = generator_rows(data, kept)
            fitted_layer = PolynomialLayer(*coefficient_matrix(kept))  # as fitted, before fine-tuning
            artefacts["vanishing"] = class_vanishing(kept, fitted_layer, data.z["test"], data.labels["test"])
            artefacts["vinet"] = head
    return rows, correct, artefacts


def cut_data(net: ResNet, prepared: Prepared, params: VanishingIdealsParams) -> list[CutData]:
    """Latents of every split at every cut, PCA fitted on the training latents."""
    per_split = {split: pooled_latents(net, prepared.images[split], params.grid.fit.cuts) for split in SPLITS}
    result = []
    for cut in params.grid.fit.cuts:
        pca = PCATanh.fit(per_split["train"][cut], params.grid.fit.pca_components)
        latents = {split: torch.from_numpy(per_split[split][cut].astype(np.float32)) for split in SPLITS}
        with torch.no_grad():
            z = {split: pca(latents[split]) for split in SPLITS}
        result.append(CutData(cut, latents, z, prepared.labels, pca))
    return result


def model_tensors(cut: int, data: CutData, head: Head) -> dict[str, np.ndarray]:
    """A VI-Net's PCA, terms, coefficients, mask and head, keyed by cut (rebuilt by the throughput step)."""
    layer = head.layer
    return {
        f"{cut}/pca_mean": data.pca.mean.numpy(),
        f"{cut}/pca_components": data.pca.components.numpy(),
        f"{cut}/pca_scale": data.pca.scale.numpy(),
        f"{cut}/terms": np.asarray(layer.terms, dtype=np.int64),
        f"{cut}/coefficients": layer.coefficients.detach().numpy(),
        f"{cut}/mask": layer.mask.numpy(),
        f"{cut}/standardize_mean": head.standardize.mean.numpy(),
        f"{cut}/standardize_std": head.standardize.std.numpy(),
        f"{cut}/linear_weight": head.linear.weight.detach().numpy(),
        f"{cut}/linear_bias": head.linear.bias.detach().numpy(),
    }


def run(ctx: StepContext) -> None:
    params: VanishingIdealsParams = ctx.params
    pin_threads(ctx.common.threads)
    prepared = load_prepared(ctx.input("datasets"), params)
    net = load_net(ctx.input("base"), params)
    rows, grid, generators = [], [], []
    correct: dict[str, np.ndarray] = {}
    vanishing: dict[str, np.ndarray] = {}
    models: dict[str, np.ndarray] = {}
    full_test = (predict(net, prepared.images["test"]) == prepared.labels["test"]).astype(np.uint8)
    full_validation = (predict(net, prepared.images["validation"]) == prepared.labels["validation"]).astype(
        np.uint8
    )
    for data in progress(cut_data(net, prepared, params), "cuts", total=len(params.grid.fit.cuts)):
        cut_rows, cut_correct, artefacts = run_cut(
            data, params, ctx.common.seed, TruncatedResNet(net, data.cut)
        )
        rows += cut_rows
        correct |= cut_correct
        grid += artefacts["grid"]
        generators += artefacts["generators"]
        vanishing[str(data.cut)] = artefacts["vanishing"].astype(np.float32)
        models |= model_tensors(data.cut, data, artefacts["vinet"])
        ctx.log(
            f"cut {data.cut}: "
            + ", ".join(
                f"{row['method']} {row['test_accuracy']:.3f}"
                for row in cut_rows
                if row["seed"] == params.grid.fit.seeds[0]
            )
        )
    for seed in params.grid.fit.seeds:
        rows.append(
            {
                "cut": net.n_convs,
                "method": "full_net",
                "seed": seed,
                "psi": None,
                "validation_accuracy": float(full_validation.mean()),
                "test_accuracy": float(full_test.mean()),
                "parameters": count_parameters(net),
                "features": 0,
            }
        )
    correct["full_net"] = full_test
    write_parquet(pl.DataFrame(rows, infer_schema_length=None), ctx.output("results"))
    write_parquet(pl.DataFrame(grid, infer_schema_length=None), ctx.output("psi_grid"))
    write_parquet(pl.DataFrame(generators, infer_schema_length=None), ctx.output("generators"))
    save_file(correct, ctx.output("predictions"))
    save_file(vanishing, ctx.output("vanishing"))
    save_file({key: np.ascontiguousarray(value) for key, value in models.items()}, ctx.output("models"))
