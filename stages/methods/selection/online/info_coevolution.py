"""Info-Coevolution (ICML 2025): annotate where the model view and the dataset view together are unsure.

Each round the pool's embeddings go into a cosine index. A sample's confidence is the fusion of the model's
normalised confidence with a kNN vote of its neighbours (:mod:`.fusion`); its gain is 1 − confidence. Batches
are drawn without replacement with probability ∝ gain; an annotated sample gets confidence 1 and the gains of
its close neighbours are recomputed. Annotation stops by itself once the total remaining gain is ≤ 1: the
saving ratio is not a parameter.

The semi-supervised variant adds a distance gain (mean distance to the nearest labelled or confident samples,
normalised) and ignores samples whose confidence gain exceeds 0.5; what it trains on is the loop's business
(FixMatch in the paper), not the strategy's.

The paper's radii (cosine distance 0.15 for the vote, 0.1 for re-scoring) belong to the paper's embedding. In
another embedding set `vote_radius_quantile` / `rescore_radius_quantile`: each round the radius becomes that
quantile of the pool's k-nearest-neighbour distances, and :meth:`InfoCoevolution.diagnostics` reports the
radius and the share of neighbours inside it. The thresholds on confidences assume calibrated probabilities
(the loop temperature-scales them when given a labelled calibration split).

Not carried over from the official notebook: its batch mode's hard-coded pool size of 50,000, and the
semi-supervised re-scoring that reads a stale loop variable (here the annotated sample itself joins the clean
set and its neighbours are re-scored against it).
"""

from __future__ import annotations

import numpy as np
from pydantic import Field

from stages.core.params import StrictModel
from stages.methods.selection.online.fusion import Views, confidence_gain, dataset_view, fuse, model_view
from stages.methods.selection.online.neighbours import Backend, CosineIndex, exact_search, unit_rows
from stages.methods.selection.online.strategy import (
    STRATEGIES,
    AnnotationStrategy,
    PoolView,
)


class InfoCoevolutionOptions(StrictModel):
    """Neighbourhoods, the stop threshold and the index backend (defaults: the official code's)."""

    vote_neighbours: int = Field(16, ge=1, description="k of the dataset-view vote")
    vote_radius: float = Field(
        0.15, gt=0, le=2, description="cosine distance a voting neighbour must be within"
    )
    rescore_neighbours: int = Field(8, ge=0, description="neighbours re-scored after each annotation")
    rescore_radius: float = Field(0.1, gt=0, le=2)
    vote_radius_quantile: float | None = Field(
        None, gt=0, le=1, description="set the vote radius to this quantile of the k-NN distances each round"
    )
    rescore_radius_quantile: float | None = Field(
        None,
        gt=0,
        le=1,
        description="set the re-scoring radius to this quantile of the re-scored k-NN distances",
    )
    stop_gain: float = Field(1.0, ge=0, description="stop once the total remaining gain is at most this")
    backend: Backend = "auto"


class SemiSupervisedOptions(InfoCoevolutionOptions):
    """Extra knobs of the semi-supervised variant (γ = λ = 1 as in the paper)."""

    confidence_weight: float = Field(1.0, ge=0, description="γ")
    distance_weight: float = Field(1.0, ge=0, description="λ")
    distance_neighbours: int = Field(4, ge=1, description="clean neighbours the distance gain averages")
    clean_confidence: float = Field(0.9, ge=0, le=1, description="model confidence that counts as clean")
    max_confidence_gain: float = Field(0.5, ge=0, le=1, description="confidence gains above this are zeroed")


@STRATEGIES.register("info_coevolution")
class InfoCoevolution(AnnotationStrategy):
    """Supervised Info-Coevolution: fused-confidence gain, gain-proportional draws, neighbour re-scoring."""

    name = "info_coevolution"
    Options = InfoCoevolutionOptions

    def begin_round(self, view: PoolView, rng: np.random.Generator) -> None:
        """Index the embeddings, fuse the two views for every row and compute the gains."""
        super().begin_round(view, rng)
        options = self.options
        self.index = CosineIndex(view.embeddings, options.backend, seed=int(rng.integers(2**31)))
        predicted = model_view(view.probabilities)
        self.known = Views(
            np.where(view.labelled, view.labels, predicted.classes),
            np.where(view.labelled, 1.0, predicted.confidences),
        )
        every_row = np.arange(len(view.labelled))
        ids, distances = self.index.neighbours(
            every_row, max(options.vote_neighbours, options.rescore_neighbours)
        )
        vote_distances = distances[:, : options.vote_neighbours]
        rescore_distances = distances[:, : options.rescore_neighbours]
        self.vote_radius = radius_from(vote_distances, options.vote_radius, options.vote_radius_quantile)
        self.rescore_radius = radius_from(
            rescore_distances, options.rescore_radius, options.rescore_radius_quantile
        )
        self.round_diagnostics = {
            "vote_radius": self.vote_radius,
            "vote_inside": share_inside(vote_distances, self.vote_radius),
            "rescore_radius": self.rescore_radius,
            "rescore_inside": share_inside(rescore_distances, self.rescore_radius),
        }
        self.fused = self.fused_views(every_row, ids[:, : options.vote_neighbours], vote_distances)
        self.gain = np.where(view.labelled, 0.0, confidence_gain(self.fused.confidences))

    def diagnostics(self) -> dict[str, float]:
        """This round's radii and the share of neighbours (vote: k nearest; re-scoring: its k) inside each."""
        return dict(self.round_diagnostics)

    def fused_views(
        self, rows: np.ndarray, ids: np.ndarray | None = None, distances: np.ndarray | None = None
    ) -> Views:
        """Model view of `rows` fused with their neighbours' vote (neighbours queried unless given)."""
        if ids is None or distances is None:
            ids, distances = self.index.neighbours(rows, self.options.vote_neighbours)
        votes = dataset_view(
            ids, distances, self.known.classes, self.known.confidences,
            self._current_view().n_classes, self.vote_radius,
        )  # fmt: skip
        return fuse(Views(self.known.classes[rows], self.known.confidences[rows]), votes)

    def pick(self, size: int) -> np.ndarray:
        """Up to `size` rows drawn without replacement with probability ∝ gain."""
        candidates = np.flatnonzero(self.gain > 0)
        size = min(size, len(candidates))
        if size == 0:
            return np.zeros(0, np.int64)
        weights = self.gain[candidates]
        chosen = self.rng.choice(candidates, size, replace=False, p=weights / weights.sum())
        self.gain[chosen] = 0.0
        return chosen

    def observe(self, rows: np.ndarray, labels: np.ndarray) -> None:
        """Annotated rows become certain; their close neighbours are re-scored."""
        self.record_annotations(rows, labels)
        neighbours, annotated_labels = self.close_neighbours(rows, labels, self.rescore_radius)
        if len(neighbours):
            self.rescore(neighbours, annotated_labels)

    def record_annotations(self, rows: np.ndarray, labels: np.ndarray) -> None:
        """Mark `rows` labelled with the oracle's `labels`: class known, confidence 1, nothing left to gain."""
        AnnotationStrategy.observe(self, rows, labels)
        self.known.classes[rows] = labels
        self.known.confidences[rows] = 1.0
        self.gain[rows] = 0.0

    def close_neighbours(
        self, rows: np.ndarray, labels: np.ndarray, radius: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """Unlabelled neighbours of `rows` within `radius`, each with the label of the row it neighbours."""
        ids, distances = self.index.neighbours(rows, self.options.rescore_neighbours)
        close = distances <= radius
        neighbours = ids[close]
        annotated_labels = np.repeat(labels, ids.shape[1])[close.ravel()]
        unlabelled = ~self._current_view().labelled[neighbours]
        return neighbours[unlabelled], annotated_labels[unlabelled]

    def rescore(self, neighbours: np.ndarray, annotated_labels: np.ndarray) -> None:
        """New fused gain; a neighbour whose class clashes with an annotation never loses gain."""
        unique = np.unique(neighbours)
        clashes = np.zeros(len(self.gain), bool)
        clashes[neighbours[self.known.classes[neighbours] != annotated_labels]] = True
        new_gain = confidence_gain(self.fused_views(unique).confidences)
        self.gain[unique] = np.where(clashes[unique], np.maximum(self.gain[unique], new_gain), new_gain)

    def remaining_gain(self) -> float:
        """Total gain left among unlabelled rows."""
        return float(self.gain.sum())

    def should_stop(self) -> bool:
        """The automatic stop rule: the remaining gain is at most `stop_gain`."""
        return self.remaining_gain() <= self.options.stop_gain


@STRATEGIES.register("info_coevolution_semi")
class SemiSupervisedInfoCoevolution(InfoCoevolution):
    """Semi-supervised Info-Coevolution's selection: confidence + distance gain (train it with FixMatch)."""

    name = "info_coevolution_semi"
    Options = SemiSupervisedOptions

    def begin_round(self, view: PoolView, rng: np.random.Generator) -> None:
        """Score rows by γ·(capped confidence gain) + λ·(normalised distance to the clean set)."""
        super().begin_round(view, rng)
        options = self.options
        capped = np.where(self.gain > options.max_confidence_gain, 0.0, self.gain)
        self.confidence_part = options.confidence_weight * capped
        self.clean = view.labelled | (model_view(view.probabilities).confidences > options.clean_confidence)
        self.clean_distances = nearest_clean_distances(
            view.embeddings, self.clean, options.distance_neighbours
        )
        mean_distance = self.clean_distances.mean(axis=1)
        self.distance_scale = max(float(mean_distance[~self.clean].max(initial=0.0)), 1e-9)
        distance_part = np.where(self.clean, 0.0, mean_distance / self.distance_scale)
        self.gain = np.where(
            view.labelled, 0.0, self.confidence_part + options.distance_weight * distance_part
        )

    def observe(self, rows: np.ndarray, labels: np.ndarray) -> None:
        """Annotated rows join the clean set; close neighbours get their distance gain recomputed."""
        self.record_annotations(rows, labels)
        self.clean[rows] = True
        ids, distances = self.index.neighbours(rows, self.options.rescore_neighbours)
        close = (distances <= self.vote_radius) & ~self._current_view().labelled[ids]
        for neighbour, distance in zip(ids[close], distances[close], strict=True):
            merged = np.sort(np.append(self.clean_distances[neighbour], distance))
            self.clean_distances[neighbour] = merged[: self.clean_distances.shape[1]]
        touched = np.unique(ids[close])
        if len(touched):
            distance_part = self.clean_distances[touched].mean(axis=1) / self.distance_scale
            self.gain[touched] = self.confidence_part[touched] + self.options.distance_weight * distance_part


def radius_from(distances: np.ndarray, fixed: float, quantile: float | None) -> float:
    """`fixed`, or the `quantile` of the neighbour `distances` when one is given."""
    if quantile is None or distances.size == 0:
        return float(fixed)
    return float(np.quantile(distances, quantile))


def share_inside(distances: np.ndarray, radius: float) -> float:
    """Share of neighbour distances within `radius`."""
    return float((distances <= radius).mean()) if distances.size else 0.0


def nearest_clean_distances(embeddings: np.ndarray, clean: np.ndarray, k: int) -> np.ndarray:
    """Cosine distances from every row to its `k` nearest clean rows other than itself, (n, k) ascending.

    Missing entries (fewer than `k` clean rows) count as distance 1, i.e. orthogonal.
    """
    clean_rows = np.flatnonzero(clean)
    result = np.ones((len(embeddings), k))
    if len(clean_rows) == 0:
        return result
    unit = unit_rows(embeddings)
    ids, distances = exact_search(unit, unit[clean_rows], k + 1)
    own = clean_rows[ids] == np.arange(len(embeddings))[:, None]
    distances = np.sort(np.where(own, np.inf, distances), axis=1)[:, :k]
    result[:, : distances.shape[1]] = np.where(np.isinf(distances), 1.0, distances)
    return result
