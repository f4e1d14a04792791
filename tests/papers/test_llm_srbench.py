"""LLM-SRBench paper: params, the claims on hand-made runs, the `sr-eval` / `sr-problem` commands, and a
smoke-size run of the three stages."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from stages.core.errors import ParamsError
from stages.core.params import deep_merge, load_section, read_params_file, validate_section, write_params_file
from stages.papers.llm_srbench.claims import (
    data_blind_claim,
    ood_claim,
    sa_claim,
    sa_ood_claim,
    transformed_claim,
)
from stages.papers.llm_srbench.params import LLMSRBenchParams
from tests.conftest import run_cli


@pytest.fixture
def params(repo_root) -> LLMSRBenchParams:
    return load_section(LLMSRBenchParams, "llm_srbench", repo_root / "params.yaml")


def test_scale_full_and_the_one_budget_factor(params):
    full = params.model_copy(update={"scale": "full"})
    assert full.grid.synth_points == 5000 and full.grid.budget == 20
    assert full.searcher_options("llmsr")["proposals"] == 20 * params.searcher_options("llmsr")["proposals"]
    assert full.searcher_options("data_blind") == params.searcher_options("data_blind")  # five, by definition


def test_bad_searcher_option_and_formula_are_named():
    raw = {
        "searchers": {"g": {"searcher": "gplearn", "options": {"pop": 3}}},
        "claims": {"data_driven": ["g"], "data_blind": "g", "oracle": "g"},
    }
    with pytest.raises(ParamsError, match=r"searchers\.g"):
        validate_section(LLMSRBenchParams, raw, "llm_srbench")
    raw = {"default": {"formulas": ["I.99"]}, "searchers": {"g": {"searcher": "gplearn"}}}
    with pytest.raises(ParamsError, match="unknown formulas"):
        validate_section(LLMSRBenchParams, raw, "llm_srbench")


def runs(values: dict[str, dict[str, list]], n: int = 12, ood: bool = True) -> pl.DataFrame:
    """Hand-made runs: per searcher, per-problem lists of (nmse_id, nmse_ood, acc_id, acc_ood, sa)."""
    rows = []
    for searcher, columns in values.items():
        for i in range(n):
            rows.append(
                {
                    "problem": f"p{i:02d}",
                    "family": "synth_physics" if ood else ("original" if i % 2 else "transformed"),
                    "source": "",
                    "complexity": 5 + i,
                    "searcher": searcher,
                    "nmse_id": columns["nmse_id"][i],
                    "nmse_ood": columns["nmse_ood"][i] if ood else None,
                    "acc_id": bool(columns["acc_id"][i]),
                    "acc_ood": bool(columns["acc_ood"][i]) if ood else None,
                    "sa": bool(columns["sa"][i]),
                }
            )
    return pl.DataFrame(rows, schema_overrides={"nmse_ood": pl.Float64, "acc_ood": pl.Boolean})


def made(nmse_id, nmse_ood=None, acc=None, acc_ood=None, sa=None, n=12):
    return {
        "nmse_id": list(nmse_id),
        "nmse_ood": list(nmse_ood if nmse_ood is not None else nmse_id),
        "acc_id": list(acc if acc is not None else [0] * n),
        "acc_ood": list(acc_ood if acc_ood is not None else [0] * n),
        "sa": list(sa if sa is not None else [0] * n),
    }


def table(blind, gp, loop, n=12, ood=True):
    oracle = made([0.0] * n, [0.0] * n, [1] * n, [1] * n, [1] * n)
    return runs({"oracle": oracle, "data_blind": blind, "gplearn": gp, "llmsr": loop}, n, ood)


def test_sa_claim_holds_below_the_ceiling_and_fails_above(params):
    rng = np.random.default_rng(0)
    low = made(rng.uniform(0.01, 1, 40), sa=[1] * 4 + [0] * 36, n=40)
    assert sa_claim(table(low, low, low, 40), params).verdict == "holds"
    high = made(rng.uniform(0.01, 1, 40), sa=[1] * 39 + [0], n=40)
    assert sa_claim(table(low, high, low, 40), params).verdict == "fails"
    broken = table(low, low, low, 40).with_columns(
        pl.when((pl.col("searcher") == "oracle") & (pl.col("problem") == "p03"))
        .then(False)
        .otherwise(pl.col("sa"))
        .alias("sa")
    )
    assert sa_claim(broken, params).verdict == "fails"  # the metrics misjudge the truth


def test_data_blind_claim_three_verdicts(params):
    rng = np.random.default_rng(1)
    good = made(10 ** rng.uniform(-6, -4, 30), acc=[1] * 20 + [0] * 10, n=30)
    bad = made(10 ** rng.uniform(-1, 0, 30), acc=[0] * 30, n=30)
    assert data_blind_claim(table(bad, good, good, 30), params).verdict == "holds"
    assert data_blind_claim(table(good, bad, bad, 30), params).verdict == "fails"
    same = made(10 ** rng.uniform(-3, -1, 30), acc=[0, 1] * 15, n=30)
    assert data_blind_claim(table(same, same, same, 30), params).verdict == "inconclusive"


def test_ood_claim_paired_over_problems(params):
    ids = 10 ** np.linspace(-4, -2, 12)
    worse = made(ids, ids * 100)
    better = made(ids, ids / 100)
    assert ood_claim(table(worse, worse, worse), params).verdict == "holds"
    assert ood_claim(table(worse, better, worse), params).verdict == "fails"


def test_sa_ood_claim_signs_and_undefined_when_sa_is_constant(params):
    n = 12
    sa = [1] * 6 + [0] * 6
    tracks = made([1e-3] * n, [1e-8] * 6 + [10.0] * 6, acc_ood=sa, sa=sa)
    assert sa_ood_claim(table(tracks, tracks, tracks), params).verdict == "holds"
    flat = made([1e-3] * n, list(10 ** np.linspace(-3, 1, n)), acc_ood=[0, 1] * 6)
    assert sa_ood_claim(table(flat, flat, flat), params).verdict == "inconclusive"
    against = made([1e-3] * n, [10.0] * 6 + [1e-8] * 6, acc_ood=[0] * 6 + [1] * 6, sa=sa)
    assert sa_ood_claim(table(against, against, against), params).verdict == "fails"


def test_transformed_claim_is_inconclusive_by_design_and_reports_gaps(params):
    some = made([0.1] * 12, sa=[1, 0] * 6)
    claim = transformed_claim(table(some, some, some, ood=False), params)
    assert claim.verdict == "inconclusive" and "by design" in claim.reason
    assert "gplearn" in claim.measured["stratified_gap_original_minus_transformed"]


# ---------------------------------------------------------------------------------------------- commands


def test_sr_problem_then_sr_eval_scores_the_truth_perfectly(tmp_path):
    made_problem = run_cli(
        [
            "sr-problem",
            "--equation",
            "F = q1*q2/(4*pi*eps*r**2)",
            "--range",
            "q1=1:5",
            "--range",
            "q2=1:5",
            "--range",
            "eps=1:5",
            "--range",
            "r=1:5",
            "--n-train",
            "200",
            "--n-test",
            "100",
            "--ood-variable",
            "r",
            "--output",
            "coulomb",
        ],
        tmp_path,
    )
    assert made_problem.returncode == 0, made_problem.stderr
    folder = tmp_path / "coulomb"
    assert {p.name for p in folder.iterdir()} == {
        "problem.json",
        "train.parquet",
        "test.parquet",
        "ood_test.parquet",
        ".icml25-output",  # the mark that lets a later sr-problem replace this folder, and no other
    }
    truth = run_cli(
        ["sr-eval", "--problem", "coulomb", "--expression", "q1*q2/(4*pi*eps*r**2)", "--output", "t"],
        tmp_path,
    )
    assert truth.returncode == 0, truth.stderr
    report = json.loads((tmp_path / "t" / "report.json").read_text())
    assert report["nmse_id"] == 0 and report["acc_id"] and report["acc_ood"] and report["symbolic_accuracy"]
    scaled = run_cli(
        ["sr-eval", "--problem", "coulomb", "--expression", "0.3*q1*q2/(eps*r**2)", "--output", "s"], tmp_path
    )
    assert json.loads((tmp_path / "s" / "report.json").read_text())["symbolic_accuracy"] is True, (
        scaled.stderr
    )
    wrong = run_cli(
        ["sr-eval", "--problem", "coulomb", "--expression", "0.3*q1*q2/(eps*r)", "--output", "w"], tmp_path
    )
    assert json.loads((tmp_path / "w" / "report.json").read_text())["symbolic_accuracy"] is False, (
        wrong.stderr
    )


def test_sr_eval_on_your_own_table_and_predictions(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.uniform(1, 2, 50)
    pl.DataFrame({"y": 2 * x, "x": x}).write_csv(tmp_path / "mine.csv")
    pl.DataFrame({"prediction": 2 * x}).write_parquet(tmp_path / "pred.parquet")
    result = run_cli(
        ["sr-eval", "--data", "mine.csv", "--target", "y", "--predictions", "pred.parquet", "--output", "o"],
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["nmse_id"] == 0 and report["symbolic_accuracy"] is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--expression", "__import__('os').system('true')"], "refused"),
        (["--expression", "q1.real"], "attribute access is refused"),
        (["--expression", "(lambda: q1)()"], "a lambda is refused"),
        (["--expression", "q1 + w"], "unknown name 'w'"),
        (["--expression", "q1", "--tau", "0"], "--tau"),
    ],
)
def test_sr_eval_refuses_bad_input_in_one_line_and_writes_nothing(tmp_path, args, message):
    run_cli(
        [
            "sr-problem",
            "--equation",
            "F = q1*q2",
            "--range",
            "q1=1:5",
            "--range",
            "q2=1:5",
            "--n-train",
            "20",
            "--n-test",
            "10",
            "--output",
            "p",
        ],
        tmp_path,
    )
    result = run_cli(["sr-eval", "--problem", "p", *args, "--output", "out"], tmp_path)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--equation", "F = q1*q2", "--range", "q1=1:5"], "unknown name 'q2'"),
        (["--equation", "q1*q2", "--range", "q1=1:5", "--range", "q2=1:5"], "output = expression"),
        (["--equation", "F = q1*q2", "--range", "q1=5:1", "--range", "q2=1:5"], "low < high"),
        (["--equation", "F = q1.__class__", "--range", "q1=1:5"], "refused"),
    ],
)
def test_sr_problem_refuses_bad_input(tmp_path, args, message):
    result = run_cli(["sr-problem", *args, "--output", "p"], tmp_path)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "p").exists()


def test_data_table_missing_target_is_named(tmp_path):
    pl.DataFrame({"a": [1.0, 2.0], "b": [2.0, 3.0]}).write_csv(tmp_path / "t.csv")
    result = run_cli(
        ["sr-eval", "--data", "t.csv", "--target", "y", "--expression", "a", "--output", "o"], tmp_path
    )
    assert result.returncode == 2 and "no column 'y'" in result.stderr and not (tmp_path / "o").exists()


# ----------------------------------------------------------------------------------------------- smoke run


def test_smoke_run_of_the_three_stages(tmp_path, repo_root):
    merged = deep_merge(
        read_params_file(repo_root / "params.yaml"), read_params_file(repo_root / "params.smoke.yaml")
    )
    write_params_file(merged, tmp_path / "params.yaml")
    for stage in ("problems", "search", "claims"):
        result = run_cli(["stage", f"llm_srbench-{stage}", "--params", "params.yaml"], tmp_path)
        assert result.returncode == 0, result.stderr
    claims = json.loads((tmp_path / "data/llm_srbench/claims.json").read_text())
    assert [c["id"] for c in claims] == [
        "sa_far_below",
        "data_blind_worst",
        "transformed_harder",
        "ood_worse",
        "sa_tracks_ood",
    ]
    runs = pl.read_parquet(tmp_path / "data/llm_srbench/runs.parquet")
    oracle = runs.filter(pl.col("searcher") == "oracle")
    assert oracle["sa"].all() and oracle["acc_id"].all() and (oracle["nmse_id"] < 1e-10).all()
    assert {p.name for p in (tmp_path / "data/llm_srbench/figures").iterdir()} == {
        "nmse_id_vs_ood.png",
        "sa_by_complexity.png",
        "sa_vs_ood.png",
    }
    metrics = json.loads((tmp_path / "data/llm_srbench/metrics.json").read_text())
    assert "pysr" in metrics["skipped_searchers"] or "pysr" in metrics["searcher_family"]
