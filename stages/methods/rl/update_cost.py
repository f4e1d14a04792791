"""The cost of one boosting update (GBRL's Table 1): add one depth-4 tree fitted on a fresh batch to an
ensemble that keeps growing, in gbrl, XGBoost and CatBoost, on the same batches and on one thread.

Each library sees the same sequence of random (rows × features) batches with `targets` regression targets;
gbrl fits the tree to the MSE gradient (prediction − target) with SGD learning rate `lr`, XGBoost continues
its booster by one round (one multi-output tree), CatBoost continues its model by one iteration (MultiRMSE).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

LIBRARIES = ("gbrl", "xgboost", "catboost")


def batches(n: int, rows: int, features: int, targets: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """`n` random batches: Gaussian features, targets a fixed linear map of them plus noise."""
    rng = np.random.default_rng(seed)
    weights = rng.normal(size=(features, targets))
    out = []
    for _ in range(n):
        x = rng.normal(size=(rows, features)).astype(np.float32)
        out.append((x, (x @ weights + 0.1 * rng.normal(size=(rows, targets))).astype(np.float32)))
    return out


def gbrl_updater(
    features: int, targets: int, depth: int, lr: float
) -> Callable[[np.ndarray, np.ndarray], None]:
    from gbrl.models import GBTModel

    model = GBTModel(
        tree_struct={
            "max_depth": depth,
            "grow_policy": "oblivious",
            "n_bins": 250,
            "min_data_in_leaf": 0,
            "par_th": 10**9,
        },
        input_dim=features,
        output_dim=targets,
        optimizers={"algo": "SGD", "lr": lr, "start_idx": 0, "stop_idx": targets},
        params={"split_score_func": "cosine", "generator_type": "Quantile"},
    )

    def update(x: np.ndarray, y: np.ndarray) -> None:
        prediction = np.asarray(model(x, requires_grad=False, tensor=False)).reshape(len(x), targets)
        model.step(x, (prediction - y).astype(np.float32))

    return update


def xgboost_updater(
    features: int, targets: int, depth: int, lr: float
) -> Callable[[np.ndarray, np.ndarray], None]:
    import xgboost

    params = {
        "tree_method": "hist",
        "max_depth": depth,
        "eta": lr,
        "nthread": 1,
        "seed": 0,
        "multi_strategy": "multi_output_tree",
        "objective": "reg:squarederror",
    }
    state: dict = {"booster": None}

    def update(x: np.ndarray, y: np.ndarray) -> None:
        state["booster"] = xgboost.train(
            params, xgboost.DMatrix(x, label=y, nthread=1), num_boost_round=1, xgb_model=state["booster"]
        )

    return update


def catboost_updater(
    features: int, targets: int, depth: int, lr: float
) -> Callable[[np.ndarray, np.ndarray], None]:
    from catboost import CatBoostRegressor

    state: dict = {"model": None}

    def update(x: np.ndarray, y: np.ndarray) -> None:
        model = CatBoostRegressor(
            iterations=1,
            depth=depth,
            learning_rate=lr,
            loss_function="MultiRMSE",
            thread_count=1,
            random_seed=0,
            verbose=False,
            allow_writing_files=False,
        )
        model.fit(x, y, init_model=state["model"])
        state["model"] = model

    return update


UPDATERS = {"gbrl": gbrl_updater, "xgboost": xgboost_updater, "catboost": catboost_updater}


def update_seconds(
    libraries: tuple[str, ...],
    iterations: int,
    rows: int,
    features: int,
    targets: int,
    depth: int,
    lr: float,
    repeats: int,
    seed: int,
) -> dict[str, list[float]]:
    """Per library, the seconds of `iterations` one-tree updates from an empty model, for each repeat.

    Every repeat starts fresh models and runs the libraries in a seeded random order (interleaved), on the
    same batches; a warm-up update per library comes first.
    """
    unknown = [name for name in libraries if name not in UPDATERS]
    if unknown:
        raise ValueError(f"unknown libraries {unknown}; known: {', '.join(LIBRARIES)}")
    data = batches(iterations, rows, features, targets, seed)
    rng = np.random.default_rng(seed)
    for name in libraries:
        UPDATERS[name](features, targets, depth, lr)(*data[0])
    seconds: dict[str, list[float]] = {name: [] for name in libraries}
    for _ in range(repeats):
        for index in rng.permutation(len(libraries)):
            name = libraries[index]
            update = UPDATERS[name](features, targets, depth, lr)
            started = time.perf_counter()
            for x, y in data:
                update(x, y)
            seconds[name].append(time.perf_counter() - started)
    return seconds
