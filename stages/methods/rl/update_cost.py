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


def _one_repeat(
    libraries: tuple[str, ...], data: list, shape: tuple[int, int, int, float], block: int, seed: int
) -> dict[str, list[float]]:
    """One repeat: fresh models, a warm-up update each, then the updates block by block, the libraries in a
    seeded random order within every block (interleaved); the seconds of each library's blocks."""
    features, targets, depth, lr = shape
    rng = np.random.default_rng(seed)
    for name in libraries:
        UPDATERS[name](features, targets, depth, lr)(*data[0])
    updaters = {name: UPDATERS[name](features, targets, depth, lr) for name in libraries}
    seconds: dict[str, list[float]] = {name: [] for name in libraries}
    for begin in range(0, len(data), block):
        chunk = data[begin : begin + block]
        for index in rng.permutation(len(libraries)):
            name = libraries[index]
            update = updaters[name]
            started = time.perf_counter()
            for x, y in chunk:
                update(x, y)
            seconds[name].append(time.perf_counter() - started)
    return seconds


def _one_thread_repeat(*args) -> dict[str, list[float]]:
    import os

    os.environ["OMP_NUM_THREADS"] = "1"
    return _one_repeat(*args)


def update_block_seconds(
    libraries: tuple[str, ...],
    iterations: int,
    rows: int,
    features: int,
    targets: int,
    depth: int,
    lr: float,
    repeats: int,
    seed: int,
    block: int = 50,
    workers: int = 1,
) -> dict[str, list[list[float]]]:
    """Per library and repeat, the seconds of each block of `block` one-tree updates from an empty model (the
    last block may be shorter), so the cost per update can be read against the ensemble size.

    Every repeat starts fresh models on the same batches; within each block the libraries run in a seeded
    random order (interleaved, so a change of machine load falls on all of them). Repeats run in `workers`
    spawned processes, one thread each; a ratio is only ever taken within one repeat.
    """
    unknown = [name for name in libraries if name not in UPDATERS]
    if unknown:
        raise ValueError(f"unknown libraries {unknown}; known: {', '.join(LIBRARIES)}")
    if block < 1:
        raise ValueError(f"block {block} must be ≥ 1")
    data = batches(iterations, rows, features, targets, seed)
    shape = (features, targets, depth, lr)
    seeds = [seed + 1 + repeat for repeat in range(repeats)]
    if workers <= 1 or repeats == 1:
        results = [_one_repeat(libraries, data, shape, block, s) for s in seeds]
    else:
        from concurrent.futures import ProcessPoolExecutor
        from multiprocessing import get_context

        with ProcessPoolExecutor(min(workers, repeats), mp_context=get_context("spawn")) as pool:
            futures = [pool.submit(_one_thread_repeat, libraries, data, shape, block, s) for s in seeds]
            results = [future.result() for future in futures]
    return {name: [result[name] for result in results] for name in libraries}


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
    """Per library, the seconds of `iterations` one-tree updates from an empty model, for each repeat
    (the sums of :func:`update_block_seconds`' blocks, one block per library per repeat)."""
    blocks = update_block_seconds(
        libraries, iterations, rows, features, targets, depth, lr, repeats, seed, block=iterations
    )
    return {name: [float(sum(values)) for values in per] for name, per in blocks.items()}
