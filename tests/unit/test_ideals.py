"""The vanishing-ideal method: deglex terms and borders, OAVI/ABM on varieties whose ideals are known, the pruning
score and polynomial layer, VI-Net's parameter count, and the own-data checks (`icml25 vanishing-ideals`)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
import torch

from stages.core.errors import DataValidationError
from stages.methods.ideals.avi import AVIOptions, fit_ideal
from stages.methods.ideals.layer import (
    PolynomialLayer,
    coefficient_matrix,
    generator_values,
    pruning_scores,
    random_monomial_layer,
    select_generators,
)
from stages.methods.ideals.own_data import OwnDataOptions, vanishing_ideals_file
from stages.methods.ideals.resnet import ResNet, TruncatedResNet
from stages.methods.ideals.terms import (
    MonomialEvaluator,
    all_terms,
    border,
    closure,
    deglex_sorted,
    evaluate_numpy,
)
from stages.methods.ideals.vinet import Head, PCATanh, VINet, class_vanishing, head_from_tensors

ORACLES = ("abm", "oavi")


def circle(radius: float, n: int = 120) -> np.ndarray:
    angle = np.linspace(0, 2 * np.pi, n, endpoint=False)
    return np.column_stack([radius * np.cos(angle), radius * np.sin(angle)])


def as_vector(terms, coefficients, basis) -> np.ndarray:
    """A polynomial's coefficients on a fixed list of terms (zero elsewhere)."""
    index = {term: i for i, term in enumerate(basis)}
    vector = np.zeros(len(basis))
    for term, value in zip(terms, coefficients, strict=True):
        vector[index[tuple(term)]] += value
    return vector


def test_deglex_order_and_border_by_hand():
    assert all_terms(2, 2) == [(0, 0), (1, 0), (0, 1), (2, 0), (1, 1), (0, 2)]
    assert deglex_sorted([(0, 2), (2, 0), (1, 0), (0, 0), (1, 1)]) == [(0, 0), (1, 0), (2, 0), (1, 1), (0, 2)]
    # O = {1, x, y, x², y²} (xy a leading term): degree-3 border keeps x³ and y³ only
    order = [(0, 0), (1, 0), (0, 1), (2, 0), (0, 2)]
    assert border(order, 3, 2) == [(3, 0), (0, 3)]
    assert closure([(1, 2)]) == [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (1, 2)]


def test_monomial_evaluator_matches_numpy():
    terms = all_terms(3, 3)
    points = np.random.default_rng(0).uniform(-1, 1, (7, 3))
    values = MonomialEvaluator(terms)(torch.from_numpy(points)).numpy()
    assert np.allclose(values, evaluate_numpy(terms, points))
    with pytest.raises(ValueError, match="closed under division"):
        MonomialEvaluator([(0, 0), (0, 2)])


@pytest.mark.parametrize("oracle", ORACLES)
def test_circle_gives_its_quadric_and_it_vanishes_only_there(oracle):
    psi = 1e-6
    fit = fit_ideal(circle(0.7), AVIOptions(psi=psi, max_degree=3, oracle=oracle))
    assert [g.leading_term for g in fit.generators] == [(0, 2)]  # x²+y²−r² is the whole ideal (principal)
    generator = fit.generators[0]
    assert np.mean(generator_values(generator, circle(0.7)) ** 2) <= psi
    basis = all_terms(2, 2)
    vector = as_vector(generator.terms, generator.coefficients, basis)
    expected = as_vector([(0, 0), (2, 0), (0, 2)], [-0.49, 1.0, 1.0], basis)
    cosine = abs(vector @ expected) / np.linalg.norm(vector) / np.linalg.norm(expected)
    assert cosine > 0.999
    assert np.mean(generator_values(generator, circle(0.3)) ** 2) > 100 * psi  # another class: no vanishing


@pytest.mark.parametrize("oracle", ORACLES)
def test_two_lines_give_xy(oracle):
    t = np.linspace(-1, 1, 41)
    points = np.vstack([np.column_stack([t, 0 * t]), np.column_stack([0 * t, t])])
    fit = fit_ideal(points, AVIOptions(psi=1e-8, max_degree=3, oracle=oracle))
    assert [g.leading_term for g in fit.generators] == [(1, 1)]
    generator = fit.generators[0]
    vector = as_vector(generator.terms, generator.coefficients, all_terms(2, 2))
    assert abs(vector[4]) / np.linalg.norm(vector) > 0.999  # ∝ xy
    assert (3, 0) in fit.order_ideal and (0, 3) in fit.order_ideal


def test_twisted_cubic_spans_the_degree_two_part_of_its_ideal():
    t = np.linspace(-1, 1, 60)
    points = np.column_stack([t, t**2, t**3])
    psi = 1e-9
    fit = fit_ideal(points, AVIOptions(psi=psi, max_degree=2))
    assert [g.leading_term for g in fit.generators] == [(2, 0, 0), (1, 1, 0), (1, 0, 1)]  # deglex: x², xy, xz
    for generator in fit.generators:
        assert np.mean(generator_values(generator, points) ** 2) <= psi
    basis = all_terms(3, 2)
    found = np.column_stack([as_vector(g.terms, g.coefficients, basis) for g in fit.generators])
    known = [  # y − x², z − xy, xz − y²: a basis of the ideal's degree ≤ 2 part (dimension 10 − 7 = 3)
        as_vector([(0, 1, 0), (2, 0, 0)], [1, -1], basis),
        as_vector([(0, 0, 1), (1, 1, 0)], [1, -1], basis),
        as_vector([(1, 0, 1), (0, 2, 0)], [1, -1], basis),
    ]
    for polynomial in known:
        _, residual, *_ = np.linalg.lstsq(found, polynomial, rcond=None)
        assert float(residual[0]) < 1e-10


def test_oavi_generators_are_sparse_and_bad_options_are_refused():
    fit = fit_ideal(circle(0.7), AVIOptions(psi=1e-4, oracle="oavi"))
    assert fit.generators[0].nonzero() <= 4  # a few vertices of the L1 ball, not every O term
    with pytest.raises(ValueError, match="psi"):
        AVIOptions(psi=0)
    with pytest.raises(ValueError, match="oracle"):
        AVIOptions(oracle="vca")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="NaN"):
        fit_ideal(np.array([[np.nan, 0.0]]), AVIOptions())


def two_circles():
    points = {0: circle(0.4, 80), 1: circle(0.8, 80)}
    fits = {label: fit_ideal(values, AVIOptions(psi=1e-6, max_degree=2)) for label, values in points.items()}
    return points, fits


def test_pruning_score_layer_and_own_class_block():
    points, fits = two_circles()
    scores = pruning_scores(fits[0].generators, 0, points)
    by_hand = np.abs(generator_values(fits[0].generators[0], points[1])).mean()
    assert scores[0] == pytest.approx(by_hand)
    kept = select_generators({label: fit.generators for label, fit in fits.items()}, points, keep=5)
    assert [item.label for item in kept] == [0, 1]
    terms, matrix = coefficient_matrix(kept)
    layer = PolynomialLayer(terms, matrix)
    z = torch.from_numpy(np.vstack([points[0], points[1]]))
    labels = np.repeat([0, 1], 80)
    block = class_vanishing(kept, layer, z.float(), labels)
    assert block[0, 0] < 1e-3 and block[1, 1] < 1e-3  # G ≈ 0 on the own-class block
    assert block[0, 1] == pytest.approx(1.0, rel=1e-3) and block[1, 0] == pytest.approx(
        1.0, rel=1e-3
    )  # scaled by s(p)
    assert layer.nonzero_coefficients() == int(np.count_nonzero(matrix))


def test_random_monomial_layer_has_the_count_asked():
    layer = random_monomial_layer(4, 6, 3, seed=0)
    assert layer.n_outputs == 6 and layer.nonzero_coefficients() == 6
    with pytest.raises(ValueError, match="exist"):
        random_monomial_layer(2, 50, 2, seed=0)


def test_vinet_parameter_count_by_hand():
    torch.manual_seed(0)
    net = ResNet(1, (4, 8), 1, 10).eval()
    truncated = TruncatedResNet(net, 4)  # stem, block 1, block 2's first convolution
    stem = 1 * 4 * 9 + 8
    block1 = 2 * (4 * 4 * 9 + 8)
    half = 4 * 8 * 9 + 16
    assert truncated.parameter_count() == stem + block1 + half
    latents = torch.randn(50, 8)
    pca = PCATanh.fit(latents.numpy(), 3)
    assert pca.parameter_count() == 3 * 8 + 8 + 3
    terms = all_terms(3, 2)
    matrix = np.zeros((len(terms), 2))
    matrix[[0, 4], 0] = [1.0, -2.0]
    matrix[[1, 9], 1] = [0.5, 1.0]
    head = Head(PolynomialLayer(terms, matrix), pca(latents), 10)
    model = VINet(truncated, pca, head)
    assert model.parameter_count() == stem + block1 + half + 35 + 4 + (2 * 10 + 10)
    images = torch.randn(5, 1, 8, 8)
    assert model(images).shape == (5, 10)
    tensors = {
        "terms": np.asarray(head.layer.terms),
        "coefficients": head.layer.coefficients.detach().numpy(),
        "mask": head.layer.mask.numpy(),
        "standardize_mean": head.standardize.mean.numpy(),
        "standardize_std": head.standardize.std.numpy(),
        "linear_weight": head.linear.weight.detach().numpy(),
        "linear_bias": head.linear.bias.detach().numpy(),
    }
    rebuilt = head_from_tensors(tensors)
    z = pca(latents)
    assert torch.allclose(rebuilt(z), head.eval()(z))


def test_cut_features_match_the_truncated_network():
    torch.manual_seed(0)
    net = ResNet(1, (4, 8), 1, 10).eval()
    images = torch.randn(3, 1, 8, 8)
    pooled = net.multi_features(images, [2, 3, 5])
    for cut in (2, 3, 5):
        assert torch.allclose(pooled[cut], TruncatedResNet(net, cut)(images))
    with pytest.raises(ValueError, match="cut 6"):
        TruncatedResNet(net, 6)


def embeddings_table(path, rows: int = 120) -> None:
    rng = np.random.default_rng(0)
    labels = np.repeat(["a", "b", "c"], rows // 3)
    radius = {"a": 0.3, "b": 0.6, "c": 0.9}
    angle = rng.uniform(0, 2 * np.pi, rows)
    r = np.array([radius[label] for label in labels])
    frame = pl.DataFrame(
        {"e0": r * np.cos(angle), "e1": r * np.sin(angle), "e2": rng.normal(0, 0.01, rows), "kind": labels}
    )
    frame.write_parquet(path)


def test_own_data_end_to_end(tmp_path):
    source = tmp_path / "emb.parquet"
    embeddings_table(source)
    report = vanishing_ideals_file(
        source,
        tmp_path / "out",
        OwnDataOptions(label="kind", pca=2, psi=1e-2, max_points=100, keep=3, epochs=200),
    )
    assert report["accuracy"]["vinet"] > 0.9
    for name in (
        "report.md",
        "report.json",
        "generators.json",
        "vinet_head.safetensors",
        "generator_values.png",
    ):
        assert (tmp_path / "out" / name).is_file()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"label": "missing"}, "label column 'missing' not found"),
        ({"pca": 5}, "--pca 5"),
        ({"psi": -1.0}, "--psi"),
        ({"test_fraction": 1.5}, "--test-fraction"),
        ({"columns": ["e0", "kind"]}, "not numeric"),
    ],
)
def test_own_data_bad_inputs_write_nothing(tmp_path, change, message):
    source = tmp_path / "emb.parquet"
    embeddings_table(source)
    options = OwnDataOptions(label="kind", pca=2) if "label" not in change else OwnDataOptions(label="kind")
    options = OwnDataOptions(**{**options.__dict__, **change})
    with pytest.raises(DataValidationError, match=message):
        vanishing_ideals_file(source, tmp_path / "out", options)
    assert not (tmp_path / "out").exists()


def test_own_data_refuses_nan_and_one_class(tmp_path):
    path = tmp_path / "bad.csv"
    pl.DataFrame({"e0": [0.1, None, 0.3, 0.4], "e1": [0.0, 0.1, 0.2, 0.3], "y": [0, 0, 1, 1]}).write_csv(path)
    with pytest.raises(DataValidationError, match="e0"):
        vanishing_ideals_file(path, tmp_path / "out", OwnDataOptions(label="y", pca=2))
    path = tmp_path / "one.csv"
    pl.DataFrame({"e0": [0.1, 0.2, 0.3], "e1": [0.0, 0.1, 0.2], "y": [1, 1, 1]}).write_csv(path)
    with pytest.raises(DataValidationError, match="1 class"):
        vanishing_ideals_file(path, tmp_path / "out", OwnDataOptions(label="y", pca=2))
    assert not (tmp_path / "out").exists()
