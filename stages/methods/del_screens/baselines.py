"""Fingerprint regressors of the KinDEL benchmark: RF, XGBoost, KNN (library defaults) and the DNN.

Each takes a fingerprint matrix and `target_enrichment` and exposes `fit(X, y, X_valid, y_valid, seed)` and
`predict(X)`. The DNN follows the official code: 2048 → 4 × [512, BatchNorm, Dropout 0.2, ReLU] → 1, MSE,
Adam (1e-5), batch 32, at most 30 epochs, stopping after 5 without a better valid MSE (best weights kept).
sklearn, xgboost and torch are imported only when a model is fit.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from stages.core.params import StrictModel
from stages.core.registry import Registry

REGRESSORS: Registry = Registry("fingerprint regressor")


@REGRESSORS.register("rf")
class RandomForest:
    """scikit-learn's RandomForestRegressor (its defaults: 100 trees, all features per split); `n_jobs` only
    for fitting."""

    class Options(StrictModel):
        n_estimators: int = Field(100, ge=1)
        max_features: float = Field(1.0, gt=0, le=1, description="share of features tried per split")
        n_jobs: int = Field(1, ge=1)

    def __init__(self, options: Options) -> None:
        self.options = options

    def fit(self, X, y, X_valid=None, y_valid=None, seed: int = 0) -> RandomForest:
        from sklearn.ensemble import RandomForestRegressor

        o = self.options
        self.model = RandomForestRegressor(
            n_estimators=o.n_estimators, max_features=o.max_features, n_jobs=o.n_jobs, random_state=seed
        ).fit(X, y)
        return self

    def predict(self, X) -> np.ndarray:
        """Summed over trees on one thread: parallel prediction adds the trees in a varying order, and the
        last bits of the float sum with it (fitting with several jobs is deterministic)."""
        return self.model.set_params(n_jobs=1).predict(X)


@REGRESSORS.register("xgboost")
class XGBoost:
    """xgboost's XGBRegressor (its defaults: 100 rounds, depth 6, learning rate 0.3), `hist` trees."""

    class Options(StrictModel):
        n_estimators: int = Field(100, ge=1)
        max_depth: int = Field(6, ge=1)
        learning_rate: float = Field(0.3, gt=0)
        n_jobs: int = Field(1, ge=1)

    def __init__(self, options: Options) -> None:
        self.options = options

    def fit(self, X, y, X_valid=None, y_valid=None, seed: int = 0) -> XGBoost:
        from xgboost import XGBRegressor

        o = self.options
        self.model = XGBRegressor(
            n_estimators=o.n_estimators,
            max_depth=o.max_depth,
            learning_rate=o.learning_rate,
            n_jobs=o.n_jobs,
            random_state=seed,
            tree_method="hist",
        ).fit(X, y)
        return self

    def predict(self, X) -> np.ndarray:
        return self.model.predict(X).astype(np.float64)


@REGRESSORS.register("knn")
class NearestNeighbours:
    """scikit-learn's KNeighborsRegressor (its defaults: 5 neighbours, Euclidean, uniform weights)."""

    class Options(StrictModel):
        n_neighbors: int = Field(5, ge=1)
        metric: Literal["minkowski", "jaccard"] = "minkowski"

    def __init__(self, options: Options) -> None:
        self.options = options

    def fit(self, X, y, X_valid=None, y_valid=None, seed: int = 0) -> NearestNeighbours:
        from sklearn.neighbors import KNeighborsRegressor

        X = X.astype(bool) if self.options.metric == "jaccard" else X
        self.model = KNeighborsRegressor(
            n_neighbors=self.options.n_neighbors, metric=self.options.metric
        ).fit(X, y)
        return self

    def predict(self, X) -> np.ndarray:
        X = X.astype(bool) if self.options.metric == "jaccard" else X
        return self.model.predict(X)


@REGRESSORS.register("dnn")
class DeepNetwork:
    """The official DNN: 4 hidden blocks [Linear 512, BatchNorm, Dropout, ReLU], MSE, early stopping."""

    class Options(StrictModel):
        hidden: int = Field(512, ge=1)
        layers: int = Field(4, ge=1)
        dropout: float = Field(0.2, ge=0, lt=1)
        learning_rate: float = Field(1e-5, gt=0)
        batch_size: int = Field(32, ge=1)
        epochs: int = Field(30, ge=1)
        patience: int = Field(5, ge=1)
        threads: int = Field(1, ge=1)

    def __init__(self, options: Options) -> None:
        self.options = options

    def _network(self, n_in: int):
        from torch import nn

        o, blocks, width = self.options, [], n_in
        for _ in range(o.layers):
            blocks += [nn.Linear(width, o.hidden), nn.BatchNorm1d(o.hidden), nn.Dropout(o.dropout), nn.ReLU()]
            width = o.hidden
        return nn.Sequential(*blocks, nn.Linear(width, 1))

    def fit(self, X, y, X_valid, y_valid, seed: int = 0) -> DeepNetwork:
        import torch

        from stages.core.seeding import pin_threads, seed_everything

        o = self.options
        pin_threads(o.threads)
        seed_everything(seed)
        self.net = self._network(X.shape[1])
        data = torch.as_tensor(X, dtype=torch.float32), torch.as_tensor(y, dtype=torch.float32)
        valid = torch.as_tensor(X_valid, dtype=torch.float32), torch.as_tensor(y_valid, dtype=torch.float32)
        optimiser = torch.optim.Adam(self.net.parameters(), lr=o.learning_rate)
        generator = torch.Generator().manual_seed(seed)
        best, best_state, waited = float("inf"), None, 0
        for _ in range(o.epochs):
            self.net.train()
            order = torch.randperm(len(data[0]), generator=generator)
            for start in range(0, len(order), o.batch_size):
                index = order[start : start + o.batch_size]
                if len(index) < 2:  # BatchNorm needs two rows
                    continue
                optimiser.zero_grad()
                loss = torch.mean((self.net(data[0][index]).squeeze(1) - data[1][index]) ** 2)
                loss.backward()
                optimiser.step()
            score = float(torch.mean((self._forward(valid[0]) - valid[1]) ** 2))
            if score < best:
                best, waited = score, 0
                best_state = {k: v.clone() for k, v in self.net.state_dict().items()}
            else:
                waited += 1
                if waited >= o.patience:
                    break
        self.net.load_state_dict(best_state)
        return self

    def _forward(self, X):
        import torch

        self.net.eval()
        with torch.no_grad():
            return self.net(X).squeeze(1)

    def predict(self, X) -> np.ndarray:
        import torch

        return self._forward(torch.as_tensor(X, dtype=torch.float32)).numpy().astype(np.float64)
