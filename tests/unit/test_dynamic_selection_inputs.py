"""Dynamic selection on your own loop: `DynamicSampler.record` and the consistency functions name bad inputs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from stages.core.errors import PipelineError
from stages.methods.selection.dynamic.consistency import (
    ProjectionConfig,
    cross_fitted_consistency,
    held_out_consistency,
    random_texts,
)
from stages.methods.selection.dynamic.registry import make_selection_method
from stages.methods.selection.dynamic.sampler import DynamicSampler
from stages.methods.selection.dynamic.stats import SampleStats

FAST = ProjectionConfig(epochs=1, batch_size=32)


def sampler(n: int = 20) -> DynamicSampler:
    return DynamicSampler(make_selection_method("random"), SampleStats(np.arange(n) % 2), ratio=0.5, seed=0)


@pytest.mark.parametrize(
    ("indices", "losses", "embeddings", "message"),
    [
        (torch.arange(8), torch.ones(5), None, "8 indices but 5 losses"),
        (torch.arange(8), torch.ones(8, 2), None, r"8 indices but losses of shape \(8, 2\)"),
        (torch.arange(8), torch.tensor(1.0), None, r"8 indices but losses of shape \(\)"),
        (torch.arange(4), torch.ones(4), torch.ones(3, 6), r"4 indices but embeddings of shape \(3, 6\)"),
        (torch.tensor([0, 25]), torch.ones(2), None, r"indices span 0\.\.25 but there are 20 samples"),
        (torch.tensor([0.0, 1.0]), torch.ones(2), None, "1-D integer array"),
        (torch.arange(3), torch.tensor([1.0, float("nan"), 2.0]), None, "1 of 3 losses are NaN or infinite"),
    ],
)
def test_record_names_the_mismatch_and_stores_nothing(indices, losses, embeddings, message):
    own = sampler()
    with pytest.raises(PipelineError, match=message):
        own.record(indices, losses, embeddings)
    assert not own.stats.seen.any() and own.stats.embeddings is None


def test_record_stores_a_batch_and_keeps_the_embedding_width():
    own = sampler()
    own.record(torch.tensor([3, 7]), torch.tensor([0.5, 1.5]), torch.ones(2, 4))
    assert own.stats.loss[[3, 7]].tolist() == [0.5, 1.5] and own.stats.seen.sum() == 2
    with pytest.raises(PipelineError, match="embeddings have 5 columns but earlier batches had 4"):
        own.record(np.array([1]), np.array([0.1]), np.ones((1, 5)))


def test_consistency_functions_name_both_lengths():
    images, texts = torch.randn(30, 8), random_texts(3, 16, seed=0)
    labels = torch.arange(30) % 3
    with pytest.raises(PipelineError, match="cross_fitted_consistency: images has 30 rows but labels has 29"):
        cross_fitted_consistency(images, labels[:29], texts, FAST, 0)
    with pytest.raises(PipelineError, match=r"labels span 0\.\.3 but texts has 3 rows"):
        cross_fitted_consistency(images, torch.arange(30) % 4, texts, FAST, 0)
    with pytest.raises(PipelineError, match="labels must be integer class indices"):
        cross_fitted_consistency(images, labels.float(), texts, FAST, 0)
    with pytest.raises(PipelineError, match=r"reference split\): images has 30 rows but labels has 10"):
        held_out_consistency(images, labels[:10], images, labels, texts, FAST, 0)
    with pytest.raises(PipelineError, match="reference_images has 8 features but images has 6"):
        held_out_consistency(images, labels, images[:, :6], labels, texts, FAST, 0)


def test_cross_fitted_consistency_takes_arrays_and_returns_one_score_per_sample():
    rng = np.random.default_rng(0)
    labels = np.arange(40) % 2
    images = rng.normal(size=(40, 6)) + 3 * labels[:, None]
    result = cross_fitted_consistency(images, labels, random_texts(2, 8, seed=0).numpy(), FAST, 0)
    assert result.scores.consistency.shape == result.semantic_prediction.shape == (40,)
    assert len(result.logit_scales) == FAST.folds
    assert np.all(np.abs(result.scores.consistency) <= 1 + 1e-6)
