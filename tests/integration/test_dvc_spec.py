"""dvc.yaml and the step specs in code must agree: cmd, deps, outs, metrics, plots and params keys."""

from __future__ import annotations

import pytest
import yaml

from stages.pipelines import all_pipelines


def _dvc_stages(repo_root):
    return yaml.safe_load((repo_root / "dvc.yaml").read_text())["stages"]


def _plot_paths(entries):
    return {next(iter(entry)) if isinstance(entry, dict) else entry for entry in entries or []}


SPECS = [(pipeline.stage_name(step), step) for pipeline in all_pipelines() for step in pipeline.steps]


@pytest.mark.parametrize(("stage_name", "step"), SPECS, ids=[name for name, _ in SPECS])
def test_stage_matches_its_spec(repo_root, stage_name, step):
    stages = _dvc_stages(repo_root)
    assert stage_name in stages, f"{stage_name} is declared in code but missing from dvc.yaml"
    declared = stages[stage_name]
    assert declared["cmd"] == f"python -m stages stage {stage_name}"
    assert set(declared.get("deps", [])) == set(step.deps.values()) | set(step.code)
    assert set(declared.get("outs", [])) == set(step.outs.values())
    assert set(declared.get("metrics", [])) == set(step.metrics.values())
    assert _plot_paths(declared.get("plots")) == set(step.plots.values())
    assert set(declared.get("params", [])) == set(step.params)


def test_no_stage_without_a_spec(repo_root):
    assert set(_dvc_stages(repo_root)) == {name for name, _ in SPECS}


def test_code_deps_exist(repo_root):
    for _, step in SPECS:
        for path in step.code:
            assert (repo_root / path).exists(), path


def test_params_keys_exist_in_params_yaml(repo_root):
    params = yaml.safe_load((repo_root / "params.yaml").read_text())
    for name, step in SPECS:
        for key in step.params:
            node = params
            for part in key.split("."):
                assert isinstance(node, dict) and part in node, f"{name}: params key {key} not in params.yaml"
                node = node[part]
