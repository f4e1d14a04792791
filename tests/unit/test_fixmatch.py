"""FixMatch's pieces on tiny tensors, temperature calibration, and the fresh teacher in the annotation loop."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn
from torch.nn import functional as F

from stages.methods.selection.online import loop
from stages.methods.selection.online.loop import Calibration, RoundTraining, Schedule, run_online_annotation
from stages.methods.selection.online.registry import make_strategy
from stages.models.calibration import fit_temperature, negative_log_likelihood
from stages.models.config import TrainConfig
from stages.models.fixmatch import (
    WeightAverage,
    fixmatch_losses,
    pseudo_labels,
    train_fixmatch,
    unlabelled_batch_size,
)
from stages.models.fixmatch_config import FixMatchConfig


def test_pseudo_labels_mask_at_the_threshold():
    # softmax of [log 19, 0] is [0.95, 0.05]; [log 18, 0] gives 0.947
    logits = torch.tensor([[np.log(19.0), 0.0], [0.0, np.log(18.0)], [0.0, 5.0]])
    classes, mask = pseudo_labels(logits, 0.95)
    assert classes.tolist() == [0, 1, 1]
    assert mask.tolist() == [1.0, 0.0, 1.0]


def test_losses_are_separate_and_the_unlabelled_one_averages_over_all_mu_b():
    torch.manual_seed(0)
    model = nn.Linear(3, 2)
    labelled, labels = torch.randn(2, 3), torch.tensor([0, 1])
    weak, strong = torch.randn(6, 3) * 4, torch.randn(6, 3)
    losses = fixmatch_losses(model, labelled, labels, weak, strong, 0.9)
    with torch.no_grad():
        expected_labelled = F.cross_entropy(model(labelled), labels)
        targets, mask = pseudo_labels(model(weak), 0.9)
        per_row = F.cross_entropy(model(strong), targets, reduction="none")
    assert float(losses.labelled.detach()) == pytest.approx(float(expected_labelled))
    assert float(losses.unlabelled.detach()) == pytest.approx(
        float((per_row * mask).sum() / 6)
    )  # ÷ μB, not ÷ mask
    assert losses.mask_rate == pytest.approx(float(mask.mean()))
    assert float(losses.total(0.5).detach()) == pytest.approx(
        float((losses.labelled + 0.5 * losses.unlabelled).detach())
    )
    nothing = fixmatch_losses(model, labelled, labels, weak, strong, 1.01)  # τ above any confidence
    assert float(nothing.unlabelled.detach()) == 0.0 and nothing.mask_rate == 0.0


def test_no_gradient_flows_through_the_pseudo_labels():
    model = nn.Linear(3, 2)
    weak = torch.randn(4, 3) * 10
    losses = fixmatch_losses(model, torch.zeros(0, 3), torch.zeros(0, dtype=torch.int64), weak, weak, 0.0)
    losses.unlabelled.backward()
    logits = model(weak).detach()
    # d/dlogits of CE(logits, argmax) with a fixed target is softmax − one-hot: the weak view adds nothing
    expected = ((logits.softmax(1) - F.one_hot(logits.argmax(1), 2)) / 4).T @ weak
    assert torch.allclose(model.weight.grad, expected, atol=1e-5)


class Recorder(nn.Module):
    """A linear classifier on flat 4 × 4 images that records the size of every batch it sees."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(16, 2)
        self.sizes: list[int] = []

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        self.sizes.append(len(inputs))
        return self.linear(inputs)


@pytest.mark.parametrize(("batch", "mu", "n_unlabelled", "expected"), [(4, 3, 100, 12), (4, 7, 20, 20)])
def test_mu_sets_the_unlabelled_batch(batch, mu, n_unlabelled, expected):
    assert unlabelled_batch_size(batch, mu, n_unlabelled) == expected
    model = Recorder()
    config = FixMatchConfig(steps=3, batch_size=batch, mu=mu, crop_padding=1, cutout=2)
    stats = train_fixmatch(model, torch.rand(10, 16), torch.randint(0, 2, (10,)), torch.rand(n_unlabelled, 16),
                           (1, 4, 4), config, seed=0)  # fmt: skip
    assert model.sizes == [batch + 2 * expected] * 3  # B labelled + μB weak + μB strong, one forward pass
    assert stats.steps == 3 and 0.0 <= stats.mean_mask_rate <= 1.0


def test_fixmatch_is_deterministic_under_a_seed():
    def run() -> torch.Tensor:
        torch.manual_seed(0)
        model = Recorder()
        train_fixmatch(model, torch.rand(8, 16, generator=torch.Generator().manual_seed(1)), torch.tensor([0, 1] * 4),
                       torch.rand(30, 16, generator=torch.Generator().manual_seed(2)), (1, 4, 4),
                       FixMatchConfig(steps=4, batch_size=4, mu=2, crop_padding=1, cutout=2), seed=5)  # fmt: skip
        return model.linear.weight.detach().clone()

    assert torch.equal(run(), run())


def test_weight_average_moves_by_one_minus_decay_and_copies_buffers():
    model = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    average = WeightAverage(model, decay=0.9)
    before = model[0].weight.detach().clone()
    with torch.no_grad():
        model[0].weight.add_(1.0)
    model.train()
    model(torch.randn(8, 3))  # moves the batch-norm running statistics
    average.update(model)
    assert torch.allclose(average.model[0].weight, before + 0.1)
    assert torch.equal(average.model[1].running_mean, model[1].running_mean)
    assert not any(parameter.requires_grad for parameter in average.model.parameters())


def test_training_hands_back_the_average_not_the_last_weights():
    def run(decay: float) -> torch.Tensor:
        torch.manual_seed(0)
        model = Recorder()
        train_fixmatch(model, torch.rand(8, 16, generator=torch.Generator().manual_seed(1)), torch.tensor([0, 1] * 4),
                       torch.rand(30, 16, generator=torch.Generator().manual_seed(2)), (1, 4, 4),
                       FixMatchConfig(steps=5, batch_size=4, mu=2, crop_padding=1, cutout=2, ema_decay=decay),
                       seed=5)  # fmt: skip
        return model.linear.weight.detach().clone()

    torch.manual_seed(0)
    start = Recorder().linear.weight.detach().clone()
    assert torch.equal(run(0.0), run(0.0))  # decay 0: the average is the last weights
    assert not torch.equal(run(0.0), start)
    almost_frozen = run(0.999999)  # the average barely leaves the starting weights
    assert torch.allclose(almost_frozen, start, atol=1e-4)


def test_an_ema_teacher_pseudo_labels_the_weak_views():
    torch.manual_seed(0)
    model, teacher = nn.Linear(3, 2), nn.Linear(3, 2)
    with torch.no_grad():
        teacher.weight.copy_(torch.tensor([[10.0, 0.0, 0.0], [-10.0, 0.0, 0.0]]))
        teacher.bias.zero_()
    weak = torch.tensor([[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0]])
    strong = torch.randn(2, 3)
    losses = fixmatch_losses(model, torch.zeros(0, 3), torch.zeros(0, dtype=torch.int64), weak, strong, 0.95,
                             teacher)  # fmt: skip
    expected = F.cross_entropy(model(strong), torch.tensor([0, 1]))  # the teacher's classes, both above τ
    assert losses.mask_rate == 1.0
    assert float(losses.unlabelled.detach()) == pytest.approx(float(expected.detach()))
    assert teacher.weight.grad is None


def overconfident_logits(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    true_logits = rng.normal(0, 1.0, (n, 4))
    probabilities = np.exp(true_logits) / np.exp(true_logits).sum(1, keepdims=True)
    labels = np.array([rng.choice(4, p=row) for row in probabilities])
    return true_logits * 4.0, labels  # a model four times too sure of itself


def test_temperature_fitted_on_one_split_lowers_nll_on_another():
    fit_logits, fit_labels = overconfident_logits(400, 0)
    held_logits, held_labels = overconfident_logits(400, 1)
    temperature = fit_temperature(fit_logits, fit_labels)
    assert 2.5 < temperature < 6.0  # recovers roughly the factor 4
    assert negative_log_likelihood(held_logits, held_labels, temperature) < negative_log_likelihood(
        held_logits, held_labels, 1.0
    )
    assert fit_temperature(np.zeros((0, 4)), np.zeros(0, np.int64)) == 1.0


def image_pool(n_per_class: int = 24, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two classes of 4 × 4 images: a bright left half or a bright top half, plus noise."""
    rng = np.random.default_rng(seed)
    left = np.zeros((4, 4))
    left[:, :2] = 1
    top = left.T
    labels = np.repeat([0, 1], n_per_class)
    images = np.where(labels[:, None, None] == 0, left, top) + rng.normal(0, 0.2, (len(labels), 4, 4))
    return images.reshape(len(labels), 16).astype(np.float32), labels


def test_pseudo_labels_come_from_a_teacher_that_saw_the_rounds_labels(monkeypatch):
    features, labels = image_pool()
    handed_over: list[tuple[np.ndarray, int]] = []
    fit_model, train_fixmatch_ = loop.fit_model, loop.train_fixmatch

    def recording_fit(inputs, targets, *args):
        model = fit_model(inputs, targets, *args)
        # kept on the model itself: an id() can be reused once its model is freed
        model.fitted_rows = np.sort(targets.rows)
        return model

    def recording_fixmatch(model, labelled_inputs, *args):
        handed_over.append((model.fitted_rows, len(labelled_inputs)))
        return train_fixmatch_(model, labelled_inputs, *args)

    monkeypatch.setattr(loop, "fit_model", recording_fit)
    monkeypatch.setattr(loop, "train_fixmatch", recording_fixmatch)
    train = TrainConfig(architecture="cnn", channels=(4,), hidden=(8,), augment="flip_crop", crop_padding=1,
                        epochs=2, batch_size=8)  # fmt: skip
    training = RoundTraining(mode="fixmatch", fixmatch=FixMatchConfig(steps=2, batch_size=4, mu=2, crop_padding=1,
                                                                      cutout=2))  # fmt: skip
    calibration = Calibration(*image_pool(4, seed=1))
    run = run_online_annotation(features, labels, make_strategy("info_coevolution", {"stop_gain": 0.0}),
                                Schedule(seed_size=4, round_size=6, batch_size=3, budget=16, min_steps=5),
                                train, seed=0, training=training, calibration=calibration)  # fmt: skip
    annotated_by_round = np.array(run.annotated_rounds)
    assert len(handed_over) == len(run.records) >= 3
    for record, (fitted_rows, n_labelled) in zip(run.records, handed_over, strict=True):
        so_far = np.sort(np.array(run.annotated_rows)[annotated_by_round <= record.round])
        assert np.array_equal(fitted_rows, so_far)  # the teacher was fitted on every label up to this round
        assert n_labelled == len(so_far) == record.n_annotated
    assert all(0.0 <= record.mask_rate <= 1.0 for record in run.records)
    assert run.records[0].diagnostics["temperature"] > 0
