"""Dynamic selection: sampler properties per method, loss rescaling, density, consistency, augmentation, noise."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

from stages.core.errors import PipelineError
from stages.core.registry import UnknownNameError
from stages.datasets.noise import flip_labels
from stages.methods.selection.dynamic.augment import AugmentationParams, Augmenter
from stages.methods.selection.dynamic.consistency import (
    ProjectionConfig,
    TextProjection,
    class_descriptions,
    cross_fitted_consistency,
    held_out_consistency,
    random_texts,
    score,
)
from stages.methods.selection.dynamic.density import local_density
from stages.methods.selection.dynamic.density_consistency import suppressed_rows
from stages.methods.selection.dynamic.plan import kept_count
from stages.methods.selection.dynamic.registry import SELECTION_METHODS, make_selection_method
from stages.methods.selection.dynamic.sampler import DynamicSampler, IndexedDataset
from stages.methods.selection.dynamic.stats import SampleStats, SemanticScores
from stages.methods.selection.dynamic.training import Standardize, train_with_sampler
from stages.models.config import TrainConfig
from stages.models.training import build_model

N_SAMPLES = 200
RATIO_METHODS = ["random", "loss_pruning", "density_consistency"]


def semantic(n: int = N_SAMPLES, seed: int = 0) -> SemanticScores:
    """Scores where every tenth sample looks mislabelled (label probability 0.01)."""
    rng = np.random.default_rng(seed)
    probability = rng.uniform(0.2, 1.0, n).astype(np.float32)
    probability[::10] = 0.01
    return SemanticScores(rng.uniform(-1, 1, n).astype(np.float32), probability)


def make_sampler(
    name: str, ratio: float, seed: int = 0, options: dict | None = None, epochs: int | None = 100
) -> DynamicSampler:
    labels = np.arange(N_SAMPLES) % 4
    return DynamicSampler(
        make_selection_method(name, options), SampleStats(labels, semantic()), ratio, seed, epochs=epochs
    )


def feed(sampler: DynamicSampler, epoch: int) -> None:
    """Record deterministic fake losses and embeddings for what the sampler kept."""
    rng = np.random.default_rng(epoch)
    kept = sampler.plan.indices
    sampler.record(
        kept, rng.random(len(kept)).astype(np.float32), rng.normal(size=(len(kept), 6)).astype(np.float32)
    )


def run_epochs(sampler: DynamicSampler, epochs: int) -> list:
    plans = []
    for epoch in range(epochs):
        plans.append(sampler.set_epoch(epoch))
        feed(sampler, epoch)
    return plans


@pytest.mark.parametrize("name", RATIO_METHODS)
@pytest.mark.parametrize("ratio", [0.1, 0.5, 0.83, 1.0])
def test_ratio_respected_and_indices_valid(name, ratio):
    sampler = make_sampler(name, ratio)
    for epoch in range(4):
        plan = sampler.set_epoch(epoch)
        expected = kept_count(ratio, N_SAMPLES)
        if name == "density_consistency":
            expected = min(expected, N_SAMPLES - len(plan.suppressed))
        assert len(plan.indices) == expected
        assert np.all(np.diff(plan.indices) > 0)  # sorted and distinct
        assert plan.indices.min() >= 0 and plan.indices.max() < N_SAMPLES
        assert not np.intersect1d(plan.indices, plan.suppressed).size
        assert len(plan.augment) == len(plan.weights) == len(plan.indices)
        assert sorted(sampler) == plan.indices.tolist() and len(sampler) == len(plan.indices)
        feed(sampler, epoch)


def test_full_data_keeps_everything():
    sampler = make_sampler("full", 1.0)
    plan = sampler.set_epoch(0)
    assert plan.indices.tolist() == list(range(N_SAMPLES)) and not plan.augment.any()


@pytest.mark.parametrize("name", RATIO_METHODS)
def test_deterministic_under_seed(name):
    first, second = make_sampler(name, 0.4, seed=3), make_sampler(name, 0.4, seed=3)
    for epoch in range(5):
        a, b = first.set_epoch(epoch), second.set_epoch(epoch)
        assert np.array_equal(a.indices, b.indices) and np.array_equal(a.augment, b.augment)
        assert np.array_equal(a.weights, b.weights) and list(first) == list(second)
        feed(first, epoch)
        feed(second, epoch)
    other = make_sampler(name, 0.4, seed=4)
    assert any(not np.array_equal(other.set_epoch(e).indices, make_sampler(name, 0.4, 3).set_epoch(e).indices)
               for e in range(3))  # fmt: skip


@pytest.mark.parametrize("name", RATIO_METHODS)
def test_every_unsuppressed_sample_is_reachable(name):
    sampler = make_sampler(name, 0.3)
    plans = run_epochs(sampler, 60)
    suppressed = plans[-1].suppressed
    never = np.flatnonzero(sampler.stats.times_selected == 0)
    assert np.array_equal(never, suppressed)


def test_density_consistency_suppresses_low_label_probability():
    sampler = make_sampler("density_consistency", 0.5)
    plan = sampler.set_epoch(0)
    assert plan.suppressed.tolist() == list(range(0, N_SAMPLES, 10))
    capped = suppressed_rows(semantic(), suppress_below=0.5, max_suppressed=0.05)
    assert len(capped) == 10 and set(capped) <= set(np.flatnonzero(semantic().label_probability < 0.5))


def test_density_consistency_routes_sparse_consistent_samples():
    plan = run_epochs(make_sampler("density_consistency", 0.5), 3)[-1]
    assert 0 < plan.augment.sum() < len(plan.indices)
    assert not run_epochs(make_sampler("random", 0.5), 2)[-1].augment.any()


def tiny_training(name: str, augment: str, epochs: int = 3, share: float = 1.0):
    """A 2-feature-square (4 × 4 image) problem trained through the reference loop."""
    rng = np.random.default_rng(0)
    features = torch.from_numpy(rng.random((64, 16)).astype(np.float32))
    labels = np.arange(64) % 4
    sampler = DynamicSampler(
        make_selection_method(name), SampleStats(labels, semantic(64)), 0.5, 0, epochs=epochs
    )
    config = TrainConfig(epochs=epochs, batch_size=8, hidden=[8])
    model = build_model(16, 4, config, 0)
    augmenter = Augmenter(AugmentationParams(max_shift=1), 16, torch.ones(16), "aug")
    standardize = Standardize(torch.zeros(16), torch.ones(16))
    return train_with_sampler(
        model, features, torch.from_numpy(labels), sampler, config, standardize, augmenter, 0,
        augment=augment, augment_share=share,
    )  # fmt: skip


CASES = [
    ("random", "all"),
    ("random", "none"),
    ("density_consistency", "plan"),
    ("density_consistency", "none"),
]


@pytest.mark.parametrize(("name", "augment"), CASES)
def test_every_method_can_take_the_same_augmentation(name, augment):
    records = tiny_training(name, augment)
    augmented = [record.n_augmented for record in records]
    if augment == "all":
        assert augmented == [record.n_kept for record in records]
    elif augment == "none":
        assert augmented == [0, 0, 0]
    else:
        assert 0 < sum(augmented) < sum(record.n_kept for record in records)
    assert all(record.augment_seconds <= record.training_seconds for record in records)


def test_augment_share_augments_about_that_share_of_kept_samples():
    records = tiny_training("random", "all", epochs=20, share=0.3)
    share = sum(record.n_augmented for record in records) / sum(record.n_kept for record in records)
    assert 0.2 < share < 0.4
    assert (
        records == records
        and tiny_training("random", "all", 20, 0.3)[5].n_augmented == records[5].n_augmented
    )


def test_test_accuracy_after_every_epoch_or_only_the_last():
    rng = np.random.default_rng(0)
    features = torch.from_numpy(rng.random((32, 16)).astype(np.float32))
    labels = torch.from_numpy(np.arange(32) % 4)
    config = TrainConfig(epochs=3, batch_size=8, hidden=[8])
    calls = []

    def evaluate(model) -> float:
        calls.append(model)
        return 0.5

    def records(every: bool) -> list:
        sampler = DynamicSampler(make_selection_method("random"), SampleStats(labels.numpy()), 0.5, 0)
        return train_with_sampler(
            build_model(16, 4, config, 0), features, labels, sampler, config,
            Standardize(torch.zeros(16), torch.ones(16)), None, 0, evaluate, augment="none",
            evaluate_every_epoch=every,
        )  # fmt: skip

    assert [record.test_accuracy for record in records(True)] == [0.5, 0.5, 0.5] and len(calls) == 3
    assert [record.test_accuracy for record in records(False)] == [None, None, 0.5] and len(calls) == 4


def test_plan_augmentation_needs_a_routing_method():
    with pytest.raises(PipelineError, match="plan needs a method that routes samples"):
        tiny_training("random", "plan")


def test_loss_pruning_anneals_to_full_data_in_the_last_epochs():
    sampler = make_sampler("loss_pruning", 0.5, epochs=12)
    plans = run_epochs(sampler, 12)
    assert [len(plan.indices) for plan in plans] == [100] * 11 + [N_SAMPLES]
    assert np.all(plans[-1].weights == 1.0)
    eight = run_epochs(make_sampler("loss_pruning", 0.5, epochs=8), 8)
    assert [len(plan.indices) for plan in eight][-1:] == [N_SAMPLES]  # 8 × (1 − 0.125) = 7: the last one
    unannealed = run_epochs(make_sampler("loss_pruning", 0.5, options={"anneal": 0}, epochs=None), 4)
    assert {len(plan.indices) for plan in unannealed} == {100}
    with pytest.raises(PipelineError, match="loss_pruning anneals over the last epochs"):
        make_sampler("loss_pruning", 0.5, epochs=None).set_epoch(0)


def test_density_consistency_needs_semantic_scores():
    sampler = DynamicSampler(
        make_selection_method("density_consistency"), SampleStats(np.zeros(10, int)), 0.5, 0
    )
    with pytest.raises(PipelineError, match="needs semantic consistency scores"):
        sampler.set_epoch(0)


def test_loss_pruning_keeps_hard_samples_and_rescales_unbiasedly():
    losses = np.linspace(0.01, 2.0, N_SAMPLES).astype(np.float32)
    estimates = []
    for epoch in range(400):
        sampler = make_sampler("loss_pruning", 0.7, seed=epoch)
        sampler.record(np.arange(N_SAMPLES), losses)
        plan = sampler.set_epoch(0)
        above_mean = np.flatnonzero(losses >= losses.mean())
        assert np.isin(above_mean, plan.indices).all()  # not yet learned: always kept
        assert np.allclose(plan.weights[np.isin(plan.indices, above_mean)], 1.0)
        estimates.append(float((plan.weights * losses[plan.indices]).sum()))
    assert np.mean(estimates) == pytest.approx(losses.sum(), rel=0.01)


@pytest.mark.parametrize("ratio", [0.0, -0.1, 1.5])
def test_ratio_outside_unit_interval_is_an_error(ratio):
    with pytest.raises(PipelineError, match=r"must be in \(0, 1\]"):
        make_sampler("random", ratio)


def test_unknown_method_lists_valid_names():
    with pytest.raises(
        UnknownNameError, match="valid names: density_consistency, full, loss_pruning, random"
    ):
        make_selection_method("infobatch")
    assert SELECTION_METHODS.names() == ["density_consistency", "full", "loss_pruning", "random"]


def test_works_with_a_torch_dataloader():
    sampler = make_sampler("random", 0.25)
    dataset = IndexedDataset(TensorDataset(torch.arange(N_SAMPLES).float(), torch.zeros(N_SAMPLES)))
    loader = DataLoader(dataset, batch_size=16, sampler=sampler)
    sampler.set_epoch(0)
    seen = torch.cat([index for _, _, index in loader])
    assert sorted(seen.tolist()) == sampler.plan.indices.tolist()
    values, _, index = next(iter(loader))
    assert torch.equal(values, index.float())
    assert (
        sampler.loss_weights(index).shape == index.shape and sampler.augment_mask(index).dtype == torch.bool
    )


def test_sampler_needs_set_epoch_first():
    with pytest.raises(PipelineError, match="set_epoch"):
        list(make_sampler("random", 0.5))


def test_local_density_ranks_a_cluster_above_an_outlier():
    rng = np.random.default_rng(0)
    cluster = np.array([1.0, 0.0, 0.0]) + 0.05 * rng.normal(size=(50, 3))
    outlier = np.array([[0.0, 0.0, 1.0]])
    embeddings = np.vstack([cluster, outlier]).astype(np.float32)
    seen = np.ones(51, bool)
    density = local_density(embeddings, seen, anchors=51, bandwidth=0.1, rng=rng)
    assert density[-1] < density[:-1].min()
    seen[:10] = False
    partial = local_density(embeddings, seen, anchors=20, bandwidth=0.1, rng=rng)
    assert np.all(partial[:10] == np.median(partial[10:]))


def test_consistency_hand_case():
    projection = TextProjection(3, 3)
    with torch.no_grad():
        projection.linear.weight.copy_(torch.eye(3))
        projection.linear.bias.zero_()
        projection.log_scale.fill_(math.log(10.0))
    texts = torch.eye(3)
    images = torch.tensor([[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 2.0]])
    labels = torch.tensor([0, 0, 1])
    consistency, probability, best = score(projection, images, labels, texts)
    assert consistency == pytest.approx([1.0, 1 / math.sqrt(2), 0.0], abs=1e-6)
    tilted = math.exp(10 / math.sqrt(2))
    expected = [math.exp(10) / (math.exp(10) + 2), tilted / (2 * tilted + 1), 1 / (math.exp(10) + 2)]
    assert probability == pytest.approx(expected, rel=1e-5)
    assert best[0] == 0 and best[2] == 2


def test_cross_fitted_consistency_flags_flipped_labels():
    rng = np.random.default_rng(0)
    centers = rng.normal(0, 3, size=(3, 8))
    clean = np.repeat(np.arange(3), 100)
    images = torch.from_numpy((centers[clean] + rng.normal(size=(300, 8))).astype(np.float32))
    observed, flipped = flip_labels(clean, 0.2, 3, seed=1)
    texts = torch.nn.functional.normalize(
        torch.from_numpy(rng.normal(size=(3, 16)).astype(np.float32)), dim=1
    )
    result = cross_fitted_consistency(
        images, torch.from_numpy(observed), texts, ProjectionConfig(epochs=20, batch_size=16), 0
    )
    probability = result.scores.label_probability
    assert probability[flipped].mean() < 0.3 < 0.6 < probability[~flipped].mean()
    assert np.mean(result.semantic_prediction == clean) > 0.9
    assert result.scores.consistency[flipped].mean() < result.scores.consistency[~flipped].mean()


def blobs(n_per_class: int, seed: int) -> tuple[torch.Tensor, np.ndarray]:
    rng = np.random.default_rng(seed)
    centers = np.random.default_rng(0).normal(0, 3, size=(3, 8))
    clean = np.repeat(np.arange(3), n_per_class)
    return torch.from_numpy((centers[clean] + rng.normal(size=(len(clean), 8))).astype(np.float32)), clean


def test_held_out_consistency_never_reads_the_pool_labels_it_judges():
    reference, reference_labels = blobs(60, seed=5)
    images, clean = blobs(100, seed=6)
    observed, flipped = flip_labels(clean, 0.2, 3, seed=1)
    texts = random_texts(3, 16, seed=0)
    config = ProjectionConfig(epochs=20, batch_size=16)
    result = held_out_consistency(
        reference, torch.from_numpy(reference_labels), images, torch.from_numpy(observed), texts, config, 0
    )
    probability = result.scores.label_probability
    assert probability[flipped].mean() < 0.3 < 0.6 < probability[~flipped].mean()
    relabelled = held_out_consistency(
        reference, torch.from_numpy(reference_labels), images, torch.from_numpy(clean), texts, config, 0
    )
    assert np.array_equal(relabelled.semantic_prediction, result.semantic_prediction)  # labels only looked up
    assert torch.allclose(random_texts(3, 16, 0).norm(dim=1), torch.ones(3))


def test_class_descriptions_defaults_and_errors():
    assert class_descriptions("fashion_mnist", None, 10, "k")[9] == "a photo of an ankle boot"
    with pytest.raises(PipelineError, match="k: no built-in class descriptions for dataset 'table'"):
        class_descriptions("table", None, 3, "k")
    with pytest.raises(PipelineError, match="k: 2 descriptions for 3 classes"):
        class_descriptions("table", ["a", "b"], 3, "k")


def test_augmenter_changes_masked_rows_in_place_and_checks_the_shape():
    image = torch.zeros(1, 8, 8)
    image[0, 3:5, 2:4] = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    rows = image.reshape(1, -1).repeat(64, 1)
    augmenter = Augmenter(AugmentationParams(), 64, torch.ones(64), "aug")
    mask = torch.arange(64) % 2 == 0
    out = augmenter(rows.clone(), mask, torch.Generator().manual_seed(0))
    assert torch.equal(out[~mask], rows[~mask])
    assert torch.allclose(out.sum(dim=1), rows.sum(dim=1))  # the blob stays inside the frame
    assert len({tuple(row.tolist()) for row in out[mask]}) > 5
    owned = rows.clone()
    assert augmenter(owned, mask, torch.Generator().manual_seed(0)) is owned  # no copy
    noisy = Augmenter(AugmentationParams(kind="feature_noise", noise_std=0.5), 64, torch.ones(64), "aug")
    assert not torch.equal(noisy(rows.clone(), mask, torch.Generator().manual_seed(0))[mask], rows[mask])
    with pytest.raises(PipelineError, match=r"aug\.image_shape: 10 features are not a square grey image"):
        Augmenter(AugmentationParams(), 10, torch.ones(10), "aug")
    with pytest.raises(
        PipelineError, match=r"aug.image_shape: image shape \[3, 3\] does not hold 16 features"
    ):
        Augmenter(AugmentationParams(image_shape=(3, 3)), 16, torch.ones(16), "aug")


def test_flip_labels_flips_exactly_the_rate():
    labels = np.arange(100) % 5
    noisy, flipped = flip_labels(labels, 0.2, 5, seed=0)
    assert flipped.sum() == 20 and np.all(noisy[flipped] != labels[flipped])
    assert np.array_equal(noisy[~flipped], labels[~flipped])
    assert np.array_equal(flip_labels(labels, 0.2, 5, seed=0)[0], noisy)
    assert not flip_labels(labels, 0.0, 5, seed=0)[1].any()
    with pytest.raises(PipelineError, match="must be in"):
        flip_labels(labels, 1.0, 5, seed=0)
