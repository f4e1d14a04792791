"""The shared image pieces: batch augmentations, the small CNN, and the eval-pass training trace."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from stages.core.errors import PipelineError
from stages.models.augment import cutout, flip_crop, image_shape_of, rand_augment, strong_augment
from stages.models.config import TrainConfig
from stages.models.training import build_model, fit_scaler, sample_statistics, train_classifier


def _images(n: int = 6, side: int = 10) -> torch.Tensor:
    return torch.rand(n, 1, side, side, generator=torch.Generator().manual_seed(3))


def test_flip_crop_without_padding_or_flip_is_identity() -> None:
    images = _images()
    assert torch.equal(flip_crop(images, 0, False, torch.Generator().manual_seed(0)), images)


def test_flip_crop_flips_some_images_exactly() -> None:
    images = _images(40)
    out = flip_crop(images, 0, True, torch.Generator().manual_seed(0))
    flipped = torch.tensor([torch.equal(o, i.flip(-1)) for o, i in zip(out, images, strict=True)])
    same = torch.tensor([torch.equal(o, i) for o, i in zip(out, images, strict=True)])
    assert bool((flipped | same).all()) and 5 < int(flipped.sum()) < 35


def test_flip_crop_translates_a_centred_blob_without_losing_it() -> None:
    images = torch.zeros(30, 1, 12, 12)
    images[:, :, 5:7, 5:7] = 1.0
    out = flip_crop(images, 2, False, torch.Generator().manual_seed(1))
    assert torch.equal(out.sum(dim=(1, 2, 3)), torch.full((30,), 4.0))
    assert len({tuple(o.nonzero()[0].tolist()) for o in out}) > 5  # the blob moved, differently per image


def test_cutout_greys_one_square_per_image() -> None:
    images = torch.zeros(8, 1, 16, 16)
    out = cutout(images, 4, torch.Generator().manual_seed(0))
    counts = (out == 0.5).sum(dim=(1, 2, 3))
    assert bool((counts <= 16).all()) and bool((counts >= 4).all())


def test_rand_augment_is_seeded_bounded_and_changes_images() -> None:
    images = _images(64, 28)
    first = rand_augment(images, 2, 1.0, torch.Generator().manual_seed(5))
    again = rand_augment(images, 2, 1.0, torch.Generator().manual_seed(5))
    assert torch.equal(first, again)
    assert float(first.min()) >= 0.0 and float(first.max()) <= 1.0
    changed = (first - images).abs().amax(dim=(1, 2, 3)) > 1e-6
    assert int(changed.sum()) > 40


def test_strong_augment_keeps_flat_rows() -> None:
    rows = torch.rand(10, 784)
    out = strong_augment((1, 28, 28), 2, True, 2, 1.0, 14)(rows, torch.Generator().manual_seed(0))
    assert out.shape == rows.shape


def test_image_shape_errors_name_the_key() -> None:
    assert image_shape_of(64, None, "k") == (1, 8, 8)
    assert image_shape_of(12, (3, 2, 2), "k") == (3, 2, 2)
    with pytest.raises(PipelineError, match=r"train\.image_shape"):
        image_shape_of(50, None, "train.image_shape")
    with pytest.raises(PipelineError, match="does not hold"):
        image_shape_of(64, (4, 4), "k")


@pytest.mark.parametrize("side", [8, 28])
def test_cnn_embeds_and_classifies_flat_rows(side: int) -> None:
    config = TrainConfig(architecture="cnn", channels=(4, 8), hidden=(16,))
    model = build_model(side * side, 3, config, seed=0)
    rows = torch.rand(5, side * side)
    assert model(rows).shape == (5, 3) and model.embed(rows).shape == (5, 16)


def test_trace_comes_from_an_eval_pass_after_each_epoch() -> None:
    rng = np.random.default_rng(0)
    features = rng.integers(0, 255, size=(120, 64)).astype(np.float32)
    labels = torch.from_numpy((features[:, :32].mean(1) > features[:, 32:].mean(1)).astype(np.int64))
    config = TrainConfig(
        epochs=2, batch_size=32, architecture="cnn", channels=(4,), hidden=(8,), augment="flip_crop"
    )
    inputs = fit_scaler(features, config)(features)
    assert float(inputs.min()) == 0.0 and float(inputs.max()) == 1.0
    model = build_model(64, 2, config, seed=0)
    trace = train_classifier(model, inputs, labels, config, seed=0, record_trace=True)
    loss, correct, error = sample_statistics(model, inputs, labels)
    np.testing.assert_array_equal(trace.loss[:, -1], loss)
    np.testing.assert_array_equal(trace.correct[:, -1], correct)
    np.testing.assert_array_equal(trace.error_norm[:, -1], error)
