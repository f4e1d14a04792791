"""RINGS pipeline: your own TU dataset end to end and deterministic, bad params, the audit-graphs command."""

from __future__ import annotations

import shutil

import polars as pl
import pytest

from stages.core.claims import read_claims
from stages.core.io import file_md5, read_json
from stages.core.params import apply_overrides, read_params_file, write_params_file
from stages.platform.pipelines import run_stage
from tests.conftest import run_cli
from tests.unit.tu_fixture import NAME, write_tu_dataset

STEPS = ("prepare", "train", "separability", "complementarity", "report", "claims")
SOURCES = ("data-tu", "data-structure_control", "data-feature_control")
CONTROL = "{graphs: 24, min_nodes: 8, max_nodes: 10}"
TINY = (
    f"common.datasets.tu={{path: tu, name: {NAME}}}",
    f"common.datasets.structure_control={CONTROL}",
    f"common.datasets.feature_control={CONTROL}",
    "rings.datasets=[tu, structure_control, feature_control]",
    "rings.audit.seeds=[0, 1, 2]",
    "rings.audit.gnn.epochs=3",
    "rings.audit.gnn.hidden=8",
    "rings.audit.baseline.epochs=3",
    "rings.audit.baseline.hidden=[8]",
    "rings.audit.separability.permutations=300",
    "rings.audit.workers=1",
)
DATA_OUTPUTS = (
    "runs.parquet",
    "separability.parquet",
    "complementarity.parquet",
    "verdicts.parquet",
    "claims.json",
)


@pytest.fixture
def workspace(tmp_path, repo_root, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copy(repo_root / "params.yaml", tmp_path / "params.yaml")
    write_tu_dataset(tmp_path / "tu", copies=10)  # 30 graphs: every class has test members
    set_params(tmp_path, *TINY)
    return tmp_path


def set_params(workspace, *overrides):
    path = workspace / "params.yaml"
    write_params_file(apply_overrides(read_params_file(path), list(overrides)), path)


def run_pipeline(workspace, steps=STEPS) -> None:
    for stage in (*SOURCES, *(f"rings-{step}" for step in steps)):
        run_stage(stage, workspace / "params.yaml", workspace)


def test_pipeline_with_your_tu_dataset_runs_end_to_end_and_deterministically(workspace):
    run_pipeline(workspace)
    root = workspace / "data" / "rings"
    claims = read_claims(root / "claims.json")
    assert [claim.id for claim in claims] == [
        "controls_separate_the_right_mode",
        "geometric_features_less_complementary",
        "report_ranks_datasets",
    ]
    assert [claim.unit for claim in claims] == ["seed", "graph", "dataset"]
    # judged on every pairing whose features do not embed D_G: all but the MDS of hops against hops
    assert claims[1].measured["judged_pairings"] == [
        "spectral_features vs shortest_path",
        "spectral_features vs rings_heat",
        "spectral_features vs rings_diffusion",
        "geometric_features vs rings_heat",
        "geometric_features vs rings_diffusion",
    ]
    assert len(claims[1].evidence) == 3 * 5 and not claims[1].reason.startswith("Inconclusive by design")
    complementarity = pl.read_parquet(root / "complementarity.parquet")
    assert complementarity.height == 3 * 3 * 4  # datasets × D_G × feature modes, per-graph values kept
    runs = pl.read_parquet(root / "runs.parquet")
    assert runs.height == 3 * 8 * 3 * 2  # datasets × modes × seeds × (GNN, baseline)
    assert set(runs["dataset"]) == {"tu", "structure_control", "feature_control"}
    separability = pl.read_parquet(root / "separability.parquet")
    assert separability.height == 3 * 2 * 28 * 2  # datasets × models × all 28 mode pairs × tests
    report = (root / "report.md").read_text()
    assert "## Ranking and recommendations" in report and "**tu**" in report
    for figure in ("scores", "p_values", "complementarity"):
        assert (root / "figures" / f"{figure}.png").stat().st_size > 0
    first = {name: file_md5(root / name) for name in DATA_OUTPUTS}
    shutil.rmtree(root)
    run_pipeline(workspace)
    assert first == {name: file_md5(root / name) for name in first}


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (("rings.audit.modes=[original, empty_graph, shuffle]",),
         "rings.audit.modes: Value error, unknown modes ['shuffle']; valid names: complete_features"),
        (("rings.audit.modes=[empty_graph, original, empty_features]",), "the first mode must be 'original'"),
        (("rings.audit.seeds=[0]",), "rings.audit.seeds: List should have at least 2 items"),
        (("rings.datasets=[tu, zinc]",), "rings.datasets.1: Value error, unknown dataset 'zinc'; graphs sources:"),
        (("rings.claims.feature_control=b3db",), "claims.feature_control 'b3db' must be one of the audited"),
    ],
    ids=["unknown-mode", "original-not-first", "one-seed", "unknown-source", "claims-wrong-dataset"],
)  # fmt: skip
def test_bad_params_fail_clearly_without_outputs(workspace, overrides, message):
    run_pipeline(workspace, ["prepare"])
    before = sorted(path.name for path in (workspace / "data" / "rings").rglob("*"))
    set_params(workspace, *overrides)
    result = run_cli(["stage", "rings-train"], workspace)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr
    assert sorted(path.name for path in (workspace / "data" / "rings").rglob("*")) == before
    assert not list(workspace.glob(".icml25-staging-*"))


def test_malformed_tu_dataset_stops_its_data_stage_naming_file_and_line(workspace):
    (workspace / "tu" / f"{NAME}_A.txt").write_text("1, 2\n2, 999\n")
    result = run_cli(["stage", "data-tu"], workspace)
    assert result.returncode == 2
    assert f"{NAME}_A.txt: line 2: node 999 is not in the graph indicator" in result.stderr
    assert not (workspace / "data" / "raw" / "tu").exists()


def test_audit_graphs_command_reports_on_a_tu_folder(tmp_path):
    folder = write_tu_dataset(tmp_path / "tu", copies=10)
    result = run_cli(
        ["audit-graphs", "--tu", str(folder), "--output", "audit", "--seeds", "3", "--workers", "2",
         "-S", "gnn.epochs=2", "-S", "separability.permutations=200", "-S", "test_fraction=0.3"],
        tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "# Graph dataset quality report" in result.stdout
    report = (tmp_path / "audit" / "report.md").read_text()
    assert "| tiny | 30 |" in report  # the name came from TINY_A.txt
    assert "-1 → 0, 1 → 1" in report and "tiny: labels -1 → 0, 1 → 1 (raw → internal)" in result.stdout
    assert read_json(tmp_path / "audit" / "datasets.json")["tiny"]["label_mapping"] == {"-1": 0, "1": 1}
    runs = pl.read_parquet(tmp_path / "audit" / "runs.parquet")
    assert runs.height == 8 * 3 * 2
    (folder / "OTHER_A.txt").write_text("1, 2\n")
    ambiguous = run_cli(["audit-graphs", "--tu", str(folder), "--output", "audit2"], tmp_path)
    assert ambiguous.returncode == 2 and f"found several (OTHER, {NAME})" in ambiguous.stderr
    assert not (tmp_path / "audit2").exists()


def test_runs_do_not_depend_on_the_number_of_workers(tmp_path):
    from stages.datasets.graphs.table import write_graph_tables
    from stages.datasets.graphs.tu_format import load_tu_dataset
    from stages.methods.graphs.audit import split_timings, train_runs
    from stages.methods.graphs.config import AuditConfig

    folder = tmp_path / "tables"
    write_graph_tables(load_tu_dataset(write_tu_dataset(tmp_path / "tu", copies=10), NAME), folder)
    config = {
        "modes": ["original", "random_graph"],
        "seeds": [0, 1],
        "gnn": {"epochs": 2},
        "baseline": {"epochs": 2},
    }
    serial, _ = split_timings(train_runs({"tiny": folder}, AuditConfig(**config, workers=1)))
    parallel, _ = split_timings(train_runs({"tiny": folder}, AuditConfig(**config, workers=2)))
    assert serial.equals(parallel)
