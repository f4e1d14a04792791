"""Step `sfbd-run`: every model of the design, trained and scored.

Per seed: the oracle (all clean training images) and the similar-data start (MNIST-8×8). Per seed × clean
fraction: clean-only φ0 and its continuation on the clean set, SFBD from φ0, noisy-only (EDM on y as if clean)
and its continuation, SFBD from the noisy-only model, SFBD from the similar-data start. Every continuation
runs in K rounds of F steps, each round restarting Adam and the EMA from the previous EMA weights (SFBD's own
protocol), so every model compared at round k has had P + k·F steps. Per seed: the Gaussian-mixture track.

Each model is scored after its pretraining (k = 0) and after every round: Fréchet distance in pixels and in
the evaluation CNN's features, KID, against the clean test images (same n for all); each SFBD round's E_k is
scored against the clean originals of the noisy images (which reach no training step).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import polars as pl
import torch
from safetensors.numpy import load_file, save_file
from safetensors.torch import load_file as load_torch

from stages.core.context import StepContext
from stages.core.io import write_json, write_parquet
from stages.core.seeding import derive_seed
from stages.methods.diffusion.edm import Precond, TrainOptions, train_edm
from stages.methods.diffusion.metrics import (
    EvalCNN,
    embed,
    frechet_bootstrap_se,
    frechet_distance,
    image_distances,
    mmd_rbf,
    wasserstein2,
)
from stages.methods.diffusion.nets import build_net
from stages.methods.diffusion.sampler import batched, sample
from stages.methods.diffusion.sfbd import Round, SFBDOptions, sfbd
from stages.models.workers import map_runs
from stages.papers.sfbd.data import gmm_sample, split_for
from stages.papers.sfbd.params import SFBDParams

ALL = -1.0
"""The `fraction` of models that use no clean fraction (oracle, similar-data start)."""


@dataclass
class Scorer:
    """Scores a model's fresh samples against the clean test images."""

    params: SFBDParams
    base_seed: int
    test: np.ndarray
    cnn: EvalCNN
    rows: list[dict] = field(default_factory=list)
    kept: dict[str, np.ndarray] = field(default_factory=dict)
    test_features: np.ndarray | None = None

    def __call__(self, model: Precond, method: str, fraction: float, seed: int, k: int, steps: int) -> None:
        grid = self.params.grid
        n = grid.eval_samples or len(self.test)
        generator = torch.Generator().manual_seed(
            derive_seed(self.base_seed, "sfbd", "samples", method, fraction, seed, k)
        )
        model.eval()
        images = sample(batched(model, 4096), n, self.test.shape[1:], generator).clamp(-1, 1).numpy()
        if self.test_features is None:
            self.test_features = embed(self.cnn, self.test)
        scores = image_distances(images, self.test, self.cnn, self.test_features)
        metric = self.params.claims.metric
        reference = self.test_features if metric == "fd_feature" else self.test
        generated = embed(self.cnn, images) if metric == "fd_feature" else images
        se = None
        if k in (0, grid.budget.iterations):  # the claims compare the start and round K
            se = frechet_bootstrap_se(
                generated,
                reference,
                self.params.claims.bootstrap,
                derive_seed(self.base_seed, "sfbd", "se", seed),
            )
        self.rows.append(
            {"track": "images", "method": method, "fraction": fraction, "seed": seed, "k": k, "steps": steps}
            | scores
            | {"metric_se": se}
        )
        if seed == grid.seeds[0]:
            self.kept[f"samples/{fraction}/{method}/{k}"] = images[: self.params.samples_kept]


def load_job_data(paths: dict[str, str], shape: tuple[int, ...], classes: int) -> tuple[dict, EvalCNN]:
    """The prepared arrays and the evaluation CNN (in a worker process)."""
    arrays = load_file(paths["datasets"])
    cnn = EvalCNN(shape[-1], classes)
    cnn.load_state_dict(load_torch(paths["cnn"]))
    return arrays, cnn.eval()


def new_model(params: SFBDParams, shape: tuple[int, ...], seed: int) -> Precond:
    """A freshly initialised denoiser (seeded)."""
    torch.manual_seed(seed)
    grid = params.grid
    return Precond(build_net(grid.denoiser, shape, grid.width, grid.depth))


def options(params: SFBDParams, steps: int) -> TrainOptions:
    budget = params.grid.budget
    return TrainOptions(
        steps=steps, batch=budget.batch, lr=budget.lr, ema_halflife_kimg=budget.ema_halflife_kimg
    )


def rounds(
    start: Precond,
    data: np.ndarray,
    params: SFBDParams,
    seed: int,
    after: Callable[[int, Precond], None],
) -> Precond:
    """K continuation rounds of F steps on fixed data, each from the previous EMA weights (fresh Adam, EMA)."""
    budget = params.grid.budget
    model = start
    for k in range(1, budget.iterations + 1):
        model = train_edm(copy.deepcopy(model), data, options(params, budget.round_steps), seed + k, "rounds")
        after(k, model)
    return model


def sfbd_options(params: SFBDParams) -> SFBDOptions:
    budget = params.grid.budget
    return SFBDOptions(iterations=budget.iterations, round_steps=budget.round_steps)


def seed_job(params: SFBDParams, base_seed: int, paths: dict[str, str], seed: int, classes: int) -> dict:
    """The oracle (all clean training images, P + K·F steps) and the similar-data start φ0 (P steps)."""
    arrays, cnn = load_job_data(paths, tuple(params_shape(paths)), classes)
    train, shape = arrays["train_x"], arrays["train_x"].shape[1:]
    scorer = Scorer(params, base_seed, arrays["test_x"], cnn)
    budget = params.grid.budget
    oracle_seed = derive_seed(base_seed, "sfbd", "oracle", seed)
    oracle = train_edm(
        new_model(params, shape, oracle_seed), train, options(params, budget.pretrain_steps), oracle_seed
    )
    scorer(oracle, "oracle", ALL, seed, 0, budget.pretrain_steps)
    rounds(
        oracle,
        train,
        params,
        oracle_seed,
        lambda k, m: scorer(m, "oracle", ALL, seed, k, steps_at(params, k)),
    )
    similar_state = None
    if params.grid.similar:
        similar_seed = derive_seed(base_seed, "sfbd", "similar", seed)
        similar = train_edm(
            new_model(params, shape, similar_seed),
            arrays["similar_x"],
            options(params, budget.pretrain_steps),
            similar_seed,
        )
        scorer(similar, "similar_start", ALL, seed, 0, budget.pretrain_steps)
        similar_state = {key: value.clone() for key, value in similar.state_dict().items()}
    return {"rows": scorer.rows, "kept": scorer.kept, "similar": similar_state}


def steps_at(params: SFBDParams, k: int) -> int:
    """Steps a model has had after round k."""
    budget = params.grid.budget
    return budget.pretrain_steps + k * budget.round_steps


def params_shape(paths: dict[str, str]) -> list[int]:
    return [int(value) for value in paths["shape"].split("x")]


def fraction_job(
    params: SFBDParams,
    base_seed: int,
    paths: dict[str, str],
    seed: int,
    fraction: float,
    classes: int,
    similar_state: dict | None,
) -> dict:
    """Clean-only, noisy-only, SFBD from each, SFBD from the similar start, at one seed and clean fraction."""
    arrays, cnn = load_job_data(paths, tuple(params_shape(paths)), classes)
    grid, budget = params.grid, params.grid.budget
    train, shape = arrays["train_x"], arrays["train_x"].shape[1:]
    split = split_for(train, arrays[f"order_{seed}"], arrays[f"noise_{seed}"], fraction, grid.sigma)
    scorer = Scorer(params, base_seed, arrays["test_x"], cnn)
    denoised_rows: list[dict] = []
    first_errors: dict[str, np.ndarray] = {}
    pretrain = options(params, budget.pretrain_steps)

    def score_rounds(method: str) -> Callable[[int, Precond], None]:
        return lambda k, model: scorer(model, method, fraction, seed, k, steps_at(params, k))

    def score_sfbd(method: str) -> Callable[[Round], None]:
        def hook(result: Round) -> None:
            scorer(result.model, method, fraction, seed, result.k, steps_at(params, result.k))
            row, errors = denoised_scores(
                result.denoised, split.originals, cnn, method, fraction, seed, result.k
            )
            first_errors.setdefault(method, errors)
            change = errors - first_errors[method]  # per image, against E_1 (paired)
            row |= {
                "mse_change": float(change.mean()),
                "mse_change_se": float(change.std(ddof=1) / np.sqrt(len(change))),
            }
            denoised_rows.append(row)
            if seed == grid.seeds[0]:
                scorer.kept[f"denoised/{fraction}/{method}/{result.k}"] = result.denoised[:16]

        return hook

    denoised_rows.append(
        denoised_scores(split.noisy, split.originals, cnn, "noisy_input", fraction, seed, 0)[0]
    )
    if seed == grid.seeds[0]:
        scorer.kept[f"originals/{fraction}"] = split.originals[:16]
        scorer.kept[f"noisy/{fraction}"] = split.noisy[:16]
    run_seed = derive_seed(base_seed, "sfbd", "run", seed, fraction)
    clean_start = train_edm(
        new_model(params, shape, run_seed), split.clean, pretrain, run_seed, "clean-only φ0"
    )
    scorer(clean_start, "clean_only", fraction, seed, 0, budget.pretrain_steps)
    rounds(clean_start, split.clean, params, run_seed, score_rounds("clean_only"))
    scorer(clean_start, "sfbd", fraction, seed, 0, budget.pretrain_steps)
    sfbd(
        clean_start,
        split.noisy,
        split.clean,
        grid.sigma,
        sfbd_options(params),
        pretrain,
        run_seed,
        score_sfbd("sfbd"),
    )
    noisy_seed = derive_seed(base_seed, "sfbd", "noisy", seed, fraction)
    noisy_start = train_edm(
        new_model(params, shape, noisy_seed), split.noisy, pretrain, noisy_seed, "noisy-only φ0"
    )
    scorer(noisy_start, "noisy_only", fraction, seed, 0, budget.pretrain_steps)
    rounds(noisy_start, split.noisy, params, noisy_seed, score_rounds("noisy_only"))
    scorer(noisy_start, "sfbd_from_noisy", fraction, seed, 0, budget.pretrain_steps)
    sfbd(
        noisy_start,
        split.noisy,
        split.clean,
        grid.sigma,
        sfbd_options(params),
        pretrain,
        noisy_seed,
        score_sfbd("sfbd_from_noisy"),
    )
    if similar_state is not None:
        similar = new_model(params, shape, 0)
        similar.load_state_dict(similar_state)
        similar_run = derive_seed(base_seed, "sfbd", "similar-run", seed, fraction)
        sfbd(
            similar,
            split.noisy,
            split.clean,
            grid.sigma,
            sfbd_options(params),
            pretrain,
            similar_run,
            score_sfbd("similar_sfbd"),
        )
    return {"rows": scorer.rows, "kept": scorer.kept, "denoised": denoised_rows}


def denoised_scores(
    denoised: np.ndarray, originals: np.ndarray, cnn: EvalCNN, method: str, fraction: float, seed: int, k: int
) -> tuple[dict, np.ndarray]:
    """How far E_k is from the clean originals of the noisy images: MSE, Fréchet distances (and the per-image
    squared errors)."""
    clipped = np.clip(denoised, -1, 1)
    errors = ((clipped - originals) ** 2).reshape(len(clipped), -1).mean(axis=1)
    return {
        "method": method,
        "fraction": fraction,
        "seed": seed,
        "k": k,
        "mse": float(np.mean((clipped - originals) ** 2)),
        "fd_pixel": frechet_distance(clipped, originals),
        "fd_feature": frechet_distance(embed(cnn, clipped), embed(cnn, originals)),
    }, errors


def gmm_job(params: SFBDParams, base_seed: int, seed: int) -> dict:
    """The 2-D Gaussian-mixture track at one seed: clean-only, noisy-only, SFBD from each, oracle; W2 and MMD²
    of 500 fresh samples against 500 fresh true samples (and the W2 of two true sets: the estimator's floor)."""
    gmm = params.gmm
    rng = np.random.default_rng(derive_seed(base_seed, "sfbd", "gmm", seed))
    law = (gmm.components, gmm.radius, gmm.spread)
    train = gmm_sample(gmm.train_points, *law, rng)
    noise = rng.standard_normal(train.shape).astype(np.float32)
    n_clean = max(1, round(gmm.fraction * len(train)))
    clean, noisy = train[:n_clean], train[n_clean:] + gmm.sigma * noise[n_clean:]
    truth, truth2 = gmm_sample(gmm.eval_points, *law, rng), gmm_sample(gmm.eval_points, *law, rng)
    floor = wasserstein2(truth, truth2)
    rows: list[dict] = []
    train_opts = TrainOptions(steps=gmm.pretrain_steps, batch=256, lr=1e-3)
    round_opts = TrainOptions(steps=gmm.round_steps, batch=256, lr=1e-3)

    def score(model: Precond, method: str, k: int) -> None:
        generator = torch.Generator().manual_seed(
            derive_seed(base_seed, "sfbd", "gmm-samples", method, seed, k)
        )
        points = sample(model.eval(), gmm.eval_points, (2,), generator).numpy()
        rows.append(
            {
                "track": "gmm",
                "method": method,
                "fraction": gmm.fraction,
                "seed": seed,
                "k": k,
                "steps": gmm.pretrain_steps + k * gmm.round_steps,
                "w2": wasserstein2(points, truth),
                "mmd": mmd_rbf(points, truth, gmm.mmd_bandwidth),
                "w2_floor": floor,
            }
        )

    def fresh(name: str) -> tuple[Precond, int]:
        model_seed = derive_seed(base_seed, "sfbd", "gmm-model", name, seed)
        torch.manual_seed(model_seed)
        return Precond(build_net("mlp", (2,), gmm.width, 3)), model_seed

    def continue_on(start: Precond, data: np.ndarray, method: str, model_seed: int) -> None:
        model = start
        for k in range(1, gmm.iterations + 1):
            model = train_edm(copy.deepcopy(model), data, round_opts, model_seed + k)
            score(model, method, k)

    options_k = SFBDOptions(iterations=gmm.iterations, round_steps=gmm.round_steps)
    for name, data in (("clean_only", clean), ("noisy_only", noisy), ("oracle", train)):
        model, model_seed = fresh(name)
        start = train_edm(model, data, train_opts, model_seed)
        score(start, name, 0)
        continue_on(start, data, name, model_seed)
        if name != "oracle":
            method = "sfbd" if name == "clean_only" else "sfbd_from_noisy"
            score(start, method, 0)
            sfbd(
                start,
                noisy,
                clean,
                gmm.sigma,
                options_k,
                train_opts,
                model_seed,
                lambda result, method=method: score(result.model, method, result.k),
            )
    return {"rows": rows}


JOBS = {"seed": seed_job, "fraction": fraction_job, "gmm": gmm_job}


def job(kind: str, *args: object) -> dict:
    """Run one job of the design by kind (a picklable entry point for the worker processes)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):  # NumPy's BLAS on one thread too (the workers run side by side)
        return JOBS[kind](*args)


def run(ctx: StepContext) -> None:
    params: SFBDParams = ctx.params
    grid = params.grid
    base = ctx.common.seed
    prepared = load_file(str(ctx.input("datasets")))
    shape = "x".join(str(size) for size in prepared["train_x"].shape[1:])
    classes = int(prepared["train_y"].max()) + 1
    paths = {"datasets": str(ctx.input("datasets")), "cnn": str(ctx.input("cnn")), "shape": shape}
    tasks = [("seed", params, base, paths, seed, classes) for seed in grid.seeds]
    if params.gmm.enabled:
        tasks += [("gmm", params, base, seed) for seed in grid.seeds]
    first = map_runs(job, tasks, grid.workers, "sfbd seeds")
    similar = {
        task[4]: result["similar"] for task, result in zip(tasks, first, strict=True) if task[0] == "seed"
    }
    fraction_tasks = [
        ("fraction", params, base, paths, seed, fraction, classes, similar[seed])
        for seed in grid.seeds
        for fraction in grid.fractions
    ]
    second = map_runs(job, fraction_tasks, grid.workers, "sfbd seed × fraction")
    third: list[dict] = []
    rows = [row for result in (*first, *second, *third) for row in result["rows"]]
    denoised = [row for result in second for row in result["denoised"]]
    kept = {
        key: np.ascontiguousarray(value)
        for result in (*first, *second)
        for key, value in result.get("kept", {}).items()
    }
    write_parquet(pl.DataFrame(rows, infer_schema_length=None), ctx.output("runs"))
    write_parquet(pl.DataFrame(denoised, infer_schema_length=None), ctx.output("denoised"))
    save_file(kept, ctx.output("kept"))
    write_json({"models_scored": len(rows), "denoised_rows": len(denoised)}, ctx.output("run_summary"))
    ctx.log(f"{len(rows)} scored models, {len(denoised)} E_k rows")
