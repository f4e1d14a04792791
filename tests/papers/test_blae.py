"""BLAE paper: params, the claims logic on synthetic runs, and `icml25 bandit` on a user's arm file."""

from __future__ import annotations

import json
import math

import numpy as np
import polars as pl
import pytest

from stages.core.errors import ParamsError
from stages.core.params import load_section, validate_section
from stages.methods.bandits.own_data import arms_frame
from stages.papers.blae.claims import range_evidence, regret_claim
from stages.papers.blae.params import BLAEParams
from stages.papers.blae.simulate import algorithms_for, checkpoints
from stages.platform.commands import main


@pytest.fixture
def params(repo_root) -> BLAEParams:
    return load_section(BLAEParams, "blae", repo_root / "params.yaml")


def test_scale_full_switches_to_the_paper_grid(params):
    full = params.model_copy(update={"scale": "full"})
    assert full.grid.horizon == 100_000 and len(full.grid.cells) == 16 and len(full.grid.seeds) == 10
    assert params.grid.horizon == 20_000 and params.grid.e4_max_arms is None  # E4 at K = 200 too


def test_bad_algorithm_option_names_the_key():
    raw = {"algorithms": {"blae": {"algorithm": "blae", "options": {"width": 0}}}}
    with pytest.raises(ParamsError, match=r"blae\.algorithms\.blae\.options\.width"):
        validate_section(BLAEParams, raw, "blae")


def test_e4_skipped_above_its_arm_limit(params):
    grid = params.grid.model_copy(update={"e4_max_arms": 100})
    cells = {cell.n_arms: cell for cell in grid.cells}
    assert "e4" not in algorithms_for(cells[200], grid, list(params.algorithms))
    assert "e4" in algorithms_for(cells[50], grid, list(params.algorithms))
    assert "e4" in algorithms_for(cells[200], params.grid, list(params.algorithms))


def test_checkpoints_end_at_the_horizon():
    points = checkpoints(1000, 100)
    assert points[0] == 1 and points[-1] == 1000 and len(points) == 100


def test_range_evidence_is_a_bound_on_every_run():
    assert range_evidence("b", {"0": 4, "1": 5}, 5).verdict == "holds"
    assert (
        range_evidence("b", {"0": 5, "1": 6}, 5).verdict == "fails"
    )  # one run over the bound refutes "every run"
    assert range_evidence("b", {"0": 6, "1": 7}, 5).verdict == "fails"


def _runs(blae: list[float], other: list[float], **more: list[float]) -> pl.DataFrame:
    rows = [
        {"cell": "c", "seed": seed, "algorithm": name, "final_regret": value}
        for name, values in (
            ("blae", blae),
            ("phaelimd", other),
            ("linucb", [1.0] * len(blae)),
            *more.items(),
        )
        for seed, value in enumerate(values)
    ]
    return pl.DataFrame(rows)


def test_regret_claim_three_verdicts_and_ignores_the_unbatched_reference(params):
    run = {
        label: entry for label, entry in params.algorithms.items() if label in {"blae", "phaelimd", "linucb"}
    }
    params = params.model_copy(update={"algorithms": run})
    holds = regret_claim(_runs([10, 11, 12], [20, 22, 21]), params)
    assert (
        holds.verdict == "holds"
        and holds.measured["ratio_to_best_baseline"]["c"]["best_baseline"] == "phaelimd"
    )
    assert regret_claim(_runs([30, 31, 32], [20, 22, 21]), params).verdict == "fails"
    assert regret_claim(_runs([10, 25, 20], [20, 12, 22]), params).verdict == "inconclusive"


# ----------------------------------------------------------------------------------------- icml25 bandit


def _arms_file(tmp_path, arms: np.ndarray):
    path = tmp_path / "arms.parquet"
    arms_frame(arms).write_parquet(path)
    return path


def test_bandit_command_writes_a_trace_and_a_report(tmp_path):
    arms = np.random.default_rng(0).uniform(size=(12, 3))
    out = tmp_path / "run"
    code = main(
        [
            "bandit",
            "--arms",
            str(_arms_file(tmp_path, arms)),
            "--theta",
            "1,0.5,0.2",
            "--horizon",
            "3000",
            "--algorithm",
            "blae",
            "--option",
            "width=0.5",
            "--output",
            str(out),
        ]
    )
    assert code == 0
    trace = pl.read_parquet(out / "trace.parquet")
    assert trace.height == 3000 and trace["cumulative_regret"][-1] == pytest.approx(trace["regret"].sum())
    summary = json.loads((out / "summary.json").read_text())
    assert summary["options"]["width"] == 0.5 and summary["batches"] == trace["batch"].max() + 1
    assert "final pseudo-regret" in (out / "report.md").read_text()


@pytest.mark.parametrize(
    ("arms", "theta", "horizon", "message"),
    [
        (np.array([[1.0, np.nan], [0.0, 1.0], [1.0, 1.0]]), "1,1", "100", "column 'x1': 1 NaN value(s)"),
        (np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]]), "1,1", "100", "rank-deficient"),
        (np.array([[1.0, 2.0]]), "1,1", "100", "K = 1"),
        (np.eye(3), "1,1", "100", "--theta: θ must have exactly d = 3"),
        (np.eye(3), "1,1,x", "100", "--theta: θ must be a list of numbers"),
        (np.eye(3), "1,1,1", "0", "horizon: T = 0"),
    ],
)
def test_bandit_command_bad_input_fails_naming_it_and_writes_nothing(
    tmp_path, capsys, arms, theta, horizon, message
):
    arms_path = _arms_file(tmp_path, arms)
    out = tmp_path / "run"
    code = main(
        ["bandit", "--arms", str(arms_path), "--theta", theta, "--horizon", horizon, "--output", str(out)]
    )
    error = capsys.readouterr().err
    assert code != 0 and message in error
    assert not out.exists()
    if "arms" in message or "rank" in message or "K = 1" in message:
        assert str(arms_path) in error


def test_bandit_command_unknown_algorithm_lists_the_valid_ones(tmp_path, capsys):
    arms_path = _arms_file(tmp_path, np.eye(3))
    code = main(
        [
            "bandit",
            "--arms",
            str(arms_path),
            "--theta",
            "1,0,0",
            "--horizon",
            "10",
            "--algorithm",
            "ucb",
            "--output",
            str(tmp_path / "o"),
        ]
    )
    assert code != 0 and "valid names: blae, e4, linucb, phaelimd, rs_oful" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("grid", "key"),
    [
        ({"horizon": 0, "cells": [{"n_arms": 5, "dim": 2}]}, r"blae\.default\.horizon"),
        ({"cells": [{"n_arms": 1, "dim": 2}]}, r"blae\.default\.cells\.0\.n_arms"),
        ({"cells": [{"n_arms": 5, "dim": 0}]}, r"blae\.default\.cells\.0\.dim"),
        ({"cells": [{"arms": "cauchy", "n_arms": 5, "dim": 2}]}, r"blae\.default\.cells\.0\.arms"),
    ],
)
def test_bad_grid_params_name_the_key(params, grid, key):
    raw = params.model_dump(mode="json") | {"default": grid}
    with pytest.raises(ParamsError, match=key):
        validate_section(BLAEParams, raw, "blae")


def test_a_baseline_left_out_of_a_cell_leaves_the_regret_claim_undecided(params):
    # e4 and rs_oful are configured but absent from these runs: blae beating phaelimd is not "every baseline"
    claim = regret_claim(_runs([10, 11, 12], [20, 22, 21]), params)
    assert claim.verdict == "inconclusive"
    assert any("not run in this cell" in item.note for item in claim.evidence)


def _with_e4_options(params, **options):
    run = {label: entry for label, entry in params.algorithms.items() if label != "rs_oful"}
    run["e4"] = run["e4"].model_copy(update={"options": {**run["e4"].options, **options}})
    return params.model_copy(update={"algorithms": run})


def test_regret_against_e4_is_judged_now_that_its_last_phase_is_spread(params):
    params = _with_e4_options(params)
    assert params.algorithms["e4"].options["final_phase"] == "spread"
    claim = regret_claim(_runs([10, 11, 12], [20, 22, 21], e4=[90, 95, 99]), params)
    e4 = next(item for item in claim.evidence if "− e4 " in item.name)
    assert e4.verdict == "holds" and claim.verdict == "holds"
    assert regret_claim(_runs([10, 11, 12], [20, 22, 21], e4=[5, 6, 5]), params).verdict == "fails"


def test_regret_against_e4_with_the_codes_cut_is_inconclusive_by_design(params):
    params = _with_e4_options(params, final_phase="cut")
    # BLAE far below E4 and PhaElimD: the E4 part is undecided by design (arm order), so the claim is too
    claim = regret_claim(_runs([10, 11, 12], [20, 22, 21], e4=[90, 95, 99]), params)
    e4 = next(item for item in claim.evidence if "− e4 " in item.name)
    assert e4.verdict == "inconclusive" and e4.interval[1] < 0 and "index order" in e4.note
    assert claim.verdict == "inconclusive" and claim.reason.startswith("Undecided by design against e4")
    assert "cannot hold" in claim.could_hold and claim.unit == "seed" and claim.n == 3
    # a PhaElimD comparison on the wrong side still fails the claim
    assert regret_claim(_runs([30, 31, 32], [20, 22, 21], e4=[90, 95, 99]), params).verdict == "fails"


def _regime_runs(cells: dict[str, tuple[int, int]], blae, phaelimd, e4) -> pl.DataFrame:
    rows = []
    for cell, (n_arms, dim) in cells.items():
        for name, values in (("blae", blae), ("phaelimd", phaelimd), ("e4", e4)):
            rows += [
                {
                    "cell": cell,
                    "n_arms": n_arms,
                    "dim": dim,
                    "seed": seed,
                    "algorithm": name,
                    "final_regret": v,
                }
                for seed, v in enumerate(values)
            ]
    return pl.DataFrame(rows)


def test_large_k_regime_claim_is_judged_on_cells_with_k_above_e_to_the_d(params):
    from stages.papers.blae.claims import large_k_cells, regime_claim

    cells = {"small": (50, 5), "large": (200, 5)}
    runs = _regime_runs(cells, [10, 11, 12], [20, 22, 21], [30, 31, 29])
    assert large_k_cells(runs) == ["large"]
    claim = regime_claim(runs, params)
    assert claim.verdict == "holds" and all(item.name.endswith("in large") for item in claim.evidence)
    assert claim.measured["k_over_e_d"] == {"large": round(200 / math.exp(5), 3)}
    assert regime_claim(_regime_runs(cells, [10, 11, 12], [20, 22, 21], [5, 6, 5]), params).verdict == "fails"
    only_small = _regime_runs({"small": (50, 5)}, [10, 11, 12], [20, 22, 21], [30, 31, 29])
    assert regime_claim(only_small, params).verdict == "inconclusive"


def test_instances_are_shuffled_the_same_for_every_algorithm(params):
    from stages.papers.blae.simulate import instance

    cell = params.grid.cells[0].model_copy(update={"arms": "e4_code"})
    positions = {instance(cell, seed, 0, 1.0).best_arm for seed in range(8)}
    assert len(positions) > 1  # the generator's first arm is not always first
    a, b = instance(cell, 3, 0, 1.0), instance(cell, 3, 0, 1.0)
    assert np.array_equal(a.arms, b.arms)


def test_overhead_ratio_to_phaelimd_is_judged_on_the_log_scale(params):
    from stages.papers.blae.timing import runtime_claim

    def rows(ratios: list[float]) -> list[dict]:
        return [
            {"cell": "c", "seed": seed, "algorithm": label, "seconds": seconds}
            for seed, ratio in enumerate(ratios)
            for label, seconds in (("blae", 0.1 * ratio), ("phaelimd", 0.1), ("e4", 2.0 + seed))
        ]

    # ratios 1.2, 1.5, 1.875: geometric mean 1.5 (arithmetic 1.525), log-scale interval ≈ [0.86, 2.6], below 3
    claim = runtime_claim({"repeats": 3, "runs": rows([1.2, 1.5, 1.875])}, params)
    ratio = next(item for item in claim.evidence if " / " in item.name)
    assert (
        ratio.mean == pytest.approx(1.5) and "log-ratio" in ratio.interval_kind and ratio.verdict == "holds"
    )
    assert claim.verdict == "holds" and claim.unit == "seed"
    assert runtime_claim({"repeats": 3, "runs": rows([5.0, 6.0, 7.2])}, params).verdict == "fails"


def test_timing_repeats_every_compared_run_and_judges_on_the_medians(params):
    from stages.papers.blae.timing import runtime_claim, timed_runs

    grid = params.default.model_copy(  # E4's SDP is slow: with e4_max_arms 0 BLAE meets PhaElimD only
        update={"horizon": 200, "seeds": [0, 1, 2], "cells": params.default.cells[:1], "e4_max_arms": 0}
    )
    claims = params.claims.model_copy(update={"timing_repeats": 3})
    tiny = params.model_copy(update={"default": grid, "claims": claims})
    rows = timed_runs(tiny, base_seed=0)
    assert {(row["seed"], row["algorithm"]) for row in rows} == {
        (seed, label) for seed in (0, 1, 2) for label in ("blae", "phaelimd")
    }
    for row in rows:
        assert len(row["repeats"]) == 3 and row["seconds"] == pytest.approx(
            float(np.median(row["repeats"])), abs=1e-6
        )
    claim = runtime_claim({"repeats": 3, "runs": rows}, tiny)
    assert [item.name for item in claim.evidence] == [
        f"blae / phaelimd seconds in {tiny.default.cells[0].label}"
    ]
    assert "median of 3 interleaved repeats" in claim.evidence[0].note


def test_official_e4_side_by_side_says_why_when_the_code_is_absent(tmp_path):
    from stages.papers.blae.benchmarks import bench_official_e4

    result = bench_official_e4(tmp_path / "nowhere", seeds=1)
    assert result["run"] is False and "fetch panxulab/optimal-batched-linear-bandits" in result["why"]


@pytest.mark.skipif(
    not __import__("pathlib").Path("/tmp/e4-official/algorithms.py").is_file(),
    reason="the official E4 code is fetched outside the project (/tmp/e4-official) only where it was run",
)
def test_official_e4_with_the_spread_fix_plays_the_whole_horizon():
    from pathlib import Path

    from stages.papers.blae.benchmarks import bench_official_e4

    result = bench_official_e4(Path("/tmp/e4-official"), n_arms=10, dim=3, horizon=2000, seeds=1)
    assert result["run"] is True
    regrets = {row["variant"]: row["final_regret"] for row in result["runs"]}
    assert set(regrets) >= {"official_e4_spread", "ours_e4_spread_clarabel", "official_e4_cut"}
    assert all(value >= 0 for value in regrets.values())
