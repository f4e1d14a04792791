"""The sharpening paper's pure pieces: coordinates, trainers, params errors, claims logic, README example."""

from __future__ import annotations

import re

import numpy as np
import polars as pl
import pytest
import torch

from stages.core.errors import ParamsError
from stages.core.params import read_params_file, validate_section
from stages.methods.sharpness.hessian import exact_top_eigenvalue, flat_loss
from stages.methods.sharpness.theory import sharpness_bounds
from stages.papers.sharpening.claims import (
    bound_deviation,
    eos_deviation,
    increasing_evidence,
    practical_claim,
    ps_eos_claim,
    step_size_claim,
)
from stages.papers.sharpening.data import real_name, subset_frame, synthetic_dataset, two_class_subset
from stages.papers.sharpening.minimalist import RunSpec, initial_parameters, reduce, torch_loss, train_runs
from stages.papers.sharpening.params import SharpeningParams
from stages.papers.sharpening.practical import DeepNet, half_mse, row_space_inputs
from stages.papers.sharpening.train_minimalist import initial_scale, small_init_rise
from stages.papers.sharpening.train_practical import run_all
from tests.conftest import REPO_ROOT


def _params(**changes) -> dict:
    raw = read_params_file(REPO_ROOT / "params.yaml")["sharpening"]
    for dotted, value in changes.items():
        node = raw
        *parents, last = dotted.split(".")
        for key in parents:
            node = node[key]
        node[last] = value
    return raw


def test_reduced_coordinates_keep_the_sharpness():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((6, 15)), rng.choice([-1.0, 1.0], 6)
    data = reduce(x, y)
    _, _, right = np.linalg.svd(x, full_matrices=False)
    b, v = rng.standard_normal(6) * 0.4, np.array([0.7, -0.5])
    u = right.T @ b  # the same point in the original coordinates
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)

    def original(theta):
        return 0.5 * ((xt @ theta[:15] * torch.prod(theta[15:]) - yt) ** 2).mean()

    reduced = exact_top_eigenvalue(torch_loss(data, 3), torch.from_numpy(np.concatenate([b, v]))).value
    full = exact_top_eigenvalue(original, torch.from_numpy(np.concatenate([u, v]))).value
    assert reduced == pytest.approx(full, rel=1e-10)


def test_row_space_inputs_keep_the_network_sharpness():
    rng = np.random.default_rng(1)
    x, y = rng.random((8, 30)), rng.choice([-1.0, 1.0], 8)
    _, _, right = np.linalg.svd(x, full_matrices=False)
    raw = DeepNet(30, 6, 3, "tanh").double()
    raw.reset(torch.Generator().manual_seed(0))
    reduced = DeepNet(8, 6, 3, "tanh", fan_in=30).double()
    with torch.no_grad():
        reduced.layers[0].weight.copy_(raw.layers[0].weight @ torch.from_numpy(right.T))
        for a, b in zip(reduced.layers[1:], raw.layers[1:], strict=True):
            a.weight.copy_(b.weight)
    target = torch.from_numpy(y)
    fn_raw, theta_raw = flat_loss(raw, half_mse, torch.from_numpy(x), target)
    fn_red, theta_red = flat_loss(reduced, half_mse, torch.from_numpy(row_space_inputs(x)), target)
    assert float(fn_red(theta_red)) == pytest.approx(float(fn_raw(theta_raw)), rel=1e-10)
    assert exact_top_eigenvalue(fn_red, theta_red).value == pytest.approx(
        exact_top_eigenvalue(fn_raw, theta_raw).value, rel=1e-9
    )


def test_gd_sharpens_into_the_bounds_below_the_edge_of_stability():
    x, y = synthetic_dataset(12, 30, 10.0, 4.0, seed=0)
    bounds = sharpness_bounds(x, y, 3)
    assert bounds.difficulty == pytest.approx(4.0)
    spec = RunSpec(0, 2 * 0.5 / bounds.predicted, 12, {})
    (stable,) = train_runs([reduce(x, y)], [3], [spec], 0.3, 1e-6, 30000, 100)
    assert stable.status == "converged"
    assert stable.final_sharpness / stable.initial_sharpness > 5
    assert bounds.contains(stable.final_sharpness, rel_tol=0.02)


def test_gd_above_the_edge_of_stability_ends_at_two_over_eta():
    x, y = synthetic_dataset(12, 30, 100.0, 4.0, seed=0)
    spec = RunSpec(0, 2 * 1.5 / sharpness_bounds(x, y, 2).predicted, 12, {})
    (eos,) = train_runs([reduce(x, y)], [2], [spec], 0.3, 1e-6, 30000, 100)
    assert eos.status == "converged"
    assert eos.final_sharpness == pytest.approx(2 / spec.eta, rel=0.1)
    assert eos.final_sharpness < 2 / spec.eta


def test_sgd_runs_are_reproducible_and_end_flatter():
    x, y = synthetic_dataset(20, 40, 10.0, 4.0, seed=1)
    data = reduce(x, y)
    eta = 1.0 / sharpness_bounds(x, y, 2).predicted
    gd = train_runs([data], [2], [RunSpec(0, eta, 20, {})], 0.3, 1e-8, 40000, 200)[0]
    first, second = (
        train_runs([data], [2], [RunSpec(0, eta, 4, {})], 0.3, 1e-8, 40000, 200)[0] for _ in range(2)
    )
    assert first.final_sharpness == second.final_sharpness
    assert first.status == "converged" and first.final_sharpness < gd.final_sharpness


@pytest.mark.parametrize(
    ("changes", "key"),
    [
        ({"sweeps.step_size.depth": [0, 2]}, "sharpening.sweeps.step_size.depth"),
        (
            {"sweeps.step_size.ratio": None, "sweeps.step_size.eta": [0.01, 0.0]},
            "sharpening.sweeps.step_size.eta",
        ),
        ({"sweeps.step_size.ratio": [-0.5]}, "sharpening.sweeps.step_size.ratio"),
        ({"sweeps.batch.batch_size": [5, 101]}, "sweeps.batch.batch_size = 101"),
        ({"practical.depth": [0]}, "sharpening.practical.depth"),
        ({"minimalist.every": 0}, "sharpening.minimalist.every"),
    ],
)
def test_bad_params_fail_naming_the_key(changes, key):
    with pytest.raises(ParamsError, match=re.escape(key)):
        validate_section(SharpeningParams, _params(**changes), "sharpening")


def test_full_scale_swaps_in_the_paper_grid_and_checks_it():
    params = validate_section(SharpeningParams, _params(scale="full"), "sharpening").effective()
    assert max(params.sweeps["difficulty_depth"].n) == 500 and params.practical.width == 128
    assert params.practical.judged and len(params.practical.seeds) >= 5  # full scale judges the nets
    bad = _params(scale="full", full={"sweeps": {"batch": {"batch_size": [0]}}})
    with pytest.raises(ParamsError, match=r"sharpening\.full"):
        validate_section(SharpeningParams, bad, "sharpening").effective()


def test_bound_deviation_is_zero_inside_and_relative_outside():
    runs = pl.DataFrame(
        {"lower": [10.0, 10.0, 10.0], "upper": [12.0, 12.0, 12.0], "final_sharpness": [11.0, 9.0, 13.2]}
    )
    assert bound_deviation(runs).to_list() == pytest.approx([0.0, 0.1, 0.1])


def test_eos_deviation_starts_when_two_over_eta_is_reached():
    runs = pl.DataFrame({"run_id": ["a"], "seed": [0], "threshold": [10.0]})
    trajectory = pl.DataFrame(
        {
            "run_id": ["a"] * 4,
            "step": [0, 1, 2, 3],
            "sharpness": [1.0, 9.5, 10.5, 9.8],
            "loss": [1.0, 0.5, 0.1, 1e-3],
        }
    )
    row = eos_deviation(runs, trajectory, 0.1).row(0, named=True)
    assert row["deviation"] == pytest.approx(0.05) and row["loss_drop"] == pytest.approx(np.log10(0.5 / 1e-3))


def test_increasing_evidence_is_paired_by_seed():
    frame = pl.DataFrame(
        {"seed": [0, 1, 2] * 2, "n": [50] * 3 + [100] * 3, "final_sharpness": [1.0, 2.0, 3.0, 1.5, 2.4, 3.6]}
    )
    (evidence,) = increasing_evidence(frame, "n", "D=2", 0.95)
    assert evidence.per_seed == pytest.approx({"0": 0.5, "1": 0.4, "2": 0.6})
    assert evidence.verdict == "holds"


def _default_params(**changes) -> SharpeningParams:
    return validate_section(SharpeningParams, _params(**changes), "sharpening")


def _ps_runs(rises: dict[int, float], status: str = "converged") -> tuple[pl.DataFrame, pl.DataFrame]:
    """Per seed one GD run below the EoS (final S 50, inside [49.5, 51], S_init 50/rise) and one above it that
    climbs to 2/η = 20 and hovers within 1 % of it while the loss falls."""
    runs, points = [], []
    for seed, rise in rises.items():
        runs.append({"run_id": f"s{seed}", "seed": seed, "gd": True, "rule": "ratio", "rule_value": 0.5,
                     "status": status, "lower": 49.5, "upper": 51.0, "final_sharpness": 50.0,
                     "initial_sharpness": 50.0 / rise, "threshold": 200.0, "depth": 2,
                     "small_init_rise": 9.0})  # fmt: skip
        runs.append({"run_id": f"e{seed}", "seed": seed, "gd": True, "rule": "ratio", "rule_value": 1.5,
                     "status": "converged", "lower": 49.5, "upper": 51.0, "final_sharpness": 19.9,
                     "initial_sharpness": 2.0, "threshold": 20.0, "depth": 2,
                     "small_init_rise": 9.0})  # fmt: skip
        for step, (sharpness, loss) in enumerate([(2.0, 1.0), (19.0, 0.1), (20.1, 1e-3), (19.9, 1e-6)]):
            points.append({"run_id": f"e{seed}", "step": step, "sharpness": sharpness, "loss": loss})
    return pl.DataFrame(runs), pl.DataFrame(points)


def test_ps_eos_is_an_every_run_claim_judged_on_the_observed_range():
    params = _default_params(**{"seeds": [0, 1, 2], "practical.seeds": [0, 1, 2]})
    claim = ps_eos_claim(*_ps_runs({0: 8.0, 1: 6.0, 2: 5.5}), params)
    assert claim.verdict == "holds", claim.reason
    assert claim.unit == "seed" and claim.n == 3
    rise = claim.evidence[0]
    assert rise.interval == pytest.approx((5.5, 8.0)) and rise.interval_kind.startswith("observed range")
    # one seed's run rises only 4.1×: a t interval over minima would straddle 5, the range rule fails it
    claim = ps_eos_claim(*_ps_runs({0: 8.0, 1: 7.0, 2: 4.1}), params)
    assert claim.verdict == "fails" and claim.evidence[0].verdict == "fails" and "2" in claim.evidence[0].note
    # a run that did not converge is unknown for its seed: the part cannot hold
    runs, trajectories = _ps_runs({0: 8.0, 1: 7.0, 2: 6.0})
    runs = runs.with_columns(
        pl.when(pl.col("run_id") == "s1").then(pl.lit("capped")).otherwise("status").alias("status")
    )
    claim = ps_eos_claim(runs, trajectories, params)
    assert claim.verdict == "inconclusive" and claim.evidence[0].verdict == "inconclusive"


def test_step_size_spread_is_judged_as_a_ratio_on_the_log_scale():
    def runs(spreads: list[float]) -> pl.DataFrame:
        return pl.DataFrame(
            [
                {"sweep": "step_size", "rule_value": ratio, "seed": seed, "final_sharpness": value}
                for seed, spread in enumerate(spreads)
                for ratio, value in ((0.25, 75.0 * (1 + spread)), (0.5, 75.0), (1.5, 50.0))
            ]
        )

    params = _default_params()
    claim = step_size_claim(runs([0.0, 0.001, 0.002]), params)
    (evidence,) = claim.evidence
    assert claim.verdict == "holds" and evidence.threshold == pytest.approx(1.05)
    assert evidence.mean == pytest.approx(np.exp(np.mean(np.log([1.0, 1.001, 1.002]))))
    assert "log-ratio" in evidence.interval_kind
    assert step_size_claim(runs([0.10, 0.11, 0.12]), params).verdict == "fails"
    assert step_size_claim(runs([0.0, 0.2, 0.01]), params).verdict == "inconclusive"


def _practical(seeds: list[int], capped: tuple[int, ...] = ()) -> pl.DataFrame:
    """Per seed an N × D GD grid whose final S follows Ŝ_D, and one flatter SGD run; `capped` seeds' N = 200
    runs stopped short of the loss target."""
    rows = []
    for seed in seeds:
        for arch in ("linear", "tanh"):
            for n in (50, 100, 200):
                for depth in (2, 3, 4):
                    predicted = n * depth
                    status = "capped" if seed in capped and n == 200 else "converged"
                    rows.append({"architecture": arch, "seed": seed, "n": n, "depth": depth, "sgd": False,
                                 "predicted": float(predicted), "final_sharpness": predicted * (1 + 0.01 * seed),
                                 "status": status, "threshold": 1e4, "eta": 2e-4})  # fmt: skip
            rows.append({"architecture": arch, "seed": seed, "n": 100, "depth": 3, "sgd": True,
                         "predicted": 300.0, "final_sharpness": 250.0 + seed, "status": "converged",
                         "threshold": 1e4, "eta": 2e-4})  # fmt: skip
    return pl.DataFrame(rows)


def test_practical_networks_are_inconclusive_by_design_when_the_budget_cannot_train_them():
    params = _default_params()
    assert not params.practical.judged and params.practical.width == 128 and len(params.practical.seeds) >= 5
    claim = practical_claim(_practical([0, 1, 2, 3, 4], capped=(0, 1, 2, 3, 4)), params)
    assert claim.verdict == "inconclusive" and claim.reason.startswith("Inconclusive by design")
    assert "60 of 90" in claim.reason and claim.n == 5  # the per-seed values over all seeds are a record


def test_practical_networks_are_judged_on_seeds_that_reached_the_loss_target():
    params = _default_params(**{"practical.judged": True})
    claim = practical_claim(_practical([0, 1, 2, 3, 4], capped=(4,)), params)
    assert claim.verdict == "holds", claim.reason
    assert claim.n == 4 and "4" not in claim.evidence[0].per_seed  # seed 4 stopped short: not judged
    assert "clipped to [-1, 1]" in claim.evidence[0].interval_kind  # r is bounded: no interval past 1
    short = practical_claim(_practical([0, 1, 2, 3, 4], capped=(0, 1, 2)), params)
    assert short.verdict == "inconclusive" and "fewer than 3 seeds" in short.reason


def test_practical_runs_share_one_step_size_per_figure(tmp_path):
    table = pl.DataFrame(
        {
            "split": ["train"] * 40,
            "label": [3, 5] * 20,
            "sample_id": np.arange(40),
            "features": [list(np.random.default_rng(i).integers(0, 256, 30)) for i in range(40)],
        }
    )
    params = _default_params(
        **{
            "seeds": [0, 1, 2],
            "practical": {
                "width": 4,
                "depth": [2, 3],
                "n": [10, 20],
                "seeds": [0, 1, 2],
                "sgd_batch_size": 5,
                "max_steps": 3,
                "every": 3,
            },
        }
    )
    subsets = pl.concat(
        [
            subset_frame(real_name(n, seed), "real", seed, *two_class_subset(table, (3, 5), n, seed))
            for n in (10, 20)
            for seed in (0, 1, 2)
        ]
    )
    rows = [row for row, _ in run_all(subsets, params.practical, workers=1)]
    largest = max(row["predicted"] for row in rows)
    (eta,) = {row["eta"] for row in rows}  # one η for every N, depth, seed and the SGD runs
    assert eta == pytest.approx(2 * params.practical.ratio / largest)


def test_subsets_of_a_seed_are_nested():
    table = pl.DataFrame(
        {
            "split": ["train"] * 60,
            "label": [3, 5, 7] * 20,
            "sample_id": np.arange(60),
            "features": [[i, i + 1] for i in range(60)],
        }
    )
    small, large = (set(two_class_subset(table, (3, 5), n, seed=4)[2]) for n in (10, 30))
    assert small < large and len(large) == 30
    assert set(two_class_subset(table, (3, 5), 10, seed=5)[2]) != small


def test_the_init_is_a_share_of_the_minimum_scale_so_the_rise_does_not_depend_on_how_x_is_scaled():
    rises = []
    for difficulty in (0.25, 4.0):  # the same data, X scaled by a factor of 4
        x, y = synthetic_dataset(12, 30, 100.0, difficulty, seed=0)
        data = reduce(x, y)
        bounds = sharpness_bounds(x, y, 2)
        b, v = initial_parameters(12, 2, 0, initial_scale(0.01, bounds.difficulty, 2))
        start = exact_top_eigenvalue(torch_loss(data, 2), torch.from_numpy(np.concatenate([b, v]))).value
        rises.append(bounds.predicted / start)
    assert rises[0] == pytest.approx(rises[1], rel=1e-9)
    # at a small share the D = 2 rise is the data's R₀ = σ₁²√Q/‖Xᵀy‖, whatever the share
    assert rises[0] == pytest.approx(small_init_rise(data), rel=0.01)


def test_train_runs_takes_one_init_scale_per_run():
    x, y = synthetic_dataset(12, 30, 10.0, 4.0, seed=0)
    data, eta = reduce(x, y), 1.0 / sharpness_bounds(x, y, 2).predicted
    one, two = train_runs([data, data], [2, 2], [RunSpec(0, eta, 12, {})] * 2, [0.1, 0.2], 1e-6, 20000, 100)
    assert one.initial_sharpness < two.initial_sharpness and one.status == two.status == "converged"
    with pytest.raises(ValueError, match="init_scale"):
        train_runs([data], [2], [RunSpec(0, eta, 12, {})], [0.1, 0.2], 1e-6, 10, 10)


def test_the_readme_example_runs():
    text = (REPO_ROOT / "stages/papers/sharpening/README.md").read_text()
    (block,) = re.findall(r"```python\n(.*?)```", text, re.S)
    namespace: dict = {}
    exec(compile(block, "README.md", "exec"), namespace)
    records = namespace["tracker"].records
    assert [record["step"] for record in records] == [0, 20, 40, 60, 80, 100]
    assert all(
        record["method"] == "exact" and record["threshold"] == pytest.approx(40.0) for record in records
    )
