"""The online-annotation interface: a strategy sees the pool once per round and proposes batches to label.

Per round the loop calls :meth:`AnnotationStrategy.begin_round` with the pool's current embeddings, model
probabilities and labelled mask, then alternates :meth:`~AnnotationStrategy.propose` (the next batch of
unlabelled rows) and :meth:`~AnnotationStrategy.observe` (the oracle's labels for that batch) until the round's
quota is met or :meth:`~AnnotationStrategy.should_stop` says more labels are not worth it. Register a new
strategy with ``@STRATEGIES.register("name")``; build one from params with :func:`make_strategy`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from stages.core.errors import PipelineError
from stages.core.params import StrictModel
from stages.core.registry import Registry


@dataclass
class PoolView:
    """What a strategy sees of the pool at the start of a round.

    `labels` holds the annotation of labelled rows and -1 elsewhere; `probabilities` are the current model's
    softmax outputs, `embeddings` its representation of every row.
    """

    embeddings: np.ndarray
    probabilities: np.ndarray
    labelled: np.ndarray
    labels: np.ndarray

    def __post_init__(self) -> None:
        n_rows = len(self.labelled)
        shapes = {"embeddings": len(self.embeddings), "probabilities": len(self.probabilities)}
        shapes["labels"] = len(self.labels)
        wrong = {name: size for name, size in shapes.items() if size != n_rows}
        if wrong:
            raise PipelineError(f"pool view: {wrong} rows, but the labelled mask has {n_rows}")

    @property
    def n_classes(self) -> int:
        """Number of classes the model predicts."""
        return self.probabilities.shape[1]

    def unlabelled_rows(self) -> np.ndarray:
        """Row indices not yet annotated."""
        return np.flatnonzero(~self.labelled)


@dataclass(frozen=True)
class TrainingTargets:
    """Rows to train on and their targets (the annotations; pseudo-labels are the trainer's business, made by
    a model trained on these targets)."""

    rows: np.ndarray
    labels: np.ndarray


class NoOptions(StrictModel):
    """A strategy without options."""


class AnnotationStrategy(ABC):
    """Base class of online-annotation strategies."""

    name: ClassVar[str] = ""
    Options: ClassVar[type[StrictModel]] = NoOptions

    def __init__(self, options: StrictModel | None = None) -> None:
        self.options = options if options is not None else self.Options()
        self.view: PoolView | None = None
        self.rng = np.random.default_rng(0)

    def begin_round(self, view: PoolView, rng: np.random.Generator) -> None:
        """Take the pool's state for this round (subclasses score it here)."""
        self.view, self.rng = view, rng

    def propose(self, size: int) -> np.ndarray:
        """Up to `size` distinct unlabelled rows to annotate next (empty when nothing is left)."""
        view = self._current_view()
        available = int((~view.labelled).sum())
        chosen = np.asarray(self.pick(min(size, available)), dtype=np.int64)
        if len(np.unique(chosen)) != len(chosen) or view.labelled[chosen].any():
            raise AssertionError(f"{self.name} proposed a labelled or repeated row")
        return chosen

    def observe(self, rows: np.ndarray, labels: np.ndarray) -> None:
        """Record the oracle's labels for `rows` (subclasses also update their scores)."""
        view = self._current_view()
        view.labelled[rows] = True
        view.labels[rows] = labels

    def should_stop(self) -> bool:
        """Whether annotating further is not worth it (only strategies with a stop rule say yes)."""
        return False

    def remaining_gain(self) -> float | None:
        """The strategy's estimate of what is left to gain (None when it has no such estimate)."""
        return None

    def diagnostics(self) -> dict[str, float]:
        """Numbers about this round's scoring worth reporting (e.g. radii and how many neighbours fall inside)."""
        return {}

    def training_targets(self) -> TrainingTargets:
        """What the next model trains on: the annotated rows and their labels."""
        view = self._current_view()
        rows = np.flatnonzero(view.labelled)
        return TrainingTargets(rows, view.labels[rows])

    @abstractmethod
    def pick(self, size: int) -> np.ndarray:
        """At most `size` distinct unlabelled rows (fewer only when the strategy sees nothing worth it)."""

    def _current_view(self) -> PoolView:
        if self.view is None:
            raise PipelineError(f"{self.name}: begin_round() must be called before proposing")
        return self.view


STRATEGIES: Registry[type[AnnotationStrategy]] = Registry("annotation strategy")


def make_strategy(
    name: str, options: dict[str, Any] | None = None, key: str = "options"
) -> AnnotationStrategy:
    """Build a registered strategy, validating its options (an unknown option is an error naming `key`)."""
    return STRATEGIES.build(name, options, key)
