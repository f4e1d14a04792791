"""The TabSDS paper: params errors, claims logic on made-up results, the own-data command."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from stages.core.errors import DataValidationError, ParamsError
from stages.core.params import read_params_file, validate_section
from stages.methods.tabular.own_data import output_schema, synthesize_file
from stages.methods.tabular.table import infer_spec
from stages.papers.tabsds.claims import (
    competitive_claim,
    competitive_verdict,
    handicapped_peers,
    peer_steps,
    sdv_default_steps,
    tradeoff_claim,
)
from stages.papers.tabsds.params import TabSDSParams
from stages.papers.tabsds.pipeline import own_table_deps
from stages.papers.tabsds.prepare import load, split_table
from stages.papers.tabsds.synthesize import run_specs
from stages.papers.tabsds.timing import speed_claim
from tests.conftest import REPO_ROOT


def params(**changes) -> TabSDSParams:
    raw = read_params_file(REPO_ROOT / "params.yaml")["tabsds"]
    raw.update(changes)
    return validate_section(TabSDSParams, raw, "tabsds")


def test_params_name_the_bad_key():
    with pytest.raises(ParamsError, match="tabsds"):
        params(synthesizers={"tabsds": {"synthesizer": "tabsds", "options": {"n_levels": 0}}})
    with pytest.raises(ParamsError, match=r"not in tabsds\.synthesizers"):
        params(sweep="nope")
    with pytest.raises(ParamsError, match=r"default\.datasets: unknown"):
        params(default={"datasets": ["iris"]})


def test_run_specs_cover_every_label_and_the_sweep():
    specs = run_specs(params())
    labels = [spec.label for spec in specs]
    assert labels[:7] == [
        "tabsds",
        "tabsjppds",
        "smote",
        "additive_noise",
        "gaussian_copula",
        "ctgan",
        "tvae",
    ]
    sweep = [spec for spec in specs if spec.group == "sweep"]
    assert [spec.n_levels for spec in sweep] == [5, 10, 20, 50, 100, 200, 500]
    assert (
        next(spec for spec in specs if spec.label == "ctgan").options["epochs"] == params().grid.deep_epochs
    )


def test_split_is_50_50_and_fixed():
    table = pl.DataFrame({"a": np.arange(101.0)})
    train, test = split_table(table, 0.5, 123, None)
    assert (train.height, test.height) == (51, 50)
    assert split_table(table, 0.5, 123, None)[0].equals(train)
    assert split_table(table, 0.5, 123, 40)[1].height == 20


def made_up_runs(tabsds_detection: float, deep_detection: float) -> pl.DataFrame:
    rows = []
    for dataset in ("wine", "diabetes", "fair"):
        for seed in (0, 1, 2):
            noise = 0.01 * seed
            for label, detection in (
                ("tabsds", tabsds_detection),
                ("ctgan", deep_detection),
                ("tvae", deep_detection),
            ):
                rows.append(
                    {
                        "dataset": dataset,
                        "seed": seed,
                        "label": label,
                        "group": "method",
                        "n_levels": None,
                        "detection_auroc": detection + noise,
                        "utility_synthetic": 1.2 - detection + noise,
                        "dcr_median": 1.0,
                    }
                )
            for n_levels in (5, 50, 500):
                rows.append(
                    {
                        "dataset": dataset,
                        "seed": seed,
                        "label": f"tabsds_nc{n_levels}",
                        "group": "sweep",
                        "n_levels": n_levels,
                        "detection_auroc": 0.7 - 0.05 * np.log10(n_levels) + noise,
                        "utility_synthetic": 0.5,
                        "dcr_median": 2.0 - np.log10(n_levels) + noise,
                    }
                )
    return pl.DataFrame(rows)


def trained_peers() -> TabSDSParams:
    """Default params with the deep peers at SDV's default 300 epochs (no handicap: the claims are judged)."""
    grid = read_params_file(REPO_ROOT / "params.yaml")["tabsds"]["default"]
    return params(default={**grid, "deep_epochs": 300})


def test_competitive_holds_and_fails_on_made_up_results():
    p = trained_peers()
    assert competitive_claim(made_up_runs(0.55, 0.95), p).verdict == "holds"
    assert competitive_claim(made_up_runs(0.95, 0.55), p).verdict == "fails"
    assert competitive_verdict({"a": "holds", "b": "inconclusive", "c": "fails"}, 2 / 3)[0] == "inconclusive"
    assert competitive_verdict({"a": "holds", "b": "holds", "c": "fails"}, 2 / 3)[0] == "holds"
    assert competitive_verdict({"a": "holds", "b": "holds", "c": "inconclusive"}, 0.6667)[0] == "holds"


def handicapped() -> TabSDSParams:
    """The old default: CTGAN/TVAE at 5 epochs of SDV's batch 500 (one step each on ≤ 400 rows)."""
    raw = read_params_file(REPO_ROOT / "params.yaml")["tabsds"]
    synthesizers = {
        **raw["synthesizers"],
        "ctgan": {"synthesizer": "ctgan", "options": {"batch_size": 500}},
        "tvae": {"synthesizer": "tvae", "options": {"batch_size": 500}},
    }
    return params(default={**raw["default"], "deep_epochs": 5}, synthesizers=synthesizers)


def test_competitive_is_inconclusive_by_design_against_peers_trained_5_steps():
    claim = competitive_claim(made_up_runs(0.55, 0.95), handicapped())
    assert claim.verdict == "inconclusive" and claim.reason.startswith("Inconclusive by design")
    assert "5 gradient steps" in claim.reason and "handicap" in claim.could_hold
    assert set(claim.measured["dataset_verdicts"].values()) == {"holds"}  # still measured and reported
    assert claim.unit == "seed" and claim.n == 3


def test_the_default_budget_is_at_least_sdvs_own_step_count():
    p = params()  # default: 100 epochs of ≥ 4 batches = ≥ 400 steps; SDV's defaults take 300 here
    assert handicapped_peers(p) == [] and peer_steps(p, "ctgan") == 400 and sdv_default_steps(p) == 300
    claim = competitive_claim(made_up_runs(0.55, 0.95), p)
    assert claim.verdict == "holds" and "400 gradient steps" in claim.could_hold
    assert competitive_claim(made_up_runs(0.95, 0.55), p).verdict == "fails"


def test_tradeoff_holds_when_both_metrics_fall_with_n_levels():
    claim = tradeoff_claim(made_up_runs(0.55, 0.95), params())
    assert claim.verdict == "holds" and all(item.per_seed for item in claim.evidence)
    assert all("clipped to [-1, 1]" in item.interval_kind for item in claim.evidence)
    assert all(-1 <= end <= 1 for item in claim.evidence for end in item.interval)  # a correlation's range


def made_up_timings(ratios: dict[str, list[float]]) -> pl.DataFrame:
    rows = []
    for d in ("wine", "diabetes", "fair"):
        for s in (0, 1, 2):
            rows.append({"dataset": d, "seed": s, "label": "tabsds", "seconds": 0.01 * (1 + 0.1 * s)})
            for label, values in ratios.items():
                rows.append(
                    {"dataset": d, "seed": s, "label": label, "seconds": 0.01 * (1 + 0.1 * s) * values[s]}
                )
    return pl.DataFrame(rows)


def test_speed_is_undecided_without_arf():
    timings = made_up_timings({"ctgan": [1000.0] * 3, "tvae": [500.0] * 3})
    claim = speed_claim(timings, trained_peers())
    assert claim.verdict == "inconclusive" and "arf" in claim.reason
    assert all(item.verdict == "holds" for item in claim.evidence if "arf" not in item.name)
    assert claim.n == 3 and claim.unit == "seed"


def test_speed_holds_with_arf_and_fails_on_a_slow_tabsds():
    fast = made_up_timings({"ctgan": [1000.0] * 3, "tvae": [500.0] * 3, "arf": [200.0, 300.0, 250.0]})
    claim = speed_claim(fast, params())
    assert claim.verdict == "holds" and claim.n == 3
    arf = next(item for item in claim.evidence if item.name.startswith("arf"))
    assert arf.threshold == 1.0 and "log-ratio" in arf.interval_kind
    slow = made_up_timings({"ctgan": [1000.0] * 3, "tvae": [500.0] * 3, "arf": [0.5, 0.4, 0.6]})
    assert speed_claim(slow, params()).verdict == "fails"  # ARF at its defaults: a `fails` at any budget


def test_speed_ratios_are_judged_on_the_log_scale():
    # ratios 4, 5, 6.25: geometric mean 5, log-scale t interval about [2.9, 8.7], wholly below 10
    timings = made_up_timings({"ctgan": [4.0, 5.0, 6.25], "tvae": [1000.0] * 3})
    claim = speed_claim(timings, trained_peers())
    ctgan = next(item for item in claim.evidence if item.name.startswith("ctgan") and "wine" in item.name)
    assert ctgan.mean == pytest.approx(5.0) and "log-ratio" in ctgan.interval_kind
    assert ctgan.verdict == "fails" and ctgan.interval[1] < 10
    assert claim.verdict == "fails"
    # at the default scale the peers train 100 of 300 epochs: their time is a lower bound, so no `fails`
    default = speed_claim(timings, params())
    item = next(item for item in default.evidence if item.name.startswith("ctgan") and "wine" in item.name)
    assert default.verdict == "inconclusive" and item.verdict == "inconclusive" and "lower bound" in item.note
    old = speed_claim(timings, handicapped())  # 5 gradient steps: inconclusive by design
    assert old.verdict == "inconclusive" and old.reason.startswith("Inconclusive by design")


def test_output_schema_bounds_range_keeping_methods_only():
    table = pl.DataFrame({"x": [0.5, 2.0], "kind": ["a", "b"]})
    spec = infer_spec(table)
    bounded = {c.name: c for c in output_schema(table, spec, "tabsds").columns}
    assert (bounded["x"].min, bounded["x"].max) == (0.5, 2.0) and set(bounded["kind"].allowed) == {"a", "b"}
    assert next(iter(output_schema(table, spec, "ctgan").columns)).min is None


@pytest.mark.slow
def test_synthesize_command_writes_a_validated_table_and_report(tmp_path):
    """~9 s (Great Expectations, xgboost, matplotlib); the fast tests above cover its parts."""
    rng = np.random.default_rng(0)
    table = pl.DataFrame(
        {"x": rng.normal(size=80), "kind": rng.choice(["a", "b"], size=80), "n": rng.integers(0, 9, 80)}
    )
    table.write_csv(tmp_path / "in.csv")
    summary = synthesize_file(
        tmp_path / "in.csv",
        tmp_path / "out.parquet",
        n_levels=10,
        target="kind",
        report=tmp_path / "report.md",
    )
    out = pl.read_parquet(tmp_path / "out.parquet")
    assert summary["rows"] == out.height == 80 and out.schema == table.schema
    text = (tmp_path / "report.md").read_text()
    assert "detection_auroc" in text and (tmp_path / "report.marginals.png").is_file()


def test_synthesize_command_refuses_bad_input_and_writes_nothing(tmp_path):
    pl.DataFrame(
        {"x": [1.0, 2.0, 3.0], "y": [None, None, None]}, schema={"x": pl.Float64, "y": pl.Float64}
    ).write_parquet(tmp_path / "in.parquet")
    with pytest.raises(DataValidationError, match="'y' is entirely null"):
        synthesize_file(tmp_path / "in.parquet", tmp_path / "out.parquet", report=tmp_path / "r.md")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.parquet"]


def test_own_tables_join_the_pipeline_with_their_path_as_a_dep(tmp_path):
    rng = np.random.default_rng(0)
    path = tmp_path / "mine.csv"
    pl.DataFrame(
        {"x": rng.normal(size=30), "grade": rng.integers(1, 4, 30), "y": rng.normal(size=30)}
    ).write_csv(path)
    own = {"mine": {"path": str(path), "target": "grade", "categorical": ["grade"]}}
    p = params(own_tables=own, default={"datasets": ["wine", "mine"]})
    table, target, task, _ = load("mine", p)
    assert (target, task) == ("grade", "classification") and table.schema["grade"] == pl.String
    assert own_table_deps({"tabsds": {"own_tables": own}}) == {"own_mine": str(path)}
    with pytest.raises(ParamsError, match="clash with built-in"):
        params(own_tables={"wine": own["mine"]})
    bad = params(own_tables={"mine": {**own["mine"], "target": "nope"}})
    with pytest.raises(DataValidationError, match="'nope' not in the table"):
        load("mine", bad)
