"""DD3D's pieces on tiny hand-checkable inputs: rotator, generator, gradient matching, loaders, bad inputs."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
import torch

from stages.core.errors import DataValidationError
from stages.datasets.modelnet import load_h5_folder, load_modelnet, load_off_folder, read_off
from stages.datasets.point_clouds import point_cloud_schema, synthetic_shapes, to_table
from stages.methods.distillation.distill import DistillOptions, distill, random_subset
from stages.methods.distillation.generator import PointGenerator
from stages.methods.distillation.matching import (
    batched_gradient_match,
    class_gradients,
    gradient_match,
    layer_distance,
    match_loss,
)
from stages.methods.distillation.own_data import DistillRequest, distill_files, read_cloud_table
from stages.methods.distillation.pointnet import PointNet, instance_norm
from stages.methods.distillation.rotator import canonical, chamfer, eigengaps, sign_flip, uniform_rotations


def anisotropic_clouds(count: int, points: int = 200, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((count, points, 3)) * np.array([1.0, 0.6, 0.3])


def test_canonical_form_is_rotation_invariant_when_eigengaps_exceed_ten_percent():
    clouds = anisotropic_clouds(6)
    assert all((eigengaps(cloud) > 0.1).all() for cloud in clouds)
    rotated = np.einsum("bij,bnj->bni", uniform_rotations(6, np.random.default_rng(1)), clouds)
    for a, b in zip(canonical(clouds), canonical(rotated), strict=True):
        assert chamfer(a, b) < 1e-3


def test_canonical_form_differs_without_the_rotator():
    clouds = anisotropic_clouds(2)
    rotated = np.einsum("bij,bnj->bni", uniform_rotations(2, np.random.default_rng(3)), clouds)
    assert chamfer(clouds[0], rotated[0]) > 1e-2


def test_uniform_rotations_are_proper():
    r = uniform_rotations(50, np.random.default_rng(0))
    assert np.allclose(r @ r.transpose(0, 2, 1), np.eye(3), atol=1e-10)
    assert np.allclose(np.linalg.det(r), 1.0)


def test_sign_flip_maps_zero_sign_to_plus_one_and_negates_negative_axes():
    points = torch.tensor([[[0.0, -1.0, 0.5], [0.0, -0.5, 0.5]]])
    flipped = sign_flip(points, 1.0)
    assert torch.equal(flipped[..., 0], points[..., 0])  # mean sin 0 → +1
    assert torch.equal(flipped[..., 1], -points[..., 1])
    assert torch.equal(flipped[..., 2], points[..., 2])


def test_generator_draws_any_point_count_and_is_deterministic_under_seed():
    torch.manual_seed(0)
    generator = PointGenerator(clouds=4, hidden=16)
    for points in (7, 64, 1000):
        a = generator.draw(torch.arange(4), points, torch.Generator().manual_seed(5))
        b = generator.draw(torch.arange(4), points, torch.Generator().manual_seed(5))
        assert a.shape == (4, points, 3) and torch.equal(a, b)
        assert a.abs().max() <= 1.0  # tanh output


def test_layer_distance_hand_computed_and_one_dimensional_parameters_skipped():
    real = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    synthetic = torch.tensor([[2.0, 0.0], [1.0, 0.0]])
    assert float(layer_distance(real, synthetic)) == pytest.approx(1.0, abs=1e-5)  # rows: 1 − 1, 1 − 0
    assert float(layer_distance(torch.ones(3), -torch.ones(3))) == 0.0


def test_matching_loss_zero_for_identical_batches_and_positive_otherwise():
    torch.manual_seed(0)
    net = PointNet(3, (8, 16))
    real = torch.randn(4, 32, 3)
    # identical: 0 up to the 1e-6 in the denominator (Σ_rows 1e-6 / (‖g_row‖² + 1e-6))
    same = gradient_match(net, real, real.clone(), 1).detach()
    grads = class_gradients(net, real, torch.full((4,), 1), create_graph=False)
    expected = sum(float((1e-6 / (g.norm(dim=-1) ** 2 + 1e-6)).sum()) for g in grads if g.dim() == 2)
    assert float(same) == pytest.approx(expected, rel=1e-2, abs=1e-6) and float(same) < 1e-2
    assert float(gradient_match(net, real, torch.randn(2, 32, 3), 1).detach()) > 0.1
    with pytest.raises(ValueError, match="differ in length"):
        match_loss([torch.ones(2, 2)], [])


@pytest.mark.parametrize("flip", [None, 1.0])
def test_batched_matching_equals_the_class_loop_in_value_and_gradient(flip):
    torch.manual_seed(0)
    net = PointNet(3, (8, 16), flip)
    real = torch.randn(3, 4, 20, 3)
    source = torch.randn(3, 2, 20, 3, requires_grad=True)
    synthetic = torch.tanh(source)
    looped = sum(gradient_match(net, real[c], synthetic[c], c) for c in range(3))
    batched = batched_gradient_match(net, real, synthetic)
    assert torch.allclose(looped, batched, rtol=1e-5)
    (a,) = torch.autograd.grad(looped, [source], retain_graph=True)
    (b,) = torch.autograd.grad(batched, [source])
    assert torch.allclose(a, b, rtol=1e-4, atol=1e-6 * float(a.abs().max()))


def test_instance_norm_matches_torch():
    x = torch.randn(3, 5, 40)
    assert torch.allclose(instance_norm(x), torch.nn.functional.instance_norm(x), atol=1e-5)


def test_distill_is_deterministic_and_both_syntheses_run():
    clouds = anisotropic_clouds(12, 64).astype(np.float32)
    clouds[6:] *= np.array([0.3, 1.0, 0.6], dtype=np.float32)
    labels = np.repeat([0, 1], 6)
    options = DistillOptions(
        iterations=2, outer_loop=2, inner_loop=1, batch_real=4, points=32, widths=(8, 16), hidden=16
    )
    a, b = distill(clouds, labels, options, 3), distill(clouds, labels, options, 3)
    assert np.array_equal(a.clouds(50, 0), b.clouds(50, 0)) and a.clouds(50, 0).shape == (2, 50, 3)
    assert a.saved_bytes > 0 and len(a.losses) == 2
    xyz = distill(clouds, labels, DistillOptions(**{**options.__dict__, "synthesis": "xyz", "cpc": 2}), 3)
    assert xyz.clouds(32, 0).shape == (4, 32, 3) and list(xyz.labels) == [0, 0, 1, 1]
    assert sorted(labels[random_subset(labels, 2, 0)].tolist()) == [0, 0, 1, 1]


def test_every_generator_parameter_learns_and_snapshots_leave_the_run_unchanged():
    clouds = anisotropic_clouds(12, 64).astype(np.float32)
    labels = np.repeat([0, 1], 6)
    options = DistillOptions(
        iterations=3, outer_loop=2, inner_loop=1, batch_real=4, points=32, widths=(8, 16), hidden=16
    )
    torch.manual_seed(3)
    initial = PointGenerator(2, 16, 2, 100.0).state_dict()  # distill seeds torch with 3 before building it
    seen: dict[int, np.ndarray] = {}

    def snapshot(iteration, result):
        seen[iteration] = result.clouds(20, 0)

    watched, plain = distill(clouds, labels, options, 3, snapshot), distill(clouds, labels, options, 3)
    assert sorted(seen) == [0, 1, 2] and np.array_equal(seen[2], plain.clouds(20, 0))
    assert np.array_equal(watched.clouds(20, 0), plain.clouds(20, 0)) and watched.losses == plain.losses
    trained = plain.generator.state_dict()
    assert all(not torch.equal(initial[name], trained[name]) for name in initial), "a parameter never moved"


def test_shapes_table_validates(tmp_path):
    from stages.core.validate import ensure_valid

    clouds, labels, splits = synthetic_shapes(1, 1, 64, 0, classes=("box", "torus", "chair"))
    assert clouds.shape == (6, 64, 3) and np.abs(np.linalg.norm(clouds, axis=-1).max() - 1) < 1e-9
    table = to_table(clouds, labels, splits, "aligned")
    assert ensure_valid(table, point_cloud_schema(64, classes=3), "shapes").success


OFF = "OFF\n# a tetrahedron\n4 4 0\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n3 0 1 2\n3 0 1 3\n3 0 2 3\n4 1 2 3 1\n"


def test_off_loader_reads_meshes_and_the_glued_header(tmp_path):
    for name in ("chair", "airplane"):
        for split in ("train", "test"):
            folder = tmp_path / name / split
            folder.mkdir(parents=True)
            (folder / "a.off").write_text(OFF)
            (folder / "b.off").write_text(OFF.replace("OFF\n# a tetrahedron\n4 4 0", "OFF4 4 0"))
    vertices, faces = read_off(tmp_path / "chair" / "train" / "b.off")
    assert vertices.shape == (4, 3) and faces.shape == (5, 3)  # the quad fans into two triangles
    clouds, labels, splits, names = load_off_folder(tmp_path, 32)
    assert clouds.shape == (8, 32, 3) and names == ["airplane", "chair"]
    assert labels.tolist() == [0, 0, 0, 0, 1, 1, 1, 1] and splits.tolist().count("test") == 4
    assert (clouds[..., 0] >= -1.0001).all() and (clouds.sum(-1) <= 2).all()


def test_off_loader_refuses_bad_files(tmp_path):
    bad = tmp_path / "x.off"
    bad.write_text("PLY\n")
    with pytest.raises(DataValidationError, match="not an OFF file"):
        read_off(bad)
    bad.write_text("OFF\n4 1 0\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n3 0 1 9\n")
    with pytest.raises(DataValidationError, match="indexing beyond"):
        read_off(bad)


def test_h5_loader_reads_the_pointnet_release(tmp_path):
    h5py = pytest.importorskip("h5py")
    rng = np.random.default_rng(0)
    for split, n in (("train", 6), ("test", 2)):
        with h5py.File(tmp_path / f"ply_data_{split}0.h5", "w") as file:
            file["data"] = rng.normal(size=(n, 100, 3)).astype(np.float32)
            file["label"] = (np.arange(n) % 3).reshape(-1, 1).astype(np.uint8)
    (tmp_path / "shape_names.txt").write_text("a\nb\nc\n")
    clouds, _, splits, names = load_h5_folder(tmp_path)
    assert clouds.shape == (8, 100, 3) and names == ["a", "b", "c"] and splits.tolist().count("train") == 6
    sub, *_ = load_modelnet(tmp_path, 50)
    assert sub.shape == (8, 50, 3)
    with h5py.File(tmp_path / "ply_data_train1.h5", "w") as file:
        file["data"] = np.zeros((2, 10, 3), dtype=np.float32)
    with pytest.raises(DataValidationError, match="missing dataset"):
        load_h5_folder(tmp_path)


def cloud_table(path, labels, sizes, value=None):
    rng = np.random.default_rng(0)
    rows = [(rng.normal(size=(n, 3)) * [1, 0.5, 0.2]).ravel().tolist() for n in sizes]
    if value is not None:
        rows[0][0] = value
    pl.DataFrame({"label": labels, "points": rows}).write_parquet(path)
    return path


def test_user_table_validation_names_the_problem(tmp_path):
    with pytest.raises(DataValidationError, match="need ≥ 2"):
        read_cloud_table(cloud_table(tmp_path / "a.parquet", ["x", "x"], [20, 20]))
    with pytest.raises(DataValidationError, match="non-finite"):
        read_cloud_table(cloud_table(tmp_path / "b.parquet", ["x", "y"], [20, 20], float("nan")))
    with pytest.raises(DataValidationError, match="no column 'points'"):
        pl.DataFrame({"label": [1, 2]}).write_parquet(tmp_path / "c.parquet")
        read_cloud_table(tmp_path / "c.parquet")
    data = read_cloud_table(cloud_table(tmp_path / "d.parquet", ["x", "y", "y"], [20, 30, 25]))
    assert data.clouds.shape == (3, 20, 3) and "resampled to 20" in data.notes[0]


def test_distill_files_writes_everything_or_nothing(tmp_path):
    source = cloud_table(tmp_path / "in.parquet", ["x", "y"] * 4, [40] * 8)
    request = DistillRequest(points=16, iterations=1, outer_loop=1, inner_loop=0, batch_real=2, eval_epochs=1)
    summary = distill_files(source, tmp_path / "out", request)
    assert summary["distilled_clouds"] == 2
    assert {p.name for p in (tmp_path / "out").iterdir()} >= {"distilled.parquet", "report.md", "figures"}
    with pytest.raises(DataValidationError, match="--points"):
        distill_files(source, tmp_path / "out2", DistillRequest(points=999))
    assert not (tmp_path / "out2").exists()
